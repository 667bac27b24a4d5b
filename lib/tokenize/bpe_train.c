// bpe_train.c: the fast BPE trainer (bpe_train.h gives the definition; bpe_train_naive.c is the
// reference it must match piece for piece).
//
// How it avoids recounting:
//   - Words. The text (with its dummy-prefix space) is cut before every space; no piece spans such
//     a cut, so each distinct word is stored once, with its frequency, as a doubly linked list of
//     symbols (its current pieces).
//   - Pair strings. Every string an adjacent pair has spelled gets an entry in a hash table (the
//     key is the string a+b, hashed by a polynomial hash composable from the pieces' hashes, and
//     compared byte by byte on a hash match). An entry holds its current count (summed over word
//     frequencies) and the symbols where it was seen as a pair. The positions are lazy: a merge
//     re-checks each one, so entries never need removing from them.
//   - An indexed max-heap of the entries with a count, ordered by (count, string first bytewise).
//   - A merge walks only the positions of its string, leftmost first: it unlinks one symbol,
//     lets any follow-on merge with an older piece happen (the encoder's cascade), and updates the
//     counts of the pairs it destroyed and created.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tokenize/bpe_pieces.h"

#define HASH_BASE 0x100000001b3ULL   // odd multiplier of the polynomial string hash

typedef struct {
    uint64_t  h;          // hash of the string
    int       a, b;       // its spelling: piece a then piece b (b = -1: piece a alone)
    int       token;      // the piece it is (reserved or learned), or -1: only a pair so far
    int       heap_pos;   // index in the heap, or -1
    int       banned;     // spells a byte token: never counted (bpe_spells_byte_token)
    long long count;      // occurrences as an adjacent pair now, weighted by word frequency
    int      *pos;        // (n_pos) left symbols where it was seen as a pair (may be stale)
    int       n_pos, cap_pos;
} pair_entry;

typedef struct {
    bpe_pieces  p;
    uint64_t   *ph, *pw;     // (V) per piece: string hash, HASH_BASE^length
    // symbols of the distinct words, linked per word; a merged-away symbol has tok -1
    int        *tok, *prev, *next, *word;   // (n_sym)
    long long  *freq;        // (n_words) how often each distinct word occurs
    int         n_sym, n_words;
    // pair strings: entries, and an open-addressing index over them
    pair_entry *e;
    int         n_e, cap_e;
    int        *slot;        // (mask + 1) entry index or -1
    size_t      mask;
    int        *heap;        // (n_heap) entry indices, a max-heap
    int         n_heap, cap_heap;
    long long   tokens;      // tokens of the whole text now
} trainer;

// ---- hashing and the pair table ----

static uint64_t mix64(uint64_t x) {   // splitmix64's finalizer: spreads the bits over the slot index
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void hash_piece(trainer *t, int id) {
    const unsigned char *s = (const unsigned char *)bpe_piece(&t->p, id);
    uint64_t h = 0, w = 1;
    for (int i = 0; i < t->p.len[id]; i++) { h = h * HASH_BASE + s[i] + 1; w *= HASH_BASE; }
    t->ph[id] = h;
    t->pw[id] = w;
}

static uint64_t hash_pair(const trainer *t, int a, int b) {
    return b < 0 ? t->ph[a] : t->ph[a] * t->pw[b] + t->ph[b];
}

// Entry index of the string a+b, or -1; *free_slot receives the slot where it would go.
static int find_entry(const trainer *t, size_t *free_slot, uint64_t h, int a, int b) {
    size_t i = mix64(h) & t->mask;
    for (; t->slot[i] >= 0; i = (i + 1) & t->mask) {
        const pair_entry *e = &t->e[t->slot[i]];
        if (e->h == h && bpe_cmp_concat(&t->p, e->a, e->b, a, b) == 0) return t->slot[i];
    }
    if (free_slot) *free_slot = i;
    return -1;
}

static int rehash(trainer *t, size_t slots) {
    int *s = malloc(slots * sizeof *s);
    if (!s) return 0;
    for (size_t i = 0; i < slots; i++) s[i] = -1;
    free(t->slot);
    t->slot = s;
    t->mask = slots - 1;
    for (int k = 0; k < t->n_e; k++) {
        size_t i = mix64(t->e[k].h) & t->mask;
        while (t->slot[i] >= 0) i = (i + 1) & t->mask;
        t->slot[i] = k;
    }
    return 1;
}

// The entry of the string a+b, created (count 0) if new. -1 if out of memory.
static int get_entry(trainer *t, int a, int b) {
    uint64_t h = hash_pair(t, a, b);
    size_t at;
    int k = find_entry(t, &at, h, a, b);
    if (k >= 0) return k;
    if ((size_t)(t->n_e + 1) * 2 > t->mask + 1) {   // keep the table at most half full
        if (!rehash(t, (t->mask + 1) * 2)) return -1;
        find_entry(t, &at, h, a, b);
    }
    if (t->n_e == t->cap_e) {
        int cap = t->cap_e ? 2 * t->cap_e : 4096;
        pair_entry *e = realloc(t->e, (size_t)cap * sizeof *e);
        if (!e) return -1;
        t->e = e;
        t->cap_e = cap;
    }
    pair_entry *e = &t->e[t->n_e];
    memset(e, 0, sizeof *e);
    e->h = h;
    e->a = a;
    e->b = b;
    e->token = -1;
    e->heap_pos = -1;
    e->banned = b >= 0 && bpe_spells_byte_token(&t->p, a, b);
    t->slot[at] = t->n_e;
    return t->n_e++;
}

// ---- the heap: most frequent first, then the string that sorts first ----

static int heap_before(const trainer *t, int x, int y) {
    const pair_entry *ex = &t->e[x], *ey = &t->e[y];
    if (ex->count != ey->count) return ex->count > ey->count;
    return bpe_cmp_concat(&t->p, ex->a, ex->b, ey->a, ey->b) < 0;
}

static void heap_set(trainer *t, int i, int k) { t->heap[i] = k; t->e[k].heap_pos = i; }

static void heap_up(trainer *t, int i) {
    int k = t->heap[i];
    while (i > 0 && heap_before(t, k, t->heap[(i - 1) / 2])) {
        heap_set(t, i, t->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(t, i, k);
}

static void heap_down(trainer *t, int i) {
    int k = t->heap[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= t->n_heap) break;
        if (c + 1 < t->n_heap && heap_before(t, t->heap[c + 1], t->heap[c])) c++;
        if (!heap_before(t, t->heap[c], k)) break;
        heap_set(t, i, t->heap[c]);
        i = c;
    }
    heap_set(t, i, k);
}

static int heap_push(trainer *t, int k) {
    if (t->n_heap == t->cap_heap) {
        int cap = t->cap_heap ? 2 * t->cap_heap : 4096;
        int *h = realloc(t->heap, (size_t)cap * sizeof *h);
        if (!h) return 0;
        t->heap = h;
        t->cap_heap = cap;
    }
    heap_set(t, t->n_heap++, k);
    heap_up(t, t->n_heap - 1);
    return 1;
}

static void heap_remove(trainer *t, int k) {
    int i = t->e[k].heap_pos;
    t->e[k].heap_pos = -1;
    int last = t->heap[--t->n_heap];
    if (i == t->n_heap) return;
    heap_set(t, i, last);
    heap_up(t, i);
    heap_down(t, t->e[last].heap_pos);
}

// ---- pair counts ----

// 1 if the pair of symbols (i, next[i]) is one the definition counts, apart from its string being
// a piece already (the entry knows that).
static int may_count(const trainer *t, int a, int b) {
    return bpe_mergeable(a) && bpe_mergeable(b) && bpe_piece(&t->p, b)[0] != ' ';
}

// The pair at symbol i (with next[i]) appeared: count it and remember where. 0 if out of memory.
static int pair_add(trainer *t, int i) {
    int a = t->tok[i], b = t->tok[t->next[i]];
    if (!may_count(t, a, b)) return 1;
    int k = get_entry(t, a, b);
    if (k < 0) return 0;
    pair_entry *e = &t->e[k];
    if (e->token >= 0 || e->banned) return 1;
    if (e->n_pos == e->cap_pos) {
        int cap = e->cap_pos ? 2 * e->cap_pos : 4;
        int *pos = realloc(e->pos, (size_t)cap * sizeof *pos);
        if (!pos) return 0;
        e->pos = pos;
        e->cap_pos = cap;
    }
    e->pos[e->n_pos++] = i;
    e->count += t->freq[t->word[i]];
    if (e->heap_pos < 0) return heap_push(t, k);
    heap_up(t, e->heap_pos);
    return 1;
}

// The pair at symbol i (with next[i]) is about to disappear.
static void pair_remove(trainer *t, int i) {
    int a = t->tok[i], b = t->tok[t->next[i]];
    if (!may_count(t, a, b)) return;
    int k = find_entry(t, NULL, hash_pair(t, a, b), a, b);
    if (k < 0) return;   // (cannot happen: pair_add created it)
    pair_entry *e = &t->e[k];
    if (e->token >= 0 || e->banned) return;
    e->count -= t->freq[t->word[i]];
    if (e->count == 0) heap_remove(t, k);
    else heap_down(t, e->heap_pos);
}

// The learned piece the encoder would merge the pair (a, b) into, or -1.
static int learned_merge(const trainer *t, int a, int b) {
    if (!may_count(t, a, b)) return -1;   // such a string is never a learned piece
    int k = find_entry(t, NULL, hash_pair(t, a, b), a, b);
    if (k < 0) return -1;
    int id = t->e[k].token;
    return id >= TW_BPE_N_RESERVED + t->p.n_chars ? id : -1;
}

// ---- one merge ----

static int by_int(const void *x, const void *y) {
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

// Merges symbol i with its successor into piece id, then lets the cascade run: while the new
// symbol and a neighbour spell a learned piece, merge the best-scoring one (lowest id; the left
// on a tie). Counts of the old pairs around are removed on the way; the new symbol's final pairs
// are added at the end. 0 if out of memory.
static int merge_at(trainer *t, int i, int id) {
    long long c = t->freq[t->word[i]];
    int j = t->next[i], L = t->prev[i], R = t->next[j];
    if (L >= 0) pair_remove(t, L);
    if (R >= 0) pair_remove(t, j);
    t->tok[i] = id;
    t->tok[j] = -1;
    t->next[i] = R;
    if (R >= 0) t->prev[R] = i;
    t->tokens -= c;
    for (;;) {
        L = t->prev[i];
        R = t->next[i];
        int ul = L >= 0 ? learned_merge(t, t->tok[L], t->tok[i]) : -1;
        int ur = R >= 0 ? learned_merge(t, t->tok[i], t->tok[R]) : -1;
        if (ul < 0 && ur < 0) break;
        if (ul >= 0 && (ur < 0 || ul <= ur)) {   // into the left neighbour
            if (t->prev[L] >= 0) pair_remove(t, t->prev[L]);
            t->tok[L] = ul;
            t->tok[i] = -1;
            t->next[L] = R;
            if (R >= 0) t->prev[R] = L;
            i = L;
        } else {                                  // the right neighbour into i
            int RR = t->next[R];
            if (RR >= 0) pair_remove(t, R);
            t->tok[i] = ur;
            t->tok[R] = -1;
            t->next[i] = RR;
            if (RR >= 0) t->prev[RR] = i;
        }
        t->tokens -= c;
    }
    if (t->prev[i] >= 0 && !pair_add(t, t->prev[i])) return 0;
    if (t->next[i] >= 0 && !pair_add(t, i)) return 0;
    return 1;
}

// Learns the entry k as piece id: merges every current occurrence, leftmost first.
static int learn(trainer *t, int k, int id) {
    pair_entry *e = &t->e[k];
    e->token = id;
    int *pos = e->pos, n = e->n_pos;
    e->pos = NULL;
    e->n_pos = e->cap_pos = 0;
    qsort(pos, (size_t)n, sizeof *pos, by_int);   // a word's symbols are consecutive, left to right
    uint64_t h = e->h;
    int ok = 1;
    for (int m = 0; ok && m < n; m++) {
        int i = pos[m];
        if ((m > 0 && pos[m - 1] == i) || t->tok[i] < 0 || t->next[i] < 0) continue;
        int a = t->tok[i], b = t->tok[t->next[i]];
        if (hash_pair(t, a, b) != h || bpe_cmp_concat(&t->p, a, b, id, -1) != 0) continue;   // stale
        ok = merge_at(t, i, id);
    }
    free(pos);
    return ok;
}

// ---- words ----

typedef struct {
    size_t    start, len;   // the word's bytes in the text (the first word also gets the dummy prefix)
    long long count;
} word_rec;

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++) h = h * HASH_BASE + (unsigned char)s[i] + 1;
    return h;
}

// Cuts text before every space into distinct words with counts, then lays out their symbols.
static int build_words(trainer *t, const char *text, size_t n) {
    size_t cap = 1024, slots = 4096;
    word_rec *w = malloc(cap * sizeof *w);
    int *slot = malloc(slots * sizeof *slot);
    uint64_t *wh = malloc(cap * sizeof *wh);
    if (!w || !slot || !wh) { free(w); free(slot); free(wh); return 0; }
    for (size_t i = 0; i < slots; i++) slot[i] = -1;
    // The first word: the dummy prefix and the bytes up to the first space. It is unique.
    size_t first_end = 0;
    while (first_end < n && text[first_end] != ' ') first_end++;
    w[0] = (word_rec){ 0, first_end, 1 };
    wh[0] = 0;
    int nw = 1;
    size_t sym_bound = 1 + first_end;
    for (size_t s = first_end; s < n;) {
        size_t e = s + 1;
        while (e < n && text[e] != ' ') e++;
        uint64_t h = hash_bytes(text + s, e - s);
        size_t i = mix64(h) & (slots - 1);
        int found = -1;
        for (; slot[i] >= 0; i = (i + 1) & (slots - 1)) {
            const word_rec *r = &w[slot[i]];
            if (wh[slot[i]] == h && r->len == e - s && memcmp(text + r->start, text + s, e - s) == 0) { found = slot[i]; break; }
        }
        if (found >= 0) {
            w[found].count++;
        } else {
            if ((size_t)nw == cap) {
                cap *= 2;
                word_rec *w2 = realloc(w, cap * sizeof *w);
                uint64_t *wh2 = realloc(wh, cap * sizeof *wh);
                if (w2) w = w2;
                if (wh2) wh = wh2;
                if (!w2 || !wh2) { free(w); free(slot); free(wh); return 0; }
            }
            w[nw] = (word_rec){ s, e - s, 1 };
            wh[nw] = h;
            slot[i] = nw++;
            sym_bound += e - s;
            if ((size_t)nw * 2 > slots) {   // grow the index
                free(slot);
                slots *= 2;
                slot = malloc(slots * sizeof *slot);
                if (!slot) { free(w); free(wh); return 0; }
                for (size_t k = 0; k < slots; k++) slot[k] = -1;
                for (int k = 1; k < nw; k++) {
                    size_t q = mix64(wh[k]) & (slots - 1);
                    while (slot[q] >= 0) q = (q + 1) & (slots - 1);
                    slot[q] = k;
                }
            }
        }
        s = e;
    }
    free(slot);
    free(wh);

    t->tok = malloc(sym_bound * sizeof *t->tok);
    t->prev = malloc(sym_bound * sizeof *t->prev);
    t->next = malloc(sym_bound * sizeof *t->next);
    t->word = malloc(sym_bound * sizeof *t->word);
    t->freq = malloc((size_t)nw * sizeof *t->freq);
    if (!t->tok || !t->prev || !t->next || !t->word || !t->freq) { free(w); return 0; }
    int m = 0;
    t->tokens = 0;
    for (int k = 0; k < nw; k++) {
        int first = m;
        if (k == 0) t->tok[m++] = BPE_SPACE_ID;
        m += (int)bpe_text_pieces(&t->p, t->tok + m, text + w[k].start, w[k].len);
        for (int i = first; i < m; i++) {
            t->prev[i] = i > first ? i - 1 : -1;
            t->next[i] = i + 1 < m ? i + 1 : -1;
            t->word[i] = k;
        }
        t->freq[k] = w[k].count;
        t->tokens += (long long)(m - first) * w[k].count;
    }
    t->n_sym = m;
    t->n_words = nw;
    free(w);
    return 1;
}

// ---- the trainer ----

static void trainer_free(trainer *t) {
    for (int k = 0; k < t->n_e; k++) free(t->e[k].pos);
    free(t->e); free(t->slot); free(t->heap); free(t->ph); free(t->pw);
    free(t->tok); free(t->prev); free(t->next); free(t->word); free(t->freq);
    bpe_pieces_free(&t->p);
    memset(t, 0, sizeof *t);
}

static int trainer_init(trainer *t, const char *text, size_t n, int V) {
    t->ph = malloc((size_t)V * sizeof *t->ph);
    t->pw = malloc((size_t)V * sizeof *t->pw);
    if (!t->ph || !t->pw || !rehash(t, 1 << 16)) return 0;
    for (int id = 0; id < t->p.n; id++) hash_piece(t, id);
    // The reserved strings are pieces: a pair spelling one is never counted.
    for (int id = 0; id < TW_BPE_N_RESERVED; id++) {
        int k = get_entry(t, id, -1);
        if (k < 0) return 0;
        t->e[k].token = id;
    }
    if (!build_words(t, text, n)) return 0;
    for (int i = 0; i < t->n_sym; i++)
        if (t->next[i] >= 0 && !pair_add(t, i)) return 0;
    return 1;
}

tw_status tw_bpe_train(tw_bpe_vocab *v, const char *text, size_t n, const tw_bpe_options *opt,
                       char *err, size_t err_len) {
    memset(v, 0, sizeof *v);
    if (n == 0 || n > (size_t)1 << 30 || opt->min_char_count < 1 || opt->min_pair_count < 1) {
        if (err && err_len) snprintf(err, err_len, "%s", n == 0 ? "the text is empty" : "options out of range");
        return TW_ERR_ARG;
    }
    trainer t;
    memset(&t, 0, sizeof t);
    tw_status st = bpe_pieces_init(&t.p, text, n, opt->min_char_count, opt->vocab_size, err, err_len);
    if (st != TW_OK) return st;
    st = TW_ERR_NOMEM;
    if (!trainer_init(&t, text, n, opt->vocab_size)) goto fail;
    long long before = t.tokens;
    while (t.p.n < opt->vocab_size) {
        if (t.n_heap == 0 || t.e[t.heap[0]].count < opt->min_pair_count) {
            bpe_err_exhausted(err, err_len, &t.p, opt->min_pair_count, opt->vocab_size);
            st = TW_ERR_ARG;
            goto fail;
        }
        int k = t.heap[0];
        heap_remove(&t, k);
        int id = bpe_pieces_add_merge(&t.p, t.e[k].a, t.e[k].b, t.e[k].count, 0);
        if (id < 0) goto fail;
        hash_piece(&t, id);
        if (!learn(&t, k, id)) goto fail;
        t.p.m_after[id] = t.tokens;
    }
    bpe_pieces tmp = t.p;
    memset(&t.p, 0, sizeof t.p);   // finish takes the pieces; free the rest
    trainer_free(&t);
    return bpe_pieces_finish(v, &tmp, before);

fail:
    if (st == TW_ERR_NOMEM && err && err_len) snprintf(err, err_len, "out of memory training on %zu bytes", n);
    trainer_free(&t);
    return st;
}
