// ffn.h: the position-wise feed-forward network, in the classic form (Vaswani et al. 2017,
// eq. 2, with ReLU; GPT-2 uses GELU) and the gated SwiGLU form (Shazeer 2020; Llama, Qwen).
#ifndef TW_FFN_H
#define TW_FFN_H
#include "nn/activation.h"
#include "nn/linear.h"

// out = act(x W1^T + b1) W2^T + b2
//   out: (T, C)   hidden: (T, F) receives act(x W1^T + b1)   x: (T, C)
//   W1: (F, C)   b1: (F) or NULL   W2: (C, F)   b2: (C) or NULL
// The weights are tw_weight (nn/linear.h): tw_weight_fp32(W) for a plain float matrix; one with
// an int8 copy runs in int8, here as in every forward below.
// out must not alias x or hidden.
void tw_ffn_forward(float *out, float *hidden, const float *x,
                    tw_weight W1, const float *b1, tw_weight W2, const float *b2,
                    int T, int C, int F, tw_act act);

// out = (silu(x Wg^T) * (x Wu^T)) Wd^T       (Llama's w2(silu(w1 x) * w3 x))
//   out: (T, C)   gate, up, act: (T, F) receive x Wg^T (before SiLU), x Wu^T and
//   silu(gate) * up    x: (T, C)   Wg, Wu: (F, C)   Wd: (C, F)
// out must not alias any other argument.
void tw_swiglu_forward(float *out, float *gate, float *up, float *act, const float *x,
                       tw_weight Wg, tw_weight Wu, tw_weight Wd, int T, int C, int F);

// The SwiGLU gating alone, always by this loop (never a SIMD kernel): y = silu(gate) * up, the
// reference the SIMD swiglu kernels are tested against.   y, gate, up: (n); y may alias gate
void tw_swiglu(float *y, const float *gate, const float *up, long n);

// ---- backward (gradients accumulate, see tw.h) ----

// tw_ffn_forward applies the activation in place, so it does not keep the pre-activation that the
// backward of GELU and SiLU needs. This forward is the same computation, keeping both:
//   pre: (T, F) receives x W1^T + b1   hidden: (T, F) receives act(pre)   the rest as tw_ffn_forward
void tw_ffn_forward_keep(float *out, float *pre, float *hidden, const float *x,
                         tw_weight W1, const float *b1, tw_weight W2, const float *b2,
                         int T, int C, int F, tw_act act);

// Backward of the classic FFN, from what tw_ffn_forward_keep kept:
//   dx: (T, C) or NULL   dW1: (F, C)   db1: (F) or NULL   dW2: (C, F)   db2: (C) or NULL
//   (a weight's gradient is NULL too when it is frozen: not formed, nn/linear.h)
//   dh: (T, F) scratch, overwritten   dout: (T, C)   pre, hidden: (T, F) from the forward
//   x: (T, C)   W1, W2 as in the forward
void tw_ffn_backward(float *dx, float *dW1, float *db1, float *dW2, float *db2, float *dh,
                     const float *dout, const float *pre, const float *hidden, const float *x,
                     const float *W1, const float *W2, int T, int C, int F, tw_act act);

// Backward of SwiGLU, from the gate (before SiLU), up and act that tw_swiglu_forward kept:
//   d act = dout Wd;  d up = d act * silu(gate);  d gate = d act * up * silu'(gate)
//   dx: (T, C) or NULL   dWg, dWu: (F, C)   dWd: (C, F), each NULL when frozen
//   dgate, dup: (T, F) scratch, overwritten
//   dout: (T, C)   gate, up, act: (T, F) from the forward   x: (T, C)   weights as in the forward
void tw_swiglu_backward(float *dx, float *dWg, float *dWu, float *dWd, float *dgate, float *dup,
                        const float *dout, const float *gate, const float *up, const float *act,
                        const float *x, const float *Wg, const float *Wu, const float *Wd,
                        int T, int C, int F);

#endif
