// Exercise 14, a worked answer: the embedding backward is a scatter-add.
#include "concepts.h"

void ex_embedding_backward(float *dtable, const float *dout, const int *ids, int T, int V, int C) {
    (void)V;
    for (int t = 0; t < T; t++) {
        float *row = dtable + (long)ids[t] * C;
        for (int c = 0; c < C; c++) row[c] += dout[(long)t * C + c];   // +=: repeats add up
    }
}
