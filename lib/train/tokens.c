// tokens.c: uint16 token files and line-by-line encoding of text files (see tokens.h).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train/tokens.h"
#include "formats/atomic_file.h"
#include "formats/regular_file.h"

// Opens path for reading (a regular file only: formats/regular_file.h) and measures it.
static FILE *open_regular(const char *path, long long *bytes, const char *what, char *err,
                          size_t err_len) {
    FILE *f;
    char why[256];
    char expected[64];
    snprintf(expected, sizeof expected, "a %s", what);
    tw_file_open_result r = tw_regular_file_open(&f, why, sizeof why, path, expected);
    if (r == TW_FILE_NOT_REGULAR) {
        tw_set_err(err, err_len, "%s: %s", path, why);
        return NULL;
    }
    if (r != TW_FILE_OK) {
        tw_set_err(err, err_len, "%s: cannot open the %s: %s", path, what, strerror(errno));
        return NULL;
    }
    long long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        tw_set_err(err, err_len, "%s: cannot determine the size of the %s", path, what);
        return NULL;
    }
    *bytes = n;
    return f;
}

tw_status tw_tokens_read(int **tokens, long *n, const char *path, char *err, size_t err_len) {
    *tokens = NULL;
    *n = 0;
    long long bytes = 0;
    FILE *f = open_regular(path, &bytes, "token file", err, err_len);
    if (f == NULL) return TW_ERR_IO;
    if (bytes == 0 || bytes % 2 != 0) {
        fclose(f);
        tw_set_err(err, err_len, "%s: %s (%lld bytes): a token file holds 2 bytes per token (uint16)",
                path, bytes == 0 ? "is empty" : "has an odd number of bytes", bytes);
        return TW_ERR_FORMAT;
    }
    const long count = (long)(bytes / 2);
    unsigned char *raw = malloc((size_t)bytes);
    int *out = malloc((size_t)count * sizeof *out);
    if (raw == NULL || out == NULL) {
        free(raw); free(out); fclose(f);
        tw_set_err(err, err_len, "%s: out of memory for %ld tokens", path, count);
        return TW_ERR_NOMEM;
    }
    size_t got = fread(raw, 1, (size_t)bytes, f);
    fclose(f);
    if (got != (size_t)bytes) {
        free(raw); free(out);
        tw_set_err(err, err_len, "%s: read error after %zu of %lld bytes", path, got, bytes);
        return TW_ERR_IO;
    }
    for (long i = 0; i < count; i++) out[i] = raw[2 * i] | (raw[2 * i + 1] << 8);   // little-endian
    free(raw);
    *tokens = out;
    *n = count;
    return TW_OK;
}

tw_status tw_tokens_write(const char *path, const int *tokens, long n, char *err, size_t err_len) {
    for (long i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] > 65535) {
            tw_set_err(err, err_len, "%s: token %ld is %d, outside uint16", path, i, tokens[i]);
            return TW_ERR_ARG;
        }
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "wb") != TW_OK) {
        tw_set_err(err, err_len, "%s: cannot create: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    int ok = 1;
    unsigned char buf[8192];
    for (long i = 0; i < n && ok;) {
        size_t k = 0;
        for (; i < n && k < sizeof buf; i++, k += 2) {
            buf[k] = (unsigned char)(tokens[i] & 0xff);
            buf[k + 1] = (unsigned char)(tokens[i] >> 8);
        }
        ok = fwrite(buf, 1, k, af.f) == k;
    }
    if (tw_atomic_commit(&af, ok) != TW_OK) {
        tw_set_err(err, err_len, "%s: write failed: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    return TW_OK;
}

int tw_tokens_fit_vocab(const int *tokens, long n, int vocab, long *at) {
    for (long i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= vocab) {
            if (at) *at = i;
            return 0;
        }
    return 1;
}

// Appends the encoding of one line (BOS + text) to *out, growing it.
static tw_status encode_line(int **out, long *n, long *cap, int **scratch, size_t *scratch_cap,
                             const tw_tokenizer *tok, const char *line) {
    size_t need = tw_tokenizer_max_tokens(line);
    if (need > (size_t)1 << 30) return TW_ERR_ARG;
    if (need > *scratch_cap) {
        int *s = realloc(*scratch, need * sizeof *s);
        if (s == NULL) return TW_ERR_NOMEM;
        *scratch = s;
        *scratch_cap = need;
    }
    int k = 0;
    tw_status st = tw_tokenizer_encode(tok, *scratch, &k, (int)need, line, 1, 0);
    if (st != TW_OK) return st;
    if (*n + k > *cap) {
        long c = *cap ? *cap : 4096;
        while (c < *n + k) c *= 2;
        int *o = realloc(*out, (size_t)c * sizeof *o);
        if (o == NULL) return TW_ERR_NOMEM;
        *out = o;
        *cap = c;
    }
    memcpy(*out + *n, *scratch, (size_t)k * sizeof **out);
    *n += k;
    return TW_OK;
}

tw_status tw_tokens_encode_file(int **tokens, long *n, const char *path, const tw_tokenizer *tok,
                                char *err, size_t err_len) {
    *tokens = NULL;
    *n = 0;
    long long bytes = 0;
    FILE *f = open_regular(path, &bytes, "text file", err, err_len);
    if (f == NULL) return TW_ERR_IO;
    char *text = malloc((size_t)bytes + 1);
    if (text == NULL) {
        fclose(f);
        tw_set_err(err, err_len, "%s: out of memory for %lld bytes of text", path, bytes);
        return TW_ERR_NOMEM;
    }
    size_t got = fread(text, 1, (size_t)bytes, f);
    fclose(f);
    if (got != (size_t)bytes) {
        free(text);
        tw_set_err(err, err_len, "%s: read error after %zu of %lld bytes", path, got, bytes);
        return TW_ERR_IO;
    }
    text[bytes] = '\0';
    int *out = NULL, *scratch = NULL;
    long count = 0, cap = 0;
    size_t scratch_cap = 0;
    tw_status st = TW_OK;
    long line_no = 0;
    for (char *line = text; st == TW_OK && line < text + bytes; line_no++) {
        char *end = memchr(line, '\n', (size_t)(text + bytes - line));
        if (end == NULL) end = text + bytes;
        if (memchr(line, '\0', (size_t)(end - line)) != NULL) {
            tw_set_err(err, err_len, "%s: line %ld contains a NUL byte: not a text file", path, line_no + 1);
            st = TW_ERR_FORMAT;
            break;
        }
        *end = '\0';
        if (end > line && end[-1] == '\r') end[-1] = '\0';   // CRLF files
        if (line[0] != '\0') st = encode_line(&out, &count, &cap, &scratch, &scratch_cap, tok, line);
        if (st != TW_OK) tw_set_err(err, err_len, "%s: line %ld: cannot encode: %s", path, line_no + 1,
                                 tw_status_str(st));
        line = end + 1;
    }
    free(scratch);
    free(text);
    if (st == TW_OK && count == 0) {
        tw_set_err(err, err_len, "%s: holds no text (every line is empty)", path);
        st = TW_ERR_FORMAT;
    }
    if (st != TW_OK) {
        free(out);
        return st;
    }
    *tokens = out;
    *n = count;
    return TW_OK;
}
