// matvec_avx512.c: y = W x for the decode path, rows read in memory order (AVX-512F, 16 floats
// per register; compiled with -mavx512f -mfma on this object only).
//   y: (N)   W: (N, K) row-major   x: (K)
//
// Why not bench_matvec_4row_avx512 (bench/matvec_4row_avx512.c), which walks four rows side by side: a decode step
// reads every weight once, from L3 or DRAM, so the kernel is as fast as the memory system can
// stream W to it, and the hardware prefetchers decide that. Four rows side by side are four
// streams K floats apart inside the same pages, visited in the order line 0, K/16, 2K/16, 3K/16,
// 1, ... Intel's L2 streamer copes; AMD Zen 4's prefetchers did not, and a plain one-row-at-a-time
// loop read far faster there (issue 13; the figures: docs/performance.md, "Kernels"). This kernel
// reads W in exactly the order it lies in memory, one ascending stream, which every prefetcher
// (Intel, AMD, Arm) follows at full speed, with no vendor switch. The row loop of a large matrix also
// asks for the lines 8 KiB ahead with a software prefetch (simd.h, TW_PREFETCH_AHEAD_FLOATS):
// when the memory is slow to answer, the hardware prefetchers alone keep too few lines in flight.
//
// Per row: four accumulators over k (64 floats per step), so four independent FMA chains keep
// the loads busy even with the row in L1 (two loads per FMA: W and x, x from L1); the K % 16
// tail is one masked load. The four accumulators are added pairwise, then the 16 lanes are
// folded 16 -> 8 -> 4, and four rows at a time finish with a transposed reduction (three
// horizontal adds give the four row sums in one register; for small matrices, sums4 does the
// same additions across the four rows at once, with fewer shuffles). A row left over at the end is folded
// with the same operations in the same order, so every row's sum is the same function of that
// row alone, wherever it falls in a block: splitting the rows among threads changes no bit.
//
// One exception to the memory order: a matrix under TW_MATVEC_SMALL_FLOATS (256 KiB, every
// matrix of stories260K) lives in L1/L2, where the load ports, not the prefetchers, set the
// speed; there rows4_partial walks four rows side by side with the same per-row arithmetic.
// The weights must be 64-byte aligned for full speed (tw_model_init in lib/nn/model.c aligns the
// parameters): a 64-byte load that straddles two cache lines costs two.
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

// The 16 lanes of the row's partial sums: acc0..3 over k in steps of 64, then 16, then a masked
// tail, added as (acc0 + acc1) + (acc2 + acc3). Each step of 64 also prefetches its 256 bytes'
// worth of W ahead.
static inline __m512 row_partial(const float *w, const float *x, int K) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    __m512 a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    int k = 0;
    for (; k + 64 <= K; k += 64) {
        tw_prefetch_ahead(w + k, 4);
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + k),      _mm512_loadu_ps(x + k),      a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + k + 16), _mm512_loadu_ps(x + k + 16), a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(w + k + 32), _mm512_loadu_ps(x + k + 32), a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(w + k + 48), _mm512_loadu_ps(x + k + 48), a3);
    }
    if (k + 16 <= K) { a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + k), _mm512_loadu_ps(x + k), a0); k += 16; }
    if (k + 16 <= K) { a1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + k), _mm512_loadu_ps(x + k), a1); k += 16; }
    if (k + 16 <= K) { a2 = _mm512_fmadd_ps(_mm512_loadu_ps(w + k), _mm512_loadu_ps(x + k), a2); k += 16; }
    if (k < K) {
        __mmask16 m = (__mmask16)((1u << (K - k)) - 1u);
        a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w + k), _mm512_maskz_loadu_ps(m, x + k), a3);
    }
    return _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
}

// The same four partial-sum vectors as row_partial for rows w, w + K, w + 2K, w + 3K, computed
// side by side: each 64-float step of x is loaded once and feeds 16 FMAs (1.25 loads per FMA
// instead of 2). Faster while W sits in L1/L2 (the load ports are then the limit); used only
// for small matrices, whose four streams are short. The arithmetic of each row is exactly that
// of row_partial: same accumulators, same steps, same order of additions.
#define STEP16(acc, r) \
    acc = _mm512_fmadd_ps(_mm512_loadu_ps(w##r + k), _mm512_loadu_ps(x + k), acc)
static inline void rows4_partial(__m512 out[4], const float *w0, const float *x, int K) {
    const float *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
    __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;
    __m512 a10 = a00, a11 = a00, a12 = a00, a13 = a00;
    __m512 a20 = a00, a21 = a00, a22 = a00, a23 = a00;
    __m512 a30 = a00, a31 = a00, a32 = a00, a33 = a00;
    int k = 0;
    for (; k + 64 <= K; k += 64) {
        __m512 x0 = _mm512_loadu_ps(x + k), x1 = _mm512_loadu_ps(x + k + 16);
        __m512 x2 = _mm512_loadu_ps(x + k + 32), x3 = _mm512_loadu_ps(x + k + 48);
        a00 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + k), x0, a00);
        a10 = _mm512_fmadd_ps(_mm512_loadu_ps(w1 + k), x0, a10);
        a20 = _mm512_fmadd_ps(_mm512_loadu_ps(w2 + k), x0, a20);
        a30 = _mm512_fmadd_ps(_mm512_loadu_ps(w3 + k), x0, a30);
        a01 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + k + 16), x1, a01);
        a11 = _mm512_fmadd_ps(_mm512_loadu_ps(w1 + k + 16), x1, a11);
        a21 = _mm512_fmadd_ps(_mm512_loadu_ps(w2 + k + 16), x1, a21);
        a31 = _mm512_fmadd_ps(_mm512_loadu_ps(w3 + k + 16), x1, a31);
        a02 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + k + 32), x2, a02);
        a12 = _mm512_fmadd_ps(_mm512_loadu_ps(w1 + k + 32), x2, a12);
        a22 = _mm512_fmadd_ps(_mm512_loadu_ps(w2 + k + 32), x2, a22);
        a32 = _mm512_fmadd_ps(_mm512_loadu_ps(w3 + k + 32), x2, a32);
        a03 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + k + 48), x3, a03);
        a13 = _mm512_fmadd_ps(_mm512_loadu_ps(w1 + k + 48), x3, a13);
        a23 = _mm512_fmadd_ps(_mm512_loadu_ps(w2 + k + 48), x3, a23);
        a33 = _mm512_fmadd_ps(_mm512_loadu_ps(w3 + k + 48), x3, a33);
    }
    if (k + 16 <= K) { STEP16(a00, 0); STEP16(a10, 1); STEP16(a20, 2); STEP16(a30, 3); k += 16; }
    if (k + 16 <= K) { STEP16(a01, 0); STEP16(a11, 1); STEP16(a21, 2); STEP16(a31, 3); k += 16; }
    if (k + 16 <= K) { STEP16(a02, 0); STEP16(a12, 1); STEP16(a22, 2); STEP16(a32, 3); k += 16; }
    if (k < K) {
        __mmask16 m = (__mmask16)((1u << (K - k)) - 1u);
        __m512 xv = _mm512_maskz_loadu_ps(m, x + k);
        a03 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w0 + k), xv, a03);
        a13 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w1 + k), xv, a13);
        a23 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w2 + k), xv, a23);
        a33 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w3 + k), xv, a33);
    }
    out[0] = _mm512_add_ps(_mm512_add_ps(a00, a01), _mm512_add_ps(a02, a03));
    out[1] = _mm512_add_ps(_mm512_add_ps(a10, a11), _mm512_add_ps(a12, a13));
    out[2] = _mm512_add_ps(_mm512_add_ps(a20, a21), _mm512_add_ps(a22, a23));
    out[3] = _mm512_add_ps(_mm512_add_ps(a30, a31), _mm512_add_ps(a32, a33));
}
#undef STEP16

// 16 lanes -> 4: lanes i and i + 8 added, then i and i + 4.
static inline __m128 fold16to4(__m512 v) {
    __m256 lo = _mm512_castps512_ps256(v);
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    __m256 h = _mm256_add_ps(lo, hi);
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// The four rows' sums of p[0..3], each exactly as fold16to4 and two hadd steps form it for a lone
// row (lane i + lane i + 8, then + lane i + 4, then lanes 0 + 1 and 2 + 3, then those two), but
// four rows at a time across the register: 9 shuffles and 5 adds where fold16to4 on each row and
// three hadd took 14 shuffles and 11 adds.
static inline __m128 sums4(const __m512 p[4]) {
    // lanes 0-7: row 0's lane i + lane i + 8; lanes 8-15: row 1's (t01), rows 2 and 3 (t23)
    const __m512 t01 = _mm512_add_ps(_mm512_shuffle_f32x4(p[0], p[1], 0x44), _mm512_shuffle_f32x4(p[0], p[1], 0xEE));
    const __m512 t23 = _mm512_add_ps(_mm512_shuffle_f32x4(p[2], p[3], 0x44), _mm512_shuffle_f32x4(p[2], p[3], 0xEE));
    // 128-bit lane r: row r's four sums (fold16to4's result for that row)
    const __m512 u = _mm512_add_ps(_mm512_shuffle_f32x4(t01, t23, 0x88), _mm512_shuffle_f32x4(t01, t23, 0xDD));
    // element 0 and 1 of each 128-bit lane: q[0] + q[1] and q[2] + q[3] (hadd's pairs)
    const __m512 v = _mm512_add_ps(_mm512_shuffle_ps(u, u, _MM_SHUFFLE(2, 0, 2, 0)),
                                   _mm512_shuffle_ps(u, u, _MM_SHUFFLE(3, 1, 3, 1)));
    // element 0 of each 128-bit lane: (q[0] + q[1]) + (q[2] + q[3]); then lanes 0, 4, 8, 12 gathered
    const __m512 w = _mm512_add_ps(v, _mm512_shuffle_ps(v, v, _MM_SHUFFLE(1, 1, 1, 1)));
    const __m512i idx = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
    return _mm512_castps512_ps128(_mm512_permutexvar_ps(idx, w));
}

void tw_matvec_avx512(float *y, const float *W, const float *x, int N, int K) {
    // Side by side while W is small enough to sit in any core's L2 (256 KiB: the matrices of
    // stories260K); one row after another, in memory order, for anything larger. Same bits.
    const int side_by_side = (long)N * K <= TW_MATVEC_SMALL_FLOATS;
    int i = 0;
    for (; i + 4 <= N; i += 4) {
        const float *w = W + (long)i * K;
        __m512 p[4];
        if (side_by_side) rows4_partial(p, w, x, K);
        else {
            p[0] = row_partial(w, x, K);
            p[1] = row_partial(w + K, x, K);
            p[2] = row_partial(w + 2L * K, x, K);
            p[3] = row_partial(w + 3L * K, x, K);
        }
        // Small K: the sums are a large share of the work, so sums4. Streaming: each row's fold
        // runs while the next row's loads are in flight; sums4 there, which waits for all four
        // rows, measured slower (docs/performance.md, "Kernels"). Same bits either way.
        __m128 r;
        if (side_by_side) r = sums4(p);
        else {
            __m128 q0 = fold16to4(p[0]), q1 = fold16to4(p[1]), q2 = fold16to4(p[2]), q3 = fold16to4(p[3]);
            // hadd(q0, q1) = (q0[0]+q0[1], q0[2]+q0[3], q1[0]+q1[1], q1[2]+q1[3]); once more gives
            // (q0[0]+q0[1]) + (q0[2]+q0[3]) for each row, in lanes 0..3.
            r = _mm_hadd_ps(_mm_hadd_ps(q0, q1), _mm_hadd_ps(q2, q3));
        }
        _mm_storeu_ps(y + i, r);
        if (!all_finite4(r)) redo_overflowed(y, W, x, i, 4, K);
    }
    for (; i < N; i++) {   // the same sum for a lone row: the same two hadd steps
        __m128 q = fold16to4(row_partial(W + (long)i * K, x, K));
        __m128 h = _mm_hadd_ps(q, q);
        y[i] = _mm_cvtss_f32(_mm_hadd_ps(h, h));
        redo_overflowed(y, W, x, i, 1, K);
    }
}

// ---- the same sums for T rows of x at once (batched decoding) ----
//
// tw_matvec_rows_avx512: Y = X W^T, Y (T, N), X (T, K), W (N, K): row t of Y is bit for bit
// tw_matvec_avx512(W, X row t), but each weight loaded into a register feeds MR rows of X, and
// each X vector feeds 4 rows of W (a tile of MR x 4 sums side by side), so the kernel does about
// one load per two FMAs instead of two loads per FMA, and W is read from memory once for all T.
//
// How the sums stay the decode's: row_partial gives each output four accumulators, a0 .. a3.
// Accumulator j takes the 16 floats at k = 16j + 64i for every i with 64i + 64 <= K, then one
// more full step at 16j + 64 (K / 64) if the K % 64 floats left reach that far (j < 3 only), and
// a3 alone takes the masked rest. Each accumulator is its own chain of FMAs in ascending k; the
// chains never meet until the end. So the tile runs chain 0 for all MR x 4 outputs, then chain 1,
// 2, 3 (each chain's 4MR accumulators are the registers in use), with the same FMAs in the same
// order per chain as row_partial, then adds them (a0 + a1) + (a2 + a3) and folds the four outputs
// of each X row with sums4, the same additions as the decode's fold16to4 and two hadd.
enum { ROWS_MR = 4 };   // rows of X per tile: 16 accumulators + 4 X + 4 W vectors of 32 registers

// Chain j of the MR x 4 tile: acc[r][c] += W row c times X row r over chain j's steps.
//   y-less: acc: (MR, 4)   w: 4 rows of W, K apart   x: MR rows of X, ldx apart
static inline __attribute__((always_inline)) void tile_chain(__m512 acc[ROWS_MR][4], const float *w,
                                                            const float *x, long ldx, int K,
                                                            int j, int MR) {
    const int k64 = K / 64 * 64, rest = K - k64;
    const int steps = K / 64 + (j < 3 && rest >= 16 * (j + 1));
    #pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
        #pragma GCC unroll 4
        for (int c = 0; c < 4; c++) acc[r][c] = _mm512_setzero_ps();
    for (int i = 0, k = 16 * j; i < steps; i++, k += 64) {
        const __m512 w0 = _mm512_loadu_ps(w + k), w1 = _mm512_loadu_ps(w + K + k);
        const __m512 w2 = _mm512_loadu_ps(w + 2L * K + k), w3 = _mm512_loadu_ps(w + 3L * K + k);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            const __m512 xv = _mm512_loadu_ps(x + r * ldx + k);
            acc[r][0] = _mm512_fmadd_ps(w0, xv, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(w1, xv, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(w2, xv, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(w3, xv, acc[r][3]);
        }
    }
    if (j == 3 && rest % 16) {   // row_partial's masked tail, on a3
        const int k = k64 + rest / 16 * 16;
        const __mmask16 m = (__mmask16)((1u << (rest % 16)) - 1u);
        const __m512 w0 = _mm512_maskz_loadu_ps(m, w + k), w1 = _mm512_maskz_loadu_ps(m, w + K + k);
        const __m512 w2 = _mm512_maskz_loadu_ps(m, w + 2L * K + k);
        const __m512 w3 = _mm512_maskz_loadu_ps(m, w + 3L * K + k);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            const __m512 xv = _mm512_maskz_loadu_ps(m, x + r * ldx + k);
            acc[r][0] = _mm512_fmadd_ps(w0, xv, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(w1, xv, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(w2, xv, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(w3, xv, acc[r][3]);
        }
    }
}

// One tile: Y[r][0..3] for MR rows of X (Y's rows ldy apart) and 4 rows of W.
static inline __attribute__((always_inline)) void rows_tile(float *y, long ldy, const float *w,
                                                           const float *x, long ldx, int K, int MR) {
    __m512 a01[ROWS_MR][4], acc[ROWS_MR][4], a2[ROWS_MR][4];
    tile_chain(a01, w, x, ldx, K, 0, MR);
    tile_chain(acc, w, x, ldx, K, 1, MR);
    #pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
        #pragma GCC unroll 4
        for (int c = 0; c < 4; c++) a01[r][c] = _mm512_add_ps(a01[r][c], acc[r][c]);   // a0 + a1
    tile_chain(a2, w, x, ldx, K, 2, MR);
    tile_chain(acc, w, x, ldx, K, 3, MR);
    #pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
        __m512 p[4];
        #pragma GCC unroll 4
        for (int c = 0; c < 4; c++)   // (a0 + a1) + (a2 + a3), as row_partial returns it
            p[c] = _mm512_add_ps(a01[r][c], _mm512_add_ps(a2[r][c], acc[r][c]));
        const __m128 s = sums4(p);
        _mm_storeu_ps(y + r * ldy, s);
        if (!all_finite4(s))   // as tw_matvec_avx512: redone in the reference's order
            #pragma GCC unroll 4
            for (int c = 0; c < 4; c++)
                if (!isfinite(y[r * ldy + c])) y[r * ldy + c] = tw_dot_naive(w + (long)c * K, x + r * ldx, K);
    }
}

static void rows_tile_mr(float *y, long ldy, const float *w, const float *x, long ldx, int K, int MR) {
    switch (MR) {   // one copy per height, so every loop over r is unrolled with constant bounds
    case 4: rows_tile(y, ldy, w, x, ldx, K, 4); break;
    case 3: rows_tile(y, ldy, w, x, ldx, K, 3); break;
    case 2: rows_tile(y, ldy, w, x, ldx, K, 2); break;
    default: rows_tile(y, ldy, w, x, ldx, K, 1); break;
    }
}

void tw_matvec_rows_avx512(float *Y, const float *X, const float *W, int T, int N, int K) {
    // W in blocks of a multiple of 4 rows of about 24 KiB, which stay in L1 while every tile of
    // X rows passes over them (an X tile, MR rows, stays in L1 across the block's tiles).
    int block = (6144 / (K > 0 ? K : 1)) & ~3;
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
        for (int t = 0; t < T; t++) tw_matvec_avx512(Y + (long)t * N + N4, W + (long)N4 * K, X + (long)t * K, N - N4, K);
}
