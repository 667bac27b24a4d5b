// Exercise 16, a worked answer: normalise into each sub-layer, add its output to the raw stream.
#include "concepts.h"

void ex_prenorm_block(float *y, const float *x, int T, int C, const ex_sublayers *f, float *scratch) {
    const long n = (long)T * C;
    float *normed = scratch, *sub = scratch + n, *h = scratch + 2 * n;   // each (T, C)
    f->norm1(f->ctx, normed, x, T);
    f->attn(f->ctx, sub, normed, T);
    for (long i = 0; i < n; i++) h[i] = x[i] + sub[i];        // the residual carries x itself
    f->norm2(f->ctx, normed, h, T);
    f->ffn(f->ctx, sub, normed, T);
    for (long i = 0; i < n; i++) y[i] = h[i] + sub[i];
}
