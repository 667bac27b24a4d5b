// train_ops.c: the training path's products on the packed matmul (simd.h, "the training path's
// hooks"): the Linear layer's backward, the attention mix and the attention backward. Each
// product is one call of tw_matmul_packed_strided with the level's micro-kernel; transposed
// operands are read through their strides (no copy), and += is the kernel's accumulate mode.
#include <math.h>
#include <stddef.h>
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
    gemm(dW, C_in, dy, 1, C_out, x, C_in, 1, C_out, C_in, T, 1);
    if (db)   // t outside, as the loop in linear.c
        for (int t = 0; t < T; t++)
            for (int o = 0; o < C_out; o++) db[o] += dy[(size_t)t * C_out + o];
    return 1;
}

int tw_simd_sdpa_mix(float *out, const float *weights, const float *v, int T, int S, int D) {
    if (!tw_simd.gemm) return 0;
    gemm(out, D, weights, S, 1, v, D, 1, T, D, S, 0);   // (T, S) (S, D)
    return 1;
}

int tw_simd_sdpa_backward(float *dq, float *dk, float *dv, float *dscores, const float *dout,
                          const float *q, const float *k, const float *v, const float *weights,
                          int T, int S, int D) {
    if (!tw_simd.gemm) return 0;
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);   // the forward's factor, same rounding
    // d weights (T, S) = dout (T, D) v^T (D, S): v (S, D) read transposed.
    gemm(dscores, S, dout, D, 1, v, 1, D, T, S, D, 0);
    // The softmax's backward, row by row, as the loop in sdpa.c (hidden keys get no gradient).
    for (int t = 0; t < T; t++) {
        const float *w = weights + (size_t)t * S;
        float *ds = dscores + (size_t)t * S;
        double dot = 0.0;
        for (int s = 0; s < S; s++) {
            if (w[s] == 0.0f) ds[s] = 0.0f;
            dot += (double)w[s] * ds[s];
        }
        for (int s = 0; s < S; s++) ds[s] = (float)(w[s] * (ds[s] - dot)) * inv_sqrt_d;
    }
    // dq (T, D) += ds (T, S) k (S, D);  dk (S, D) += ds^T q;  dv (S, D) += weights^T dout.
    if (dq) gemm(dq, D, dscores, S, 1, k, D, 1, T, D, S, 1);
    if (dk) gemm(dk, D, dscores, 1, S, q, D, 1, S, D, T, 1);
    if (dv) gemm(dv, D, weights, 1, S, dout, D, 1, S, D, T, 1);
    return 1;
}
