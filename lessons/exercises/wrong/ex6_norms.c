// Wrong attempt at exercise 6 (make test builds it and requires the checker to reject it).
// The mistake: LayerNorm's variance in one pass, E[x^2] - E[x]^2, in float: for values near 1000
// both terms are near 1e6 and their difference (about 1) drowns in the rounding of 1e6 (ulp 0.06).
// The checker says: one-pass variance
#include <math.h>
#include "concepts.h"

void ex_layernorm(float *out, const float *x, const float *gamma, const float *beta, int C, float eps) {
    float sum = 0.0f, sumsq = 0.0f;
    for (int c = 0; c < C; c++) { sum += x[c]; sumsq += x[c] * x[c]; }
    float mean = sum / C, var = sumsq / C - mean * mean;
    float r = 1.0f / sqrtf(var + eps);
    for (int c = 0; c < C; c++) out[c] = (x[c] - mean) * r * gamma[c] + beta[c];
}

void ex_rmsnorm(float *out, const float *x, const float *weight, int C, float eps) {
    double ss = 0.0;
    for (int c = 0; c < C; c++) ss += (double)x[c] * x[c];
    double rms = sqrt(ss / C + eps);
    for (int c = 0; c < C; c++) out[c] = (float)(x[c] / rms * weight[c]);
}
