// Exercise 1: a fast dot product.
// The naive loop (lib/simd/ref.c, tw_dot_naive) adds one product at a time into one sum: each add
// waits for the previous one (about 4 cycles), and the compiler may not reorder float sums, so
// it cannot vectorise the loop. Hint: keep several partial sums (say 8) and add them at the end.
// Check and time it with:  make exercise1
#include "exercise.h"

float ex_dot(const float *a, const float *b, int n) {
    // TODO: compute sum_i a[i] * b[i] faster than one running sum. Delete these lines.
    (void)a; (void)b; (void)n;
    ex_not_implemented();
    return 0.0f;
}
