// linear.c: the Linear layer, y = x W^T + b, as the plain triple loop.
// This is the reference implementation: each output is one dot product accumulated in float, in
// index order c = 0 .. C_in-1, starting from 0, with the bias added once at the end. Faster
// kernels (SIMD, blocked) are checked against exactly this loop.
#include <assert.h>
#include <stddef.h>
#include "nn/linear.h"
#include "simd/simd.h"

void tw_linear_naive(float *y, const float *x, const float *W, const float *b,
                     int T, int C_in, int C_out) {
    assert(y != x);
    for (int t = 0; t < T; t++) {
        const float *x_t = x + (size_t)t * C_in;     // (C_in)
        float *y_t = y + (size_t)t * C_out;          // (C_out)
        for (int o = 0; o < C_out; o++) {
            const float *w_o = W + (size_t)o * C_in; // row o of W: (C_in)
            float sum = 0.0f;
            for (int c = 0; c < C_in; c++) sum += x_t[c] * w_o[c];
            y_t[o] = b ? sum + b[o] : sum;
        }
    }
}

// Routes to the SIMD kernels only if the program opted in with tw_simd_init (lib/simd/simd.h);
// at the default naive level the hook declines and the reference loop above runs unchanged.
void tw_linear_forward(float *y, const float *x, const float *W, const float *b,
                       int T, int C_in, int C_out) {
    assert(y != x);
    if (tw_simd_linear(y, x, W, b, T, C_in, C_out)) return;
    tw_linear_naive(y, x, W, b, T, C_in, C_out);
}

void tw_linear_forward_many(int n, float *const y[], const float *x, const float *const W[],
                            const float *const b[], const int C_out[], int T, int C_in) {
    if (T == 1 && tw_simd_linear_one_row_many(n, y, x, W, b, C_out, C_in)) return;
    for (int i = 0; i < n; i++) tw_linear_forward(y[i], x, W[i], b[i], T, C_in, C_out[i]);
}

long long tw_linear_flops(int T, int C_in, int C_out) {
    return 2LL * T * C_in * C_out;   // one multiply and one add per weight per row
}

long long tw_linear_params(int C_in, int C_out, int has_bias) {
    return (long long)C_in * C_out + (has_bias ? C_out : 0);
}

// ---- backward ----

void tw_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        const float *W, int T, int C_in, int C_out) {
    assert(dx != dy && dW != W);
    // After tw_simd_init with a SIMD level, the two products run on the matmul kernels
    // (lib/simd/simd.h); at the naive level the hook declines and the loop below runs.
    if (tw_simd_linear_backward(dx, dW, db, dy, x, W, T, C_in, C_out)) return;
    for (int t = 0; t < T; t++) {
        const float *dy_t = dy + (size_t)t * C_out;  // (C_out)
        const float *x_t = x + (size_t)t * C_in;     // (C_in)
        float *dx_t = dx ? dx + (size_t)t * C_in : NULL;
        for (int o = 0; o < C_out; o++) {
            const float g = dy_t[o];
            if (g == 0.0f) continue;   // masked or ignored rows contribute nothing
            const float *w_o = W + (size_t)o * C_in;
            float *dw_o = dW + (size_t)o * C_in;
            // y[t][o] = sum_c x[t][c] W[o][c]: each product feeds both factors' gradients.
            if (dx_t)
                for (int c = 0; c < C_in; c++) dx_t[c] += g * w_o[c];
            for (int c = 0; c < C_in; c++) dw_o[c] += g * x_t[c];
            if (db) db[o] += g;
        }
    }
}
