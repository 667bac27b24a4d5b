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

static inline __attribute__((always_inline)) void tile(const int rows, float *Y, int N, int cols,
                                                      const float *X, int K, const float *w,
                                                      int kb, int first, uintptr_t pf,
                                                      int pf_lines) {
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
        if (cols == TW_PANEL) {
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

void tw_linear_packed_avx2(float *Y, const float *X, const float *Wp, int T, int N, int K) {
    const int kc = tw_linear_packed_kc(K), n_tiles = (T + 1) / 2;
    for (int n0 = 0; n0 < N; n0 += TW_PANEL) {
        const float *panel = Wp + (size_t)n0 * K;
        const int cols = N - n0 < TW_PANEL ? N - n0 : TW_PANEL;
        for (int k0 = 0; k0 < K; k0 += kc) {
            const int kb = K - k0 < kc ? K - k0 : kc, first = k0 == 0;
            const float *w = panel + (size_t)k0 * TW_PANEL;
            // The block after this one, as an address: the last block's lies past the end of
            // Wp, where a prefetch never faults but a pointer may not point.
            const uintptr_t next = (uintptr_t)(w + (size_t)kb * TW_PANEL);
            const long lines = kb * TW_PANEL / 16, share = tw_share_size(lines, n_tiles);
            for (int j = 0, t = 0; t < T; j++, t += 2) {
                long l0;   // tile j asks for its share of the next block
                const int pl = (int)tw_share_lines(&l0, lines, share, j);
                const uintptr_t pf = next + 64 * (uintptr_t)l0;
                float *yt = Y + (size_t)t * N + n0;
                const float *xt = X + (size_t)t * K + k0;
                if (t + 2 <= T) tile(2, yt, N, cols, xt, K, w, kb, first, pf, pl);
                else            tile(1, yt, N, cols, xt, K, w, kb, first, pf, pl);
            }
        }
    }
}
