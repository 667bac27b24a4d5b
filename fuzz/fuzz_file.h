// fuzz_file.h: the readers under fuzz take a path, so each fuzz input is written to one private
// temporary file first (created once per process with mkstemp, removed at exit).
#ifndef FUZZ_FILE_H
#define FUZZ_FILE_H
// Include it first, after #define _POSIX_C_SOURCE 200809L (mkstemp).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_path[256];

static void fuzz_remove_file(void) {
    if (fuzz_path[0]) unlink(fuzz_path);
}

// Writes data (size) to the temporary file and returns its path; aborts if the disk refuses,
// since a silently empty file would make every run look like "truncated input".
static inline const char *fuzz_write_file(const uint8_t *data, size_t size) {
    if (!fuzz_path[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(fuzz_path, sizeof fuzz_path, "%s/tw_fuzz_XXXXXX", dir && dir[0] ? dir : "/tmp");
        int fd = mkstemp(fuzz_path);
        if (fd < 0) { perror("fuzz: mkstemp"); abort(); }
        close(fd);
        atexit(fuzz_remove_file);
    }
    FILE *f = fopen(fuzz_path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror("fuzz: writing the input file");
        abort();
    }
    return fuzz_path;
}

#endif
