// concepts.h: the concept exercises (5..12), one per idea of lessons 3 to 13, each a small function
// you write in exN_<topic>.c. `make exerciseN` builds your file with check_concepts.c, which
// compares it with the library's reference (lib/) on random inputs and on the awkward cases
// (size 1, an all -inf row, huge logits, a constant row, ...) and names the first wrong element
// with the value expected there. `make exerciseN SOLUTION=1` builds the worked answer in
// solutions/. The kernel exercises 1..4 (exercise.h) are about speed; these are about meaning.
#ifndef CONCEPTS_H
#define CONCEPTS_H

// Exercise 5 (lesson 6): y = softmax(x / temperature), stable for huge logits; a row that is all
// -inf gives zeros, not NaN.                       y, x: (n)   temperature > 0
void ex_softmax_temperature(float *y, const float *x, int n, float temperature);

// Exercise 6 (lesson 3): one row of each norm.     out, x, gamma, beta, weight: (C)
//   LayerNorm: out = (x - mean) / sqrt(var + eps) * gamma + beta   (var divides by C)
//   RMSNorm:   out = x / sqrt(mean(x^2) + eps) * weight
void ex_layernorm(float *out, const float *x, const float *gamma, const float *beta, int C, float eps);
void ex_rmsnorm(float *out, const float *x, const float *weight, int C, float eps);

// Exercise 7 (lesson 5): RoPE on one head vector at position pos, adjacent pairing (2i, 2i+1),
// in place: pair i turns by the angle pos * theta^(-2i/D).     x: (D), D even
void ex_rope_adjacent(float *x, int D, int pos, float theta);

// Exercise 8 (lesson 7): causal scaled dot-product attention for one head.
//   out[t] = sum_{s <= t} softmax_s(q[t] . k[s] / sqrt(D)) v[s]
//   out, q, k, v: (T, D)
void ex_causal_attention(float *out, const float *q, const float *k, const float *v, int T, int D);

// Exercise 9 (lesson 8): SwiGLU for one token: out = Wd (silu(Wg x) * (Wu x)).
//   out, x: (C)   Wg, Wu: (F, C)   Wd: (C, F)
void ex_swiglu(float *out, const float *x, const float *Wg, const float *Wu, const float *Wd,
               int C, int F);

// Exercise 10 (lesson 11): top-p (nucleus) sampling with lib/decode/sampler.c's rule. probs (n) sum
// to 1; u in [0, 1) is the sampler's uniform draw. Sort the tokens by probability, largest first
// (ties: lower id first), keep the shortest prefix whose mass exceeds p, and return the id of the
// first kept token at which the running sum exceeds u * (the kept mass). Accumulate in float, in
// that order. Like lib/decode/sampler.c, first drop the tokens below (1 - p) / (n - 1) (they can
// never be in the nucleus); then the fallback "no prefix exceeds p" keeps every remaining token, as
// there.
int ex_top_p(const float *probs, int n, float p, float u);

// Exercise 11 (lesson 13): the backward of a Linear layer y = x W^T + b over T tokens. Given dy,
// the gradient of the loss with respect to y, WRITE (do not add to) the three gradients:
//   dx = dy W   (T, C_in)     dW = dy^T x   (C_out, C_in)     db = sum over t of dy[t]   (C_out)
//   dy: (T, C_out)   x: (T, C_in)   W: (C_out, C_in)
void ex_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        const float *W, int T, int C_in, int C_out);

// Exercise 12 (lesson 13): the gradient of the mean cross-entropy with respect to the logits,
// softmax included: for each counted row t, dlogits[t] = (softmax(logits[t]) - onehot(targets[t])) / n
// where n counts the rows whose target is not -100 (ignored rows, and every row when all are
// ignored, get zeros). Stable for huge logits; a -inf logit has probability 0.
//   dlogits, logits: (T, V)   targets: (T)
void ex_cross_entropy_backward(float *dlogits, const float *logits, const int *targets, int T, int V);

// Exercise 34 (lesson 23): GPT-2's byte-to-unicode map, which Qwen3 reuses: the character that
// stands for byte b (0..255) in a byte-level vocabulary file. The bytes printable in Latin-1
// ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) stand for themselves; every other byte, in increasing order,
// gets the next code point from 256 on (byte 0 -> 256, ..., ' ' -> 288 = 'Ġ').
unsigned ex_byte_to_unicode(int b);
// A stub calls this instead of computing; the checker then says "not implemented yet".
void ex_not_implemented(void);

#endif
