// bpe_pieces.c: the base alphabet, the piece table and the final vocabulary (see bpe_pieces.h),
// plus the parts of bpe_train.h that do not depend on the trainer (free, write, to_tokenizer).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/atomic_file.h"
#include "tokenize/bpe_pieces.h"

static void set_err(char *err, size_t len, const char *fmt, long a, long b, long c) {
    if (err == NULL || len == 0) return;
    snprintf(err, len, fmt, a, b, c);
}

// ---- the piece table ----

static int grow(bpe_pieces *p, int need) {
    if (need <= p->cap) return 1;
    int cap = p->cap ? p->cap : 512;
    while (cap < need) cap *= 2;
    size_t *off = realloc(p->off, (size_t)cap * sizeof *off);
    if (off) p->off = off;
    int *len = realloc(p->len, (size_t)cap * sizeof *len);
    if (len) p->len = len;
    long long *mc = realloc(p->m_count, (size_t)cap * sizeof *mc);
    if (mc) p->m_count = mc;
    int *ml = realloc(p->m_left, (size_t)cap * sizeof *ml);
    if (ml) p->m_left = ml;
    int *mr = realloc(p->m_right, (size_t)cap * sizeof *mr);
    if (mr) p->m_right = mr;
    long long *ma = realloc(p->m_after, (size_t)cap * sizeof *ma);
    if (ma) p->m_after = ma;
    if (!off || !len || !mc || !ml || !mr || !ma) return 0;
    p->cap = cap;
    return 1;
}

// Appends a piece made of the bytes s1 (n1) then s2 (n2). Returns its id or -1.
static int add_piece(bpe_pieces *p, const char *s1, int n1, const char *s2, int n2) {
    if (!grow(p, p->n + 1)) return -1;
    size_t need = p->pool_len + (size_t)n1 + (size_t)n2;
    if (need > p->pool_cap) {
        size_t cap = p->pool_cap ? p->pool_cap : 4096;
        while (cap < need) cap *= 2;
        char *pool = realloc(p->pool, cap);
        if (!pool) return -1;
        p->pool = pool;
        p->pool_cap = cap;
    }
    // (s1/s2 may point into the pool: bpe_pieces_add_merge reserves the room first, so the pool
    // does not move here in that case.)
    memcpy(p->pool + p->pool_len, s1, (size_t)n1);
    if (n2) memcpy(p->pool + p->pool_len + n1, s2, (size_t)n2);
    p->off[p->n] = p->pool_len;
    p->len[p->n] = n1 + n2;
    p->m_count[p->n] = 0;
    p->m_left[p->n] = p->m_right[p->n] = -1;
    p->m_after[p->n] = 0;
    p->pool_len = need;
    return p->n++;
}

int bpe_pieces_add_merge(bpe_pieces *p, int a, int b, long long count, long long tokens_after) {
    // Reserve room first, so the pool cannot move between taking the offsets and copying.
    size_t need = p->pool_len + (size_t)p->len[a] + (size_t)p->len[b];
    if (need > p->pool_cap) {
        size_t cap = p->pool_cap;
        while (cap < need) cap *= 2;
        char *pool = realloc(p->pool, cap);
        if (!pool) return -1;
        p->pool = pool;
        p->pool_cap = cap;
    }
    int id = add_piece(p, p->pool + p->off[a], p->len[a], p->pool + p->off[b], p->len[b]);
    if (id < 0) return -1;
    p->m_count[id] = count;
    p->m_left[id] = a;
    p->m_right[id] = b;
    p->m_after[id] = tokens_after;
    return id;
}

int bpe_cmp_concat(const bpe_pieces *p, int a1, int b1, int a2, int b2) {
    const unsigned char *x1 = (const unsigned char *)bpe_piece(p, a1), *y1 = (const unsigned char *)bpe_piece(p, a2);
    int nx1 = p->len[a1], ny1 = p->len[a2];
    const unsigned char *x2 = b1 >= 0 ? (const unsigned char *)bpe_piece(p, b1) : NULL;
    const unsigned char *y2 = b2 >= 0 ? (const unsigned char *)bpe_piece(p, b2) : NULL;
    int nx = nx1 + (b1 >= 0 ? p->len[b1] : 0), ny = ny1 + (b2 >= 0 ? p->len[b2] : 0);
    int n = nx < ny ? nx : ny;
    for (int k = 0; k < n; k++) {
        unsigned char cx = k < nx1 ? x1[k] : x2[k - nx1];
        unsigned char cy = k < ny1 ? y1[k] : y2[k - ny1];
        if (cx != cy) return cx < cy ? -1 : 1;
    }
    return nx < ny ? -1 : nx > ny;
}

static int is_upper_hex(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }

int bpe_spells_byte_token(const bpe_pieces *p, int a, int b) {
    const unsigned char *x = (const unsigned char *)bpe_piece(p, a), *y = (const unsigned char *)bpe_piece(p, b);
    int nx = p->len[a], n = nx + p->len[b];
    for (int i = 0; i + 6 <= n; i++) {
        unsigned char w[6];
        for (int k = 0; k < 6; k++) w[k] = i + k < nx ? x[i + k] : y[i + k - nx];
        if (w[0] == '<' && w[1] == '0' && w[2] == 'x' && is_upper_hex(w[3]) && is_upper_hex(w[4]) && w[5] == '>')
            return 1;
    }
    return 0;
}

// ---- the base alphabet ----

static int is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The code point of a valid UTF-8 encoding of exactly len bytes, or -1 (overlong forms,
// surrogates, values above U+10FFFF and NUL are not characters here).
static long decode_utf8(const unsigned char *s, size_t len) {
    unsigned char c = s[0];
    if (len == 1) return (c >= 0x01 && c < 0x80) ? c : -1;
    long cp;
    long min;
    if (c >= 0xC2 && c <= 0xDF) { if (len != 2) return -1; cp = c & 0x1F; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { if (len != 3) return -1; cp = c & 0x0F; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { if (len != 4) return -1; cp = c & 0x07; min = 0x10000; }
    else return -1;
    for (size_t i = 1; i < len; i++) cp = (cp << 6) | (s[i] & 0x3F);
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    return cp;
}

static size_t group_len(const unsigned char *s, size_t n) {
    size_t len = 1;
    while (len < 4 && len < n && is_continuation(s[len])) len++;
    return len;
}

// The slot of code point cp: where it is, or the empty slot where it would go.
static size_t cp_slot(const bpe_pieces *p, long cp) {
    size_t i = ((size_t)cp * 0x9E3779B1u) & p->cp_mask;
    while (p->cp[i].cp != cp && p->cp[i].cp != -1) i = (i + 1) & p->cp_mask;
    return i;
}

// Counts one occurrence of cp, growing the table to stay at most half full. 0 if out of memory.
static int cp_count(bpe_pieces *p, long cp) {
    size_t i = cp_slot(p, cp);
    if (p->cp[i].cp == cp) { p->cp[i].count++; return 1; }
    p->cp[i] = (bpe_char_slot){ (int32_t)cp, -1, 1 };
    if (2 * ++p->cp_used <= p->cp_mask + 1) return 1;
    bpe_char_slot *old = p->cp;
    size_t old_n = p->cp_mask + 1;
    p->cp = malloc(2 * old_n * sizeof *p->cp);
    if (!p->cp) { p->cp = old; return 0; }
    p->cp_mask = 2 * old_n - 1;
    for (size_t k = 0; k <= p->cp_mask; k++) p->cp[k].cp = -1;
    for (size_t k = 0; k < old_n; k++)
        if (old[k].cp != -1) p->cp[cp_slot(p, old[k].cp)] = old[k];
    free(old);
    return 1;
}

size_t bpe_group(const bpe_pieces *p, int *id, const unsigned char *s, size_t n) {
    size_t len = group_len(s, n);
    long cp = decode_utf8(s, len);
    *id = -1;
    if (cp >= 0) {
        const bpe_char_slot *c = &p->cp[cp_slot(p, cp)];
        if (c->cp == cp) *id = c->id;
    }
    return len;
}

size_t bpe_text_pieces(const bpe_pieces *p, int *out, const char *text, size_t n) {
    const unsigned char *s = (const unsigned char *)text;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        int id;
        size_t len = bpe_group(p, &id, s + i, n - i);
        if (id >= 0) out[k++] = id;
        else for (size_t j = 0; j < len; j++) out[k++] = 3 + s[i + j];
        i += len;
    }
    return k;
}

typedef struct { long cp; long long count; } char_count;

// Most frequent first; ties by code point, which is also UTF-8 byte order.
static int by_count_desc(const void *x, const void *y) {
    const char_count *a = x, *b = y;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return (a->cp > b->cp) - (a->cp < b->cp);
}

static int encode_utf8(char *out, long cp) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12)); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18)); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

tw_status bpe_pieces_init(bpe_pieces *p, const char *text, size_t n, int min_char_count,
                          int vocab_size, char *err, size_t err_len) {
    memset(p, 0, sizeof *p);
    p->cp_mask = 255;
    p->cp = malloc((p->cp_mask + 1) * sizeof *p->cp);
    if (!p->cp) goto nomem;
    for (size_t k = 0; k <= p->cp_mask; k++) p->cp[k].cp = -1;

    // The reserved pieces, spelled as in tok512.bin.
    if (add_piece(p, "<unk>", 5, "", 0) < 0 || add_piece(p, "\n<s>\n", 5, "", 0) < 0 ||
        add_piece(p, "\n</s>\n", 6, "", 0) < 0)
        goto nomem;
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        if (add_piece(p, name, 6, "", 0) < 0) goto nomem;
    }

    // Count the characters, then take " " and every character seen min_char_count times.
    const unsigned char *s = (const unsigned char *)text;
    // (" " is counted too, so it has a slot: it joins the base however rare it is.)
    if (!cp_count(p, ' ')) goto nomem;
    for (size_t i = 0; i < n;) {
        size_t len = group_len(s + i, n - i);
        long cp = decode_utf8(s + i, len);
        if (cp >= 0 && !cp_count(p, cp)) goto nomem;
        i += len;
    }
    char_count *chars = malloc((p->cp_mask + 1) * sizeof *chars);
    if (!chars) goto nomem;
    long nc = 0;
    for (size_t k = 0; k <= p->cp_mask; k++) {
        const bpe_char_slot *c = &p->cp[k];
        if (c->cp != -1 && c->cp != ' ' && c->count >= min_char_count) chars[nc++] = (char_count){ c->cp, c->count };
    }
    qsort(chars, (size_t)nc, sizeof *chars, by_count_desc);
    long base = TW_BPE_N_RESERVED + 1 + nc;
    if (vocab_size < base) {
        set_err(err, err_len, "a vocabulary of %ld pieces is smaller than this text's base of %ld "
                "(259 special and byte tokens, \" \" and %ld characters that occur often enough)",
                vocab_size, base, nc);
        free(chars);
        bpe_pieces_free(p);
        return TW_ERR_ARG;
    }
    char u[4];
    p->cp[cp_slot(p, ' ')].id = add_piece(p, " ", 1, "", 0);
    if (p->cp[cp_slot(p, ' ')].id < 0) { free(chars); goto nomem; }
    for (long i = 0; i < nc; i++) {
        int id = add_piece(p, u, encode_utf8(u, chars[i].cp), "", 0);
        if (id < 0) { free(chars); goto nomem; }
        p->cp[cp_slot(p, chars[i].cp)].id = id;
    }
    p->n_chars = (int)nc + 1;
    free(chars);
    return TW_OK;

nomem:
    bpe_pieces_free(p);
    set_err(err, err_len, "out of memory building the base alphabet of a %ld-byte text", (long)n, 0, 0);
    return TW_ERR_NOMEM;
}

int tw_bpe_base_size(const char *text, size_t n, int min_char_count) {
    bpe_pieces p;
    if (bpe_pieces_init(&p, text, n, min_char_count < 1 ? 1 : min_char_count, 1 << 30, NULL, 0) != TW_OK) return -1;
    int base = p.n;
    bpe_pieces_free(&p);
    return base;
}

void bpe_pieces_free(bpe_pieces *p) {
    free(p->off); free(p->len); free(p->pool); free(p->cp);
    free(p->m_count); free(p->m_left); free(p->m_right); free(p->m_after);
    memset(p, 0, sizeof *p);
}

void bpe_err_exhausted(char *err, size_t err_len, const bpe_pieces *p, int min_pair_count,
                       int vocab_size) {
    if (err == NULL || err_len == 0) return;
    snprintf(err, err_len, "the text supports at most %d pieces, not %d: after %d merges no pair of "
             "pieces is left that occurs %d times or more", p->n, vocab_size,
             p->n - TW_BPE_N_RESERVED - p->n_chars, min_pair_count);
}

// ---- the final vocabulary ----

tw_status bpe_pieces_finish(tw_bpe_vocab *v, bpe_pieces *p, long long tokens_before) {
    memset(v, 0, sizeof *v);
    const int V = p->n, nc = p->n_chars, nm = p->n - TW_BPE_N_RESERVED - p->n_chars;
    // internal id -> final id: learned pieces move in front of the characters
    int *final = malloc((size_t)V * sizeof *final);
    v->pieces = malloc((size_t)V * sizeof *v->pieces);
    v->lengths = malloc((size_t)V * sizeof *v->lengths);
    v->scores = malloc((size_t)V * sizeof *v->scores);
    v->pool = malloc(p->pool_len + (size_t)V);
    v->merge_count = malloc(((size_t)nm + 1) * sizeof *v->merge_count);
    v->merge_left = malloc(((size_t)nm + 1) * sizeof *v->merge_left);
    v->merge_right = malloc(((size_t)nm + 1) * sizeof *v->merge_right);
    v->tokens_after = malloc(((size_t)nm + 1) * sizeof *v->tokens_after);
    if (!final || !v->pieces || !v->lengths || !v->scores || !v->pool || !v->merge_count ||
        !v->merge_left || !v->merge_right || !v->tokens_after) {
        free(final);
        tw_bpe_vocab_free(v);
        bpe_pieces_free(p);
        return TW_ERR_NOMEM;
    }
    for (int i = 0; i < V; i++) {
        if (i < TW_BPE_N_RESERVED) final[i] = i;
        else if (i < TW_BPE_N_RESERVED + nc) final[i] = i + nm;          // a character
        else final[i] = i - nc;                                         // a learned piece
    }
    char *dst = v->pool;
    int max_len = 0;
    for (int i = 0; i < V; i++) {
        int f = final[i];
        memcpy(dst, bpe_piece(p, i), (size_t)p->len[i]);
        dst[p->len[i]] = '\0';
        v->pieces[f] = dst;
        v->lengths[f] = p->len[i];
        dst += p->len[i] + 1;
        if (p->len[i] > max_len) max_len = p->len[i];
        if (i < TW_BPE_N_RESERVED) v->scores[f] = TW_BPE_NO_MERGE_SCORE;
        else v->scores[f] = -(float)(f - TW_BPE_N_RESERVED);   // learned: -k; characters: below
    }
    for (int k = 0; k < nm; k++) {
        int i = TW_BPE_N_RESERVED + nc + k;
        v->merge_count[k] = p->m_count[i];
        v->merge_left[k] = final[p->m_left[i]];
        v->merge_right[k] = final[p->m_right[i]];
        v->tokens_after[k] = p->m_after[i];
    }
    v->vocab_size = V;
    v->n_merges = nm;
    v->n_chars = nc;
    v->max_token_length = max_len;
    v->tokens_before = tokens_before;
    free(final);
    bpe_pieces_free(p);
    return TW_OK;
}

void tw_bpe_vocab_free(tw_bpe_vocab *v) {
    free(v->pieces); free(v->lengths); free(v->scores); free(v->pool);
    free(v->merge_count); free(v->merge_left); free(v->merge_right); free(v->tokens_after);
    memset(v, 0, sizeof *v);
}

// ---- writing and handing over to the encoder ----

static int put_i32(FILE *f, int32_t x) {
    uint32_t u = (uint32_t)x;
    unsigned char b[4] = { (unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16), (unsigned char)(u >> 24) };
    return fwrite(b, 1, 4, f) == 4;
}

tw_status tw_bpe_vocab_write(const tw_bpe_vocab *v, const char *path) {
    tw_atomic_file af;
    tw_status st = tw_atomic_open(&af, path, "wb");
    if (st != TW_OK) return st;
    int ok = put_i32(af.f, v->max_token_length);
    for (int i = 0; ok && i < v->vocab_size; i++) {
        int32_t bits;
        memcpy(&bits, &v->scores[i], sizeof bits);
        ok = put_i32(af.f, bits) && put_i32(af.f, v->lengths[i]) &&
             fwrite(v->pieces[i], 1, (size_t)v->lengths[i], af.f) == (size_t)v->lengths[i];
    }
    return tw_atomic_commit(&af, ok);
}

typedef struct { const char *s; int id; } sort_item;

static int by_string_then_id(const void *x, const void *y) {
    const sort_item *a = x, *b = y;
    int c = strcmp(a->s, b->s);
    return c ? c : (a->id > b->id) - (a->id < b->id);
}

tw_status tw_bpe_vocab_to_tokenizer(tw_tokenizer *t, const tw_bpe_vocab *v) {
    memset(t, 0, sizeof *t);
    const int V = v->vocab_size;
    size_t pool_bytes = 0;
    for (int i = 0; i < V; i++) pool_bytes += (size_t)v->lengths[i] + 1;
    t->vocab = malloc((size_t)V * sizeof *t->vocab);
    t->scores = malloc((size_t)V * sizeof *t->scores);
    t->sorted = malloc((size_t)V * sizeof *t->sorted);
    t->pool = malloc(pool_bytes);
    sort_item *items = malloc((size_t)V * sizeof *items);
    if (!t->vocab || !t->scores || !t->sorted || !t->pool || !items) {
        free(items);
        tw_tokenizer_free(t);
        return TW_ERR_NOMEM;
    }
    char *dst = t->pool;
    for (int i = 0; i < V; i++) {
        memcpy(dst, v->pieces[i], (size_t)v->lengths[i] + 1);
        t->vocab[i] = dst;
        dst += v->lengths[i] + 1;
        t->scores[i] = v->scores[i];
        items[i] = (sort_item){ t->vocab[i], i };
    }
    qsort(items, (size_t)V, sizeof *items, by_string_then_id);
    for (int i = 0; i < V; i++) t->sorted[i] = items[i].id;
    free(items);
    for (int b = 0; b < 256; b++) {
        t->byte_pieces[2 * b] = (char)b;
        t->byte_pieces[2 * b + 1] = '\0';
    }
    t->vocab_size = V;
    t->max_token_length = v->max_token_length;
    return TW_OK;
}
