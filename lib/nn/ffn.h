// ffn.h: the position-wise feed-forward network, in the classic form (Vaswani et al. 2017,
// eq. 2, with ReLU; GPT-2 uses GELU) and the gated SwiGLU form (Shazeer 2020; Llama, Qwen).
#ifndef TW_FFN_H
#define TW_FFN_H
#include "nn/activation.h"
#include "quant/q8_0.h"

// out = act(x W1^T + b1) W2^T + b2
//   out: (T, C)   hidden: (T, F) scratch, receives act(x W1^T + b1)   x: (T, C)
//   W1: (F, C)   b1: (F) or NULL   W2: (C, F)   b2: (C) or NULL
// out must not alias x or hidden.
void tw_ffn_forward(float *out, float *hidden, const float *x,
                    const float *W1, const float *b1, const float *W2, const float *b2,
                    int T, int C, int F, tw_act act);

// out = (silu(x Wg^T) * (x Wu^T)) Wd^T       (Llama's w2(silu(w1 x) * w3 x))
//   out: (T, C)   gate, up, act: (T, F) scratch that receive x Wg^T (before SiLU), x Wu^T and
//   silu(gate) * up    x: (T, C)   Wg, Wu: (F, C)   Wd: (C, F)
// out must not alias any other argument.
void tw_swiglu_forward(float *out, float *gate, float *up, float *act, const float *x,
                       const float *Wg, const float *Wu, const float *Wd, int T, int C, int F);

// The SwiGLU gating alone, always by this loop (never a SIMD kernel): y = silu(gate) * up, the
// reference the SIMD swiglu kernels are tested against.   y, gate, up: (n); y may alias gate
void tw_swiglu(float *y, const float *gate, const float *up, long n);

// The two forms with Q8_0 copies of the weights: each Linear runs as tw_linear_forward_q8 with
// q8[i] (classic: W1, W2; SwiGLU: Wg, Wu, Wd). With q8 == NULL or work == NULL they compute exactly
// what tw_ffn_forward_keep (which also keeps pre: (T, F), x W1^T + b1) and tw_swiglu_forward compute.
void tw_ffn_forward_q8(float *out, float *pre, float *hidden, tw_q8_work *work, const float *x,
                       const float *W1, const float *b1, const float *W2, const float *b2,
                       const tw_q8_matrix *q8, int T, int C, int F, tw_act act);
void tw_swiglu_forward_q8(float *out, float *gate, float *up, float *act, tw_q8_work *work,
                          const float *x, const float *Wg, const float *Wu, const float *Wd,
                          const tw_q8_matrix *q8, int T, int C, int F);

// ---- backward (gradients accumulate, see tw.h) ----

// tw_ffn_forward applies the activation in place, so it does not keep the pre-activation that the
// backward of GELU and SiLU needs. This forward is the same computation, keeping both:
//   pre: (T, F) receives x W1^T + b1   hidden: (T, F) receives act(pre)   the rest as tw_ffn_forward
void tw_ffn_forward_keep(float *out, float *pre, float *hidden, const float *x,
                         const float *W1, const float *b1, const float *W2, const float *b2,
                         int T, int C, int F, tw_act act);

// Backward of the classic FFN, from what tw_ffn_forward_keep kept:
//   dx: (T, C) or NULL   dW1: (F, C)   db1: (F) or NULL   dW2: (C, F)   db2: (C) or NULL
//   dh: (T, F) scratch, overwritten   dout: (T, C)   pre, hidden: (T, F) from the forward
//   x: (T, C)   W1, W2 as in the forward
void tw_ffn_backward(float *dx, float *dW1, float *db1, float *dW2, float *db2, float *dh,
                     const float *dout, const float *pre, const float *hidden, const float *x,
                     const float *W1, const float *W2, int T, int C, int F, tw_act act);

// Backward of SwiGLU, from the gate (before SiLU), up and act that tw_swiglu_forward kept:
//   d act = dout Wd;  d up = d act * silu(gate);  d gate = d act * up * silu'(gate)
//   dx: (T, C) or NULL   dWg, dWu: (F, C)   dWd: (C, F)   dgate, dup: (T, F) scratch, overwritten
//   dout: (T, C)   gate, up, act: (T, F) from the forward   x: (T, C)   weights as in the forward
void tw_swiglu_backward(float *dx, float *dWg, float *dWu, float *dWd, float *dgate, float *dup,
                        const float *dout, const float *gate, const float *up, const float *act,
                        const float *x, const float *Wg, const float *Wu, const float *Wd,
                        int T, int C, int F);

#endif
