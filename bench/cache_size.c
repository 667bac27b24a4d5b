// cache_size.c: see cache_size.h.
#define _GNU_SOURCE   // glibc's _SC_LEVEL1_DCACHE_SIZE and friends
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cache_size.h"

// One word from a sysfs file into out (n bytes); 0 if the file cannot be read.
static int read_word(const char *path, char *out, size_t n) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char fmt[16];
    snprintf(fmt, sizeof fmt, "%%%zus", n - 1);
    const int ok = fscanf(f, fmt, out) == 1;
    fclose(f);
    return ok;
}

// From /sys/devices/system/cpu/cpu0/cache/indexI/{level,type,size}: size is e.g. "48K".
static long from_sysfs(int level) {
    for (int i = 0; i < 8; i++) {
        char path[96], lv[16], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (!read_word(path, lv, sizeof lv)) return 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (!read_word(path, type, sizeof type) || strcmp(type, "Instruction") == 0 || atoi(lv) != level)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!read_word(path, size, sizeof size)) return 0;
        char *end;
        const long v = strtol(size, &end, 10);
        return *end == 'K' ? v * 1024 : *end == 'M' ? v * 1024 * 1024 : v;
    }
    return 0;
}

static long from_libc(int level) {
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
    const long v = sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : level == 2 ? _SC_LEVEL2_CACHE_SIZE
                                                                            : _SC_LEVEL3_CACHE_SIZE);
    return v > 0 ? v : 0;
#else
    (void)level;
    return 0;
#endif
}

long bench_cache_bytes(int level) {
    if (level < 1 || level > 3) return 0;
    const long v = from_sysfs(level);
    return v > 0 ? v : from_libc(level);
}
