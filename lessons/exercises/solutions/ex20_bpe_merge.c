// Exercise 20, a worked answer: one left-to-right pass, a read index and a write index.
#include "concepts.h"

int ex_bpe_merge(int *ids, int n, int a, int b, int ab) {
    int w = 0;
    for (int r = 0; r < n; r++) {
        if (r + 1 < n && ids[r] == a && ids[r + 1] == b) { ids[w++] = ab; r++; }   // skip b
        else ids[w++] = ids[r];
    }
    return w;
}
