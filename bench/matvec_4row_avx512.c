// matvec_4row_avx512.c: the four-rows-at-a-time AVX-512 matvec (matvec_4row.h), moved here from
// lib/simd/kernels_avx512.c: only the benchmark runs it. Compiled with -mavx512f -mfma (mk/simd.mk).
#include <immintrin.h>
#include <math.h>
#include "simd/simd.h"
#include "matvec_4row.h"

static __mmask16 tail_mask(int n) { return (__mmask16)((1u << n) - 1u); }

// The four sums of a0..a3's sixteen lanes, as lanes 0..3: each register folded to eight lanes,
// then three horizontal adds and one add (cheaper than four full reductions).
static __m128 hsum4x16(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
#define FOLD(a) _mm256_add_ps(_mm512_castps512_ps256(a), \
                              _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)))
    __m256 u = _mm256_hadd_ps(_mm256_hadd_ps(FOLD(a0), FOLD(a1)), _mm256_hadd_ps(FOLD(a2), FOLD(a3)));
#undef FOLD
    return _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
}

// Four rows at a time, as in bench_matvec_4row_avx2; the K tail is a masked load, not a scalar loop.
void bench_matvec_4row_avx512(float *y, const float *W, const float *x, int N, int K) {
    int i = 0;
    for (; i + 4 <= N; i += 4) {
        const float *w0 = W + (long)i * K, *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
        __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
        __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
        int k = 0;
        for (; k + 16 <= K; k += 16) {
            __m512 xv = _mm512_loadu_ps(x + k);
            s0 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + k), xv, s0);
            s1 = _mm512_fmadd_ps(_mm512_loadu_ps(w1 + k), xv, s1);
            s2 = _mm512_fmadd_ps(_mm512_loadu_ps(w2 + k), xv, s2);
            s3 = _mm512_fmadd_ps(_mm512_loadu_ps(w3 + k), xv, s3);
        }
        if (k < K) {
            __mmask16 m = tail_mask(K - k);
            __m512 xv = _mm512_maskz_loadu_ps(m, x + k);
            s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w0 + k), xv, s0);
            s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w1 + k), xv, s1);
            s2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w2 + k), xv, s2);
            s3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w3 + k), xv, s3);
        }
        __m128 r = hsum4x16(s0, s1, s2, s3);
        _mm_storeu_ps(y + i, r);
        // |y| < inf for all four rows (false for NaN): else redo a row in the reference's order.
        __m128 abs = _mm_andnot_ps(_mm_set1_ps(-0.0f), r);
        if (_mm_movemask_ps(_mm_cmplt_ps(abs, _mm_set1_ps(INFINITY))) != 0xF)
            for (int j = 0; j < 4; j++)
                if (!isfinite(y[i + j])) y[i + j] = tw_dot_naive(W + (long)(i + j) * K, x, K);
    }
    for (; i < N; i++) y[i] = tw_dot_avx512(W + (long)i * K, x, K);
}
