// bbpe.c: the byte-level BPE model: its tables (built by the readers), encode and decode.
// Encode, per call: bytes -> code points (utf8.h) -> sections between added tokens -> NFC if
// asked -> pieces (pretokenize.h) -> each piece's bytes merged by rank.
#include <stdlib.h>
#include <string.h>
#include "tokenize/bbpe.h"
#include "tokenize/nfc.h"
#include "tokenize/pretokenize.h"
#include "tokenize/utf8.h"

#define EMPTY_KEY UINT64_MAX

void tw_ids_free(tw_ids *v) {
    free(v->ids);
    memset(v, 0, sizeof *v);
}

static tw_status ids_push(tw_ids *v, int id) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        int *n = realloc(v->ids, cap * sizeof *n);
        if (!n) return TW_ERR_NOMEM;
        v->ids = n;
        v->cap = cap;
    }
    v->ids[v->n++] = id;
    return TW_OK;
}

// ---- tables ----

static uint64_t hash_bytes(const char *s, size_t n) {   // FNV-1a, 64-bit
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
    return h;
}

static uint64_t hash_pair(uint64_t key) {   // a 64-bit mixer (splitmix64's finaliser)
    key ^= key >> 30; key *= 0xbf58476d1ce4e5b9u;
    key ^= key >> 27; key *= 0x94d049bb133111ebu;
    return key ^ (key >> 31);
}

static size_t table_size(size_t n) {   // a power of two at least twice n
    size_t s = 16;
    while (s < 2 * n) s *= 2;
    return s;
}

tw_status tw_bbpe_init(tw_bbpe *t, int n_ids, int n_merges_max) {
    memset(t, 0, sizeof *t);
    if (n_ids <= 0 || n_merges_max < 0) return TW_ERR_ARG;
    size_t vs = table_size((size_t)n_ids), ms = table_size((size_t)n_merges_max);
    t->n_ids = n_ids;
    t->piece = calloc((size_t)n_ids, sizeof *t->piece);
    t->piece_len = calloc((size_t)n_ids, sizeof *t->piece_len);
    t->is_added = calloc((size_t)n_ids, 1);
    t->added = malloc((size_t)n_ids * sizeof *t->added);
    t->added_first = malloc((size_t)n_ids * sizeof *t->added_first);
    t->vocab_slot = malloc(vs * sizeof *t->vocab_slot);
    t->merge_key = malloc(ms * sizeof *t->merge_key);
    t->merge_rank = malloc(ms * sizeof *t->merge_rank);
    t->merge_to = malloc(ms * sizeof *t->merge_to);
    if (!t->piece || !t->piece_len || !t->is_added || !t->added || !t->added_first || !t->vocab_slot ||
        !t->merge_key || !t->merge_rank || !t->merge_to) {
        tw_bbpe_free(t);
        return TW_ERR_NOMEM;
    }
    t->vocab_mask = vs - 1;
    t->merge_mask = ms - 1;
    for (size_t i = 0; i < vs; i++) t->vocab_slot[i] = -1;
    for (size_t i = 0; i < ms; i++) t->merge_key[i] = EMPTY_KEY;
    for (int b = 0; b < 256; b++) t->byte_id[b] = -1;
    return TW_OK;
}

void tw_bbpe_free(tw_bbpe *t) {
    if (t->piece)
        for (int i = 0; i < t->n_ids; i++) free(t->piece[i]);
    free(t->piece); free(t->piece_len); free(t->is_added); free(t->added); free(t->added_first);
    free(t->vocab_slot); free(t->merge_key); free(t->merge_rank); free(t->merge_to);
    memset(t, 0, sizeof *t);
}

int tw_bbpe_lookup(const tw_bbpe *t, const char *bytes, size_t len) {
    for (size_t h = hash_bytes(bytes, len) & t->vocab_mask;; h = (h + 1) & t->vocab_mask) {
        int id = t->vocab_slot[h];
        if (id < 0) return -1;
        if (t->piece_len[id] == len && memcmp(t->piece[id], bytes, len) == 0) return id;
    }
}

const char *tw_bbpe_piece(const tw_bbpe *t, int id, size_t *len) {
    if (id < 0 || id >= t->n_ids || !t->piece[id]) return NULL;
    if (len) *len = t->piece_len[id];
    return t->piece[id];
}

tw_status tw_bbpe_add_piece(tw_bbpe *t, int id, const char *bytes, size_t len, int added,
                            const char **why) {
    if (id < 0 || id >= t->n_ids) { *why = "id out of range"; return TW_ERR_FORMAT; }
    if (t->piece[id]) { *why = "two tokens have the same id"; return TW_ERR_FORMAT; }
    if (len == 0 || len > UINT32_MAX) { *why = "empty token"; return TW_ERR_FORMAT; }
    if (tw_bbpe_lookup(t, bytes, len) >= 0) {
        *why = "the same token appears twice";
        return TW_ERR_FORMAT;
    }
    char *p = malloc(len + 1);
    if (!p) return TW_ERR_NOMEM;
    memcpy(p, bytes, len);
    p[len] = '\0';
    t->piece[id] = p;
    t->piece_len[id] = (uint32_t)len;
    t->is_added[id] = (uint8_t)(added != 0);
    if (added) t->added[t->n_added++] = id;
    if (len == 1 && !added) t->byte_id[(unsigned char)bytes[0]] = id;
    size_t h = hash_bytes(bytes, len) & t->vocab_mask;
    while (t->vocab_slot[h] >= 0) h = (h + 1) & t->vocab_mask;
    t->vocab_slot[h] = id;
    return TW_OK;
}

static size_t merge_find(const tw_bbpe *t, uint64_t key) {   // the slot of key, or an empty one
    size_t h = hash_pair(key) & t->merge_mask;
    while (t->merge_key[h] != EMPTY_KEY && t->merge_key[h] != key) h = (h + 1) & t->merge_mask;
    return h;
}

tw_status tw_bbpe_add_merge(tw_bbpe *t, const char *left, size_t left_len,
                            const char *right, size_t right_len, const char **why) {
    if ((size_t)t->n_merges * 2 >= t->merge_mask + 1) { *why = "more merges than announced"; return TW_ERR_FORMAT; }
    int a = tw_bbpe_lookup(t, left, left_len), b = tw_bbpe_lookup(t, right, right_len);
    if (a < 0 || b < 0 || t->is_added[a] || t->is_added[b]) {
        *why = "a merge names a piece that is not in the vocabulary";
        return TW_ERR_FORMAT;
    }
    char small[256], *buf = left_len + right_len <= sizeof small ? small : malloc(left_len + right_len);
    if (!buf) return TW_ERR_NOMEM;
    memcpy(buf, left, left_len);
    memcpy(buf + left_len, right, right_len);
    int c = tw_bbpe_lookup(t, buf, left_len + right_len);
    if (buf != small) free(buf);
    if (c < 0) { *why = "a merge makes a piece that is not in the vocabulary"; return TW_ERR_FORMAT; }
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t h = merge_find(t, key);
    // A merge listed twice takes its later rank, as in both JavaScript references (a map filled
    // in list order). GPT-2's package has five such repeats (see bbpe_read_gpt2.c).
    t->merge_key[h] = key;
    t->merge_rank[h] = t->n_merges++;
    t->merge_to[h] = c;
    return TW_OK;
}

tw_status tw_bbpe_finish(tw_bbpe *t, const char **why) {
    for (int b = 0; b < 256; b++)
        if (t->byte_id[b] < 0) { *why = "a byte has no token of its own"; return TW_ERR_FORMAT; }
    t->added_mask = 0;
    for (int k = 0; k < t->n_added; k++) {
        size_t n = t->piece_len[t->added[k]];
        uint32_t first[4];   // the first up-to-4 bytes hold the first code point
        tw_utf8_decode(first, t->piece[t->added[k]], n < 4 ? n : 4);
        uint32_t cp = first[0];
        t->added_first[k] = cp;
        t->added_mask |= (uint64_t)1 << (cp % 64);
    }
    return TW_OK;
}

// ---- merging one piece ----

typedef struct { int32_t rank; uint32_t pos; } cand;   // a possible merge of the pair at pos

// Scratch for one piece of up to cap bytes; arrays (cap) but the heap. Grown to the longest piece seen.
typedef struct {
    unsigned char *bytes;   // the piece's UTF-8
    int      *id;     // token at each start position (valid where alive)
    uint32_t *next;   // start of the next token, or n
    uint32_t *prev;   // start of the previous token, or UINT32_MAX
    cand     *heap;   // (2 cap) min-heap by (rank, pos)
    size_t    cap;
} merger;

static tw_status merger_reserve(merger *m, size_t n) {
    if (n <= m->cap) return TW_OK;
    size_t cap = m->cap ? m->cap : 256;
    while (cap < n) cap *= 2;
    unsigned char *b = realloc(m->bytes, cap);
    if (b) m->bytes = b;
    int *id = realloc(m->id, cap * sizeof *id);
    if (id) m->id = id;
    uint32_t *nx = realloc(m->next, cap * sizeof *nx);
    if (nx) m->next = nx;
    uint32_t *pv = realloc(m->prev, cap * sizeof *pv);
    if (pv) m->prev = pv;
    // Each merge pops one candidate and pushes at most two: at most 2 cap - 2 are ever queued.
    cand *h = realloc(m->heap, 2 * cap * sizeof *h);
    if (h) m->heap = h;
    if (!b || !id || !nx || !pv || !h) return TW_ERR_NOMEM;
    m->cap = cap;
    return TW_OK;
}

static void merger_free(merger *m) {
    free(m->bytes); free(m->id); free(m->next); free(m->prev); free(m->heap);
}

static int cand_less(cand x, cand y) { return x.rank < y.rank || (x.rank == y.rank && x.pos < y.pos); }

static void heap_push(cand *h, size_t *n, cand c) {
    size_t i = (*n)++;
    while (i > 0 && cand_less(c, h[(i - 1) / 2])) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = c;
}

static cand heap_pop(cand *h, size_t *n) {
    cand top = h[0], last = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= *n) break;
        if (k + 1 < *n && cand_less(h[k + 1], h[k])) k++;
        if (!cand_less(h[k], last)) break;
        h[i] = h[k];
        i = k;
    }
    if (*n > 0) h[i] = last;
    return top;
}

// The merge of tokens (a, b): its slot, or -1.
static long merge_of(const tw_bbpe *t, int a, int b) {
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t h = merge_find(t, key);
    return t->merge_key[h] == key ? (long)h : -1;
}

static void consider(const tw_bbpe *t, merger *m, size_t *hn, uint32_t pos, uint32_t n) {
    uint32_t nx = m->next[pos];
    if (nx >= n) return;
    long s = merge_of(t, m->id[pos], m->id[nx]);
    if (s >= 0) heap_push(m->heap, hn, (cand){ t->merge_rank[s], pos });
}

// BPE of bytes[0..n) (n <= m->cap), appending the ids to out.
static tw_status bpe_piece(const tw_bbpe *t, merger *m, tw_ids *out, const unsigned char *bytes, uint32_t n) {
    if (n == 1) return ids_push(out, t->byte_id[bytes[0]]);
    for (uint32_t i = 0; i < n; i++) {
        m->id[i] = t->byte_id[bytes[i]];
        m->next[i] = i + 1;
        m->prev[i] = i == 0 ? UINT32_MAX : i - 1;
    }
    size_t hn = 0;
    for (uint32_t i = 0; i + 1 < n; i++) consider(t, m, &hn, i, n);
    while (hn > 0) {
        cand c = heap_pop(m->heap, &hn);
        uint32_t a = c.pos, b = m->next[a];
        if (m->id[a] < 0 || b >= n) continue;          // a was merged into its left neighbour
        long s = merge_of(t, m->id[a], m->id[b]);
        if (s < 0 || t->merge_rank[s] != c.rank) continue;   // stale: a or b changed since
        m->id[a] = t->merge_to[s];
        m->id[b] = -1;
        m->next[a] = m->next[b];
        if (m->next[a] < n) m->prev[m->next[a]] = a;
        if (m->prev[a] != UINT32_MAX) consider(t, m, &hn, m->prev[a], n);
        consider(t, m, &hn, a, n);
    }
    for (uint32_t i = 0; i < n; i = m->next[i]) {
        tw_status st = ids_push(out, m->id[i]);
        if (st != TW_OK) return st;
    }
    return TW_OK;
}

// ---- encode ----

// The added token that matches cps[i..n) longest (its id, its length in *len), or -1.
static int added_at(const tw_bbpe *t, const uint32_t *cps, size_t n, size_t i, size_t *len) {
    int best = -1;
    size_t best_len = 0;
    *len = 0;
    if (!(t->added_mask >> (cps[i] % 64) & 1)) return -1;
    for (int k = 0; k < t->n_added; k++) {
        if (t->added_first[k] != cps[i]) continue;
        int id = t->added[k];
        // Compare in UTF-8: code point after code point, until the token's bytes run out.
        const char *p = t->piece[id];
        uint32_t plen = t->piece_len[id], at = 0;
        size_t j = i;
        while (at < plen && j < n) {
            char buf[4];
            size_t w = tw_utf8_put(buf, cps[j]);
            if (w > plen - at || memcmp(buf, p + at, w) != 0) break;
            at += (uint32_t)w;
            j++;
        }
        if (at == plen && j - i > best_len) { best = id; best_len = j - i; }
    }
    *len = best_len;
    return best;
}

// Encodes one section (no added tokens inside): NFC, pieces, merges.
static tw_status encode_section(const tw_bbpe *t, merger *m, uint32_t *norm,
                                tw_ids *out, const uint32_t *cps, size_t n) {
    if (t->nfc && !tw_nfc_trivially_normal(cps, n)) {
        n = tw_nfc(norm, cps, n);
        cps = norm;
    }
    for (size_t i = 0; i < n;) {
        size_t len = t->pretok == TW_PRETOK_QWEN ? tw_pretok_qwen_next(cps, n, i)
                                                 : tw_pretok_gpt2_next(cps, n, i);
        tw_status st = merger_reserve(m, 4 * len);   // at most 4 bytes per code point
        if (st != TW_OK) return st;
        size_t nb = 0;
        for (size_t k = i; k < i + len; k++) nb += tw_utf8_put((char *)m->bytes + nb, cps[k]);
        st = bpe_piece(t, m, out, m->bytes, (uint32_t)nb);
        if (st != TW_OK) return st;
        i += len;
    }
    return TW_OK;
}

tw_status tw_bbpe_encode(const tw_bbpe *t, tw_ids *out, const char *text, size_t len) {
    if (len == 0) return TW_OK;
    if (len > (UINT32_MAX / 16) - 1) return TW_ERR_ARG;
    // len bytes give at most len code points; NFC at most TW_NFC_MAX_GROWTH times as many.
    uint32_t *cps = malloc(len * sizeof *cps);
    uint32_t *norm = t->nfc ? malloc(TW_NFC_MAX_GROWTH * len * sizeof *norm) : NULL;
    merger m = { 0 };
    tw_status st = !cps || (t->nfc && !norm) ? TW_ERR_NOMEM : TW_OK;
    if (st == TW_OK) {
        size_t n = tw_utf8_decode(cps, text, len), start = 0;
        for (size_t i = 0; i < n && st == TW_OK;) {
            size_t alen = 0;
            int id = t->n_added ? added_at(t, cps, n, i, &alen) : -1;
            if (id < 0) { i++; continue; }
            if (i > start) st = encode_section(t, &m, norm, out, cps + start, i - start);
            if (st == TW_OK) st = ids_push(out, id);
            i += alen;
            start = i;
        }
        if (st == TW_OK && start < n) st = encode_section(t, &m, norm, out, cps + start, n - start);
    }
    free(cps);
    free(norm);
    merger_free(&m);
    return st;
}
