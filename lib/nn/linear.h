// linear.h: the Linear layer (torch.nn.Linear), y = x W^T + b.
#ifndef TW_LINEAR_H
#define TW_LINEAR_H

// y = x W^T + b, with W stored (C_out, C_in) as in torch.nn.Linear.
//   y: (T, C_out)   x: (T, C_in)   W: (C_out, C_in)   b: (C_out) or NULL for no bias
// y must not alias x. Accumulates each dot product in float, in index order (the naive loop);
// this is the readable reference that faster kernels are checked against.
void tw_linear_forward(float *y, const float *x, const float *W, const float *b,
                       int T, int C_in, int C_out);
// n Linear layers applied to the same input, y[i] = x W[i]^T + b[i] for i = 0 .. n-1 (q, k and
// v of self-attention; SwiGLU's gate and up): the same as n calls of tw_linear_forward, bit for
// bit, except that in decode (T = 1, after tw_simd_init) the n matrices are one job for the
// threads, which then start once instead of n times (lib/simd/simd.h).
//   y[i]: (T, C_out[i])   x: (T, C_in)   W[i]: (C_out[i], C_in)   b[i]: (C_out[i]) or NULL
void tw_linear_forward_many(int n, float *const y[], const float *x, const float *const W[],
                            const float *const b[], const int C_out[], int T, int C_in);
// tw_linear_forward is this loop unless a program selected a SIMD level with tw_simd_init
// (lib/simd/simd.h): then it runs the selected matvec/matmul kernel. tw_linear_naive always
// runs the loop, whatever was selected.
void tw_linear_naive(float *y, const float *x, const float *W, const float *b,
                     int T, int C_in, int C_out);

// Multiply-adds and parameters of one Linear layer applied to T rows (for lessons).
long long tw_linear_flops(int T, int C_in, int C_out);        // 2 * T * C_in * C_out
long long tw_linear_params(int C_in, int C_out, int has_bias); // C_in*C_out (+ C_out)

// Backward of y = x W^T + b (gradients accumulate, see tw.h):
//   dx (T, C_in)     += dy W          (dx may be NULL: the input needs no gradient)
//   dW (C_out, C_in) += dy^T x
//   db (C_out)       += sum_t dy[t]   (NULL when the layer has no bias)
//   dy: (T, C_out)   x: (T, C_in) the forward's input   W: (C_out, C_in)
// Sums are accumulated in float in index order (t for dW and db, o for dx), onto what the
// buffers already hold. No gradient may alias x, W, dy or another gradient.
void tw_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        const float *W, int T, int C_in, int C_out);

#endif
