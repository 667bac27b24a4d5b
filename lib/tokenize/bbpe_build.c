// bbpe_build.c: from parsed vocabulary and merges to a tw_bbpe (bbpe_read.h): byte-level pieces
// are turned back into the bytes they stand for, ids and pieces are checked unique, merges are
// checked to join known pieces.
#include <stdlib.h>
#include <string.h>
#include "tokenize/bbpe_read.h"
#include "tokenize/byte_level.h"
#include "tokenize/utf8.h"

#define MAX_IDS (1 << 24)

// Turns the byte-level spelling s[0..n) into the bytes it stands for (out: n bytes suffice, as
// each character is at least one byte). Returns the byte count, or 0 if a character is not one
// of the 256 of the map (or s is not valid UTF-8).
static size_t unbyte(char *out, const char *s, size_t n, uint32_t *cps, const int inv[324]) {
    size_t m = tw_utf8_decode(cps, s, n);
    for (size_t i = 0; i < m; i++) {
        if (cps[i] >= 324 || inv[cps[i]] < 0) return 0;
        out[i] = (char)inv[cps[i]];
    }
    return m;
}

static int valid_id(const tw_json *v) {
    return v && v->type == TW_JSON_NUMBER && v->is_integer && v->integer >= 0 && v->integer < MAX_IDS;
}

// Splits a "left right" line (exactly one space) into its two sides; 0 if it is not one.
static int split_pair(const char *s, size_t n, size_t *left_len, const char **right, size_t *right_len) {
    const char *sp = memchr(s, ' ', n);
    if (!sp || sp == s || sp == s + n - 1 || memchr(sp + 1, ' ', (size_t)(s + n - sp - 1))) return 0;
    *left_len = (size_t)(sp - s);
    *right = sp + 1;
    *right_len = n - *left_len - 1;
    return 1;
}

typedef struct { char *bytes_a, *bytes_b; uint32_t *cps; const int *inv; } scratch;

static tw_status add_merge_text(tw_bbpe *t, scratch *w, const char *a, size_t an, const char *b,
                                size_t bn, const char **why) {
    size_t x = unbyte(w->bytes_a, a, an, w->cps, w->inv);
    size_t y = unbyte(w->bytes_b, b, bn, w->cps, w->inv);
    if (!x || !y) { *why = "a merge names a piece that is not in the vocabulary"; return TW_ERR_FORMAT; }
    return tw_bbpe_add_merge(t, w->bytes_a, x, w->bytes_b, y, why);
}

static tw_status add_merges_json(tw_bbpe *t, scratch *w, const tw_json *merges, const char **why) {
    for (size_t i = 0; i < merges->count; i++) {
        const tw_json *m = &merges->items[i];
        tw_status st;
        if (m->type == TW_JSON_STRING) {
            size_t ln, rn;
            const char *r;
            if (!split_pair(m->string, m->len, &ln, &r, &rn)) {
                *why = "a merge is not two pieces separated by one space";
                return TW_ERR_FORMAT;
            }
            st = add_merge_text(t, w, m->string, ln, r, rn, why);
        } else if (m->type == TW_JSON_ARRAY && m->count == 2 && m->items[0].type == TW_JSON_STRING &&
                   m->items[1].type == TW_JSON_STRING) {
            st = add_merge_text(t, w, m->items[0].string, m->items[0].len, m->items[1].string,
                                m->items[1].len, why);
        } else {
            *why = "a merge is neither \"left right\" nor [\"left\", \"right\"]";
            return TW_ERR_FORMAT;
        }
        if (st != TW_OK) return st;
    }
    return TW_OK;
}

// GPT-2's vocab.bpe: the first line is "#version: 0.2"; every other line one merge, its two
// pieces separated by spaces. A line that does not hold exactly two pieces is skipped, as the
// reference encoder skips it (its bpe_ranks table is looked up by pairs only): the package's
// vocab.js holds 22 such lines (a backslash at the end of a line of its JavaScript template
// string joined two lines), and docs/tokenizers.md says what that changes.
static tw_status add_merges_text(tw_bbpe *t, scratch *w, const char *s, size_t n, const char **why) {
    size_t i = 0;
    if (n >= 8 && memcmp(s, "#version", 8) == 0)
        while (i < n && s[i++] != '\n') {}
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != '\n') j++;
        const char *f[3];
        size_t fl[3], nf = 0;
        for (size_t k = i; k < j;) {
            while (k < j && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r')) k++;
            if (k == j) break;
            size_t e = k;
            while (e < j && s[e] != ' ' && s[e] != '\t' && s[e] != '\r') e++;
            if (nf < 3) { f[nf] = s + k; fl[nf] = e - k; }
            nf++;
            k = e;
        }
        if (nf == 2) {
            tw_status st = add_merge_text(t, w, f[0], fl[0], f[1], fl[1], why);
            if (st != TW_OK) return st;
        } else if (nf != 0) {
            t->n_merges++;   // the skipped line still takes its rank, as in the reference
        }
        i = j + 1;
    }
    return TW_OK;
}

static size_t count_lines(const char *s, size_t n) {
    size_t c = 1;
    for (size_t i = 0; i < n; i++) c += s[i] == '\n';
    return c;
}

// The largest id in vocab and added (both checked), or -1 with *why.
static long max_id(const tw_bbpe_source *src, size_t *longest, const char **why) {
    long top = -1;
    *longest = 0;
    for (size_t i = 0; i < src->vocab->count; i++) {
        const tw_json *v = &src->vocab->items[i];
        if (!valid_id(v)) { *why = "a vocabulary id is not an integer in [0, 16777216)"; return -1; }
        if (v->integer > top) top = (long)v->integer;
        size_t kl = strlen(v->key);
        if (kl > *longest) *longest = kl;
    }
    for (size_t i = 0; src->added && i < src->added->count; i++) {
        const tw_json *a = &src->added->items[i], *id = tw_json_get(a, "id"), *c = tw_json_get(a, "content");
        if (!valid_id(id) || !c || c->type != TW_JSON_STRING || c->len == 0) {
            *why = "an added token lacks an integer \"id\" in [0, 16777216) or a non-empty \"content\"";
            return -1;
        }
        if (id->integer > top) top = (long)id->integer;
    }
    if (top < 0) *why = "the vocabulary is empty";
    return top;
}

tw_status tw_bbpe_build(tw_bbpe *t, const tw_bbpe_source *src, const char **why) {
    *why = NULL;
    size_t longest;
    long top = max_id(src, &longest, why);
    if (top < 0) { memset(t, 0, sizeof *t); return TW_ERR_FORMAT; }
    size_t n_merges = src->merges ? src->merges->count : count_lines(src->merges_text, src->merges_len);
    if (n_merges > MAX_IDS) { *why = "more than 16777216 merges"; memset(t, 0, sizeof *t); return TW_ERR_FORMAT; }
    tw_status st = tw_bbpe_init(t, (int)top + 1, (int)n_merges);
    if (st != TW_OK) return st;
    uint32_t map[256];
    int inv[324];
    tw_byte_level_map(map);
    for (int i = 0; i < 324; i++) inv[i] = -1;
    for (int b = 0; b < 256; b++) inv[map[b]] = b;
    // A merge side is at most as long as the merged piece, which is in the vocabulary; the
    // merges file may still hold longer garbage, so the scratch covers its whole length too.
    size_t cap = longest + 1;
    if (src->merges_text && src->merges_len + 1 > cap) cap = src->merges_len + 1;
    for (size_t i = 0; src->merges && i < src->merges->count; i++) {
        const tw_json *m = &src->merges->items[i];
        size_t l = m->type == TW_JSON_STRING ? m->len : 0;
        if (m->type == TW_JSON_ARRAY)
            for (size_t k = 0; k < m->count; k++) l += m->items[k].len;
        if (l + 1 > cap) cap = l + 1;
    }
    scratch w = { malloc(cap), malloc(cap), malloc(cap * sizeof(uint32_t)), inv };
    if (!w.bytes_a || !w.bytes_b || !w.cps) st = TW_ERR_NOMEM;
    for (size_t i = 0; st == TW_OK && i < src->vocab->count; i++) {
        const tw_json *v = &src->vocab->items[i];
        size_t kl = strlen(v->key), n = unbyte(w.bytes_a, v->key, kl, w.cps, inv);
        if (n == 0) { *why = "a vocabulary piece is not spelled in GPT-2's byte-to-unicode alphabet"; st = TW_ERR_FORMAT; break; }
        st = tw_bbpe_add_piece(t, (int)v->integer, w.bytes_a, n, 0, why);
    }
    for (size_t i = 0; st == TW_OK && src->added && i < src->added->count; i++) {
        const tw_json *a = &src->added->items[i];
        const tw_json *id = tw_json_get(a, "id"), *c = tw_json_get(a, "content");
        const tw_json *ls = tw_json_get(a, "lstrip"), *rs = tw_json_get(a, "rstrip");
        if ((ls && ls->type == TW_JSON_BOOL && ls->boolean) || (rs && rs->type == TW_JSON_BOOL && rs->boolean)) {
            *why = "an added token strips spaces (lstrip/rstrip): not supported";
            st = TW_ERR_FORMAT;
            break;
        }
        st = tw_bbpe_add_piece(t, (int)id->integer, c->string, c->len, 1, why);
    }
    if (st == TW_OK)
        st = src->merges ? add_merges_json(t, &w, src->merges, why)
                         : add_merges_text(t, &w, src->merges_text, src->merges_len, why);
    if (st == TW_OK) st = tw_bbpe_finish(t, why);
    free(w.bytes_a); free(w.bytes_b); free(w.cps);
    if (st != TW_OK) tw_bbpe_free(t);
    return st;
}
