// same_file.c: see same_file.h. POSIX stat, available on Linux and macOS.
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <sys/stat.h>
#include "formats/same_file.h"

// The folder part of path into dir ("." when there is none) and a pointer to its last
// component; NULL if the folder part does not fit in dir.
static const char *split_path(char *dir, size_t len, const char *path) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (slash && n == 0) n = 1;   // "/x": the root
    if (n >= len || len < 2) return NULL;
    if (slash == NULL) {
        memcpy(dir, ".", 2);
        return path;
    }
    memcpy(dir, path, n);
    dir[n] = '\0';
    return slash + 1;
}

int tw_same_file(const char *a, const char *b) {
    if (a == NULL || b == NULL || a[0] == '\0' || b[0] == '\0') return 0;
    struct stat sa, sb;
    const int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea || eb) return 0;
    if (strcmp(a, b) == 0) return 1;
    char da[4096], db[4096];
    const char *na = split_path(da, sizeof da, a), *nb = split_path(db, sizeof db, b);
    if (na == NULL || nb == NULL || strcmp(na, nb) != 0) return 0;
    struct stat pa, pb;
    if (stat(da, &pa) != 0 || stat(db, &pb) != 0) return 0;
    return pa.st_dev == pb.st_dev && pa.st_ino == pb.st_ino;
}
