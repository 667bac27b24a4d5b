// status.c: English names for tw_status codes.
#include "nn/status.h"

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
