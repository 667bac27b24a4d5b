// Wrong attempt at exercise 16 (make test builds it and requires the checker to reject it).
// The mistake: the residual adds the sub-layer to the NORMALISED input (h = norm1(x) +
// attn(norm1(x))), so the stream is renormalised at every block and x itself is lost.
// The checker says: your residual carries norm1(x)
#include "concepts.h"

void ex_prenorm_block(float *y, const float *x, int T, int C, const ex_sublayers *f, float *scratch) {
    const long n = (long)T * C;
    float *normed = scratch, *sub = scratch + n, *h = scratch + 2 * n;
    f->norm1(f->ctx, normed, x, T);
    f->attn(f->ctx, sub, normed, T);
    for (long i = 0; i < n; i++) h[i] = normed[i] + sub[i];
    f->norm2(f->ctx, normed, h, T);
    f->ffn(f->ctx, sub, normed, T);
    for (long i = 0; i < n; i++) y[i] = normed[i] + sub[i];
}
