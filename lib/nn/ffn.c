// ffn.c: the position-wise feed-forward network, classic (Linear, activation, Linear) and gated
// (SwiGLU). Both are compositions of tw_linear_forward and the activations of activation.c.
// After tw_simd_init with a SIMD level, SwiGLU's silu(gate) * up runs the selected vectorised
// kernel (lib/simd/simd.h); at the default naive level it is the loop below, unchanged.
#include <assert.h>
#include <stddef.h>
#include "nn/ffn.h"
#include "nn/linear.h"
#include "simd/simd.h"

void tw_ffn_forward(float *out, float *hidden, const float *x,
                    tw_weight W1, const float *b1, tw_weight W2, const float *b2,
                    int T, int C, int F, tw_act act) {
    assert(T > 0 && C > 0 && F > 0);
    tw_linear_forward_weight(hidden, x, W1, b1, T, C, F);   // expand to F (4C in the paper)
    tw_activation(hidden, hidden, (long)T * F, act);        // in place: activation allows y == x
    tw_linear_forward_weight(out, hidden, W2, b2, T, F, C); // project back to C
}

void tw_swiglu(float *y, const float *gate, const float *up, long n) {
    tw_silu(y, gate, n);
    for (long i = 0; i < n; i++) y[i] *= up[i];
}

void tw_swiglu_forward(float *out, float *gate, float *up, float *act, const float *x,
                       tw_weight Wg, tw_weight Wu, tw_weight Wd, int T, int C, int F) {
    assert(T > 0 && C > 0 && F > 0);
    const long n = (long)T * F;
    // gate and up read the same x: one call (see tw_linear_forward_many)
    float *const ys[2] = { gate, up };
    const tw_weight Ws[2] = { Wg, Wu };
    const float *const bs[2] = { NULL, NULL };
    const int outs[2] = { F, F };
    tw_linear_forward_many(2, ys, x, Ws, bs, outs, T, C);
    // The gate decides, per hidden unit, how much of the linear "up" signal passes (Shazeer 2020).
    if (!tw_simd_swiglu(act, gate, up, n))   // declines at the naive level
        tw_swiglu(act, gate, up, n);
    tw_linear_forward_weight(out, act, Wd, NULL, T, F, C);
}

// ---- backward ----

void tw_ffn_forward_keep(float *out, float *pre, float *hidden, const float *x,
                         tw_weight W1, const float *b1, tw_weight W2, const float *b2,
                         int T, int C, int F, tw_act act) {
    assert(T > 0 && C > 0 && F > 0);
    tw_linear_forward_weight(pre, x, W1, b1, T, C, F);
    tw_activation(hidden, pre, (long)T * F, act);
    tw_linear_forward_weight(out, hidden, W2, b2, T, F, C);
}

void tw_ffn_backward(float *dx, float *dW1, float *db1, float *dW2, float *db2, float *dh,
                     const float *dout, const float *pre, const float *hidden, const float *x,
                     const float *W1, const float *W2, int T, int C, int F, tw_act act) {
    const long n = (long)T * F;
    for (long i = 0; i < n; i++) dh[i] = 0.0f;
    tw_linear_backward(dh, dW2, db2, dout, hidden, W2, T, F, C);
    // Through the activation, in place: dh becomes the gradient of pre.
    for (long i = 0; i < n; i++) dh[i] *= tw_activation_grad1(pre[i], act);
    tw_linear_backward(dx, dW1, db1, dh, x, W1, T, C, F);
}

void tw_swiglu_backward(float *dx, float *dWg, float *dWu, float *dWd, float *dgate, float *dup,
                        const float *dout, const float *gate, const float *up, const float *act,
                        const float *x, const float *Wg, const float *Wu, const float *Wd,
                        int T, int C, int F) {
    const long n = (long)T * F;
    for (long i = 0; i < n; i++) dgate[i] = 0.0f;
    tw_linear_backward(dgate, dWd, NULL, dout, act, Wd, T, F, C);   // dgate holds d act for now
    if (!tw_simd_swiglu_backward_gating(dgate, dup, gate, up, n))   // declines at the naive level
        for (long i = 0; i < n; i++) {
            const float da = dgate[i];
            dup[i] = da * tw_silu1(gate[i]);
            dgate[i] = da * up[i] * tw_silu_grad1(gate[i]);
        }
    tw_linear_backward(dx, dWg, NULL, dgate, x, Wg, T, C, F);
    tw_linear_backward(dx, dWu, NULL, dup, x, Wu, T, C, F);
}
