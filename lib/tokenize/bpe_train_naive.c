// bpe_train_naive.c: the reference BPE trainer (bpe_train.h gives the definition it follows).
// Every step recounts every adjacent pair of the whole text (sorting the pairs by their string),
// learns the most frequent one, then runs the encoder's own greedy loop from the current
// segmentation: scan for the best-scoring mergeable pair, merge it, repeat. O(n log n) per learned
// piece for the count and O(n) per merge for the replay: slow, and obviously what the definition
// says. tw_bpe_train must give the same pieces, in the same order, with the same counts.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tokenize/bpe_pieces.h"

// ---- the vocabulary as a sorted list, for "is this string a piece?" ----

typedef struct {
    int *ids;   // (n) piece ids in bytewise order of their strings
    int  n;
} sorted_pieces;

// Index of the first entry whose string is >= a+b.
static int lower_bound(const sorted_pieces *s, const bpe_pieces *p, int a, int b) {
    int lo = 0, hi = s->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (bpe_cmp_concat(p, s->ids[mid], -1, a, b) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The id of the piece spelled a+b (b = -1: a alone), or -1.
static int find_piece(const sorted_pieces *s, const bpe_pieces *p, int a, int b) {
    int i = lower_bound(s, p, a, b);
    return i < s->n && bpe_cmp_concat(p, s->ids[i], -1, a, b) == 0 ? s->ids[i] : -1;
}

static void insert_piece(sorted_pieces *s, const bpe_pieces *p, int id) {
    int i = lower_bound(s, p, id, -1);
    memmove(s->ids + i + 1, s->ids + i, (size_t)(s->n - i) * sizeof *s->ids);
    s->ids[i] = id;
    s->n++;
}

// ---- step 1: count ----

static int countable(const sorted_pieces *s, const bpe_pieces *p, int a, int b) {
    return bpe_mergeable(a) && bpe_mergeable(b) && bpe_piece(p, b)[0] != ' ' &&
           find_piece(s, p, a, b) < 0 && !bpe_spells_byte_token(p, a, b);
}

// Stable merge sort of pair positions by the string seq[i] + seq[i+1].
static void sort_pairs(int *at, int *tmp, int n, const int *seq, const bpe_pieces *p) {
    if (n < 2) return;
    int h = n / 2;
    sort_pairs(at, tmp, h, seq, p);
    sort_pairs(at + h, tmp, n - h, seq, p);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) {
        int c = bpe_cmp_concat(p, seq[at[j]], seq[at[j] + 1], seq[at[i]], seq[at[i] + 1]);
        tmp[k++] = c < 0 ? at[j++] : at[i++];
    }
    while (i < h) tmp[k++] = at[i++];
    while (j < n) tmp[k++] = at[j++];
    memcpy(at, tmp, (size_t)n * sizeof *at);
}

// The most frequent countable pair string (ties: the first bytewise). Returns its count (0: none)
// and in *best the position of its leftmost occurrence.
static long long most_frequent(int *best, int *at, int *tmp, const int *seq, int len,
                               const sorted_pieces *s, const bpe_pieces *p) {
    int m = 0;
    for (int i = 0; i + 1 < len; i++)
        if (countable(s, p, seq[i], seq[i + 1])) at[m++] = i;
    sort_pairs(at, tmp, m, seq, p);
    long long best_count = 0;
    for (int i = 0; i < m;) {
        int j = i + 1;
        while (j < m && bpe_cmp_concat(p, seq[at[i]], seq[at[i] + 1], seq[at[j]], seq[at[j] + 1]) == 0) j++;
        if (j - i > best_count) { best_count = j - i; *best = at[i]; }
        i = j;
    }
    return best_count;
}

// ---- step 3: the encoder's greedy loop ----

static int first_learned(const bpe_pieces *p) { return TW_BPE_N_RESERVED + p->n_chars; }

// The learned piece seq[i] + seq[i+1] spells, or -1 (what the encoder's pair lookup finds, limited
// to pieces it would merge into: reserved pieces score -1e10, characters cannot be spelled by two).
static int merge_of(const sorted_pieces *s, const bpe_pieces *p, const int *seq, int i) {
    int id = find_piece(s, p, seq[i], seq[i + 1]);
    return id >= first_learned(p) ? id : -1;
}

// Merges, best score first (= lowest learned id), leftmost on ties, until no pair spells a piece.
static void replay(int *seq, int *len, int *mc, const sorted_pieces *s, const bpe_pieces *p) {
    int n = *len;
    for (int i = 0; i + 1 < n; i++) mc[i] = merge_of(s, p, seq, i);
    for (;;) {
        int best = -1;
        for (int i = 0; i + 1 < n; i++)
            if (mc[i] >= 0 && (best < 0 || mc[i] < mc[best])) best = i;
        if (best < 0) break;
        seq[best] = mc[best];
        memmove(seq + best + 1, seq + best + 2, (size_t)(n - best - 2) * sizeof *seq);
        memmove(mc + best + 1, mc + best + 2, (size_t)(n > best + 3 ? n - best - 3 : 0) * sizeof *mc);
        n--;
        if (best > 0) mc[best - 1] = merge_of(s, p, seq, best - 1);
        if (best + 1 < n) mc[best] = merge_of(s, p, seq, best);
    }
    *len = n;
}

// ---- the trainer ----

tw_status tw_bpe_train_naive(tw_bpe_vocab *v, const char *text, size_t n,
                             const tw_bpe_options *opt, char *err, size_t err_len) {
    memset(v, 0, sizeof *v);
    if (n == 0 || n > (size_t)1 << 30 || opt->min_char_count < 1 || opt->min_pair_count < 1) {
        if (err && err_len) snprintf(err, err_len, "%s", n == 0 ? "the text is empty" : "options out of range");
        return TW_ERR_ARG;
    }
    bpe_pieces p;
    tw_status st = bpe_pieces_init(&p, text, n, opt->min_char_count, opt->vocab_size, err, err_len);
    if (st != TW_OK) return st;
    int *seq = malloc((n + 1) * sizeof *seq);
    int *at = malloc((n + 1) * sizeof *at);
    int *tmp = malloc((n + 1) * sizeof *tmp);
    sorted_pieces s = { malloc((size_t)opt->vocab_size * sizeof(int)), 0 };
    st = TW_ERR_NOMEM;
    if (!seq || !at || !tmp || !s.ids) goto done;
    for (int id = 0; id < p.n; id++) insert_piece(&s, &p, id);
    seq[0] = BPE_SPACE_ID;   // the dummy prefix
    int len = 1 + (int)bpe_text_pieces(&p, seq + 1, text, n);
    long long before = len;

    while (p.n < opt->vocab_size) {
        int where = -1;
        long long count = most_frequent(&where, at, tmp, seq, len, &s, &p);
        if (count == 0 || count < opt->min_pair_count) {
            bpe_err_exhausted(err, err_len, &p, opt->min_pair_count, opt->vocab_size);
            st = TW_ERR_ARG;
            goto done;
        }
        int id = bpe_pieces_add_merge(&p, seq[where], seq[where + 1], count, 0);
        if (id < 0) goto done;
        insert_piece(&s, &p, id);
        replay(seq, &len, at, &s, &p);
        p.m_after[id] = len;
    }
    free(seq); free(at); free(tmp); free(s.ids);
    return bpe_pieces_finish(v, &p, before);

done:
    if (st == TW_ERR_NOMEM && err && err_len) snprintf(err, err_len, "out of memory training on %zu bytes", n);
    free(seq); free(at); free(tmp); free(s.ids);
    bpe_pieces_free(&p);
    return st;
}
