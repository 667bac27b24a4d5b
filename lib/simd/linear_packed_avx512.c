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

// rows (a constant once inlined) rows of Y, one panel, one block of k: written when first, else
// added to. The tile asks for pf_lines lines from pf into L2, one per k.
static inline __attribute__((always_inline)) void tile(const int rows, float *Y, int N,
                                                      const float *X, int K, const float *w,
                                                      int kb, __mmask16 m0, __mmask16 m1,
                                                      int first, uintptr_t pf, int pf_lines) {
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
                    __mmask16 m0, __mmask16 m1, int first, uintptr_t pf, int pf_lines) {
    switch (rows) {
    case 12: tile(12, Y, N, X, K, w, kb, m0, m1, first, pf, pf_lines); break;
    case 8: tile(8, Y, N, X, K, w, kb, m0, m1, first, pf, pf_lines); break;
    case 4: tile(4, Y, N, X, K, w, kb, m0, m1, first, pf, pf_lines); break;
    case 2: tile(2, Y, N, X, K, w, kb, m0, m1, first, pf, pf_lines); break;
    default: tile(1, Y, N, X, K, w, kb, m0, m1, first, pf, pf_lines); break;
    }
}

// The rows of the tile that starts at row t of T: 12 while 12 are left, then the binary digits
// of the rest (8, 4, 2, 1), so T rows take T / 12 + popcount(T % 12) tiles.
static int tile_rows(int t, int T) {
    const int left = T - t;
    if (left >= TILE_ROWS) return TILE_ROWS;
    return left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

void tw_linear_packed_avx512(float *Y, const float *X, const float *Wp, int T, int N, int K) {
    const int kc = tw_linear_packed_kc(K);
    const int n_tiles = T / TILE_ROWS + __builtin_popcount((unsigned)(T % TILE_ROWS));
    for (int n0 = 0; n0 < N; n0 += TW_PANEL) {
        const float *panel = Wp + (size_t)n0 * K;
        const __mmask16 m0 = first_lanes(N - n0), m1 = first_lanes(N - n0 - 16);
        for (int k0 = 0; k0 < K; k0 += kc) {
            const int kb = K - k0 < kc ? K - k0 : kc, first = k0 == 0;
            const float *w = panel + (size_t)k0 * TW_PANEL;
            // The block after this one, as an address: the last block's lies past the end of
            // Wp, where a prefetch never faults but a pointer may not point.
            const uintptr_t next = (uintptr_t)(w + (size_t)kb * TW_PANEL);
            const long lines = kb * TW_PANEL / 16, share = tw_share_size(lines, n_tiles);
            for (int j = 0, t = 0; t < T; j++) {
                long l0;   // tile j asks for its share of the next block
                const int pl = (int)tw_share_lines(&l0, lines, share, j), rows = tile_rows(t, T);
                tile_of(rows, Y + (size_t)t * N + n0, N, X + (size_t)t * K + k0, K, w, kb, m0, m1,
                        first, next + 64 * (uintptr_t)l0, pl);
                t += rows;
            }
        }
    }
}
