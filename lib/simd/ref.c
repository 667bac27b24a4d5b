// ref.c: the naive kernels that no component of lib/nn/ has: a dot product (lesson 12 and
// exercise 1 start from it) and an elementwise exp (the exp kernels' reference; softmax and SiLU
// use expf inside their own loops). Every other operation's reference is the loop in its
// component's file (lib/nn/reference.h lists them); the matmul ladder has one file per rung.
#include <math.h>
#include "simd.h"

// The in-order dot product, products rounded (-ffp-contract=off): also the one fallback of every
// vector kernel whose own sum overflowed (kernels_*.c, matvec_*.c, dispatch.c's Linear hook).
float tw_dot_naive(const float *a, const float *b, int n) {
    float sum = 0.0f;
    for (int i = 0; i < n; i++) sum += a[i] * b[i];
    return sum;
}

void tw_exp_naive(float *y, const float *x, long n) {
    for (long i = 0; i < n; i++) y[i] = expf(x[i]);
}
