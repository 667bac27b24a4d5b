// atomic_file.h: write a file so that readers never see half of it. The data goes to
// "<path>.tmp", which is renamed over path only once it is completely written and closed; on any
// failure the temporary file is removed and path is left as it was.
//
//   tw_atomic_file af;
//   if (tw_atomic_open(&af, path, "wb") != TW_OK) return ...;
//   fwrite(..., af.f);                            // write through af.f
//   return tw_atomic_commit(&af, write_ok);       // write_ok: 0 if a write already failed
#ifndef TW_ATOMIC_FILE_H
#define TW_ATOMIC_FILE_H
#include <stdio.h>
#include "core/status.h"

typedef struct {
    FILE *f;            // open on tmp until tw_atomic_commit
    char  path[4096];   // the final name
    char  tmp[4100];    // path + ".tmp"
} tw_atomic_file;

// Opens path's temporary twin with fopen mode `mode`. TW_ERR_ARG if path is too long, TW_ERR_IO
// if it cannot be created (errno as set by fopen).
tw_status tw_atomic_open(tw_atomic_file *af, const char *path, const char *mode);

// Closes the file and, if write_ok and no stream error occurred, renames it into place.
// Otherwise removes the temporary file and returns TW_ERR_IO (errno preserved).
tw_status tw_atomic_commit(tw_atomic_file *af, int write_ok);

#endif
