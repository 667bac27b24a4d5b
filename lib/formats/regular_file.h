// regular_file.h: opening a path that must name a regular file, and saying what it names
// otherwise. Every reader of the toolkit (checkpoints, tokenizers, .npy tensors, JSON configs)
// opens its file through this one function, so a directory, a FIFO (named pipe) or a device such
// as /dev/zero is refused with one true sentence instead of a misleading size or a read that
// never ends. A FIFO is opened without blocking (O_NONBLOCK) and then refused, so a reader never
// waits for a writer that will not come.
#ifndef TW_REGULAR_FILE_H
#define TW_REGULAR_FILE_H
#include <stddef.h>
#include <stdio.h>

typedef enum {
    TW_FILE_OK = 0,          // *f is open for binary reading; the caller fcloses it
    TW_FILE_CANNOT_OPEN,     // open() failed: errno says why (e.g. ENOENT), nothing was written
    TW_FILE_NOT_REGULAR,     // the path exists but is not a regular file: `why` says what it is
} tw_file_open_result;

// Opens path for reading ("rb") if it is a regular file (symbolic links are followed).
// expected names what the caller wants, e.g. "a llama2.c checkpoint file (.bin)"; for anything
// else why receives, without the path (the caller prefixes it, as its other messages do):
//   "is a directory, not a file: pass a llama2.c checkpoint file (.bin)"
//   "is a FIFO (named pipe), not a file: pass ..."     "is a character device, not a file: ..."
// On TW_FILE_CANNOT_OPEN, errno is left as open() set it and why is left untouched.
// why may be NULL (then nothing is written); why_len counts its terminating NUL.
tw_file_open_result tw_regular_file_open(FILE **f, char *why, size_t why_len, const char *path,
                                         const char *expected);

// tw_regular_file_open, then the file's size: on success returns the open file ("rb", the caller
// fcloses it) positioned at its start, with its size in *bytes. On failure returns NULL with
// nothing left open and one line in err (err may be NULL; err_len counts its terminating NUL):
//   "PATH: is a directory, not a file: pass EXPECTED"  (and the other kinds above)
//   "PATH: CANNOT_OPEN: No such file or directory"     (strerror of the failed open)
//   "PATH: cannot determine the file size"
FILE *tw_regular_file_open_measured(long long *bytes, char *err, size_t err_len, const char *path,
                                    const char *expected, const char *cannot_open);

#endif
