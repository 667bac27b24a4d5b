// matvec_4row_avx2.c: the four-rows-at-a-time AVX2 matvec (matvec_4row.h), moved here from
// lib/simd/kernels_avx2.c: only the benchmark runs it. Compiled with -mavx2 -mfma (mk/simd.mk).
#include <immintrin.h>
#include <math.h>
#include "simd/simd.h"
#include "matvec_4row.h"

// The four sums of a0..a3's eight lanes, as lanes 0..3: three horizontal adds and one add.
static __m128 hsum4x8(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
    __m256 u = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    // u = (a0, a1, a2, a3 over lanes 0-3 | the same over lanes 4-7)
    return _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
}

// A mask of the lanes whose |value| < inf (false for NaN): one compare for a whole register.
static int finite_mask128(__m128 v) {
    __m128 abs = _mm_andnot_ps(_mm_set1_ps(-0.0f), v);
    return _mm_movemask_ps(_mm_cmplt_ps(abs, _mm_set1_ps(INFINITY)));
}

// Four rows at a time: each load of x feeds four FMAs, and four independent chains hide the
// FMA latency. The kernel is still bound by reading W from memory once per call.
void bench_matvec_4row_avx2(float *y, const float *W, const float *x, int N, int K) {
    int i = 0;
    for (; i + 4 <= N; i += 4) {
        const float *w0 = W + (long)i * K, *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
        __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
        __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
        int k = 0;
        for (; k + 8 <= K; k += 8) {
            __m256 xv = _mm256_loadu_ps(x + k);
            s0 = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + k), xv, s0);
            s1 = _mm256_fmadd_ps(_mm256_loadu_ps(w1 + k), xv, s1);
            s2 = _mm256_fmadd_ps(_mm256_loadu_ps(w2 + k), xv, s2);
            s3 = _mm256_fmadd_ps(_mm256_loadu_ps(w3 + k), xv, s3);
        }
        __m128 r = hsum4x8(s0, s1, s2, s3);   // the four rows' sums, reduced together
        if (k < K) {                           // the last K % 8 products, in scalar
            float t[4];
            _mm_storeu_ps(t, r);
            for (; k < K; k++) {
                t[0] += w0[k] * x[k]; t[1] += w1[k] * x[k]; t[2] += w2[k] * x[k]; t[3] += w3[k] * x[k];
            }
            r = _mm_loadu_ps(t);
        }
        _mm_storeu_ps(y + i, r);
        if (finite_mask128(r) != 0xF)          // an overflowed row: redo it in the reference's order
            for (int j = 0; j < 4; j++)
                if (!isfinite(y[i + j])) y[i + j] = tw_dot_naive(W + (long)(i + j) * K, x, K);
    }
    for (; i < N; i++) y[i] = tw_dot_avx2(W + (long)i * K, x, K);
}
