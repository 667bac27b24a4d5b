// ref.c: the naive reference of every vector kernel in simd.h (the matmul ladder has its own
// files). These loops are the specification: each accumulates in float, in index order, and
// calls libm's expf/sqrtf, so a reader can check them against the formula by eye. The SIMD
// variants are tested against them (tests/test_simd.c).
#include <math.h>
#include "simd.h"

float tw_dot_naive(const float *a, const float *b, int n) {
    float sum = 0.0f;
    for (int i = 0; i < n; i++) sum += a[i] * b[i];
    return sum;
}

// y = W x: one dot product per output row (the decode path of a Linear layer: every weight is
// read once per token, so this kernel is bound by memory bandwidth, not arithmetic).
void tw_matvec_naive(float *y, const float *W, const float *x, int N, int K) {
    for (int i = 0; i < N; i++) y[i] = tw_dot_naive(W + (long)i * K, x, K);
}

// Subtracting the maximum first keeps every exp() argument <= 0, so nothing overflows.
// A row that is all -inf (fully masked) becomes zeros, as tw_softmax_rows does.
void tw_softmax_naive(float *y, const float *x, int n) {
    float max = -INFINITY;
    for (int i = 0; i < n; i++) if (x[i] > max) max = x[i];
    if (max == -INFINITY) {
        for (int i = 0; i < n; i++) y[i] = 0.0f;
        return;
    }
    float sum = 0.0f;
    for (int i = 0; i < n; i++) { y[i] = expf(x[i] - max); sum += y[i]; }
    for (int i = 0; i < n; i++) y[i] /= sum;
}

float tw_rmsnorm_naive(float *out, const float *x, const float *w, int n, float eps) {
    float ss = 0.0f;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    float rms = sqrtf(ss / (float)n + eps);
    for (int i = 0; i < n; i++) out[i] = x[i] / rms * (w ? w[i] : 1.0f);
    return rms;
}

// Two passes (mean, then the mean of squared deviations) rather than E[x^2] - E[x]^2, which
// cancels catastrophically when the mean is large compared with the spread.
void tw_layernorm_naive(float *out, const float *x, const float *gamma, const float *beta,
                        int n, float eps) {
    float sum = 0.0f;
    for (int i = 0; i < n; i++) sum += x[i];
    float mean = sum / (float)n;
    float var = 0.0f;
    for (int i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
    float rstd = 1.0f / sqrtf(var / (float)n + eps);
    for (int i = 0; i < n; i++)
        out[i] = (x[i] - mean) * rstd * gamma[i] + (beta ? beta[i] : 0.0f);
}

void tw_rope_angles(float *cos_t, float *sin_t, int pos, int D, float theta) {
    for (int i = 0; i < D / 2; i++) {
        // In double: pos * freq reaches thousands of radians, where float would lose the phase.
        double angle = (double)pos * pow((double)theta, -2.0 * i / D);
        cos_t[i] = (float)cos(angle);
        sin_t[i] = (float)sin(angle);
    }
}

void tw_rope_naive(float *x, const float *cos_t, const float *sin_t, int n_head, int D) {
    for (int h = 0; h < n_head; h++) {
        float *xh = x + (long)h * D;
        for (int i = 0; i < D / 2; i++) {
            float a = xh[2 * i], b = xh[2 * i + 1];
            xh[2 * i]     = a * cos_t[i] - b * sin_t[i];
            xh[2 * i + 1] = a * sin_t[i] + b * cos_t[i];
        }
    }
}

void tw_exp_naive(float *y, const float *x, long n) {
    for (long i = 0; i < n; i++) y[i] = expf(x[i]);
}

void tw_silu_naive(float *y, const float *x, long n) {
    for (long i = 0; i < n; i++) y[i] = x[i] / (1.0f + expf(-x[i]));
}

void tw_swiglu_naive(float *y, const float *gate, const float *up, long n) {
    for (long i = 0; i < n; i++) y[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

void tw_attend_naive(float *out, float *scores, float *att, const float *q, const float *k,
                     const float *v, int S, int D, int kv_stride) {
    float scale = 1.0f / sqrtf((float)D);
    float *sc = scores ? scores : att;   // without a scores buffer, softmax in place
    for (int s = 0; s < S; s++) sc[s] = tw_dot_naive(q, k + (long)s * kv_stride, D) * scale;
    tw_softmax_naive(att, sc, S);
    for (int d = 0; d < D; d++) out[d] = 0.0f;
    for (int s = 0; s < S; s++) {
        const float *vs = v + (long)s * kv_stride;
        for (int d = 0; d < D; d++) out[d] += att[s] * vs[d];
    }
}
