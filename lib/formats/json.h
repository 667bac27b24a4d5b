// json.h: a small, strict JSON reader (RFC 8259) that builds a tree, enough to read Hugging Face
// config.json files. It is not a general-purpose library: no writer, no streaming, no comments
// or trailing commas, no NaN/Infinity.
//
// Safety contract: the parser reads only the len bytes it is given (the text need not be
// NUL-terminated), nests at most TW_JSON_MAX_DEPTH arrays/objects deep (so hostile input cannot
// exhaust the stack), and on any error frees everything it built and reports the byte offset of
// the problem.
#ifndef TW_JSON_H
#define TW_JSON_H
#include <stdint.h>
#include "core/status.h"

#define TW_JSON_MAX_DEPTH 64

typedef enum {
    TW_JSON_NULL = 0, TW_JSON_BOOL, TW_JSON_NUMBER, TW_JSON_STRING, TW_JSON_ARRAY, TW_JSON_OBJECT
} tw_json_type;

typedef struct tw_json tw_json;
struct tw_json {
    tw_json_type type;
    int          boolean;     // TW_JSON_BOOL: 0 or 1
    double       number;      // TW_JSON_NUMBER: the value as strtod reads it
    int          is_integer;  // TW_JSON_NUMBER: written without '.', 'e' and fits int64 exactly
    int64_t      integer;     // TW_JSON_NUMBER with is_integer: the exact value
    char        *string;      // TW_JSON_STRING: decoded UTF-8, NUL-terminated (len bytes)
    size_t       len;
    char        *key;         // member of an object: its decoded key; NULL otherwise
    tw_json     *items;       // TW_JSON_ARRAY / TW_JSON_OBJECT: (count) children in file order
    size_t       count;
};

// Where and why a parse failed.
typedef struct {
    size_t offset;     // byte offset into the text (0-based) where the problem was found
    char   msg[96];    // e.g. "expected ':' after an object key"
} tw_json_error;

// Parses text[0..len) into a new tree. On success *out owns the tree (free with tw_json_free).
// On failure *out is NULL, err (if not NULL) says where and why, and the status is
// TW_ERR_FORMAT (malformed) or TW_ERR_NOMEM.
tw_status tw_json_parse(tw_json **out, const char *text, size_t len, tw_json_error *err);

// Reads and parses a whole file. On failure err_msg (if not NULL) receives one line naming the
// file and the problem, e.g. "cfg.json: byte 120: expected ',' or '}' in an object".
// Status: TW_ERR_IO (cannot open/read), TW_ERR_FORMAT, TW_ERR_NOMEM.
tw_status tw_json_read_file(tw_json **out, const char *path, char *err_msg, size_t err_len);

void tw_json_free(tw_json *v);   // frees a whole tree; safe on NULL

// The member named key of an object, or NULL if v is not an object or has no such key. With
// duplicate keys the last one wins, as in Python's json module.
const tw_json *tw_json_get(const tw_json *v, const char *key);

const char *tw_json_type_name(tw_json_type t);   // "null", "boolean", "number", ...

#endif
