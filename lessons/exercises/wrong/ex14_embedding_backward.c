// Wrong attempt at exercise 14 (make test builds it and requires the checker to reject it).
// The mistake: the gradient row assigned (=) instead of added (+=): a token that appears several
// times keeps only its last position's gradient.
// The checker says: scatter-add: +=, not =
#include "concepts.h"

void ex_embedding_backward(float *dtable, const float *dout, const int *ids, int T, int V, int C) {
    (void)V;
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) dtable[(long)ids[t] * C + c] = dout[(long)t * C + c];
}
