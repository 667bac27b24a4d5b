// linear_packed_avx2.c: Y = X W^T on packed panels (linear_packed.c has the layout and the
// order), AVX2 + FMA; compiled with -mavx2 -mfma on this object only.
//   Y: (T, N)   X: (T, K)   Wp: panels of TW_PANEL = 32 of W's rows, k-major
//
// A tile is up to 2 rows of X by one panel (32 outputs, four registers): 8 accumulators, the
// panel's four and a broadcast, 13 of the 16 registers. Per k, four loads and two broadcasts feed
// 8 multiply-adds. A panel that runs past N goes through a buffer, and only its first columns
// are written. While the tiles work on one block of k, each asks for its share of the next block
// into L2, one line per k, as the AVX-512 kernel does (linear_packed_avx512.c says why). At the
// AVX2 level on an Intel Xeon (Emerald Rapids), against the same kernel without it: the 15M
// classifier from memory 1.12x at T = 32 and 1.01x at T = 64; whole batched decode steps, 6
// alternated runs each, 1.01 to 1.62x (median 1.27) at 32 sequences and 0.89 to 1.50x (median
// 1.01) at 64.
#include <immintrin.h>
#include <stdint.h>
#include "simd/prefetch.h"
#include "simd.h"

#define TILE_ROWS 2

// The greedy head's rows in a tile (tw_linear_packed_argmax): each row's running argmax so far,
// over outputs 0 .. n0 - 1, and the panel's outputs n0 .. n0 + cols - 1.   best, arg: (rows)
typedef struct { float *best; int *arg; int n0, cols; } greedy_rows;

// One row's cols sums of the panel (its last block added) into its running argmax: four
// comparisons with the best so far for a whole panel, and only when a lane beats it (or the panel
// is partial, or the first), the loop of tw_argmax_naive over the panel.
static inline void pick(float *best, int *arg, const __m256 v[4], int cols, int n0) {
    if (n0 > 0 && cols == TW_PANEL) {
        const __m256 b = _mm256_set1_ps(*best);
        __m256 gt = _mm256_cmp_ps(v[0], b, _CMP_GT_OQ);   // false for a NaN, as '>' is
        for (int j = 1; j < 4; j++) gt = _mm256_or_ps(gt, _mm256_cmp_ps(v[j], b, _CMP_GT_OQ));
        if (!_mm256_movemask_ps(gt)) return;
    }
    float y[TW_PANEL];
    for (int j = 0; j < 4; j++) _mm256_storeu_ps(y + 8 * j, v[j]);
    tw_argmax_continue(best, arg, y, cols, n0);
}

// rows (a constant once inlined) rows of Y (N apart), one panel, one block of k: written when
// first, else added to. With g (the greedy head's last block), the rows go into their running
// argmax instead of Y. The tile asks for pf_lines lines from pf into L2, one per k.
static inline __attribute__((always_inline)) void tile(const int rows, float *Y, int N, int cols,
                                                      const float *X, int K, const float *w,
                                                      int kb, int first, const greedy_rows *g,
                                                      uintptr_t pf, int pf_lines) {
    __m256 a[TILE_ROWS][4];
#pragma GCC unroll 2
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < 4; j++) a[i][j] = _mm256_setzero_ps();
    for (int k = 0; k < kb; k++) {
        const float *wk = w + (size_t)k * TW_PANEL;
        const __m256 w0 = _mm256_loadu_ps(wk), w1 = _mm256_loadu_ps(wk + 8);
        const __m256 w2 = _mm256_loadu_ps(wk + 16), w3 = _mm256_loadu_ps(wk + 24);
        if (k < pf_lines) tw_prefetch_line_l2((const void *)(pf + 64 * (uintptr_t)k));
#pragma GCC unroll 2
        for (int i = 0; i < rows; i++) {
            const __m256 xi = _mm256_broadcast_ss(X + (size_t)i * K + k);
            a[i][0] = _mm256_fmadd_ps(w0, xi, a[i][0]);
            a[i][1] = _mm256_fmadd_ps(w1, xi, a[i][1]);
            a[i][2] = _mm256_fmadd_ps(w2, xi, a[i][2]);
            a[i][3] = _mm256_fmadd_ps(w3, xi, a[i][3]);
        }
    }
#pragma GCC unroll 2
    for (int i = 0; i < rows; i++) {
        float *y = Y + (size_t)i * N;
        if (g) {   // Y is the scratch, whose rows the earlier blocks wrote whole (cols = 32)
            for (int j = 0; j < 4; j++)
                if (!first) a[i][j] = _mm256_add_ps(_mm256_loadu_ps(y + 8 * j), a[i][j]);
            pick(g->best + i, g->arg + i, a[i], g->cols, g->n0);
        } else if (cols == TW_PANEL) {
            for (int j = 0; j < 4; j++) {
                __m256 v = first ? a[i][j] : _mm256_add_ps(_mm256_loadu_ps(y + 8 * j), a[i][j]);
                _mm256_storeu_ps(y + 8 * j, v);
            }
        } else {
            float buf[TW_PANEL];
            for (int j = 0; j < 4; j++) _mm256_storeu_ps(buf + 8 * j, a[i][j]);
            for (int j = 0; j < cols; j++) y[j] = first ? buf[j] : y[j] + buf[j];
        }
    }
}

// The panels in address order, shared by the two kernels below. The plain kernel: Y is (T, N),
// ldy = N, and panel n0's sums land at column n0. The greedy head (best and arg not NULL): Y is
// the scratch part (T, TW_PANEL), which holds one panel's sums over its earlier blocks of k,
// written whole (the columns past N are sums of the panel's zero rows); the last block's go into
// the rows' running argmax.
static void panels(float *Y, int ldy, const float *X, const float *Wp, int T, int N, int K,
                   float *best, int *arg) {
    const int kc = tw_linear_packed_kc(K), n_tiles = (T + 1) / 2;
    for (int n0 = 0; n0 < N; n0 += TW_PANEL) {
        const float *panel = Wp + (size_t)n0 * K;
        const int cols = N - n0 < TW_PANEL ? N - n0 : TW_PANEL;
        float *y = best ? Y : Y + n0;
        for (int k0 = 0; k0 < K; k0 += kc) {
            const int kb = K - k0 < kc ? K - k0 : kc, first = k0 == 0, last = k0 + kb == K;
            const float *w = panel + (size_t)k0 * TW_PANEL;
            // The block after this one, as an address: the last block's lies past the end of
            // Wp, where a prefetch never faults but a pointer may not point.
            const uintptr_t next = (uintptr_t)(w + (size_t)kb * TW_PANEL);
            const long lines = kb * TW_PANEL / 16, share = tw_share_size(lines, n_tiles);
            for (int j = 0, t = 0; t < T; j++, t += 2) {
                long l0;   // tile j asks for its share of the next block
                const int pl = (int)tw_share_lines(&l0, lines, share, j);
                const uintptr_t pf = next + 64 * (uintptr_t)l0;
                float *yt = y + (size_t)t * ldy;
                const float *xt = X + (size_t)t * K + k0;
                greedy_rows g, *to_pick = NULL;
                if (best && last) {
                    g = (greedy_rows){ best + t, arg + t, n0, cols };
                    to_pick = &g;
                }
                const int cols_y = best ? TW_PANEL : cols;
                if (t + 2 <= T) tile(2, yt, ldy, cols_y, xt, K, w, kb, first, to_pick, pf, pl);
                else            tile(1, yt, ldy, cols_y, xt, K, w, kb, first, to_pick, pf, pl);
            }
        }
    }
}

void tw_linear_packed_avx2(float *Y, const float *X, const float *Wp, int T, int N, int K) {
    panels(Y, N, X, Wp, T, N, K, NULL, NULL);
}

void tw_linear_packed_argmax_avx2(int *arg, float *best, float *part, const float *X,
                                  const float *Wp, int T, int N, int K) {
    panels(part, TW_PANEL, X, Wp, T, N, K, best, arg);
}
