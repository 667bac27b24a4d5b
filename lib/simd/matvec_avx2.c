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

// ---- the same sums for T rows of x at once (batched decoding) ----
//
// tw_matvec_rows_avx2: Y = X W^T, Y (T, N), X (T, K), W (N, K): row t of Y is bit for bit
// tw_matvec_avx2(W, X row t), with each weight vector loaded once for MR rows of X and each X
// vector once for 4 rows of W. As in matvec_avx512.c's rows kernel (read its comment): row_partial's
// accumulator j is a chain of FMAs over k = 8j + 32i (plus one more full step at 8j + 32 (K / 32)
// when the K % 32 floats left reach it, j < 3; a3 takes the masked rest), the chains meet only in
// (a0 + a1) + (a2 + a3); so the tile runs chain after chain over all its outputs, then adds and
// folds them exactly as row_partial and the two hadd steps do.
enum { ROWS_MR = 2 };   // rows of X per tile: 8 accumulators + 4 W + 1 X of 16 registers

static inline __attribute__((always_inline)) void tile_chain(__m256 acc[ROWS_MR][4], const float *w,
                                                            const float *x, long ldx, int K,
                                                            int j, int MR) {
    const int k32 = K / 32 * 32, rest = K - k32;
    const int steps = K / 32 + (j < 3 && rest >= 8 * (j + 1));
    #pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
        #pragma GCC unroll 4
        for (int c = 0; c < 4; c++) acc[r][c] = _mm256_setzero_ps();
    for (int i = 0, k = 8 * j; i < steps; i++, k += 32) {
        const __m256 w0 = _mm256_loadu_ps(w + k), w1 = _mm256_loadu_ps(w + K + k);
        const __m256 w2 = _mm256_loadu_ps(w + 2L * K + k), w3 = _mm256_loadu_ps(w + 3L * K + k);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            const __m256 xv = _mm256_loadu_ps(x + r * ldx + k);
            acc[r][0] = _mm256_fmadd_ps(w0, xv, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(w1, xv, acc[r][1]);
            acc[r][2] = _mm256_fmadd_ps(w2, xv, acc[r][2]);
            acc[r][3] = _mm256_fmadd_ps(w3, xv, acc[r][3]);
        }
    }
    if (j == 3 && rest % 8) {   // row_partial's masked tail, on a3
        const int k = k32 + rest / 8 * 8;
        const __m256i m = tail_mask8(rest % 8);
        const __m256 w0 = _mm256_maskload_ps(w + k, m), w1 = _mm256_maskload_ps(w + K + k, m);
        const __m256 w2 = _mm256_maskload_ps(w + 2L * K + k, m), w3 = _mm256_maskload_ps(w + 3L * K + k, m);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            const __m256 xv = _mm256_maskload_ps(x + r * ldx + k, m);
            acc[r][0] = _mm256_fmadd_ps(w0, xv, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(w1, xv, acc[r][1]);
            acc[r][2] = _mm256_fmadd_ps(w2, xv, acc[r][2]);
            acc[r][3] = _mm256_fmadd_ps(w3, xv, acc[r][3]);
        }
    }
}

static inline __attribute__((always_inline)) void rows_tile(float *y, long ldy, const float *w,
                                                           const float *x, long ldx, int K, int MR) {
    __m256 a01[ROWS_MR][4], acc[ROWS_MR][4], a2[ROWS_MR][4];
    tile_chain(a01, w, x, ldx, K, 0, MR);
    tile_chain(acc, w, x, ldx, K, 1, MR);
    #pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
        #pragma GCC unroll 4
        for (int c = 0; c < 4; c++) a01[r][c] = _mm256_add_ps(a01[r][c], acc[r][c]);   // a0 + a1
    tile_chain(a2, w, x, ldx, K, 2, MR);
    tile_chain(acc, w, x, ldx, K, 3, MR);
    #pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
        __m128 q[4];
        #pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {   // (a0 + a1) + (a2 + a3), then 8 -> 4 lanes, as row_partial
            const __m256 s = _mm256_add_ps(a01[r][c], _mm256_add_ps(a2[r][c], acc[r][c]));
            q[c] = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
        }
        const __m128 s = _mm_hadd_ps(_mm_hadd_ps(q[0], q[1]), _mm_hadd_ps(q[2], q[3]));
        _mm_storeu_ps(y + r * ldy, s);
        if (!all_finite4(s))   // as tw_matvec_avx2: redone in the reference's order
            #pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                if (!isfinite(y[r * ldy + c])) y[r * ldy + c] = tw_dot_naive(w + (long)c * K, x + r * ldx, K);
    }
}

static void rows_tile_mr(float *y, long ldy, const float *w, const float *x, long ldx, int K, int MR) {
    if (MR == 2) rows_tile(y, ldy, w, x, ldx, K, 2);
    else rows_tile(y, ldy, w, x, ldx, K, 1);
}

void tw_matvec_rows_avx2(float *Y, const float *X, const float *W, int T, int N, int K) {
    int block = (6144 / (K > 0 ? K : 1)) & ~3;   // rows of W per block: about 24 KiB, in L1
    if (block < 4) block = 4;
    const int N4 = N / 4 * 4, prefetch = (long)N * K > TW_MATVEC_SMALL_FLOATS;
    for (int o0 = 0; o0 < N4; o0 += block) {
        const int o1 = o0 + block < N4 ? o0 + block : N4, groups = (o1 - o0) / 4;
        const int next = N4 - o1 < block ? N4 - o1 : block, tiles = (T + ROWS_MR - 1) / ROWS_MR;
        // the next block's lines, in shares of one per (tile, group) (simd/prefetch.h)
        const long lines = ((long)next * K + 15) / 16, share = (lines + (long)tiles * groups - 1) / ((long)tiles * groups);
        for (int t = 0; t < T; t += ROWS_MR) {
            const int MR = T - t < ROWS_MR ? T - t : ROWS_MR;
            for (int o = o0; o < o1; o += 4) {
                if (prefetch) tw_prefetch_share(W + (long)o1 * K, lines, share, t / ROWS_MR * groups + (o - o0) / 4);
                rows_tile_mr(Y + (long)t * N + o, N, W + (long)o * K, X + (long)t * K, K, K, MR);
            }
        }
    }
    if (N4 < N)   // the last N % 4 rows of W: the decode's lone-row path, row by row of X
        for (int t = 0; t < T; t++) tw_matvec_avx2(Y + (long)t * N + N4, W + (long)N4 * K, X + (long)t * K, N - N4, K);
}
