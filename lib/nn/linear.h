// linear.h: the Linear layer (torch.nn.Linear), y = x W^T + b.
#ifndef TW_LINEAR_H
#define TW_LINEAR_H
#include "core/status.h"
#include "quant/q8_0.h"
#include "nn/lora.h"

// The weight matrix of one Linear layer, (C_out, C_in) as torch.nn.Linear stores it. It is fp32,
// and may also have an int8 copy: then the forward multiplies by the copy instead. This is the
// one place among the components that knows a weight may be int8 (the seam of
// docs/quantization.md): attention, the FFN, the block and the model hold tw_weight values and
// call tw_linear_forward_weight, the same call for both kinds. quant/model_q8.h makes the copies.
typedef struct {
    const float        *f32;    // (C_out, C_in) the fp32 matrix (what the backward always uses)
    const tw_q8_matrix *q8;     // NULL, or its Q8_0 copy (quant/q8_0.h)
    tw_q8_work         *work;   // with q8: the int8 working memory it runs with (the quantized
                                // activation row, the level's kernels, their packed copy of q8)
    const tw_lora      *lora;   // NULL, or a LoRA adapter whose term the forward adds (nn/lora.h;
                                // the fine-tuning chapter attaches it, unmerged)
} tw_weight;

// An fp32 weight with no int8 copy: { .f32 = W }.
tw_weight tw_weight_fp32(const float *W);

// y = x W^T + b, with W stored (C_out, C_in) as in torch.nn.Linear.
//   y: (T, C_out)   x: (T, C_in)   W: (C_out, C_in)   b: (C_out) or NULL for no bias
// y must not alias x. Accumulates each dot product in float, in index order (the naive loop);
// this is the readable reference that faster kernels are checked against.
void tw_linear_forward(float *y, const float *x, const float *W, const float *b,
                       int T, int C_in, int C_out);
// The same with a tw_weight: tw_linear_forward(y, x, W.f32, b, ...) for an fp32 weight; for one
// with an int8 copy, tw_linear_forward_q8 (quant/q8_0.h): each row of x quantized in groups of
// the copy's gs, the int8 matvec, then the bias in float. With W.lora set, the adapter's term
// s (x A^T) B^T is then added (tw_lora_forward).
//   y: (T, C_out)   x: (T, C_in)   W: (C_out, C_in)   b: (C_out) or NULL
void tw_linear_forward_weight(float *y, const float *x, tw_weight W, const float *b,
                              int T, int C_in, int C_out);
// The same for T rows from T different sequences (batched decoding, decode/batch.h): each row of
// y gets exactly the bits tw_linear_forward_weight gives that row alone with T = 1 (the decode's
// matvec at a SIMD level, the loop at the naive level), while each block of W's rows is read once
// for all T rows (tw_simd_linear_rows). An int8 weight runs row by row.
//   y: (T, C_out)   x: (T, C_in)   W: (C_out, C_in)   b: (C_out) or NULL
void tw_linear_forward_rows(float *y, const float *x, tw_weight W, const float *b,
                            int T, int C_in, int C_out);
// n Linear layers applied to the same input, y[i] = x W[i]^T + b[i] for i = 0 .. n-1 (q, k and
// v of self-attention; SwiGLU's gate and up): the same as n calls of tw_linear_forward_weight,
// bit for bit, except that in decode (T = 1, after tw_simd_init, fp32 weights) the n matrices
// are one job for the threads, which then start once instead of n times (lib/simd/simd.h); with
// int8 copies sharing one working memory, x is quantized once a row and the n int8 matvecs are
// one job likewise (tw_linear_forward_q8_many, quant/q8_0.h).
//   y[i]: (T, C_out[i])   x: (T, C_in)   W[i]: (C_out[i], C_in)   b[i]: (C_out[i]) or NULL
void tw_linear_forward_many(int n, float *const y[], const float *x, const tw_weight W[],
                            const float *const b[], const int C_out[], int T, int C_in);

// The memory of the other copies a model's Linear weights may have (its int8 ones): a model
// holds it (tw_model.copies), quant/model_q8.h makes it and points the weights into it.
typedef tw_q8_copies tw_linear_copies;
// Picks the kernels the copies run with: those of the level tw_simd_init selected (the int8
// level that goes with it), with that level's packed copy of the matrices if it has a packed
// layout (made once per level). A model state calls it when it is made. TW_OK or TW_ERR_NOMEM.
tw_status tw_linear_copies_select(tw_linear_copies *c);
void      tw_linear_copies_free(tw_linear_copies *c);   // releases c itself; NULL is fine
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
//   dW (C_out, C_in) += dy^T x        (dW may be NULL: W is frozen, its gradient not formed;
//                                      dx is the same bits either way)
//   db (C_out)       += sum_t dy[t]   (NULL when the layer has no bias, or it is frozen)
//   dy: (T, C_out)   x: (T, C_in) the forward's input   W: (C_out, C_in)
// Sums are accumulated in float in index order (t for dW and db, o for dx), onto what the
// buffers already hold. No gradient may alias x, W, dy or another gradient.
void tw_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        const float *W, int T, int C_in, int C_out);

#endif
