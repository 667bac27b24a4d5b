// Exercise 13, a worked answer: BPE encoding by repeated best-pair merges (the quadratic way,
// fine for a sentence; lib/tokenize/tokenizer.c keeps the pairs in a heap instead).
#include <stdio.h>
#include <string.h>
#include "concepts.h"

// The id whose string is s, or -1 (a linear search: the vocabulary is small here).
static int lookup(const char *s, const char *const *vocab, int V) {
    for (int i = 0; i < V; i++) if (strcmp(vocab[i], s) == 0) return i;
    return -1;
}

int ex_bpe_encode(int *ids, const char *text, const char *const *vocab, const float *scores, int V) {
    int n = 0;
    if (!text[0]) return 0;
    ids[n++] = lookup(" ", vocab, V);                       // the dummy prefix
    for (const char *c = text; *c; c++) {
        char one[2] = { *c, '\0' };
        int id = lookup(one, vocab, V);
        ids[n++] = id >= 0 ? id : (unsigned char)*c + 3;     // byte fallback
    }
    char pair[512];
    for (;;) {
        int best = -1, best_id = -1;
        float best_score = -1e30f;
        for (int i = 0; i + 1 < n; i++) {
            snprintf(pair, sizeof pair, "%s%s", vocab[ids[i]], vocab[ids[i + 1]]);
            int id = lookup(pair, vocab, V);
            if (id >= 0 && scores[id] > best_score) { best_score = scores[id]; best = i; best_id = id; }
        }
        if (best < 0) return n;                              // no pair is in the vocabulary
        ids[best] = best_id;
        memmove(ids + best + 1, ids + best + 2, (size_t)(n - best - 2) * sizeof *ids);
        n--;
    }
}
