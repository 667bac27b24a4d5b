// sdpa_tiled.h: scaled dot-product attention without the T x S matrix (the FlashAttention idea,
// Dao et al. 2022): the keys are visited in blocks, each query row keeps a running maximum m and
// a running sum l of exp(score - m), the partial output is rescaled when m grows, and the row is
// divided by l once at the end. Only the row's log-sum-exp is kept for the backward, which
// recomputes each block's probabilities from it. Memory beyond q, k, v and out: one block of
// scores on the stack and two floats per query row, so it grows like T, not T * S.
//
// The result is tw_sdpa_forward's (sdpa.h) to within float rounding; where one block covers a
// row, the operations are those of a materialised softmax that divides once at the end, and the
// bits are the same (tests/test_sdpa_tiled.c).
#ifndef TW_SDPA_TILED_H
#define TW_SDPA_TILED_H

// The key block of the library's callers (mha.c): 64 keys of scores, 256 bytes, stay in L1.
// A block may have up to TW_SDPA_TILE_MAX keys (its scores live on the stack: 4 KiB).
#define TW_SDPA_TILE 64
#define TW_SDPA_TILE_MAX 1024

// Sizes and layout of one head's call. Rows are read in place at a stride, so a head of a
// (T, H*D) query matrix and of a (S, G*D) key/value matrix (GQA: query head h reads key/value head
// h / (H / G)) needs no copy: q_stride = H*D, kv_stride = G*D.
typedef struct {
    int T, S, D;          // queries, keys, head size
    int q_stride;         // floats between rows of q, out, dq, dout (>= D)
    int kv_stride;        // floats between rows of k, v, dk, dv (>= D)
    int mask_stride;      // floats between rows of mask (>= S), when there is a mask
    int causal;           // 1: row t sees keys s <= t + causal_offset (as tw_sdpa_scores)
    int causal_offset;
    int block;            // keys per block, 1 .. TW_SDPA_TILE_MAX; need not divide S
} tw_sdpa_tiling;

// The per-row statistics the forward keeps for the backward, two floats per query row:
//   row_max[t] = m, the row's largest visible score, and row_logsum[t] = log l with
//   l = sum exp(score - m), so the row's log-sum-exp is m + log l. Kept as two parts because one
// float near scores of 1e4 has an ulp of 1e-3, which exp would turn into a relative error of 1e-3
// in every recomputed weight. A row that sees no key (every key masked) has m = log l = -inf.

// out = softmax(q k^T / sqrt(D) + mask) v, one block of keys at a time.
//   out: (T, D) at q_stride   row_max, row_logsum: (T) as above
//   q: (T, D) at q_stride   k, v: (S, D) at kv_stride   mask: (T, S) at mask_stride, additive
//   (0 or -inf), or NULL
// A row whose keys are all hidden gets out = 0 (never NaN). No output may alias an input.
void tw_sdpa_tiled_forward(float *out, float *row_max, float *row_logsum, const float *q,
                           const float *k, const float *v, const float *mask,
                           const tw_sdpa_tiling *tl);

// Backward (gradients accumulate, see tw.h), from the forward's out and lse; nothing of size
// T x S is stored: for each row, D_t = sum_d dout[t][d] out[t][d], and for each visible key s
//   p = exp(score - m - log l)   dp = dout[t] . v[s]   ds = p (dp - D_t) / sqrt(D)
//   dv[s] += p dout[t];  dq[t] += ds k[s];  dk[s] += ds q[t]
//   dq: (T, D) at q_stride   dk, dv: (S, D) at kv_stride (any of the three may be NULL)
//   dout, out: (T, D) at q_stride   row_max, row_logsum: (T)   q, k, v, mask: as given to the
//   forward
void tw_sdpa_tiled_backward(float *dq, float *dk, float *dv, const float *dout,
                            const float *out, const float *row_max, const float *row_logsum,
                            const float *q, const float *k,
                            const float *v, const float *mask, const tw_sdpa_tiling *tl);

// The naive loops of the two functions above (the reference every SIMD level is tested against;
// the unsuffixed functions run the level's kernel when it has one: simd/sdpa_tiled_hook.c).
void tw_sdpa_tiled_forward_naive(float *out, float *row_max, float *row_logsum, const float *q,
                                 const float *k, const float *v, const float *mask,
                                 const tw_sdpa_tiling *tl);
void tw_sdpa_tiled_backward_naive(float *dq, float *dk, float *dv, const float *dout,
                                  const float *out, const float *row_max,
                                  const float *row_logsum, const float *q, const float *k,
                                  const float *v, const float *mask, const tw_sdpa_tiling *tl);

// Every head of a multi-head, grouped-query or multi-query attention (nn/mha.h), read in place:
//   out: (T, H*D)   row_max, row_logsum: (H, T)   q: (T, H*D)   k, v: (S, G*D)
//   mask: (T, S) shared by every head, or NULL
void tw_sdpa_tiled_heads_forward(float *out, float *row_max, float *row_logsum, const float *q,
                                 const float *k, const float *v, const float *mask, int T, int S,
                                 int H, int G, int D, int causal, int causal_offset, int block);

// Its backward; a key/value head collects the gradients of its H/G query heads (they accumulate).
//   dq, dout, out: (T, H*D)   dk, dv: (S, G*D)   row_max, row_logsum: (H, T)
void tw_sdpa_tiled_heads_backward(float *dq, float *dk, float *dv, const float *dout,
                                  const float *out, const float *row_max,
                                  const float *row_logsum, const float *q,
                                  const float *k, const float *v, const float *mask, int T,
                                  int S, int H, int G, int D, int causal, int causal_offset,
                                  int block);

#endif
