// linear_packed.c: the batch's fast Linear layer, on weights packed once into panels, and the
// naive loop that every level's kernel must equal bit for bit.
//   Y: (T, N)   X: (T, K)   W: (N, K) row-major   Wp: the packed copy of W (simd.h)
//
// Why a second Linear for batched decoding: the rows kernel (matvec_avx512.c) gives every row the
// decode's matvec sums, four accumulators of 16 lanes folded at the end; the folding costs about
// a third as much as the multiply-adds at K = 288, on the same ports. Here each output is one
// chain of fused multiply-adds over k in order, in blocks of tw_linear_packed_kc(K) (the sums added
// in order): with W's rows packed k-major in panels of TW_PANEL, one register holds 16 outputs'
// chains side by side and no sum is ever folded across lanes. The price: its bits are not the
// matvec's (a different order of the same sum; tests/test_linear_packed.c bounds the difference
// against float64), and so batched decoding with it is not bit for bit decoding alone
// (docs/serving.md measures what that changes). What it keeps: row t's outputs are the same
// function of row t alone, whatever T and the other rows are (batch-invariant), and every level
// (this loop, AVX2, AVX-512) gives the same bits, since a lane's fused multiply-add is fmaf.
#include <math.h>
#include <string.h>
#include "simd.h"

size_t tw_linear_packed_floats(int N, int K) {
    return (size_t)((N + TW_PANEL - 1) / TW_PANEL) * TW_PANEL * (size_t)K;
}

// Panel p holds W's rows p*TW_PANEL .. p*TW_PANEL + TW_PANEL - 1, k-major: row n, column k at
// Wp[p * TW_PANEL * K + k * TW_PANEL + n % TW_PANEL]. Rows past N are zeros.
void tw_linear_pack(float *Wp, const float *W, int N, int K) {
    for (int n0 = 0; n0 < N; n0 += TW_PANEL) {
        float *panel = Wp + (size_t)n0 * K;
        for (int k = 0; k < K; k++)
            for (int j = 0; j < TW_PANEL; j++)
                panel[(size_t)k * TW_PANEL + j] = n0 + j < N ? W[(size_t)(n0 + j) * K + k] : 0.0f;
    }
}

// The order every level follows: for each panel and block of k, each row's TW_PANEL chains from
// zero, then written (first block) or added to what the earlier blocks left.
void tw_linear_packed_naive(float *Y, const float *X, const float *Wp, int T, int N, int K) {
    const int kc = tw_linear_packed_kc(K);
    for (int n0 = 0; n0 < N; n0 += TW_PANEL) {
        const float *panel = Wp + (size_t)n0 * K;
        const int cols = N - n0 < TW_PANEL ? N - n0 : TW_PANEL;
        for (int k0 = 0; k0 < K; k0 += kc) {
            const int kb = K - k0 < kc ? K - k0 : kc;
            for (int t = 0; t < T; t++) {
                float acc[TW_PANEL] = { 0 };
                const float *x = X + (size_t)t * K + k0;
                for (int k = 0; k < kb; k++) {
                    const float *w = panel + (size_t)(k0 + k) * TW_PANEL;
                    for (int j = 0; j < TW_PANEL; j++) acc[j] = fmaf(w[j], x[k], acc[j]);
                }
                float *y = Y + (size_t)t * N + n0;
                for (int j = 0; j < cols; j++) y[j] = k0 == 0 ? acc[j] : y[j] + acc[j];
            }
        }
    }
}

int tw_linear_packed(float *Y, const float *X, const float *Wp, const float *b, int T, int N,
                     int K) {
    if (T < 1 || N < 1 || K < 1) return 0;
    if (tw_simd.linear_packed)
        tw_simd.linear_packed(Y, X, Wp, T, N, K);
    else
        tw_linear_packed_naive(Y, X, Wp, T, N, K);
    if (b)   // as tw_simd_linear: the bias added after the sum
        for (int t = 0; t < T; t++)
            for (int o = 0; o < N; o++) Y[(size_t)t * N + o] += b[o];
    return 1;
}

size_t tw_linear_packed_argmax_floats(int T) { return (size_t)T * (TW_PANEL + 1); }

int tw_linear_packed_argmax(int *arg, float *scratch, const float *X, const float *Wp, int T,
                            int N, int K) {
    if (T < 1 || N < 1 || K < 1) return 0;
    float *part = scratch, *best = scratch + (size_t)T * TW_PANEL;   // (T, TW_PANEL), (T)
    if (tw_simd.linear_packed_argmax) {
        tw_simd.linear_packed_argmax(arg, best, part, X, Wp, T, N, K);
        return 1;
    }
    // Panel by panel: its rows of Y, (T, cols), in the scratch, then into the running argmax. A
    // run of panels of Wp is the packed copy of those rows of W, so the sums are the same.
    for (int n0 = 0; n0 < N; n0 += TW_PANEL) {
        const int cols = N - n0 < TW_PANEL ? N - n0 : TW_PANEL;
        tw_linear_packed(part, X, Wp + (size_t)n0 * K, NULL, T, cols, K);
        for (int t = 0; t < T; t++)
            tw_argmax_continue(&best[t], &arg[t], part + (size_t)t * cols, cols, n0);
    }
    return 1;
}
