// linear_packed_avx512.c: Y = X W^T on packed panels (linear_packed.c has the layout and the
// order), AVX-512F; compiled with -mavx512f -mfma on this object only.
//   Y: (T, N)   X: (T, K)   Wp: panels of TW_PANEL = 32 of W's rows, k-major
//
// A tile is up to 12 rows of X by one panel (32 outputs, two registers): 24 accumulators, the
// panel's two and a broadcast, 27 of the 32 registers. Per k, two loads of the panel and one
// broadcast per row feed 24 multiply-adds, so the two FMA ports, not the loads, set the pace.
// (Tiles of 8 rows ran 3 to 10 % slower over the 15M model's matrices at T = 32 and 64.) A
// block of k (at most TW_PANEL_KC x 32 floats = 32 KiB) is read from memory by the first tile, in
// address order, and from L1 by the tiles after it.
//
// The blocks are visited in address order (a panel's blocks of k lie one after the other, and
// the next panel starts where one ends), so while the tiles work on one block they ask for the
// next one into L2: in a decode step every matrix comes from memory, and without this prefetch
// one pass over all the 15M model's matrices at T = 32 ran at 0.5 to 0.8 times the speed (Intel
// Xeon, Emerald Rapids; the two versions alternating in one process, 20 passes each). The next
// block's lines are cut into one share per tile, one line asked for per k. When the first tile
// alone asked for the whole block, two lines per k, the 15M classifier (32000 x 288) from memory
// ran 10 % (T = 64) to 13 % (T = 32) slower: it asked faster than one core keeps misses in flight.
// (The two versions alternating in one process, 40 calls each, caches flushed before each.)
#include <immintrin.h>
#include <stdint.h>
#include "simd/prefetch.h"
#include "simd.h"

#define TILE_ROWS 12

// The greedy head's rows in a tile (tw_linear_packed_argmax): each row's running argmax so far,
// over outputs 0 .. n0 - 1, and the panel's outputs n0 .. n0 + cols - 1.
//   best, arg: (rows)
typedef struct { float *best; int *arg; int n0, cols; } greedy_rows;

// One row's sums of the panel, its last block added, into its running argmax: two comparisons
// with the best so far, and only when a lane beats it, the loop of tw_argmax_naive over the panel
// (with random logits, a few panels of the vocabulary's thousand).
static inline void pick(float *best, int *arg, __m512 a0, __m512 a1, __mmask16 m0, __mmask16 m1,
                        int n0, int cols) {
    if (n0 > 0) {
        const __m512 b = _mm512_set1_ps(*best);
        if (!(_mm512_mask_cmp_ps_mask(m0, a0, b, _CMP_GT_OQ) |
              _mm512_mask_cmp_ps_mask(m1, a1, b, _CMP_GT_OQ)))
            return;   // false for a NaN, as '>' is
    }
    float y[TW_PANEL];
    _mm512_storeu_ps(y, a0);
    _mm512_storeu_ps(y + 16, a1);
    tw_argmax_continue(best, arg, y, cols, n0);
}

// rows (a constant once inlined) rows of Y (N apart), one panel, one block of k: written when
// first, else added to. With g (the greedy head's last block), the rows go into their running
// argmax instead of Y. The tile asks for pf_lines lines from pf into L2, one per k.
static inline __attribute__((always_inline)) void tile(const int rows, float *Y, int N,
                                                      const float *X, int K, const float *w,
                                                      int kb, __mmask16 m0, __mmask16 m1,
                                                      int first, const greedy_rows *g,
                                                      uintptr_t pf, int pf_lines) {
    __m512 a0[TILE_ROWS], a1[TILE_ROWS];
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) a0[i] = a1[i] = _mm512_setzero_ps();
    for (int k = 0; k < kb; k++) {
        const __m512 w0 = _mm512_loadu_ps(w + (size_t)k * TW_PANEL);
        const __m512 w1 = _mm512_loadu_ps(w + (size_t)k * TW_PANEL + 16);
        if (k < pf_lines) tw_prefetch_line_l2((const void *)(pf + 64 * (uintptr_t)k));
#pragma GCC unroll 12
        for (int i = 0; i < rows; i++) {
            const __m512 xi = _mm512_set1_ps(X[(size_t)i * K + k]);
            a0[i] = _mm512_fmadd_ps(w0, xi, a0[i]);
            a1[i] = _mm512_fmadd_ps(w1, xi, a1[i]);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        float *y = Y + (size_t)i * N;
        if (!first) {
            a0[i] = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, y), a0[i]);
            a1[i] = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, y + 16), a1[i]);
        }
        if (g) {
            pick(g->best + i, g->arg + i, a0[i], a1[i], m0, m1, g->n0, g->cols);
            continue;
        }
        _mm512_mask_storeu_ps(y, m0, a0[i]);
        _mm512_mask_storeu_ps(y + 16, m1, a1[i]);
    }
}

// The first n lanes of 16 (n clamped to 0 .. 16).
static __mmask16 first_lanes(int n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

// The tile of `rows` rows (12, 8, 4, 2 or 1), each size its own unrolled copy.
static void tile_of(int rows, float *Y, int N, const float *X, int K, const float *w, int kb,
                    __mmask16 m0, __mmask16 m1, int first, const greedy_rows *g, uintptr_t pf,
                    int pf_lines) {
    switch (rows) {
    case 12: tile(12, Y, N, X, K, w, kb, m0, m1, first, g, pf, pf_lines); break;
    case 8: tile(8, Y, N, X, K, w, kb, m0, m1, first, g, pf, pf_lines); break;
    case 4: tile(4, Y, N, X, K, w, kb, m0, m1, first, g, pf, pf_lines); break;
    case 2: tile(2, Y, N, X, K, w, kb, m0, m1, first, g, pf, pf_lines); break;
    default: tile(1, Y, N, X, K, w, kb, m0, m1, first, g, pf, pf_lines); break;
    }
}

// The rows of the tile that starts at row t of T: 12 while 12 are left, then the binary digits
// of the rest (8, 4, 2, 1), so T rows take T / 12 + popcount(T % 12) tiles.
static int tile_rows(int t, int T) {
    const int left = T - t;
    if (left >= TILE_ROWS) return TILE_ROWS;
    return left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

// The panels in address order, shared by the two kernels below. The plain kernel: Y is (T, N),
// ldy = N, and panel n0's sums land at column n0. The greedy head (best and arg not NULL): Y is
// the scratch part (T, TW_PANEL), which holds one panel's sums over its earlier blocks of k; the
// last block's go into the rows' running argmax, and no sum of the head reaches Y's 8 MiB.
static void panels(float *Y, int ldy, const float *X, const float *Wp, int T, int N, int K,
                   float *best, int *arg) {
    const int kc = tw_linear_packed_kc(K);
    const int n_tiles = T / TILE_ROWS + __builtin_popcount((unsigned)(T % TILE_ROWS));
    for (int n0 = 0; n0 < N; n0 += TW_PANEL) {
        const float *panel = Wp + (size_t)n0 * K;
        float *y = best ? Y : Y + n0;
        const __mmask16 m0 = first_lanes(N - n0), m1 = first_lanes(N - n0 - 16);
        for (int k0 = 0; k0 < K; k0 += kc) {
            const int kb = K - k0 < kc ? K - k0 : kc, first = k0 == 0, last = k0 + kb == K;
            const float *w = panel + (size_t)k0 * TW_PANEL;
            // The block after this one, as an address: the last block's lies past the end of
            // Wp, where a prefetch never faults but a pointer may not point.
            const uintptr_t next = (uintptr_t)(w + (size_t)kb * TW_PANEL);
            const long lines = kb * TW_PANEL / 16, share = tw_share_size(lines, n_tiles);
            for (int j = 0, t = 0; t < T; j++) {
                long l0;   // tile j asks for its share of the next block
                const int pl = (int)tw_share_lines(&l0, lines, share, j), rows = tile_rows(t, T);
                greedy_rows g, *to_pick = NULL;
                if (best && last) {
                    g = (greedy_rows){ best + t, arg + t, n0, N - n0 < TW_PANEL ? N - n0 : TW_PANEL };
                    to_pick = &g;
                }
                tile_of(rows, y + (size_t)t * ldy, ldy, X + (size_t)t * K + k0, K, w, kb, m0, m1,
                        first, to_pick, next + 64 * (uintptr_t)l0, pl);
                t += rows;
            }
        }
    }
}

void tw_linear_packed_avx512(float *Y, const float *X, const float *Wp, int T, int N, int K) {
    panels(Y, N, X, Wp, T, N, K, NULL, NULL);
}

void tw_linear_packed_argmax_avx512(int *arg, float *best, float *part, const float *X,
                                    const float *Wp, int T, int N, int K) {
    panels(part, TW_PANEL, X, Wp, T, N, K, best, arg);
}
