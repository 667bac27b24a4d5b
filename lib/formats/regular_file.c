// regular_file.c: see regular_file.h. POSIX open/fstat/fcntl/fdopen, available on Linux and macOS.
#define _POSIX_C_SOURCE 200809L   // fdopen, O_CLOEXEC
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "formats/regular_file.h"

// What a non-regular file is, as a noun phrase for the message; NULL if none of these.
static const char *file_kind(mode_t mode) {
    if (S_ISDIR(mode))  return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode))  return "a character device";
    if (S_ISBLK(mode))  return "a block device";
#ifdef S_ISSOCK
    if (S_ISSOCK(mode)) return "a socket";
#endif
    return NULL;   // some other kind the system defines
}

tw_file_open_result tw_regular_file_open(FILE **f, char *why, size_t why_len, const char *path,
                                         const char *expected) {
    *f = NULL;
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait until some process opens it
    // for writing. It is cleared again below for the regular file we keep.
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return TW_FILE_CANNOT_OPEN;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return TW_FILE_CANNOT_OPEN;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        if (why && why_len) {
            const char *kind = file_kind(sb.st_mode);
            if (kind) snprintf(why, why_len, "is %s, not a file: pass %s", kind, expected);
            else      snprintf(why, why_len, "is not a regular file: pass %s", expected);
        }
        errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
        return TW_FILE_NOT_REGULAR;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    *f = fdopen(fd, "rb");
    if (*f == NULL) {
        int saved = errno;
        close(fd);
        errno = saved;
        return TW_FILE_CANNOT_OPEN;
    }
    return TW_FILE_OK;
}

FILE *tw_regular_file_open_measured(long long *bytes, char *err, size_t err_len, const char *path,
                                    const char *expected, const char *cannot_open) {
    FILE *f;
    char why[256];
    tw_file_open_result r = tw_regular_file_open(&f, why, sizeof why, path, expected);
    if (r != TW_FILE_OK) {
        if (err && err_len) {
            if (r == TW_FILE_NOT_REGULAR) snprintf(err, err_len, "%s: %s", path, why);
            else snprintf(err, err_len, "%s: %s: %s", path, cannot_open, strerror(errno));
        }
        return NULL;
    }
    long long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        if (err && err_len) snprintf(err, err_len, "%s: cannot determine the file size", path);
        return NULL;
    }
    *bytes = n;
    return f;
}
