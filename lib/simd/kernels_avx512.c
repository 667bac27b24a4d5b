// kernels_avx512.c: the AVX-512 versions of the kernels where the wider registers pay: dot,
// matvec, exp and softmax (16 floats per register). Compiled with -mavx512f -mfma on this object
// only. The other kernels of the avx512 level are the AVX2 ones (every AVX-512 CPU has AVX2);
// dispatch.c says which is which. Tails use masked loads and stores instead of scalar loops.
#include <immintrin.h>
#include <math.h>
#include "simd.h"
#include "simd/exp_avx512.h"

static __mmask16 tail_mask(int n) { return (__mmask16)((1u << n) - 1u); }

float tw_dot_avx512(const float *a, const float *b, int n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i),      _mm512_loadu_ps(b + i),      s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16)
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    if (i < n) {
        __mmask16 m = tail_mask(n - i);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s1);
    }
    float sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    return isfinite(sum) ? sum : tw_dot_naive(a, b, n);   // an overflowed partial sum
}

void tw_exp_avx512(float *y, const float *x, long n) {
    long i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, exp512(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 m = tail_mask((int)(n - i));
        _mm512_mask_storeu_ps(y + i, m, exp512(_mm512_maskz_loadu_ps(m, x + i)));
    }
}

void tw_softmax_row_avx512(float *y, const float *x, int n) {
    __m512 vmax = _mm512_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 16 <= n; i += 16) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(x + i));
    if (i < n)
        vmax = _mm512_max_ps(vmax, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY),
                                                        tail_mask(n - i), x + i));
    float max = _mm512_reduce_max_ps(vmax);
    if (max == -INFINITY) {
        for (i = 0; i < n; i++) y[i] = 0.0f;
        return;
    }
    __m512 m = _mm512_set1_ps(max), vsum = _mm512_setzero_ps();
    for (i = 0; i + 16 <= n; i += 16) {
        __m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), m));
        _mm512_storeu_ps(y + i, e);
        vsum = _mm512_add_ps(vsum, e);
    }
    if (i < n) {
        __mmask16 t = tail_mask(n - i);
        __m512 e = _mm512_maskz_mov_ps(t, exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, x + i), m)));
        _mm512_mask_storeu_ps(y + i, t, e);
        vsum = _mm512_add_ps(vsum, e);
    }
    __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(vsum));
    for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
    if (i < n) {
        __mmask16 t = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, t, _mm512_mul_ps(_mm512_maskz_loadu_ps(t, y + i), inv));
    }
}

// AdamW on 8 elements a register, in double: optim.c's loop, operation for operation (these
// intrinsics are plain IEEE operations, and FPFLAGS' -ffp-contract=off keeps the compiler from
// fusing a multiply into an add), so every element gets the naive loop's bits. The tail: masked
// (512-bit float loads and stores of which the low 8 lanes are used: AVX-512F has no masked
// 256-bit ones without AVX-512VL).
static __m256 load8(__mmask16 mask, const float *x) {
    return _mm512_castps512_ps256(_mm512_maskz_loadu_ps(mask, x));
}
static void store8(float *y, __mmask16 mask, __m256 x) {
    _mm512_mask_storeu_ps(y, mask, _mm512_castps256_ps512(x));
}

static void adamw8(float *param, float *m, float *v, const float *grad, __mmask16 mask,
                   const tw_adamw_consts *k) {
    const __m512d b1 = _mm512_set1_pd(k->beta1), b2 = _mm512_set1_pd(k->beta2);
    const __m512d g = _mm512_cvtps_pd(load8(mask, grad));
    const __m512d mi = _mm512_add_pd(_mm512_mul_pd(b1, _mm512_cvtps_pd(load8(mask, m))),
                                     _mm512_mul_pd(_mm512_set1_pd(1.0 - k->beta1), g));
    const __m512d vi = _mm512_add_pd(_mm512_mul_pd(b2, _mm512_cvtps_pd(load8(mask, v))),
                                     _mm512_mul_pd(_mm512_mul_pd(_mm512_set1_pd(1.0 - k->beta2), g), g));
    store8(m, mask, _mm512_cvtpd_ps(mi));
    store8(v, mask, _mm512_cvtpd_ps(vi));
    const __m512d p = _mm512_mul_pd(_mm512_cvtps_pd(load8(mask, param)),
                                    _mm512_set1_pd(k->decay));
    const __m512d den = _mm512_add_pd(_mm512_div_pd(_mm512_sqrt_pd(vi), _mm512_set1_pd(k->bc2_sqrt)),
                                      _mm512_set1_pd(k->eps));
    const __m512d step = _mm512_div_pd(_mm512_mul_pd(_mm512_set1_pd(k->lr_bc1), mi), den);
    store8(param, mask, _mm512_cvtpd_ps(_mm512_sub_pd(p, step)));
}

void tw_adamw_avx512(float *param, float *m, float *v, const float *grad, long n,
                     const tw_adamw_consts *k) {
    long i = 0;
    for (; i + 8 <= n; i += 8) adamw8(param + i, m + i, v + i, grad + i, 0xff, k);
    if (i < n) adamw8(param + i, m + i, v + i, grad + i, (__mmask16)((1u << (n - i)) - 1u), k);
}
