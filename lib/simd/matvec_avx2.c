// matvec_avx2.c: y = W x for the decode path, rows read in memory order (AVX2 + FMA, 8 floats
// per register; compiled with -mavx2 -mfma on this object only).
//   y: (N)   W: (N, K) row-major   x: (K)
//
// The design of matvec_avx512.c (read its header for why): one ascending stream through W, four
// accumulators per row (32 floats per step), the accumulators added pairwise, 8 lanes folded to
// 4, and a transposed reduction of four rows with three horizontal adds. The K % 8 tail is one
// masked load (vmaskmovps, which reads nothing outside the mask). Every row's sum depends on
// that row only, so any split of the rows among threads gives the same bits.
#include <immintrin.h>
#include <math.h>
#include "simd/prefetch.h"
#include "simd.h"

// The whole float range (docs/kernels.md, "Over the whole float range"): the four accumulators of
// a row can overflow where the reference's in-order sum does not (alternating signs near 3e38).
// A row whose sum is not finite is redone in the reference's order, each product rounded, as
// lib/nn/linear.c forms it (tw_dot_naive); the check costs one compare per four rows. The redo
// depends on the row alone, so a split of the rows among threads still changes no bit.
// Rows i .. i + n - 1 of y whose value is not finite, redone in the reference's order.
static void redo_overflowed(float *y, const float *W, const float *x, int i, int n, int K) {
    for (int j = i; j < i + n; j++)
        if (!isfinite(y[j])) y[j] = tw_dot_naive(W + (long)j * K, x, K);
}

// 1 if all four lanes are finite (|v| < inf; false for NaN).
static inline int all_finite4(__m128 v) {
    __m128 abs = _mm_andnot_ps(_mm_set1_ps(-0.0f), v);
    return _mm_movemask_ps(_mm_cmplt_ps(abs, _mm_set1_ps(INFINITY))) == 0xF;
}

static inline __m256i tail_mask8(int n) {   // lanes < n set
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Each step of 32 floats also prefetches its 128 bytes' worth of W ahead when `far` (W larger
// than TW_MATVEC_SMALL_FLOATS: streamed from L3 or DRAM; a smaller W sits in L1/L2, where the
// prefetches would only take load slots).
static inline __m128 row_partial(const float *w, const float *x, int K, int far) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int k = 0;
    for (; k + 32 <= K; k += 32) {
        if (far) tw_prefetch_ahead(w + k, 2);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + k),      _mm256_loadu_ps(x + k),      a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + k + 8),  _mm256_loadu_ps(x + k + 8),  a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(w + k + 16), _mm256_loadu_ps(x + k + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(w + k + 24), _mm256_loadu_ps(x + k + 24), a3);
    }
    if (k + 8 <= K) { a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + k), _mm256_loadu_ps(x + k), a0); k += 8; }
    if (k + 8 <= K) { a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + k), _mm256_loadu_ps(x + k), a1); k += 8; }
    if (k + 8 <= K) { a2 = _mm256_fmadd_ps(_mm256_loadu_ps(w + k), _mm256_loadu_ps(x + k), a2); k += 8; }
    if (k < K) {
        __m256i m = tail_mask8(K - k);
        a3 = _mm256_fmadd_ps(_mm256_maskload_ps(w + k, m), _mm256_maskload_ps(x + k, m), a3);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));   // 8 -> 4 lanes
}

void tw_matvec_avx2(float *y, const float *W, const float *x, int N, int K) {
    const int far = (long)N * K > TW_MATVEC_SMALL_FLOATS;
    int i = 0;
    for (; i + 4 <= N; i += 4) {
        const float *w = W + (long)i * K;
        __m128 q0 = row_partial(w, x, K, far), q1 = row_partial(w + K, x, K, far);
        __m128 q2 = row_partial(w + 2L * K, x, K, far), q3 = row_partial(w + 3L * K, x, K, far);
        __m128 r = _mm_hadd_ps(_mm_hadd_ps(q0, q1), _mm_hadd_ps(q2, q3));
        _mm_storeu_ps(y + i, r);
        if (!all_finite4(r)) redo_overflowed(y, W, x, i, 4, K);
    }
    for (; i < N; i++) {   // a lone row: the same two horizontal-add steps
        __m128 q = row_partial(W + (long)i * K, x, K, far);
        __m128 h = _mm_hadd_ps(q, q);
        y[i] = _mm_cvtss_f32(_mm_hadd_ps(h, h));
        redo_overflowed(y, W, x, i, 1, K);
    }
}
