// kernels_neon.c: the vector kernels of simd.h for AArch64 Advanced SIMD (NEON, 4 floats per
// register). NEON is part of the AArch64 baseline, so this file needs no extra compiler flag and
// the neon level is always available on 64-bit Arm (Apple silicon included). Tested under
// qemu-aarch64 by `make test-arm` (tests/arm/simd_selftest.c).
// Kernels not written for NEON (layernorm, rope, attend) use the naive ones at this level.
#include <arm_neon.h>
#include <math.h>
#include "simd.h"

// exp(x) for 4 floats: the range reduction and Taylor polynomial of exp256 (kernels_avx2.c),
// 2^n built in the exponent field in two halves so n = 128 and n = -150 stay in range (results
// in the subnormal range, x in [-104, -87.34], round once as expf's do).
// x > 88.7228 gives +inf, x < -104 gives 0; NaN stays NaN (vmaxnm/vminnm are avoided on
// purpose: the plain vmax/vmin propagate NaN).
static float32x4_t exp_f32x4(float32x4_t x) {
    const float32x4_t hi = vdupq_n_f32(88.72283935546875f), lo = vdupq_n_f32(-104.0f);
    float32x4_t xc = vmaxq_f32(lo, vminq_f32(hi, x));
    float32x4_t n = vrndnq_f32(vmulq_n_f32(xc, 1.44269504088896341f));
    float32x4_t r = vfmsq_f32(xc, n, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t p = vdupq_n_f32(1.0f / 5040.0f);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 720.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 120.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 24.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f / 6.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(0.5f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.0f), p, r);
    int32x4_t ni = vcvtq_s32_f32(n);
    int32x4_t n1 = vshrq_n_s32(ni, 1), n2 = vsubq_s32(ni, n1);
    float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, vdupq_n_s32(127)), 23));
    float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, vdupq_n_s32(127)), 23));
    s2 = vbslq_f32(vcltq_f32(x, lo), vdupq_n_f32(0.0f), s2);   // x < -104: 0, no subnormal formed
    float32x4_t y = vmulq_f32(vmulq_f32(p, s1), s2);
    return vbslq_f32(vcgtq_f32(x, hi), vdupq_n_f32(INFINITY), y);
}

float tw_dot_neon(const float *a, const float *b, int n) {
    float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0), s2 = vdupq_n_f32(0), s3 = vdupq_n_f32(0);
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = vfmaq_f32(s0, vld1q_f32(a + i),      vld1q_f32(b + i));
        s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4),  vld1q_f32(b + i + 4));
        s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8),  vld1q_f32(b + i + 8));
        s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
    }
    for (; i + 4 <= n; i += 4) s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
    float sum = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    for (; i < n; i++) sum += a[i] * b[i];
    return isfinite(sum) ? sum : tw_dot_naive(a, b, n);
}

void tw_matvec_neon(float *y, const float *W, const float *x, int N, int K) {
    int i = 0;
    for (; i + 4 <= N; i += 4) {
        const float *w0 = W + (long)i * K, *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
        float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0), s2 = vdupq_n_f32(0), s3 = vdupq_n_f32(0);
        int k = 0;
        for (; k + 4 <= K; k += 4) {
            float32x4_t xv = vld1q_f32(x + k);
            s0 = vfmaq_f32(s0, vld1q_f32(w0 + k), xv);
            s1 = vfmaq_f32(s1, vld1q_f32(w1 + k), xv);
            s2 = vfmaq_f32(s2, vld1q_f32(w2 + k), xv);
            s3 = vfmaq_f32(s3, vld1q_f32(w3 + k), xv);
        }
        float r0 = vaddvq_f32(s0), r1 = vaddvq_f32(s1), r2 = vaddvq_f32(s2), r3 = vaddvq_f32(s3);
        for (; k < K; k++) {
            r0 += w0[k] * x[k]; r1 += w1[k] * x[k]; r2 += w2[k] * x[k]; r3 += w3[k] * x[k];
        }
        y[i] = r0; y[i + 1] = r1; y[i + 2] = r2; y[i + 3] = r3;
        for (int j = 0; j < 4; j++)
            if (!isfinite(y[i + j])) y[i + j] = tw_dot_naive(W + (long)(i + j) * K, x, K);
    }
    for (; i < N; i++) y[i] = tw_dot_neon(W + (long)i * K, x, K);
}

// Applies f4 to whole registers and, for the last n % 4 elements, to a zero-padded copy.
#define MAP_TAIL(y, x, n, i, f4) do {                                     \
        float buf_[4] = {0};                                              \
        for (long j_ = (i); j_ < (n); j_++) buf_[j_ - (i)] = (x)[j_];     \
        vst1q_f32(buf_, f4(vld1q_f32(buf_)));                             \
        for (long j_ = (i); j_ < (n); j_++) (y)[j_] = buf_[j_ - (i)];     \
    } while (0)

void tw_exp_neon(float *y, const float *x, long n) {
    long i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, exp_f32x4(vld1q_f32(x + i)));
    if (i < n) MAP_TAIL(y, x, n, i, exp_f32x4);
}

static float32x4_t silu_f32x4(float32x4_t x) {
    return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), exp_f32x4(vnegq_f32(x))));
}

void tw_silu_neon(float *y, const float *x, long n) {
    long i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, silu_f32x4(vld1q_f32(x + i)));
    if (i < n) MAP_TAIL(y, x, n, i, silu_f32x4);
}

void tw_swiglu_neon(float *y, const float *gate, const float *up, long n) {
    long i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_f32(y + i, vmulq_f32(silu_f32x4(vld1q_f32(gate + i)), vld1q_f32(up + i)));
    for (; i < n; i++) y[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

void tw_softmax_row_neon(float *y, const float *x, int n) {
    float32x4_t vmax = vdupq_n_f32(-INFINITY);
    int i = 0;
    for (; i + 4 <= n; i += 4) vmax = vmaxq_f32(vmax, vld1q_f32(x + i));
    float max = vmaxvq_f32(vmax);
    for (; i < n; i++) if (x[i] > max) max = x[i];
    if (max == -INFINITY) {
        for (i = 0; i < n; i++) y[i] = 0.0f;
        return;
    }
    float32x4_t m = vdupq_n_f32(max), vsum = vdupq_n_f32(0);
    for (i = 0; i + 4 <= n; i += 4) {
        float32x4_t e = exp_f32x4(vsubq_f32(vld1q_f32(x + i), m));
        vst1q_f32(y + i, e);
        vsum = vaddq_f32(vsum, e);
    }
    float sum = vaddvq_f32(vsum);
    if (i < n) {
        float buf[4];
        for (int j = 0; j < 4; j++) buf[j] = i + j < n ? x[i + j] - max : -INFINITY;
        vst1q_f32(buf, exp_f32x4(vld1q_f32(buf)));
        for (int j = i; j < n; j++) { y[j] = buf[j - i]; sum += buf[j - i]; }
    }
    float32x4_t inv = vdupq_n_f32(1.0f / sum);
    for (i = 0; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vld1q_f32(y + i), inv));
    for (; i < n; i++) y[i] *= 1.0f / sum;
}

// Sum of squares and outputs in double, as norm.c and tw_rmsnorm_row_avx2 compute them: in float
// the sum overflows once |x| > 1.8e19 and the output becomes zeros.
float tw_rmsnorm_row_neon(float *out, const float *x, const float *w, int n, float eps) {
    float64x2_t s0 = vdupq_n_f64(0), s1 = vdupq_n_f64(0);
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        float64x2_t lo = vcvt_f64_f32(vget_low_f32(v)), hi = vcvt_high_f64_f32(v);
        s0 = vfmaq_f64(s0, lo, lo);
        s1 = vfmaq_f64(s1, hi, hi);
    }
    double ss = vaddvq_f64(vaddq_f64(s0, s1));
    for (; i < n; i++) ss += (double)x[i] * x[i];
    double r = sqrt(ss / n + (double)eps);
    const float64x2_t inv = vdupq_n_f64(1.0 / r);
    for (i = 0; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        float64x2_t lo = vmulq_f64(vcvt_f64_f32(vget_low_f32(v)), inv);
        float64x2_t hi = vmulq_f64(vcvt_high_f64_f32(v), inv);
        if (w) {
            float32x4_t wv = vld1q_f32(w + i);
            lo = vmulq_f64(lo, vcvt_f64_f32(vget_low_f32(wv)));
            hi = vmulq_f64(hi, vcvt_high_f64_f32(wv));
        }
        vst1q_f32(out + i, vcvt_high_f32_f64(vcvt_f32_f64(lo), hi));
    }
    for (; i < n; i++) out[i] = (float)(x[i] * (1.0 / r) * (w ? w[i] : 1.0));
    return (float)r;
}
