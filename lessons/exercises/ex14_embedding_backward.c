// Exercise 14: the backward of the embedding lookup (lesson 2).
// The forward copies row ids[t] of the table to out[t]. So the gradient of row ids[t] of the table
// receives dout[t]; a token that appears at several positions was used several times and collects
// the SUM of those rows. Gradients accumulate: dtable already holds earlier gradients; add to it.
// Check it with:  make exercise14
#include "concepts.h"

void ex_embedding_backward(float *dtable, const float *dout, const int *ids, int T, int V, int C) {
    // TODO: add each dout[t] (C values) to dtable's row ids[t]. Delete these lines.
    (void)dtable; (void)dout; (void)ids; (void)T; (void)V; (void)C;
    ex_not_implemented();
}
