// Wrong attempt at exercise 19 (make test builds it and requires the checker to reject it).
// The mistake: the cast (int8_t)(x / s) truncates towards zero instead of rounding to the nearest
// integer, which doubles the worst error (s instead of s / 2) and biases values towards 0.
// The checker says: round to nearest, not truncate
#include <math.h>
#include "concepts.h"

void ex_q8_quantize_group(int8_t *q, float *s, const float *x, int gs) {
    float amax = 0.0f;
    for (int i = 0; i < gs; i++) if (fabsf(x[i]) > amax) amax = fabsf(x[i]);
    *s = amax / 127.0f;
    for (int i = 0; i < gs; i++) q[i] = *s > 0.0f ? (int8_t)(x[i] / *s) : 0;
}
