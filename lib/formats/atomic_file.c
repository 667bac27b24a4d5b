// atomic_file.c: see atomic_file.h. rename() within one folder replaces the target in one step
// on POSIX systems, so a reader sees either the old file or the complete new one.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "formats/atomic_file.h"

tw_status tw_atomic_open(tw_atomic_file *af, const char *path, const char *mode) {
    af->f = NULL;
    int n = snprintf(af->path, sizeof af->path, "%s", path);
    if (n < 0 || (size_t)n >= sizeof af->path) return TW_ERR_ARG;
    snprintf(af->tmp, sizeof af->tmp, "%s.tmp", af->path);
    af->f = fopen(af->tmp, mode);
    return af->f ? TW_OK : TW_ERR_IO;
}

tw_status tw_atomic_commit(tw_atomic_file *af, int write_ok) {
    int ok = write_ok && !ferror(af->f);
    ok = (fclose(af->f) == 0) && ok;
    af->f = NULL;
    if (!ok || rename(af->tmp, af->path) != 0) {
        int saved = errno;
        remove(af->tmp);
        errno = saved;
        return TW_ERR_IO;
    }
    return TW_OK;
}
