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

// One LayerNorm row; returns its mean and 1/std through m_out, r_out.
static void layernorm_row(float *out_t, float *m_out, float *r_out, const float *x_t,
                          const float *gamma, const float *beta, int C, float eps) {
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
    *m_out = (float)m;
    *r_out = (float)r;
}

void tw_layernorm_row(float *out, const float *x, const float *gamma, const float *beta, int n,
                      float eps) {
    float m, r;
    layernorm_row(out, &m, &r, x, gamma, beta, n, eps);
}

void tw_layernorm_forward(float *out, float *mean, float *rstd, const float *x,
                          const float *gamma, const float *beta, int T, int C, float eps) {
    for (int t = 0; t < T; t++) {
        float m, r;
        // out may alias x: the row is fully read before it is written
        layernorm_row(out + (size_t)t * C, &m, &r, x + (size_t)t * C, gamma, beta, C, eps);
        if (mean) mean[t] = m;
        if (rstd) rstd[t] = r;
    }
}

float tw_rmsnorm_row(float *out, const float *x, const float *weight, int C, float eps) {
    double ss = 0.0;
    for (int c = 0; c < C; c++) ss += (double)x[c] * x[c];
    double r = sqrt(ss / C + (double)eps);  // eps inside the root, as Llama and torch
    for (int c = 0; c < C; c++)
        out[c] = (float)(x[c] / r * (weight ? weight[c] : 1.0));
    return (float)r;
}

void tw_rmsnorm_forward(float *out, float *rms, const float *x, const float *weight,
                        int T, int C, float eps) {
    if (tw_simd_rmsnorm_rows(out, rms, x, weight, T, C, eps)) return;   // declines at naive
    for (int t = 0; t < T; t++) {
        float r = tw_rmsnorm_row(out + (size_t)t * C, x + (size_t)t * C, weight, C, eps);
        if (rms) rms[t] = r;
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
        // One division per row: multiplying by 1 / r in double moves xhat by at most an ulp of
        // a double, far below the float results' rounding, and divisions per element were a
        // visible part of a training step (docs/performance.md).
        const double inv_r = 1.0 / rms[t];
        double gx_mean = 0.0;
        for (int c = 0; c < C; c++) {
            double xhat = x_t[c] * inv_r, g = (double)d_t[c] * (weight ? weight[c] : 1.0);
            gx_mean += g * xhat;
            if (dweight) dweight[c] += (float)(d_t[c] * xhat);
        }
        gx_mean /= C;
        if (!dx) continue;
        float *dx_t = dx + (size_t)t * C;
        for (int c = 0; c < C; c++) {
            double xhat = x_t[c] * inv_r, g = (double)d_t[c] * (weight ? weight[c] : 1.0);
            dx_t[c] += (float)((g - xhat * gx_mean) * inv_r);
        }
    }
}
