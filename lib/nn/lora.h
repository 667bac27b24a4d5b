// lora.h: the LoRA Linear layer (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language
// Models"): a frozen weight W plus a trainable low-rank update,
//   y = x W^T + b + s (x A^T) B^T,     s = alpha / r
// with A (r, in) drawn at random and B (out, r) zero, so a fresh adapter changes nothing. Only A
// and B are trained: r (in + out) numbers instead of in * out.
// The update is the matrix s B A (out, in); merging adds it into W (one Linear again, no extra
// cost at inference), unmerging subtracts it.
#ifndef TW_LORA_H
#define TW_LORA_H

// The largest rank this toolkit supports: the per-row (r) work of the forward lives on the stack.
#define TW_LORA_MAX_R 64

// One adapter on one Linear layer, for the forward (nn/linear.h's tw_weight points at it).
typedef struct {
    int          r;       // rank, 1 .. TW_LORA_MAX_R
    float        scale;   // alpha / r
    const float *A;       // (r, in)
    const float *B;       // (out, r)
} tw_lora;

// y += s (x A^T) B^T, the adapter's term, added onto what y holds (x W^T + b).
//   y: (T, out)   u: (T, r) receives x A^T (kept for the backward), or NULL
//   x: (T, in)   A: (r, in)   B: (out, r)
// Every sum in float, in index order. When B is all zero, y is left exactly as it was (each term
// adds s * 0 = +0), which is why a fresh adapter gives the base model's logits bit for bit.
void tw_lora_forward(float *y, float *u, const float *x, const float *A, const float *B,
                     float scale, int T, int in, int out, int r);

// The LoRA Linear whole: y = x W^T + b (tw_linear_forward) then tw_lora_forward.
//   y: (T, out)   u: (T, r) or NULL   x: (T, in)   W: (out, in)   b: (out) or NULL
void tw_lora_linear_forward(float *y, float *u, const float *x, const float *W, const float *b,
                            const float *A, const float *B, float scale, int T, int in, int out,
                            int r);

// Backward of tw_lora_linear_forward (gradients accumulate, see tw.h), with du = s dy B (T, r):
//   dB (out, r)  += s dy^T u          dA (r, in) += du^T x
//   dx (T, in)   += dy W + du A       (dx may be NULL; W's own gradient is not computed: frozen)
//   dy: (T, out)   x: (T, in)   u: (T, r) = x A^T from the forward   W: (out, in)
//   A: (r, in)   B: (out, r)
// Sums in float, in index order; the r-sized du row lives on the stack.
void tw_lora_linear_backward(float *dx, float *dA, float *dB, const float *dy, const float *x,
                             const float *u, const float *W, const float *A, const float *B,
                             float scale, int T, int in, int out, int r);

// The same gradients from the gradient G = dy^T x (out, in) of the merged weight W + s B A:
// y depends on A and B only through that sum, so by the chain rule
//   dA (r, in) += s B^T G        dB (out, r) += s G A^T
// (each sum in double, rounded once). This is how the trainer gets them: it runs the model's own
// forward and backward on the merged weights (train/lora_step.h). G: (out, in)
void tw_lora_grads_from_weight_grad(float *dA, float *dB, const float *G, const float *A,
                                    const float *B, float scale, int in, int out, int r);

// W += sign * s B A  (sign +1: merge, -1: unmerge). Each element's update is computed in double
// and added once, so unmerge after merge returns W within one rounding of each element.
//   W: (out, in)   A: (r, in)   B: (out, r)
void tw_lora_merge(float *W, const float *A, const float *B, float scale, int sign, int in,
                   int out, int r);

#endif
