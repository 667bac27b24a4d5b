// Exercise 7: rotary position embedding in the adjacent pairing (lesson 5).
// Dimensions (2i, 2i+1) form pair i, which turns by the angle pos * theta^(-2i/D):
//   a' = a cos - b sin,   b' = a sin + b cos      (a = x[2i], b = x[2i+1])
// Hint: compute the angle in double (pow, cos, sin), then round cos and sin to float: at
// position 4096 a float angle is already off by 5e-4 radians. Position 0 must change nothing.
// Check it with:  make exercise7
#include <math.h>
#include "concepts.h"

void ex_rope_adjacent(float *x, int D, int pos, float theta) {
    // TODO: rotate each pair of x in place. Delete these lines.
    (void)x; (void)D; (void)pos; (void)theta;
    ex_not_implemented();
}
