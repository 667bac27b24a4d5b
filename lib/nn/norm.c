// norm.c: LayerNorm and RMSNorm over the last axis of a (T, C) tensor.
// Row statistics (mean, variance, mean square) are accumulated in double: for wide rows this
// keeps the reference well below float rounding, so it can serve as the yardstick for other code.
// Each output element is computed in double and rounded to float once.
// After tw_simd_init with a SIMD level, RMSNorm runs the selected vectorised kernel instead
// (float accumulation; lib/simd/simd.h). At the default naive level nothing changes.
#include <math.h>
#include <stddef.h>
#include "nn/norm.h"
#include "simd/simd.h"

void tw_layernorm_forward(float *out, float *mean, float *rstd, const float *x,
                          const float *gamma, const float *beta, int T, int C, float eps) {
    for (int t = 0; t < T; t++) {
        const float *x_t = x + (size_t)t * C;   // (C)
        float *out_t = out + (size_t)t * C;     // (C), may be x_t
        // Two passes (mean, then the mean of squared deviations): numerically safer than
        // E[x^2] - E[x]^2, which cancels badly when |mean| >> std.
        double m = 0.0;
        for (int c = 0; c < C; c++) m += x_t[c];
        m /= C;
        double v = 0.0;
        for (int c = 0; c < C; c++) { double d = x_t[c] - m; v += d * d; }
        v /= C;                                 // biased variance, as torch.nn.LayerNorm
        double r = 1.0 / sqrt(v + (double)eps);
        for (int c = 0; c < C; c++) {
            double n = (x_t[c] - m) * r;
            out_t[c] = (float)(n * gamma[c] + (beta ? beta[c] : 0.0));
        }
        if (mean) mean[t] = (float)m;
        if (rstd) rstd[t] = (float)r;
    }
}

void tw_rmsnorm_forward(float *out, float *rms, const float *x, const float *weight,
                        int T, int C, float eps) {
    if (tw_simd_rmsnorm_rows(out, rms, x, weight, T, C, eps)) return;   // declines at naive
    for (int t = 0; t < T; t++) {
        const float *x_t = x + (size_t)t * C;   // (C)
        float *out_t = out + (size_t)t * C;     // (C), may be x_t
        double ss = 0.0;
        for (int c = 0; c < C; c++) ss += (double)x_t[c] * x_t[c];
        double r = sqrt(ss / C + (double)eps);  // eps inside the root, as Llama and torch
        for (int c = 0; c < C; c++)
            out_t[c] = (float)(x_t[c] / r * (weight ? weight[c] : 1.0));
        if (rms) rms[t] = (float)r;
    }
}
