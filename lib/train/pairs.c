// pairs.c: the preference pairs file (see pairs.h).
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/atomic_file.h"
#include "formats/regular_file.h"
#include "train/pairs.h"

static const char *const WHAT[3] = { "prompt", "chosen", "rejected" };

void tw_pairs_free(tw_pairs *p) {
    free(p->len);
    free(p->off);
    free(p->tok);
    memset(p, 0, sizeof *p);
}

static int32_t read_i32(const unsigned char *b) {
    return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
}

// Reads the whole file (a regular file) into *buf. *bytes its size.
static tw_status slurp(unsigned char **buf, long long *bytes, const char *path, char *err, size_t err_len) {
    *buf = NULL;
    FILE *f = tw_regular_file_open_measured(bytes, err, err_len, path, "a preference pairs file (pref)",
                                            "cannot open the pairs file");
    if (!f) return TW_ERR_IO;
    if (*bytes > (long long)1 << 31) {
        fclose(f);
        tw_set_err(err, err_len, "%s: %lld bytes: a pairs file is at most 2 GiB; split it", path, *bytes);
        return TW_ERR_FORMAT;
    }
    *buf = malloc(*bytes > 0 ? (size_t)*bytes : 1);
    if (!*buf) {
        fclose(f);
        tw_set_err(err, err_len, "%s: out of memory for %lld bytes", path, *bytes);
        return TW_ERR_NOMEM;
    }
    const size_t got = fread(*buf, 1, (size_t)*bytes, f);
    fclose(f);
    if (got != (size_t)*bytes) {
        free(*buf);
        *buf = NULL;
        tw_set_err(err, err_len, "%s: read error after %zu of %lld bytes", path, got, *bytes);
        return TW_ERR_IO;
    }
    return TW_OK;
}

// The header: magic, version, count. *n the count on success.
static tw_status check_header(long *n, const unsigned char *b, long long bytes, const char *path, char *err,
                              size_t err_len) {
    if (bytes < 12 || memcmp(b, "pref", 4) != 0) {
        tw_set_err(err, err_len, "%s: not a preference pairs file (it must start with \"pref\", version, "
                   "count; %lld bytes): write it with make pref-data or docs/preferences.md's layout", path, bytes);
        return TW_ERR_FORMAT;
    }
    const int32_t version = read_i32(b + 4), count = read_i32(b + 8);
    if (version != TW_PAIRS_VERSION) {
        tw_set_err(err, err_len, "%s: version %d; this toolkit reads version %d pairs files", path,
                   (int)version, TW_PAIRS_VERSION);
        return TW_ERR_FORMAT;
    }
    // Each pair takes at least 12 bytes of lengths and 3 tokens of 2 bytes.
    if (count < 1 || (long long)count * 18 > bytes - 12) {
        tw_set_err(err, err_len, "%s: %d pairs: %s", path, (int)count, count < 1
                   ? "a pairs file needs at least one pair" : "the file is too short to hold them (truncated?)");
        return TW_ERR_FORMAT;
    }
    *n = count;
    return TW_OK;
}

// Walks the pairs, checking every length against the context and the bytes left, and stores the
// lengths, offsets and tokens into p (allocated by the caller for n pairs and max_tok tokens).
static tw_status parse_pairs(tw_pairs *p, const unsigned char *b, long long bytes, int vocab, int max_seq,
                             const char *path, char *err, size_t err_len) {
    long long at = 12;
    for (long i = 0; i < p->n; i++) {
        if (bytes - at < 12) {
            tw_set_err(err, err_len, "%s: truncated: pair %ld of %ld has no room for its lengths at byte "
                       "%lld (the file has %lld)", path, i, p->n, at, bytes);
            return TW_ERR_FORMAT;
        }
        long long total = 0;
        for (int k = 0; k < 3; k++) {
            const int32_t l = read_i32(b + at + 4 * k);
            if (l < 1) {
                tw_set_err(err, err_len, "%s: pair %ld: its %s has length %d; every part has at least one "
                           "token", path, i, WHAT[k], (int)l);
                return TW_ERR_FORMAT;
            }
            p->len[3 * i + k] = l;
            total += l;
        }
        at += 12;
        for (int k = 1; k < 3; k++) {
            const long long seen = (long long)p->len[3 * i] + p->len[3 * i + k] - 1;
            if (seen > max_seq) {
                tw_set_err(err, err_len, "%s: pair %ld: prompt %d + %s %d tokens make %lld positions, more "
                           "than the model's context of %d: shorten the pair or use a longer-context model",
                           path, i, p->len[3 * i], WHAT[k], p->len[3 * i + k], seen, max_seq);
                return TW_ERR_SHAPE;
            }
        }
        if (bytes - at < 2 * total) {
            tw_set_err(err, err_len, "%s: truncated: pair %ld of %ld needs %lld bytes of tokens at byte "
                       "%lld, the file ends at %lld", path, i, p->n, 2 * total, at, bytes);
            return TW_ERR_FORMAT;
        }
        p->off[i] = p->n_tok;
        for (long long j = 0; j < total; j++, at += 2) {
            const int t = b[at] | b[at + 1] << 8;
            if (t >= vocab) {
                tw_set_err(err, err_len, "%s: pair %ld: token %d is outside the model's vocabulary of %d "
                           "(made with another tokenizer?)", path, i, t, vocab);
                return TW_ERR_SHAPE;
            }
            p->tok[p->n_tok++] = t;
        }
    }
    if (at != bytes) {
        tw_set_err(err, err_len, "%s: %lld bytes after the last of its %ld pairs: the count must match "
                   "exactly (a corrupted or concatenated file?)", path, bytes - at, p->n);
        return TW_ERR_FORMAT;
    }
    return TW_OK;
}

tw_status tw_pairs_read(tw_pairs *p, const char *path, int vocab, int max_seq, char *err, size_t err_len) {
    memset(p, 0, sizeof *p);
    unsigned char *b;
    long long bytes;
    tw_status st = slurp(&b, &bytes, path, err, err_len);
    if (st != TW_OK) return st;
    long n = 0;
    st = check_header(&n, b, bytes, path, err, err_len);
    if (st == TW_OK) {
        p->n = p->cap_pairs = n;
        p->cap_tok = (long)((bytes - 12) / 2);   // more tokens than the file could hold cannot be read
        p->len = malloc((size_t)n * 3 * sizeof *p->len);
        p->off = malloc((size_t)n * sizeof *p->off);
        p->tok = malloc((size_t)p->cap_tok * sizeof *p->tok);
        if (!p->len || !p->off || !p->tok) {
            tw_set_err(err, err_len, "%s: out of memory for %ld pairs", path, n);
            st = TW_ERR_NOMEM;
        } else {
            st = parse_pairs(p, b, bytes, vocab, max_seq, path, err, err_len);
        }
    }
    free(b);
    if (st != TW_OK) tw_pairs_free(p);
    return st;
}

tw_status tw_pairs_add(tw_pairs *p, const int *prompt, int n_prompt, const int *chosen, int n_chosen,
                       const int *rejected, int n_rejected) {
    if (n_prompt < 1 || n_chosen < 1 || n_rejected < 1) return TW_ERR_ARG;
    const long need = (long)n_prompt + n_chosen + n_rejected;
    if (p->n == p->cap_pairs) {
        const long cap = p->cap_pairs ? 2 * p->cap_pairs : 16;
        int *len = realloc(p->len, (size_t)cap * 3 * sizeof *len);
        if (!len) return TW_ERR_NOMEM;
        p->len = len;
        long *off = realloc(p->off, (size_t)cap * sizeof *off);
        if (!off) return TW_ERR_NOMEM;
        p->off = off;
        p->cap_pairs = cap;
    }
    if (p->n_tok + need > p->cap_tok) {
        long cap = p->cap_tok ? 2 * p->cap_tok : 1024;
        while (cap < p->n_tok + need) cap *= 2;
        int *tok = realloc(p->tok, (size_t)cap * sizeof *tok);
        if (!tok) return TW_ERR_NOMEM;
        p->tok = tok;
        p->cap_tok = cap;
    }
    const int lens[3] = { n_prompt, n_chosen, n_rejected };
    const int *parts[3] = { prompt, chosen, rejected };
    p->off[p->n] = p->n_tok;
    for (int k = 0; k < 3; k++) {
        p->len[3 * p->n + k] = lens[k];
        memcpy(p->tok + p->n_tok, parts[k], (size_t)lens[k] * sizeof *p->tok);
        p->n_tok += lens[k];
    }
    p->n++;
    return TW_OK;
}

static void put_i32(unsigned char *b, int32_t v) {
    for (int k = 0; k < 4; k++) b[k] = (unsigned char)((uint32_t)v >> (8 * k));
}

tw_status tw_pairs_write(const char *path, const tw_pairs *p, char *err, size_t err_len) {
    if (p->n < 1 || p->n > INT32_MAX) {
        tw_set_err(err, err_len, "%s: %ld pairs: a pairs file holds 1 to 2^31 - 1", path, p->n);
        return TW_ERR_ARG;
    }
    for (long i = 0; i < p->n_tok; i++)
        if (p->tok[i] < 0 || p->tok[i] > 65535) {
            tw_set_err(err, err_len, "%s: token %d is outside uint16", path, p->tok[i]);
            return TW_ERR_ARG;
        }
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "wb") != TW_OK) {
        tw_set_err(err, err_len, "%s: cannot create: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    unsigned char h[12];
    memcpy(h, "pref", 4);
    put_i32(h + 4, TW_PAIRS_VERSION);
    put_i32(h + 8, (int32_t)p->n);
    int ok = fwrite(h, 1, 12, af.f) == 12;
    for (long i = 0; ok && i < p->n; i++) {
        for (int k = 0; k < 3; k++) put_i32(h + 4 * k, p->len[3 * i + k]);
        ok = fwrite(h, 1, 12, af.f) == 12;
        const long n = (long)p->len[3 * i] + p->len[3 * i + 1] + p->len[3 * i + 2];
        for (long j = 0; ok && j < n; j++) {
            const int t = p->tok[p->off[i] + j];
            const unsigned char two[2] = { (unsigned char)(t & 0xFF), (unsigned char)(t >> 8) };
            ok = fwrite(two, 1, 2, af.f) == 2;
        }
    }
    if (tw_atomic_commit(&af, ok) != TW_OK) {
        tw_set_err(err, err_len, "%s: write failed: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    return TW_OK;
}
