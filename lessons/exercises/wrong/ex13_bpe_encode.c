// Wrong attempt at exercise 13 (make test builds it and requires the checker to reject it).
// The mistake: merging the FIRST mergeable pair found, left to right, instead of the pair with the
// highest score: the merges then happen in text order, not in the order they were learned.
// The checker says: the highest-scoring pair merges first
#include <stdio.h>
#include <string.h>
#include "concepts.h"

static int lookup(const char *s, const char *const *vocab, int V) {
    for (int i = 0; i < V; i++) if (strcmp(vocab[i], s) == 0) return i;
    return -1;
}

int ex_bpe_encode(int *ids, const char *text, const char *const *vocab, const float *scores, int V) {
    (void)scores;
    int n = 0;
    if (!text[0]) return 0;
    ids[n++] = lookup(" ", vocab, V);
    for (const char *c = text; *c; c++) {
        char one[2] = { *c, '\0' };
        int id = lookup(one, vocab, V);
        ids[n++] = id >= 0 ? id : (unsigned char)*c + 3;
    }
    char pair[512];
    for (int merged = 1; merged;) {
        merged = 0;
        for (int i = 0; i + 1 < n && !merged; i++) {
            snprintf(pair, sizeof pair, "%s%s", vocab[ids[i]], vocab[ids[i + 1]]);
            int id = lookup(pair, vocab, V);
            if (id >= 0) {
                ids[i] = id;
                memmove(ids + i + 1, ids + i + 2, (size_t)(n - i - 2) * sizeof *ids);
                n--;
                merged = 1;
            }
        }
    }
    return n;
}
