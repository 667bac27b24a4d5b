// Exercise 19: Q8_0 quantization of one group (lesson 15).
// One float scale per group of gs values, chosen so that the value of largest magnitude maps to
// +-127: s = max |x_i| / 127. Each value is then stored as the nearest integer to x_i / s
// (rintf: ties go to the even neighbour). Decoding is q_i * s, off by at most s / 2. A group of
// zeros has nothing to scale: s = 0, every q_i = 0.
// Check it with:  make exercise19
#include "concepts.h"

void ex_q8_quantize_group(int8_t *q, float *s, const float *x, int gs) {
    // TODO: fill q (gs) and *s. Delete these lines.
    (void)q; (void)s; (void)x; (void)gs;
    ex_not_implemented();
}
