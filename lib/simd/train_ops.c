// train_ops.c: the training path's products on the packed matmul (simd.h, "the training path's
// hooks"): the Linear layer's backward, the attention mix and the attention backward. Each
// product is one call of tw_matmul_packed_strided with the level's micro-kernel; transposed
// operands are read through their strides (no copy), and += is the kernel's accumulate mode.
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "simd.h"

// C (M, N), rows ldc apart, (+)= A op(B): the one place these hooks call the kernel.
static void gemm(float *C, long ldc, const float *A, long rs_a, long cs_a, const float *B,
                 long rs_b, long cs_b, int M, int N, int K, int accumulate) {
    tw_matmul_packed_strided(tw_simd.gemm, C, ldc, A, rs_a, cs_a, B, rs_b, cs_b, M, N, K,
                             accumulate, tw_matmul_threads());
}

int tw_simd_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                            const float *W, int T, int C_in, int C_out) {
    if (!tw_simd.gemm) return 0;
    // dx (T, C_in) += dy (T, C_out) W (C_out, C_in)
    if (dx) gemm(dx, C_in, dy, C_out, 1, W, C_in, 1, T, C_in, C_out, 1);
    // dW (C_out, C_in) += dy^T (C_out, T) x (T, C_in): dy read transposed, A(o, t) = dy[t*C_out + o]
    if (dW) gemm(dW, C_in, dy, 1, C_out, x, C_in, 1, C_out, C_in, T, 1);   // NULL: W is frozen
    if (db)   // t outside, as the loop in linear.c
        for (int t = 0; t < T; t++)
            for (int o = 0; o < C_out; o++) db[o] += dy[(size_t)t * C_out + o];
    return 1;
}

// Attention works on blocks of ROWS query rows. A causal pattern's rows end in zeros (hidden
// keys): a block's products need only its first `width` columns, the last column any of its rows
// gives weight, which skips about half the work at T = S. Exact: the skipped terms are all
// 0 * finite (the loops in sdpa.c skip them too).
enum { ROWS = 64 };

// 1 if any of x[0 .. n) is non-zero (-0 counts as zero): an OR of the bits without the sign, which
// the compiler vectorises (the scalar scan over every row's hidden keys was a third of the
// attention backward's own time).
static int any_nonzero(const float *x, int n) {
    uint32_t bits = 0;
    for (int i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        bits |= u & 0x7fffffffu;
    }
    return bits != 0;
}

// The block's rows from the last (under the causal rule the widest) to the first: each row only
// has to prove that its weights past the width found so far are zero.
// Under the causal rule (causal = 1) the last row's count, read from no memory.
static int block_width(const float *weights, int t0, int t1, int S, int causal, int causal_offset) {
    if (causal) return tw_causal_keys(t1 - 1, S, 1, causal_offset);
    int width = 0;
    for (int t = t1 - 1; t >= t0; t--) {
        const float *w = weights + (size_t)t * S;
        if (!any_nonzero(w + width, S - width)) continue;
        int s = S;
        while (s > width && w[s - 1] == 0.0f) s--;
        width = s;
    }
    return width;
}

// 1 when the level's products are AVX-512's, whose narrow-head attention (attn_avx512.c) then
// replaces the packed products for D <= 16.
static int narrow_avx512(int D) {
#ifdef TW_HAVE_AVX512
    return D <= 16 && tw_simd.gemm == &tw_ukernel_avx512;
#else
    (void)D;
    return 0;
#endif
}

int tw_simd_sdpa_scores(float *scores, const float *q, const float *k, int T, int S, int D,
                        int causal, int causal_offset) {
    if (!tw_simd.gemm || !narrow_avx512(D)) return 0;
    return tw_sdpa_scores_narrow_avx512(scores, q, k, T, S, D, causal, causal_offset);
}

int tw_simd_sdpa_mix(float *out, const float *weights, const float *v, int T, int S, int D,
                     int causal, int causal_offset) {
    if (!tw_simd.gemm) return 0;
    if (narrow_avx512(D) &&
        tw_sdpa_mix_narrow_avx512(out, weights, v, T, S, D, causal, causal_offset))
        return 1;
    for (int t0 = 0; t0 < T; t0 += ROWS) {
        const int t1 = t0 + ROWS < T ? t0 + ROWS : T;
        const int width = block_width(weights, t0, t1, S, causal, causal_offset);
        // out rows t0..t1 (t1 - t0, D) = weights block (t1 - t0, width) v (width, D)
        gemm(out + (size_t)t0 * D, D, weights + (size_t)t0 * S, S, 1, v, D, 1, t1 - t0, D, width, 0);
    }
    return 1;
}

int tw_simd_sdpa_backward(float *dq, float *dk, float *dv, float *dscores, const float *dout,
                          const float *q, const float *k, const float *v, const float *weights,
                          int T, int S, int D, int causal, int causal_offset) {
    if (!tw_simd.gemm) return 0;
    if (narrow_avx512(D) && tw_sdpa_backward_narrow_avx512(dq, dk, dv, dscores, dout, q, k, v,
                                                           weights, T, S, D, causal,
                                                           causal_offset))
        return 1;
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);   // the forward's factor, same rounding
    for (int t0 = 0; t0 < T; t0 += ROWS) {
        const int t1 = t0 + ROWS < T ? t0 + ROWS : T, m = t1 - t0;
        const int width = block_width(weights, t0, t1, S, causal, causal_offset);
        const float *w0 = weights + (size_t)t0 * S;    // this block's rows: (m, S), row stride S
        float *ds0 = dscores + (size_t)t0 * S;
        // d weights (m, width) = dout rows (m, D) v^T (D, width): v read transposed.
        gemm(ds0, S, dout + (size_t)t0 * D, D, 1, v, 1, D, m, width, D, 0);
        // The softmax's backward, row by row, as the loop in sdpa.c (hidden keys get no gradient).
        for (int t = 0; t < m; t++) {
            const float *w = w0 + (size_t)t * S;
            float *ds = ds0 + (size_t)t * S;
            // Four partial sums in double (one chain of dependent adds was a tenth of the step):
            // another order than sdpa.c's, so the rounding differs, as the kernel's does.
            for (int s = 0; s < width; s++) ds[s] = w[s] == 0.0f ? 0.0f : ds[s];
            double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0;
            int s = 0;
            for (; s + 4 <= width; s += 4) {
                d0 += (double)w[s] * ds[s];
                d1 += (double)w[s + 1] * ds[s + 1];
                d2 += (double)w[s + 2] * ds[s + 2];
                d3 += (double)w[s + 3] * ds[s + 3];
            }
            for (; s < width; s++) d0 += (double)w[s] * ds[s];
            // The row's dot product rounded once to float, then the update in float (vectorised;
            // sdpa.c's loop does it in double: the results differ by rounding).
            const float dot = (float)((d0 + d1) + (d2 + d3));
            for (s = 0; s < width; s++) ds[s] = w[s] * (ds[s] - dot) * inv_sqrt_d;
            for (s = width; s < S; s++) ds[s] = 0.0f;
        }
        // dq rows (m, D) += ds (m, width) k (width, D);  dk (width, D) += ds^T q rows;
        // dv (width, D) += weights^T dout rows (the block's rows read transposed).
        if (dq) gemm(dq + (size_t)t0 * D, D, ds0, S, 1, k, D, 1, m, D, width, 1);
        if (dk) gemm(dk, D, ds0, 1, S, q + (size_t)t0 * D, D, 1, width, D, m, 1);
        if (dv) gemm(dv, D, w0, 1, S, dout + (size_t)t0 * D, D, 1, width, D, m, 1);
    }
    return 1;
}
