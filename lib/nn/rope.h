// rope.h: rotary position embedding (Su et al., RoFormer, 2021), in both pairings in use.
//
// Each pair of dimensions (a, b) of a query or key at position p is rotated by the angle
// p * theta^(-2i/D), where i is the pair's index (0 .. D/2-1):
//   a' = a cos - b sin,   b' = a sin + b cos.
// Which dimensions form pair i differs between codebases:
//   ADJACENT  (2i, 2i+1)    RoFormer, Meta's Llama, llama2.c
//   HALVES    (i, i + D/2)  Hugging Face Llama/Qwen ("rotate_half"), GPT-NeoX
// The two give the same attention scores once the dimensions are permuted accordingly
// (Hugging Face permutes the q/k weights when converting Meta checkpoints).
#ifndef TW_ROPE_H
#define TW_ROPE_H

typedef enum { TW_ROPE_NONE = 0, TW_ROPE_ADJACENT, TW_ROPE_HALVES } tw_rope_kind;

// The angular frequency of pair i: theta^(-2i/D).
float tw_rope_freq(int i, int D, float theta);

// Rotates x in place. x holds T positions, each with H heads of size D (D even):
//   x: (T, H, D)   row t is at absolute position pos0 + t (non-zero when continuing a KV cache)
//   theta: the frequency base (10000 in RoFormer and Llama 2, 1e6 in Qwen3)
void tw_rope_adjacent_forward(float *x, int T, int H, int D, int pos0, float theta);
void tw_rope_halves_forward(float *x, int T, int H, int D, int pos0, float theta);

// Dispatches on kind (TW_ROPE_NONE leaves x unchanged).
void tw_rope_forward(float *x, tw_rope_kind kind, int T, int H, int D, int pos0, float theta);

// The same rotation split in two, in the form the SIMD kernels take (angles computed once per
// position, so no kernel does transcendental work per head): the reference they are tested
// against. The angles are rope.c's, bit for bit: cos_t[i] = cos(pos * theta^(-2i/D)) in double.
//   cos_t, sin_t: (D/2)      x: (n_head, D) rotated in place, pairs (2i, 2i+1) as in llama2.c
void tw_rope_angles(float *cos_t, float *sin_t, int pos, int D, float theta);
void tw_rope_pairs(float *x, const float *cos_t, const float *sin_t, int n_head, int D);

// The same split for any frequencies and either pairing, for callers that rotate many rows at one
// position (batched decoding: a row's q and k in every layer). The angles are those of
// tw_rope_apply_freqs at position pos, bit for bit: cos_t[i] = (float)(mag * cos(pos * freq[i]))
// in double; tw_rope_rotate then gives x the bits tw_rope_apply_freqs (T = 1, transpose 0) gives
// it, so with tw_rope_freq's frequencies and mag = 1 those of tw_rope_forward, and with
// nn/rope_scaling.h's those of tw_rope_scaled_forward. kind TW_ROPE_NONE leaves x unchanged.
//   cos_t, sin_t: (D/2)   freq: (D/2)   x: (n_head, D) rotated in place
void tw_rope_freq_angles(float *cos_t, float *sin_t, int pos, int D, const double *freq,
                         double mag);
void tw_rope_rotate(float *x, tw_rope_kind kind, const float *cos_t, const float *sin_t,
                    int n_head, int D);

// Backward, in place like the forward (see tw.h): on entry dx holds the gradient of the rotated
// tensor, on return the gradient of the tensor before rotation. A rotation's Jacobian is the
// rotation itself, so its transpose is the rotation by the opposite angle (cos, -sin) with the
// same float cos and sin as the forward, which makes it the exact transpose of the forward's map.
//   dx: (T, H, D)   pos0, theta: as in the forward
void tw_rope_adjacent_backward(float *dx, int T, int H, int D, int pos0, float theta);
void tw_rope_halves_backward(float *dx, int T, int H, int D, int pos0, float theta);
void tw_rope_backward(float *dx, tw_rope_kind kind, int T, int H, int D, int pos0, float theta);

// The rotation with a given frequency per pair instead of theta^(-2i/D) (the scaled RoPEs of
// nn/rope_scaling.h compute them), and cos and sin multiplied by mag (1: a pure rotation).
// transpose = 0 is the forward; 1 rotates by the opposite angle, the backward (its exact
// transpose, as above). With freq[i] = tw_rope_freq's value in double and mag = 1 it is
// tw_rope_forward / tw_rope_backward bit for bit.
//   x: (T, H, D) in place   freq: (D/2) angular frequencies
void tw_rope_apply_freqs(float *x, tw_rope_kind kind, int T, int H, int D, int pos0,
                         const double *freq, double mag, int transpose);

#endif
