// status.h: the status codes that library functions return when data can be wrong (files, token
// ids, configurations). Pure kernels return void. Component headers include this file rather than
// the umbrella tw.h, so any header can be included on its own and in any order.
#ifndef TW_STATUS_H
#define TW_STATUS_H
#include <stddef.h>
#include <stdint.h>

typedef enum {
    TW_OK = 0,
    TW_ERR_NOMEM,   // allocation failed
    TW_ERR_IO,      // open/read/write failed; errno is left as set by libc
    TW_ERR_FORMAT,  // the file's contents are not what its format promises
    TW_ERR_SHAPE,   // inconsistent sizes, e.g. C % H != 0, or a token id outside the vocabulary
    TW_ERR_ARG,     // an argument out of its documented range
} tw_status;

// A short English phrase for a status, e.g. "file format error".
const char *tw_status_str(tw_status s);

// Writes the printf-style message into the caller's buffer err (len bytes, always terminated);
// nothing when err is NULL or len is 0. How the readers and writers of lib/ fill their
// err argument.
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void tw_set_err(char *err, size_t len, const char *fmt, ...);

#endif
