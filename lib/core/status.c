// status.c: English names for tw_status codes, and the error-message helper.
#include <stdarg.h>
#include <stdio.h>
#include "core/status.h"

const char *tw_status_str(tw_status s) {
    switch (s) {
    case TW_OK:         return "ok";
    case TW_ERR_NOMEM:  return "out of memory";
    case TW_ERR_IO:     return "cannot read or write the file";
    case TW_ERR_FORMAT: return "file format error";
    case TW_ERR_SHAPE:  return "inconsistent shapes or sizes";
    case TW_ERR_ARG:    return "argument out of range";
    }
    return "unknown status";
}

void tw_set_err(char *err, size_t len, const char *fmt, ...) {
    if (err == NULL || len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}
