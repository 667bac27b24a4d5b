// Solution to exercise 3: subtract the row's maximum first. softmax is unchanged by adding a
// constant to every logit, and with c = max every exp() argument is <= 0, so nothing overflows
// and the largest term is exactly 1 (the sum is >= 1: no division by zero either).
#include <math.h>
#include "exercise.h"

void ex_softmax(float *y, const float *x, int n) {
    float max = -INFINITY;
    for (int i = 0; i < n; i++) if (x[i] > max) max = x[i];
    if (max == -INFINITY) {             // every position masked: no distribution, give zeros
        for (int i = 0; i < n; i++) y[i] = 0.0f;
        return;
    }
    float sum = 0.0f;
    for (int i = 0; i < n; i++) { y[i] = expf(x[i] - max); sum += y[i]; }
    float inv = 1.0f / sum;
    for (int i = 0; i < n; i++) y[i] *= inv;
}
