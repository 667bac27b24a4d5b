// same_file.c: see same_file.h. POSIX stat, available on Linux and macOS.
#include <string.h>
#include <sys/stat.h>
#include "formats/same_file.h"

int tw_same_file(const char *a, const char *b) {
    if (strcmp(a, b) == 0) return 1;
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
