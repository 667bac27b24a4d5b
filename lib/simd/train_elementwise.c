// train_elementwise.c: the training path's elementwise exponentials on the level's vector exp
// (simd.h, "train_elementwise.c"). At the SIMD level the loss's softmax over the vocabulary and
// SwiGLU's derivative took two double-precision exp() calls per element each (a tenth of a
// stories260K-shape training step); here each element takes one exponential, in float, from the
// kernel the forward's softmax uses. This file has no ISA flags: the loops around the kernel are
// plain C, and on x86-64 the loss's use SSE2 (the baseline every x86-64 compiler targets). Results differ from the components' loops by float rounding (tests/test_train_simd.c
// bounds it).
#include <math.h>
#include <stddef.h>
#include "simd.h"
#if defined(__SSE2__)   // every x86-64 compiler: baseline, no ISA flag needed
#include <emmintrin.h>
#endif

// A row of the loss is long (stories15M: 32000 floats) and the four loops below were 7.5 % of a
// stories15M training step, most of it two chains of dependent scalar operations: the max and the
// double-precision sum. Each now runs in independent lanes (LANES maxima, LANES partial sums, and
// SSE2's two doubles a register where the compiler targets x86-64: the baseline, no ISA flag),
// and the subtraction, the exponentials and the sum go chunk by chunk so that each chunk is still
// in L1 when it is summed.
enum { LANES = 8, CHUNK = 1024 };

// max of z[0 .. n), n >= 1: the value of loss.c's loop (a NaN is skipped, but a NaN in z[0] is the
// result), lane by lane from z[0]; when +0 and -0 tie for the largest, either may come out.
static float row_max(const float *z, int n) {
    float m[LANES];
    for (int j = 0; j < LANES; j++) m[j] = z[0];
    int v = 0;
    for (; v + LANES <= n; v += LANES)
        for (int j = 0; j < LANES; j++) m[j] = z[v + j] > m[j] ? z[v + j] : m[j];
    for (; v < n; v++) m[0] = z[v] > m[0] ? z[v] : m[0];
    float max = m[0];
    for (int j = 1; j < LANES; j++) if (m[j] > max) max = m[j];
    return max;
}

// sum of p[0 .. n) in double, in LANES partial sums added pairwise at the end (lane j takes the
// p[v] with v % LANES == j; with SSE2, lanes 2i and 2i + 1 are the two halves of register i).
static double row_sum(const float *p, int n) {
    double s[LANES] = { 0 };
    int v = 0;
#if defined(__SSE2__)
    __m128d s01 = _mm_setzero_pd(), s23 = _mm_setzero_pd(), s45 = _mm_setzero_pd();
    __m128d s67 = _mm_setzero_pd();
    for (; v + LANES <= n; v += LANES) {
        const __m128 a = _mm_loadu_ps(p + v), b = _mm_loadu_ps(p + v + 4);
        s01 = _mm_add_pd(s01, _mm_cvtps_pd(a));
        s23 = _mm_add_pd(s23, _mm_cvtps_pd(_mm_movehl_ps(a, a)));
        s45 = _mm_add_pd(s45, _mm_cvtps_pd(b));
        s67 = _mm_add_pd(s67, _mm_cvtps_pd(_mm_movehl_ps(b, b)));
    }
    _mm_storeu_pd(s, s01);
    _mm_storeu_pd(s + 2, s23);
    _mm_storeu_pd(s + 4, s45);
    _mm_storeu_pd(s + 6, s67);
#endif
    for (; v + LANES <= n; v += LANES)
        for (int j = 0; j < LANES; j++) s[j] += (double)p[v + j];
    for (; v < n; v++) s[0] += (double)p[v];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// p[v] = z[v] - max for v < n (p may be z): one rounding each, as the plain loop.
static void subtract(float *p, const float *z, float max, int n) {
    int v = 0;
#if defined(__SSE2__)
    const __m128 m = _mm_set1_ps(max);
    for (; v + 4 <= n; v += 4) _mm_storeu_ps(p + v, _mm_sub_ps(_mm_loadu_ps(z + v), m));
#endif
    for (; v < n; v++) p[v] = z[v] - max;
}

// p[v] = (float)(p[v] * inv) for v < n, the product in double: the plain loop's value.
static void scale_by(float *p, double inv, int n) {
    int v = 0;
#if defined(__SSE2__)
    const __m128d s = _mm_set1_pd(inv);
    for (; v + 4 <= n; v += 4) {
        const __m128 a = _mm_loadu_ps(p + v);
        const __m128 lo = _mm_cvtpd_ps(_mm_mul_pd(_mm_cvtps_pd(a), s));
        const __m128 hi = _mm_cvtpd_ps(_mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(a, a)), s));
        _mm_storeu_ps(p + v, _mm_movelh_ps(lo, hi));
    }
#endif
    for (; v < n; v++) p[v] = (float)(p[v] * inv);
}

int tw_simd_cross_entropy_row(double *lse, float *p, const float *z, int V) {
    if (!tw_simd.exp || V < 1) return 0;
    const float max = row_max(z, V);
    if (!isfinite(max)) return 0;
    double sum = 0.0;   // >= 1: the largest term is exp(0)
    for (int v0 = 0; v0 < V; v0 += CHUNK) {
        const int n = V - v0 < CHUNK ? V - v0 : CHUNK;
        subtract(p + v0, z + v0, max, n);   // every exponent <= 0: no overflow
        tw_simd.exp(p + v0, p + v0, n);
        sum += row_sum(p + v0, n);
    }
    scale_by(p, 1.0 / sum, V);
    *lse = max + log(sum);
    return 1;
}

// With e = exp(-g) and s = sigmoid(g) = 1 / (1 + e): silu(g) = g s and silu'(g) = s (1 + g (1 - s))
// = s (1 + g e s), the last form exact where s rounds to 1 (1 - s would cancel). For very
// negative g, e = inf and s = 0 (e s is then taken as its limit, 1): both are 0, their limits.
#if defined(__SSE2__)
// The loop below on four elements a register: the same IEEE operations in the same order (a
// division, products and sums, no fused multiply-add), so the same bits (a NaN stays NaN, its
// sign bit aside). The scalar loop's division, one element at a time, was 4 % of a stories260K
// training step.
static long swiglu_gating_sse2(float *dgate, float *dup, const float *gate, const float *up,
                               long n) {
    const __m128 one = _mm_set1_ps(1.0f), inf = _mm_set1_ps(INFINITY);
    long i = 0;
    for (; i + 4 <= n; i += 4) {
        const __m128 g = _mm_loadu_ps(gate + i), e = _mm_loadu_ps(dup + i), da = _mm_loadu_ps(dgate + i);
        const __m128 s = _mm_div_ps(one, _mm_add_ps(one, e));
        const __m128 at_inf = _mm_cmpeq_ps(e, inf);
        const __m128 es = _mm_or_ps(_mm_and_ps(at_inf, one), _mm_andnot_ps(at_inf, _mm_mul_ps(e, s)));
        _mm_storeu_ps(dup + i, _mm_mul_ps(da, _mm_mul_ps(g, s)));
        const __m128 ds = _mm_mul_ps(s, _mm_add_ps(one, _mm_mul_ps(g, es)));
        _mm_storeu_ps(dgate + i, _mm_mul_ps(_mm_mul_ps(da, _mm_loadu_ps(up + i)), ds));
    }
    return i;
}
#endif

int tw_simd_swiglu_backward_gating(float *dgate, float *dup, const float *gate, const float *up,
                                   long n) {
    if (!tw_simd.exp) return 0;
    for (long i = 0; i < n; i++) dup[i] = -gate[i];
    tw_simd.exp(dup, dup, n);   // dup holds e for now
    long i = 0;
#if defined(__SSE2__)
    i = swiglu_gating_sse2(dgate, dup, gate, up, n);
#endif
    for (; i < n; i++) {
        const float g = gate[i], e = dup[i], s = 1.0f / (1.0f + e), da = dgate[i];
        const float es = e == INFINITY ? 1.0f : e * s;   // 1 - s
        dup[i] = da * (g * s);
        dgate[i] = da * up[i] * (s * (1.0f + g * es));
    }
    return 1;
}
