// tokenizer.c: loading llama2.c tokenizer files, BPE encoding and decoding (see tokenizer.h).
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tokenize/tokenizer.h"
#include "tokenize/special.h"
#include "formats/regular_file.h"

// ---- loading ----

static void set_err(char *err, size_t len, const char *path, const char *msg, long a, long b) {
    if (err == NULL || len == 0) return;
    char what[256];
    snprintf(what, sizeof what, msg, a, b);
    snprintf(err, len, "%s: %s", path, what);
}

static int32_t read_i32le(const unsigned char *p) {
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static float read_f32le(const unsigned char *p) {
    uint32_t u = (uint32_t)read_i32le(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// Reads the whole file into a malloc'd buffer (*bytes its size).
static tw_status slurp(unsigned char **buf, long *bytes, const char *path, char *err, size_t err_len) {
    *buf = NULL;
    *bytes = 0;
    FILE *f;
    char why[200];
    tw_file_open_result fr = tw_regular_file_open(&f, why, sizeof why, path,
                                                  "a llama2.c tokenizer file (.bin, e.g. tok512.bin)");
    if (fr == TW_FILE_NOT_REGULAR) {
        if (err && err_len) snprintf(err, err_len, "%s: %s", path, why);
        return TW_ERR_IO;
    }
    if (fr != TW_FILE_OK) { set_err(err, err_len, path, "cannot open the tokenizer file", 0, 0); return TW_ERR_IO; }
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        set_err(err, err_len, path, "cannot determine the file size", 0, 0);
        return TW_ERR_IO;
    }
    unsigned char *b = malloc((size_t)n + 1);
    if (b == NULL) { fclose(f); set_err(err, err_len, path, "out of memory reading %ld bytes", n, 0); return TW_ERR_NOMEM; }
    if (fread(b, 1, (size_t)n, f) != (size_t)n) {
        fclose(f); free(b);
        set_err(err, err_len, path, "read error", 0, 0);
        return TW_ERR_IO;
    }
    fclose(f);
    *buf = b;
    *bytes = n;
    return TW_OK;
}

// Merge sort of ids by (string, id), so duplicate strings resolve to the lowest id. (qsort would
// need the vocabulary in a global to compare ids.)
static void sort_ids(int *ids, int *tmp, int n, char *const *vocab) {
    if (n < 2) return;
    int h = n / 2;
    sort_ids(ids, tmp, h, vocab);
    sort_ids(ids + h, tmp, n - h, vocab);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) {
        int c = strcmp(vocab[ids[i]], vocab[ids[j]]);
        tmp[k++] = (c < 0 || (c == 0 && ids[i] < ids[j])) ? ids[i++] : ids[j++];
    }
    while (i < h) tmp[k++] = ids[i++];
    while (j < n) tmp[k++] = ids[j++];
    memcpy(ids, tmp, (size_t)n * sizeof *ids);
}

tw_status tw_tokenizer_load(tw_tokenizer *t, const char *path, int vocab_size,
                            char *err, size_t err_len) {
    memset(t, 0, sizeof *t);
    if (vocab_size < 3) {
        set_err(err, err_len, path, "vocabulary size %ld is too small (needs at least <unk>, BOS, EOS)", vocab_size, 0);
        return TW_ERR_FORMAT;
    }
    unsigned char *buf;
    long bytes;
    tw_status st = slurp(&buf, &bytes, path, err, err_len);
    if (st != TW_OK) return st;

    // First pass: validate every record against the file size and total the string bytes.
    st = TW_ERR_FORMAT;
    if (bytes < 4) { set_err(err, err_len, path, "file is %ld bytes, too short for the header", bytes, 0); goto fail; }
    int32_t max_len = read_i32le(buf);
    if (max_len <= 0 || max_len > 65536) {
        set_err(err, err_len, path, "max_token_length %ld is not in 1..65536", max_len, 0);
        goto fail;
    }
    long off = 4, pool_bytes = 0;
    for (int i = 0; i < vocab_size; i++) {
        if (bytes - off < 8) {
            set_err(err, err_len, path, "file ends inside the header of token %ld (of %ld expected)", i, vocab_size);
            goto fail;
        }
        float score = read_f32le(buf + off);
        int32_t len = read_i32le(buf + off + 4);
        off += 8;
        if (isnan(score)) { set_err(err, err_len, path, "token %ld has a NaN score", i, 0); goto fail; }
        if (len < 0 || len > max_len) {
            set_err(err, err_len, path, "token %ld has length %ld, outside 0..max_token_length", i, len);
            goto fail;
        }
        if (bytes - off < len) {
            set_err(err, err_len, path, "token %ld's %ld bytes run past the end of the file", i, len);
            goto fail;
        }
        off += len;
        pool_bytes += len + 1;
    }
    if (off != bytes) {
        set_err(err, err_len, path, "%ld bytes follow the last token: the file holds more tokens than "
                "the model's vocabulary of %ld (tokenizer of another model?)", bytes - off, vocab_size);
        goto fail;
    }

    // Second pass: copy the strings out.
    st = TW_ERR_NOMEM;
    t->vocab = malloc((size_t)vocab_size * sizeof *t->vocab);
    t->scores = malloc((size_t)vocab_size * sizeof *t->scores);
    t->sorted = malloc((size_t)vocab_size * sizeof *t->sorted);
    t->pool = malloc((size_t)pool_bytes);
    int *tmp = malloc((size_t)vocab_size * sizeof *tmp);
    if (!t->vocab || !t->scores || !t->sorted || !t->pool || !tmp) {
        free(tmp);
        set_err(err, err_len, path, "out of memory for %ld tokens", vocab_size, 0);
        goto fail;
    }
    off = 4;
    char *p = t->pool;
    for (int i = 0; i < vocab_size; i++) {
        t->scores[i] = read_f32le(buf + off);
        int32_t len = read_i32le(buf + off + 4);
        off += 8;
        memcpy(p, buf + off, (size_t)len);
        p[len] = '\0';
        t->vocab[i] = p;
        p += len + 1;
        off += len;
        t->sorted[i] = i;
    }
    sort_ids(t->sorted, tmp, vocab_size, t->vocab);
    t->n_special = tw_special_list(tmp, t->vocab, vocab_size);
    t->special = malloc((size_t)(t->n_special > 0 ? t->n_special : 1) * sizeof *t->special);
    if (t->special == NULL) {
        free(tmp);
        set_err(err, err_len, path, "out of memory for %ld tokens", vocab_size, 0);
        goto fail;
    }
    memcpy(t->special, tmp, (size_t)t->n_special * sizeof *tmp);
    free(tmp);
    for (int b = 0; b < 256; b++) {
        t->byte_pieces[2 * b] = (char)b;
        t->byte_pieces[2 * b + 1] = '\0';
    }
    t->vocab_size = vocab_size;
    t->max_token_length = max_len;
    free(buf);
    return TW_OK;

fail:
    free(buf);
    tw_tokenizer_free(t);
    return st;
}

void tw_tokenizer_free(tw_tokenizer *t) {
    free(t->vocab);
    free(t->scores);
    free(t->sorted);
    free(t->pool);
    free(t->special);
    memset(t, 0, sizeof *t);
}

// ---- encoding ----

int tw_tokenizer_lookup(const tw_tokenizer *t, const char *s) {
    int lo = 0, hi = t->vocab_size;   // first sorted index whose string is >= s
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(t->vocab[t->sorted[mid]], s) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < t->vocab_size && strcmp(t->vocab[t->sorted[lo]], s) == 0) return t->sorted[lo];
    return -1;
}

size_t tw_tokenizer_max_tokens(const char *text) { return strlen(text) + 3; }

static int is_utf8_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The id of the vocabulary string vocab[a] + vocab[b], or -1 (buf: scratch of buf_len bytes).
// (memcpy rather than snprintf: this runs two or three times per merge, and snprintf took about a
// fifth of the heap encoder's time on a 2 MB line.)
static int pair_merge(const tw_tokenizer *t, char *buf, size_t buf_len, int a, int b) {
    size_t la = strlen(t->vocab[a]), lb = strlen(t->vocab[b]);
    if (la + lb >= buf_len) return -1;   // cannot happen: both are at most max_token_length
    memcpy(buf, t->vocab[a], la);
    memcpy(buf + la, t->vocab[b], lb + 1);
    return tw_tokenizer_lookup(t, buf);
}

// Steps 1 and 2 of tokenizer.h: BOS, the dummy prefix, then one token per code point (or per byte).
// tokens has room for tw_tokenizer_max_tokens(text); buf holds at least 5 bytes. Returns the count.
static int split_code_points(const tw_tokenizer *t, int *tokens, char *buf, const char *text, int bos) {
    int n = 0;
    if (bos) tokens[n++] = TW_TOK_BOS;
    if (text[0] != '\0') {
        int space = tw_tokenizer_lookup(t, " ");
        if (space >= 0) tokens[n++] = space;   // a vocabulary without " " gets no dummy prefix
    }
    // A group starts at a non-continuation byte and takes up to three continuation bytes (a stray
    // continuation byte starts a group of its own).
    const unsigned char *c = (const unsigned char *)text;
    while (*c != '\0') {
        size_t len = 1;
        while (len < 4 && c[len] != '\0' && is_utf8_continuation(c[len])) len++;
        memcpy(buf, c, len);
        buf[len] = '\0';
        int id = tw_tokenizer_lookup(t, buf);
        if (id >= 0) {
            tokens[n++] = id;
        } else {
            // Byte fallback; a vocabulary too small to hold byte tokens gets <unk> (id 0).
            for (size_t i = 0; i < len; i++) tokens[n++] = (int)c[i] + 3 < t->vocab_size ? (int)c[i] + 3 : 0;
        }
        c += len;
    }
    return n;
}

// Scores at or below this never merge (llama2.c starts its search for the best pair from it).
#define NO_MERGE_SCORE (-1e10f)

// The reference: after every merge, scan all pairs for the best one. merge[i] caches the id that
// tokens[i] and tokens[i+1] merge into (-1: none), so a step looks up only the two pairs the last
// merge changed (with a lookup per pair per step, a 50 KB prompt took minutes); the scan and the
// memmove still make it quadratic in the length (a 200 KB line: about 4 s).
static tw_status encode_naive_plain(const tw_tokenizer *t, int *tokens, int *n_tokens, int max_tokens,
                                   const char *text, int bos, int eos) {
    *n_tokens = 0;
    if (max_tokens < 0 || (size_t)max_tokens < tw_tokenizer_max_tokens(text)) return TW_ERR_ARG;
    // Room for two tokens' strings side by side, or a 4-byte code point.
    size_t buf_len = 2 * (size_t)t->max_token_length + 8;
    char *buf = malloc(buf_len);
    if (buf == NULL) return TW_ERR_NOMEM;
    int n = split_code_points(t, tokens, buf, text, bos);

    int *merge = malloc(((size_t)n + 1) * sizeof *merge);
    if (merge == NULL) { free(buf); return TW_ERR_NOMEM; }
    for (int i = 0; i + 1 < n; i++) merge[i] = pair_merge(t, buf, buf_len, tokens[i], tokens[i + 1]);
    for (;;) {
        float best_score = NO_MERGE_SCORE;
        int best_i = -1;
        for (int i = 0; i + 1 < n; i++) {
            if (merge[i] >= 0 && t->scores[merge[i]] > best_score) {   // '>' keeps the leftmost on ties
                best_score = t->scores[merge[i]];
                best_i = i;
            }
        }
        if (best_i < 0) break;
        tokens[best_i] = merge[best_i];
        memmove(tokens + best_i + 1, tokens + best_i + 2, (size_t)(n - best_i - 2) * sizeof *tokens);
        if (n - best_i - 3 > 0)   // pairs after the merged one move down by one
            memmove(merge + best_i + 1, merge + best_i + 2, (size_t)(n - best_i - 3) * sizeof *merge);
        n--;
        if (best_i > 0) merge[best_i - 1] = pair_merge(t, buf, buf_len, tokens[best_i - 1], tokens[best_i]);
        if (best_i + 1 < n) merge[best_i] = pair_merge(t, buf, buf_len, tokens[best_i], tokens[best_i + 1]);
    }
    free(merge);
    if (eos) tokens[n++] = TW_TOK_EOS;
    free(buf);
    *n_tokens = n;
    return TW_OK;
}

// ---- encoding in O(n log n): a heap of pairs over a linked list of symbols ----
//
// The same merges in the same order as the naive loop, without rescanning. The symbols stay where
// step 2 put them, in tokens[], chained by next[] and prev[] (-1: none), so a merge unlinks one
// symbol instead of moving the rest of the array; a symbol keeps its starting index, and indices
// grow left to right, so "leftmost" is "smallest index". merge[i] is the id that the symbol at i
// and the one after it merge into (-1: none, or a score at or below NO_MERGE_SCORE). Every
// mergeable pair sits once in a binary max-heap, keyed first by its score, highest first, then by
// its left symbol's index, smallest first: the naive loop's choice. pos[i] is where symbol i's
// pair sits in the heap (-1: absent), so a pair the last merge changed is moved or removed in
// place; the heap never holds more than n entries. Each entry carries its score, so comparing two
// entries reads only the heap (looking the score up through merge[] made the heap's comparisons
// two thirds of the time on a 2 MB line: cache misses).

typedef struct { float score; int sym; } pair_entry;

typedef struct {
    pair_entry *e;     // (n) e[0] is the pair to merge next
    int        *pos;   // (n) heap position of each symbol's pair, or -1
    int         size;
} pair_heap;

// 1 if pair a merges before pair b.
static int heap_before(pair_entry a, pair_entry b) {
    return a.score > b.score || (a.score == b.score && a.sym < b.sym);
}

static void heap_set(pair_heap *h, int k, pair_entry x) { h->e[k] = x; h->pos[x.sym] = k; }

static void heap_sift_up(pair_heap *h, int k) {
    pair_entry x = h->e[k];
    while (k > 0 && heap_before(x, h->e[(k - 1) / 2])) {
        heap_set(h, k, h->e[(k - 1) / 2]);
        k = (k - 1) / 2;
    }
    heap_set(h, k, x);
}

static void heap_sift_down(pair_heap *h, int k) {
    pair_entry x = h->e[k];
    for (;;) {
        int c = 2 * k + 1;
        if (c >= h->size) break;
        if (c + 1 < h->size && heap_before(h->e[c + 1], h->e[c])) c++;
        if (!heap_before(h->e[c], x)) break;
        heap_set(h, k, h->e[c]);
        k = c;
    }
    heap_set(h, k, x);
}

// Takes symbol i's pair out of the heap, if it is there.
static void heap_remove(pair_heap *h, int i) {
    int k = h->pos[i];
    if (k < 0) return;
    h->pos[i] = -1;
    pair_entry last = h->e[--h->size];
    if (k == h->size) return;   // i was the last entry
    heap_set(h, k, last);       // the last entry fills the hole and moves whichever way it must
    heap_sift_up(h, k);
    heap_sift_down(h, h->pos[last.sym]);
}

// Symbol i's pair now merges with this score: inserts it, or moves it to its new place.
static void heap_put(pair_heap *h, int i, float score) {
    int k = h->pos[i];
    if (k < 0) k = h->size++;
    heap_set(h, k, (pair_entry){ score, i });
    heap_sift_up(h, k);
    heap_sift_down(h, h->pos[i]);
}

// Which pairs were looked up already: a direct-mapped table of (a, b) -> merge id, local to one
// encode call. Text repeats its pairs, so most of the two or three lookups per merge skip the
// binary search over the vocabulary (on a 2 MB line, one sentence repeated: 3.4 s became 0.9 s).
#define PAIR_CACHE_BITS 12
typedef struct { int a, b, merge; } pair_cache_slot;   // a = -1: empty

// The merge id of symbols a and b, or -1 if it does not exist or may never merge.
static int mergeable(const tw_tokenizer *t, pair_cache_slot *cache, char *buf, size_t buf_len,
                     int a, int b) {
    uint32_t key = ((uint32_t)a * 0x9E3779B1u) ^ ((uint32_t)b * 0x85EBCA77u);
    pair_cache_slot *slot = cache + (key >> (32 - PAIR_CACHE_BITS));
    if (slot->a == a && slot->b == b) return slot->merge;
    int m = pair_merge(t, buf, buf_len, a, b);
    if (m >= 0 && !(t->scores[m] > NO_MERGE_SCORE)) m = -1;
    *slot = (pair_cache_slot){ a, b, m };
    return m;
}

static tw_status encode_plain(const tw_tokenizer *t, int *tokens, int *n_tokens, int max_tokens,
                             const char *text, int bos, int eos) {
    *n_tokens = 0;
    if (max_tokens < 0 || (size_t)max_tokens < tw_tokenizer_max_tokens(text)) return TW_ERR_ARG;
    size_t buf_len = 2 * (size_t)t->max_token_length + 8;
    char *buf = malloc(buf_len);
    if (buf == NULL) return TW_ERR_NOMEM;
    const int n = split_code_points(t, tokens, buf, text, bos);

    int *links = malloc(4 * ((size_t)n + 1) * sizeof *links);
    pair_entry *entries = malloc(((size_t)n + 1) * sizeof *entries);
    pair_cache_slot *cache = malloc(((size_t)1 << PAIR_CACHE_BITS) * sizeof *cache);
    if (links == NULL || entries == NULL || cache == NULL) {
        free(links); free(entries); free(cache); free(buf);
        return TW_ERR_NOMEM;
    }
    for (size_t k = 0; k < (size_t)1 << PAIR_CACHE_BITS; k++) cache[k].a = -1;
    int *next = links, *prev = next + n + 1, *merge = prev + n + 1;
    pair_heap h = { entries, merge + n + 1, 0 };
    for (int i = 0; i < n; i++) {
        next[i] = i + 1 < n ? i + 1 : -1;
        prev[i] = i - 1;
        merge[i] = i + 1 < n ? mergeable(t, cache, buf, buf_len, tokens[i], tokens[i + 1]) : -1;
        h.pos[i] = -1;
        if (merge[i] >= 0) heap_set(&h, h.size++, (pair_entry){ t->scores[merge[i]], i });
    }
    for (int k = h.size / 2 - 1; k >= 0; k--) heap_sift_down(&h, k);   // heapify

    while (h.size > 0) {
        const int i = h.e[0].sym, j = next[i];   // merge the pair (i, j) into symbol i
        tokens[i] = merge[i];
        next[i] = next[j];
        if (next[j] >= 0) prev[next[j]] = i;
        heap_remove(&h, j);   // j is gone, and so is its pair with the symbol after it
        // The pairs on either side of i changed.
        for (int side = 0; side < 2; side++) {
            int a = side == 0 ? i : prev[i];
            if (a < 0) continue;
            merge[a] = next[a] >= 0 ? mergeable(t, cache, buf, buf_len, tokens[a], tokens[next[a]]) : -1;
            if (merge[a] >= 0) heap_put(&h, a, t->scores[merge[a]]);
            else heap_remove(&h, a);
        }
    }

    int m = 0;   // compact the surviving symbols, in order
    for (int i = n > 0 ? 0 : -1; i >= 0; i = next[i]) tokens[m++] = tokens[i];
    free(links);
    free(entries);
    free(cache);
    free(buf);
    if (eos) tokens[m++] = TW_TOK_EOS;
    *n_tokens = m;
    return TW_OK;
}

// A vocabulary with special tokens cuts the text at them first (special.h).
tw_status tw_tokenizer_encode_naive(const tw_tokenizer *t, int *tokens, int *n_tokens, int max_tokens,
                                    const char *text, int bos, int eos) {
    if (t->n_special > 0) return tw_special_encode(t, encode_naive_plain, tokens, n_tokens, max_tokens, text, bos, eos);
    return encode_naive_plain(t, tokens, n_tokens, max_tokens, text, bos, eos);
}

tw_status tw_tokenizer_encode(const tw_tokenizer *t, int *tokens, int *n_tokens, int max_tokens,
                              const char *text, int bos, int eos) {
    if (t->n_special > 0) return tw_special_encode(t, encode_plain, tokens, n_tokens, max_tokens, text, bos, eos);
    return encode_plain(t, tokens, n_tokens, max_tokens, text, bos, eos);
}

// ---- decoding ----

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

const char *tw_tokenizer_decode(const tw_tokenizer *t, int prev_token, int token) {
    if (token < 0 || token >= t->vocab_size) return NULL;
    const char *piece = t->vocab[token];
    // The piece after BOS, or after a special token, loses the dummy prefix's space (special.h).
    const int after_special = t->n_special > 0 && prev_token >= 0 && prev_token < t->vocab_size &&
                              tw_special_name_ok(t->vocab[prev_token]);
    if ((prev_token == TW_TOK_BOS || after_special) && piece[0] == ' ') piece++;
    if (strlen(piece) == 6 && memcmp(piece, "<0x", 3) == 0 && piece[5] == '>') {
        int hi = hex_value(piece[3]), lo = hex_value(piece[4]);
        if (hi >= 0 && lo >= 0) return t->byte_pieces + 2 * (hi * 16 + lo);
    }
    return piece;
}

long tw_tokenizer_decoded_bytes(const tw_tokenizer *t, const int *ids, long from, long to) {
    long bytes = 0;
    for (long i = from; i < to; i++) {
        const int id = ids[i];
        if (id <= TW_TOK_EOS || id >= t->vocab_size) continue;   // unk/BOS/EOS: no text
        const char *piece = t->vocab[id];
        if (strlen(piece) == 6 && memcmp(piece, "<0x", 3) == 0 && piece[5] == '>') { bytes++; continue; }
        bytes += (long)strlen(tw_tokenizer_decode(t, i > 0 ? ids[i - 1] : TW_TOK_BOS, id));
    }
    return bytes;
}

int tw_tokenizer_piece_printable(const char *piece) {
    if (piece == NULL || piece[0] == '\0') return 0;
    if (piece[1] != '\0') return 1;
    unsigned char b = (unsigned char)piece[0];
    return isprint(b) || isspace(b);
}
