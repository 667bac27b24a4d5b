// Exercise 6, a worked answer: two passes in double (mean, then mean squared deviation), one
// rounding to float per output element.
#include <math.h>
#include "concepts.h"

void ex_layernorm(float *out, const float *x, const float *gamma, const float *beta, int C, float eps) {
    double mean = 0.0;
    for (int c = 0; c < C; c++) mean += x[c];
    mean /= C;
    double var = 0.0;
    for (int c = 0; c < C; c++) var += (x[c] - mean) * (x[c] - mean);
    var /= C;
    double r = 1.0 / sqrt(var + eps);
    for (int c = 0; c < C; c++) out[c] = (float)((x[c] - mean) * r * gamma[c] + beta[c]);
}

void ex_rmsnorm(float *out, const float *x, const float *weight, int C, float eps) {
    double ss = 0.0;
    for (int c = 0; c < C; c++) ss += (double)x[c] * x[c];
    double rms = sqrt(ss / C + eps);
    for (int c = 0; c < C; c++) out[c] = (float)(x[c] / rms * weight[c]);
}
