// norm.c: LayerNorm and RMSNorm over the last axis of a (T, C) tensor.
// Row statistics (mean, variance, mean square) are accumulated in double: for wide rows this
// keeps the reference well below float rounding, so it can serve as the yardstick for other code.
// Each output element is computed in double and rounded to float once.
// After tw_simd_init with a SIMD level, RMSNorm runs the selected vectorised kernel instead
// (float accumulation; lib/simd/simd.h). At the default naive level nothing changes.
#include <math.h>
#include <stddef.h>
#include "norm.h"
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

// ---- backward ----
// Derivation (LayerNorm; RMSNorm is the same without the centring): y = xhat * gamma + beta with
// xhat_c = (x_c - m) r. Through xhat, d xhat_c / d x_j = r (delta_cj - 1/C - xhat_c xhat_j / C),
// so dx_j = r (g_j - mean(g) - xhat_j mean(g xhat)). The statistics m and r are the forward's:
// recomputing them would be a second pass over x that the forward has already done.

void tw_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dout,
                           const float *x, const float *mean, const float *rstd,
                           const float *gamma, int T, int C) {
    for (int t = 0; t < T; t++) {
        const float *x_t = x + (size_t)t * C, *d_t = dout + (size_t)t * C;   // (C) each
        const double m = mean[t], r = rstd[t];
        double g_mean = 0.0, gx_mean = 0.0;
        for (int c = 0; c < C; c++) {
            double xhat = (x_t[c] - m) * r, g = (double)d_t[c] * gamma[c];
            g_mean += g;
            gx_mean += g * xhat;
            if (dgamma) dgamma[c] += (float)(d_t[c] * xhat);
            if (dbeta) dbeta[c] += d_t[c];
        }
        g_mean /= C;
        gx_mean /= C;
        if (!dx) continue;
        float *dx_t = dx + (size_t)t * C;
        for (int c = 0; c < C; c++) {
            double xhat = (x_t[c] - m) * r, g = (double)d_t[c] * gamma[c];
            dx_t[c] += (float)(r * (g - g_mean - xhat * gx_mean));
        }
    }
}

void tw_rmsnorm_backward(float *dx, float *dweight, const float *dout, const float *x,
                         const float *rms, const float *weight, int T, int C) {
    for (int t = 0; t < T; t++) {
        const float *x_t = x + (size_t)t * C, *d_t = dout + (size_t)t * C;   // (C) each
        const double r = rms[t];
        double gx_mean = 0.0;
        for (int c = 0; c < C; c++) {
            double xhat = x_t[c] / r, g = (double)d_t[c] * (weight ? weight[c] : 1.0);
            gx_mean += g * xhat;
            if (dweight) dweight[c] += (float)(d_t[c] * xhat);
        }
        gx_mean /= C;
        if (!dx) continue;
        float *dx_t = dx + (size_t)t * C;
        for (int c = 0; c < C; c++) {
            double xhat = x_t[c] / r, g = (double)d_t[c] * (weight ? weight[c] : 1.0);
            dx_t[c] += (float)((g - xhat * gx_mean) / r);
        }
    }
}
