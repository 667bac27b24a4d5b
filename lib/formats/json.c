// json.c: a strict recursive-descent JSON parser building a tree of tw_json nodes (see json.h).
// Every read goes through peek()/the pos < len checks, so truncated input is an error, never a
// read past the end. Recursion depth is bounded by TW_JSON_MAX_DEPTH.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/json.h"
#include "formats/regular_file.h"

// ---- parser state ----

typedef struct {
    const char    *text;   // (len) bytes, not necessarily NUL-terminated
    size_t         len;
    size_t         pos;
    int            depth;
    tw_status      status; // first failure (TW_OK while parsing goes well)
    tw_json_error *err;
} parser;

static int fail_at(parser *p, size_t at, tw_status st, const char *msg) {
    if (p->status == TW_OK) {
        p->status = st;
        if (p->err) {
            p->err->offset = at;
            snprintf(p->err->msg, sizeof p->err->msg, "%s", msg);
        }
    }
    return 0;
}

static int fail(parser *p, const char *msg) { return fail_at(p, p->pos, TW_ERR_FORMAT, msg); }
static int fail_nomem(parser *p) { return fail_at(p, p->pos, TW_ERR_NOMEM, "out of memory"); }

static int at_end(const parser *p) { return p->pos >= p->len; }
static int peek(const parser *p) { return at_end(p) ? -1 : (unsigned char)p->text[p->pos]; }

static void skip_space(parser *p) {
    while (!at_end(p)) {
        char c = p->text[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static void free_node(tw_json *v) {
    free(v->string);
    free(v->key);
    for (size_t i = 0; i < v->count; i++) free_node(&v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

// ---- literals and numbers ----

static int parse_literal(parser *p, const char *word, tw_json *v, tw_json_type t, int b) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->text + p->pos, word, n) != 0)
        return fail(p, "unexpected character (expected a value)");
    p->pos += n;
    v->type = t;
    v->boolean = b;
    return 1;
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

// JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
static int parse_number(parser *p, tw_json *v) {
    size_t start = p->pos;
    int integral = 1;
    if (peek(p) == '-') p->pos++;
    if (peek(p) == '0') {
        p->pos++;
        if (is_digit(peek(p))) return fail(p, "leading zeros are not allowed in numbers");
    } else if (is_digit(peek(p))) {
        while (is_digit(peek(p))) p->pos++;
    } else {
        return fail(p, at_end(p) ? "unexpected end of input in a number" : "invalid number");
    }
    if (peek(p) == '.') {
        integral = 0;
        p->pos++;
        if (!is_digit(peek(p))) return fail(p, "expected a digit after '.'");
        while (is_digit(peek(p))) p->pos++;
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        integral = 0;
        p->pos++;
        if (peek(p) == '+' || peek(p) == '-') p->pos++;
        if (!is_digit(peek(p))) return fail(p, "expected a digit in the exponent");
        while (is_digit(peek(p))) p->pos++;
    }
    size_t n = p->pos - start;
    // strtod needs a NUL-terminated copy: the input buffer may end right after the number.
    char small[64], *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) return fail_nomem(p);
    memcpy(buf, p->text + start, n);
    buf[n] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    int overflow = errno == ERANGE && (d > 1.0 || d < -1.0);   // underflow to ~0 is fine
    v->type = TW_JSON_NUMBER;
    v->number = d;
    if (integral) {
        // Exact int64 when it fits; otherwise the number is kept only as a double.
        const char *s = buf;
        int neg = *s == '-';
        if (neg) s++;
        uint64_t acc = 0, limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
        int fits = 1;
        for (; *s; s++) {
            unsigned dgt = (unsigned)(*s - '0');
            if (acc > (limit - dgt) / 10u) { fits = 0; break; }
            acc = acc * 10u + dgt;
        }
        if (fits) {
            v->is_integer = 1;
            v->integer = neg ? (acc == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)acc)
                             : (int64_t)acc;
        }
    }
    if (buf != small) free(buf);
    if (overflow) return fail_at(p, start, TW_ERR_FORMAT, "number out of range for a double");
    return 1;
}

// ---- strings ----

static int hex4(parser *p, unsigned *out) {
    unsigned u = 0;
    for (int i = 0; i < 4; i++) {
        if (at_end(p)) return fail(p, "unexpected end of input in a \\u escape");
        int c = (unsigned char)p->text[p->pos];
        unsigned d;
        if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
        else return fail(p, "expected 4 hex digits after \\u");
        u = u * 16u + d;
        p->pos++;
    }
    *out = u;
    return 1;
}

static size_t put_utf8(char *o, unsigned cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

// Decodes the string starting at the opening quote into a new NUL-terminated buffer. The decoded
// form is never longer than the source (an escape of n bytes yields at most n bytes of UTF-8), so
// one allocation of the raw length suffices.
static int parse_string(parser *p, char **out, size_t *out_len) {
    p->pos++;   // opening quote
    size_t start = p->pos, end = start;
    while (end < p->len && p->text[end] != '"') end += (p->text[end] == '\\') ? 2 : 1;
    if (end >= p->len) {
        p->pos = p->len;
        return fail(p, "unterminated string");
    }
    char *buf = malloc(end - start + 1), *o = buf;
    if (!buf) return fail_nomem(p);
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->text[p->pos];
        if (c < 0x20) { free(buf); return fail(p, "control character in a string (escape it)"); }
        if (c != '\\') { *o++ = (char)c; p->pos++; continue; }
        p->pos++;
        char e = p->text[p->pos++];
        switch (e) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (!hex4(p, &cp)) { free(buf); return 0; }
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(buf);
                return fail_at(p, p->pos - 6, TW_ERR_FORMAT, "unpaired low surrogate in \\u escape");
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {   // a pair encodes one code point above U+FFFF
                if (p->len - p->pos < 2 || p->text[p->pos] != '\\' || p->text[p->pos + 1] != 'u') {
                    free(buf);
                    return fail(p, "high surrogate not followed by a \\u low surrogate");
                }
                p->pos += 2;
                if (!hex4(p, &lo)) { free(buf); return 0; }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    free(buf);
                    return fail_at(p, p->pos - 6, TW_ERR_FORMAT, "expected a low surrogate");
                }
                cp = 0x10000u + ((cp - 0xD800u) << 10) + (lo - 0xDC00u);
            }
            if (cp == 0) {   // keys and values are C strings; an embedded NUL would truncate them
                free(buf);
                return fail_at(p, p->pos - 6, TW_ERR_FORMAT, "\\u0000 is not supported");
            }
            o += put_utf8(o, cp);
            break;
        }
        default:
            free(buf);
            return fail_at(p, p->pos - 1, TW_ERR_FORMAT, "invalid escape in a string");
        }
    }
    // The scan above may have stopped at an escaped quote's partner; p->pos == end here only if
    // every escape was two bytes or a valid \u form, which the loop guarantees.
    if (p->pos != end) { free(buf); return fail(p, "invalid escape at the end of a string"); }
    p->pos++;   // closing quote
    *o = '\0';
    *out = buf;
    *out_len = (size_t)(o - buf);
    return 1;
}

// ---- arrays, objects, values ----

static int parse_value(parser *p, tw_json *v);

// Appends a zeroed child slot to v->items, growing geometrically.
static tw_json *push_child(parser *p, tw_json *v, size_t *cap) {
    if (v->count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        tw_json *n = realloc(v->items, ncap * sizeof *n);
        if (!n) { fail_nomem(p); return NULL; }
        v->items = n;
        *cap = ncap;
    }
    tw_json *c = &v->items[v->count++];
    memset(c, 0, sizeof *c);
    return c;
}

static int parse_container(parser *p, tw_json *v, int is_object) {
    size_t open_at = p->pos;
    if (++p->depth > TW_JSON_MAX_DEPTH)
        return fail(p, "nesting deeper than 64 levels");
    v->type = is_object ? TW_JSON_OBJECT : TW_JSON_ARRAY;
    const char close = is_object ? '}' : ']';
    size_t cap = 0;
    p->pos++;
    skip_space(p);
    if (peek(p) == close) { p->pos++; p->depth--; return 1; }
    for (;;) {
        skip_space(p);
        tw_json *c = push_child(p, v, &cap);
        if (!c) return 0;
        if (is_object) {
            if (peek(p) != '"')
                return fail(p, at_end(p) ? "unexpected end of input in an object"
                                         : "expected a string key in an object");
            size_t klen;
            if (!parse_string(p, &c->key, &klen)) return 0;
            skip_space(p);
            if (peek(p) != ':') return fail(p, "expected ':' after an object key");
            p->pos++;
            skip_space(p);
        }
        if (!parse_value(p, c)) return 0;
        skip_space(p);
        if (peek(p) == ',') { p->pos++; continue; }
        if (peek(p) == close) { p->pos++; break; }
        if (at_end(p))
            return fail(p, is_object ? "unexpected end of input: object opened earlier is not closed"
                                     : "unexpected end of input: array opened earlier is not closed");
        return fail(p, is_object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
    }
    (void)open_at;
    p->depth--;
    return 1;
}

static int parse_value(parser *p, tw_json *v) {
    skip_space(p);
    int c = peek(p);
    switch (c) {
    case -1:  return fail(p, "unexpected end of input (expected a value)");
    case '{': return parse_container(p, v, 1);
    case '[': return parse_container(p, v, 0);
    case '"': v->type = TW_JSON_STRING; return parse_string(p, &v->string, &v->len);
    case 't': return parse_literal(p, "true", v, TW_JSON_BOOL, 1);
    case 'f': return parse_literal(p, "false", v, TW_JSON_BOOL, 0);
    case 'n': return parse_literal(p, "null", v, TW_JSON_NULL, 0);
    default:
        if (c == '-' || is_digit(c)) return parse_number(p, v);
        return fail(p, "unexpected character (expected a value)");
    }
}

// ---- public API ----

tw_status tw_json_parse(tw_json **out, const char *text, size_t len, tw_json_error *err) {
    *out = NULL;
    if (err) { err->offset = 0; err->msg[0] = '\0'; }
    parser p = { text, len, 0, 0, TW_OK, err };
    tw_json *root = calloc(1, sizeof *root);
    if (!root) { fail_nomem(&p); return p.status; }
    if (parse_value(&p, root)) {
        skip_space(&p);
        if (!at_end(&p)) fail(&p, "unexpected data after the top-level value");
    }
    if (p.status != TW_OK) {
        free_node(root);
        free(root);
        return p.status;
    }
    *out = root;
    return TW_OK;
}

tw_status tw_json_read_file(tw_json **out, const char *path, char *err_msg, size_t err_len) {
    *out = NULL;
    FILE *f;
    char why[160];
    tw_file_open_result fr = tw_regular_file_open(&f, why, sizeof why, path,
                                                  "a JSON config file (e.g. config.json)");
    if (fr == TW_FILE_NOT_REGULAR) {
        if (err_msg) snprintf(err_msg, err_len, "%s: %s", path, why);
        return TW_ERR_IO;
    }
    if (fr != TW_FILE_OK) {
        if (err_msg) snprintf(err_msg, err_len, "%s: cannot open: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    tw_status st = TW_OK;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *nb = cap > ((size_t)1 << 30) ? NULL : realloc(buf, cap * 2);   // configs are small
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb;
        cap *= 2;
    }
    if (!buf) {
        if (err_msg) snprintf(err_msg, err_len, "%s: out of memory (or larger than 1 GiB)", path);
        st = TW_ERR_NOMEM;
    } else if (ferror(f)) {
        if (err_msg) snprintf(err_msg, err_len, "%s: read error: %s", path, strerror(errno));
        st = TW_ERR_IO;
    }
    fclose(f);
    if (st != TW_OK) { free(buf); return st; }
    tw_json_error e;
    st = tw_json_parse(out, buf, n, &e);
    free(buf);
    if (st != TW_OK && err_msg)
        snprintf(err_msg, err_len, "%s: byte %zu: %s", path, e.offset, e.msg);
    return st;
}

void tw_json_free(tw_json *v) {
    if (!v) return;
    free_node(v);
    free(v);
}

const tw_json *tw_json_get(const tw_json *v, const char *key) {
    if (!v || v->type != TW_JSON_OBJECT) return NULL;
    for (size_t i = v->count; i-- > 0;)
        if (strcmp(v->items[i].key, key) == 0) return &v->items[i];
    return NULL;
}

const char *tw_json_type_name(tw_json_type t) {
    switch (t) {
    case TW_JSON_NULL:   return "null";
    case TW_JSON_BOOL:   return "boolean";
    case TW_JSON_NUMBER: return "number";
    case TW_JSON_STRING: return "string";
    case TW_JSON_ARRAY:  return "array";
    case TW_JSON_OBJECT: return "object";
    }
    return "unknown";
}
