// Exercise 19, a worked answer: the scale from the largest magnitude, then rintf.
#include <math.h>
#include "concepts.h"

void ex_q8_quantize_group(int8_t *q, float *s, const float *x, int gs) {
    float amax = 0.0f;
    for (int i = 0; i < gs; i++) if (fabsf(x[i]) > amax) amax = fabsf(x[i]);
    *s = amax / 127.0f;
    for (int i = 0; i < gs; i++) q[i] = *s > 0.0f ? (int8_t)rintf(x[i] / *s) : 0;
}
