// Exercise 35, a classic wrong attempt (tests that the checker rejects it): the running maximum
// is updated, but what was summed before is not rescaled, so earlier blocks keep weights measured
// against an old, smaller maximum. Right whenever the first block holds the row's maximum.
// The checker says: random scores, n = 7, D = 4, blocks of 3
#include <math.h>
#include "concepts.h"

float ex_online_attention_row(float *out, const float *x, const float *v, int n, int D, int B) {
    float m = -INFINITY;
    double l = 0.0;
    for (int d = 0; d < D; d++) out[d] = 0.0f;
    for (int s0 = 0; s0 < n; s0 += B) {
        const int nb = n - s0 < B ? n - s0 : B;
        for (int j = 0; j < nb; j++) m = x[s0 + j] > m ? x[s0 + j] : m;   // no rescale
        if (m == -INFINITY) continue;
        for (int j = 0; j < nb; j++) {
            const float e = expf(x[s0 + j] - m);
            l += e;
            if (e == 0.0f) continue;
            for (int d = 0; d < D; d++) out[d] += e * v[(long)(s0 + j) * D + d];
        }
    }
    if (l == 0.0) return -INFINITY;
    for (int d = 0; d < D; d++) out[d] = (float)(out[d] / l);
    return (float)(m + log(l));
}
