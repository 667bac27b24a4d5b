// sdpa.h: scaled dot-product attention for one head (Vaswani et al. 2017, eq. 1):
//   Attention(Q, K, V) = softmax(Q K^T / sqrt(D) + M) V
// split into its three steps so a lesson can call and print each, plus the fused call.
#ifndef TW_SDPA_H
#define TW_SDPA_H

// Causal masking with an offset: query row t may see key s only if s <= t + causal_offset.
// Self-attention over a whole sequence uses offset 0. Decoding with a KV cache, where the T new
// queries sit at absolute positions pos0.. and the keys at 0 .. S-1, uses offset pos0.

// scores[t][s] = q[t] . k[s] / sqrt(D) + mask[t][s], and -inf where the causal rule hides s.
//   scores: (T, S)   q: (T, D)   k: (S, D)   mask: (T, S) additive (0 or -inf), or NULL
//   causal: 0 or 1
void tw_sdpa_scores(float *scores, const float *q, const float *k, const float *mask,
                         int T, int S, int D, int causal, int causal_offset);

// out = weights v: each query's output is the weighted average of the value rows.
//   out: (T, D)   weights: (T, S)   v: (S, D)
void tw_sdpa_mix(float *out, const float *weights, const float *v, int T, int S, int D);

// The three steps in one call. weights (T, S) is required and receives the attention map
// (rows sum to 1; a fully masked row is all zeros, see tw_softmax_rows). scores (T, S) may be NULL;
// if given it receives the pre-softmax scores. No argument may alias another.
//   out: (T, D)   q: (T, D)   k, v: (S, D)   mask: (T, S) or NULL
void tw_sdpa_forward(float *out, float *scores, float *weights,
                     const float *q, const float *k, const float *v, const float *mask,
                     int T, int S, int D, int causal, int causal_offset);

// One query over S keys that are all visible, with keys and values read in place at a row
// stride (a KV cache's G*D), as the SIMD attend kernels take it: the same arithmetic as
// tw_sdpa_forward at T = 1 without a mask, bit for bit, and the reference those kernels are
// tested against.
//   out: (D)   scores: (S) or NULL   pattern: (S)   q: (D)   k, v: S rows, row s at s * kv_stride
void tw_sdpa_one(float *out, float *scores, float *pattern, const float *q, const float *k,
                 const float *v, int S, int D, int kv_stride);

// Backward of the fused attention (gradients accumulate, see tw.h), through the saved pattern:
//   dv += weights^T dout
//   dweights = dout v^T;  dscores = weights * (dweights - rowsum(weights * dweights))  (softmax)
//   dq += dscores k / sqrt(D);  dk += dscores^T q / sqrt(D)
// The causal and additive masks are constants: they act only through weights, which are 0 where
// a key was hidden, so hidden entries get no gradient and no mask argument is needed.
//   dq: (T, D)   dk, dv: (S, D)   dscores: (T, S) scratch, overwritten
//   dout: (T, D)   q: (T, D)   k, v: (S, D)   weights: (T, S) the forward's attention map
// No argument may alias another. Any of dq, dk, dv may be NULL.
void tw_sdpa_backward(float *dq, float *dk, float *dv, float *dscores, const float *dout,
                      const float *q, const float *k, const float *v, const float *weights,
                      int T, int S, int D);

// The same for a pattern that tw_sdpa_forward made with this causal rule (causal 0 or 1, and
// causal_offset, as it took them): with causal = 1 the keys the rule hid (weight 0) are not read,
// which at T = S is half the pattern; their dscores are 0. The result is tw_sdpa_backward's
// (exactly so at the naive level; at a SIMD level but for the sign of a zero gradient where a
// visible weight underflowed to 0). With causal = 0 it is tw_sdpa_backward.
void tw_sdpa_backward_causal(float *dq, float *dk, float *dv, float *dscores, const float *dout,
                             const float *q, const float *k, const float *v,
                             const float *weights, int T, int S, int D, int causal,
                             int causal_offset);

#endif
