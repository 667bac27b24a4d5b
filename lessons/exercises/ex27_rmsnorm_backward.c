// Exercise 27: the backward of RMSNorm for one row (lesson 13, section "RMSNorm: the backward
// needs what the forward saw"). concepts.h has the formulas.
// The classic mistake the checker catches: treating rms as a constant (dx = dy * w / rms),
// which forgets that every input also moves every output through rms.
// Hint: recompute rms as the forward does (in double is fine), then two passes over the row.
// Check it with:  make exercise27
#include <math.h>
#include "concepts.h"

void ex_rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w,
                         int C, float eps) {
    // TODO: write dx and dw (C). Delete these lines.
    (void)dx; (void)dw; (void)dy; (void)x; (void)w; (void)C; (void)eps;
    ex_not_implemented();
}
