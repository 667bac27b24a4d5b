// mha.h: multi-head attention with separate query and key/value head counts, so multi-head (MHA,
// G = H), grouped-query (GQA, 1 < G < H) and multi-query attention (MQA, G = 1) are one function.
// Query head h reads key/value head h / (H / G), as in llama2.c and Hugging Face's repeat_kv.
//
// The steps, each visible in the activations (tw_mha_acts) after a call:
//   q = x Wq^T + bq            (T, H*D)      k = x_kv Wk^T + bk, v = x_kv Wv^T + bv   (S, G*D)
//   QK-norm (Qwen3): RMSNorm over each head's D values of q and of k, with gains (D)
//   RoPE on q and k (adjacent or halves pairing), at positions pos0 ..
//   per head: scores = q_h k_g^T / sqrt(D) (+ causal mask, + additive mask), pattern = softmax
//   z_h = pattern v_g           z: (T, H*D)    out = z Wo^T + bo   (T, C)
#ifndef TW_MHA_H
#define TW_MHA_H
#include "core/status.h"
#include "nn/linear.h"
#include "nn/rope.h"
#include "nn/rope_scaling.h"

typedef struct {
    int          d_model;    // C
    int          n_head;     // H
    int          n_kv_head;  // G; must divide H
    int          head_dim;   // D; C / H unless set otherwise (Qwen3-8B: C 4096, H 32, D 128)
    int          causal;     // 1: a query sees only keys at or before its own position
    tw_rope_kind rope;       // TW_ROPE_NONE, _ADJACENT or _HALVES
    float        rope_theta; // 10000 or 1e6
    int          qk_norm;    // 1: RMSNorm over each q and k head before RoPE (Qwen3)
    float        norm_eps;   // eps of the QK-norm
    int          tiled;      // 1: tiled attention (nn/sdpa_tiled.h): no (H, T, S) scores or
                             // pattern are kept, each query row's statistics instead; 0: default
    tw_rope_scaling rope_scaling;   // RoPE past the trained context (nn/rope_scaling.h); zeroed:
                                    // none, plain RoPE
} tw_mha_config;

// Weights; a NULL bias means no bias. Layouts as torch.nn.Linear: (out, in). The four matrices
// are tw_weight (nn/linear.h): fp32, or with an int8 copy that the projection then runs.
typedef struct {
    tw_weight    wq; const float *bq;   // (H*D, C), (H*D)
    tw_weight    wk; const float *bk;   // (G*D, C), (G*D)
    tw_weight    wv; const float *bv;   // (G*D, C), (G*D)
    tw_weight    wo; const float *bo;   // (C, H*D), (C)
    const float *q_norm;     // (D) gain of the QK-norm on queries, when qk_norm
    const float *k_norm;     // (D) gain of the QK-norm on keys
} tw_mha_weights;

// A key/value cache for one layer: the rotated keys and the values of every position so far.
//   k, v: (S_max, G, D); row p holds position p. Bytes: 2 * S_max * G * D * sizeof(float).
typedef struct {
    int    S_max, G, D;
    float *k, *v;
} tw_kv_cache;

tw_status tw_kv_cache_init(tw_kv_cache *c, int S_max, int G, int D);
void      tw_kv_cache_free(tw_kv_cache *c);   // safe on a zeroed struct; zeroes it again
size_t    tw_kv_cache_bytes(int S_max, int G, int D);

// The activations of attention: every intermediate of one call, so lessons, dumps and the
// backward can read them. Sized for up to T_max queries and S_max keys (keys = T for
// self-attention without a cache, pos0 + T with a cache, the encoder length S for
// cross-attention). Their layout is rows of the block's table of intermediates
// (tw_block_tensors, nn/block.h): a block places them inside its own activations, one allocation
// per model state, and tw_mha_acts_init (block.h) lays out attention alone from the same rows.
// After a call, with n_new = T for self-attention and S for cross-attention:
//   q, q_rot: T rows used; k, v, k_rot: n_new rows used (only the rows this call projected; with a
//   cache the earlier positions are in the cache, which holds k_rot and v rows for 0 .. pos0+T-1).
//   scores, pattern: head h's (T, S) block starts at h*T*S, with T = s->T and S = s->S of this
//   call (packed, not strided by S_max). Causally hidden entries of scores are -inf (so without a
//   cache everything above the diagonal, with one every s > pos0 + t); in pattern they are 0.
typedef struct {
    int    T_max, S_max, H, G, D;
    float *q;        // (T_max, H*D)  x Wq^T + bq: before QK-norm and RoPE
    float *k, *v;    // (S_max, G*D)  x Wk^T + bk, x Wv^T + bv: before QK-norm and RoPE (v is never
                     //               normed or rotated)
    float *q_rot;    // (T_max, H*D)  after QK-norm and RoPE: what the scores use
    float *k_rot;    // (S_max, G*D)  after QK-norm and RoPE: what is stored in the cache
    float *scores;   // (H, T, S) used of (H, T_max, S_max): q_h k_g^T / sqrt(D) + mask, -inf if hidden
    float *pattern;  // (H, T, S) the attention map (the weights): softmax of each scores row
    float *z;        // (T_max, H*D)  pattern v per head, heads side by side (input of Wo)
    float *qh, *kh, *vh, *zh;   // one head's contiguous copies: (T_max, D), (S_max, D) x2, (T_max, D)
    float *row_max;     // (H, T_max)  tiled attention only (scores and pattern are then NULL):
    float *row_logsum;  // (H, T_max)  each query row's largest score and log sum exp(score - max)
    float *q_rms;    // (T_max, H)  QK-norm statistics sqrt(mean(q^2) + eps) per row and head,
    float *k_rms;    // (S_max, G)  kept for the backward (written only when cfg->qk_norm)
    int    T, S;     // sizes of the last call
    const unsigned char *head_off;   // (H) or NULL: 1 switches head h off (ablation): its
                                     // columns of z are zeroed before Wo, so the head adds nothing
                                     // to out (scores and pattern are still computed and kept)
    const float *head_patch;         // (T, H*D) or NULL: with head_off, a switched-off head's
                                     // columns of z are copied from here instead of zeroed
                                     // (mean-ablation, activation patching: lesson 18)
    float *memory;   // the one allocation of tw_mha_acts_init (block.h), or NULL when the
                     // tensors live in a block's (tw_block_acts_place)
} tw_mha_acts;

// Checks the configuration's sizes (C, H, G, D > 0, H % G == 0, D even when RoPE is on).
tw_status tw_mha_config_check(const tw_mha_config *cfg);

// Self-attention (x_kv == NULL) or cross-attention (x_kv != NULL: keys and values come from the
// S rows of x_kv, e.g. the encoder's output; neither side is rotated by RoPE, there is no causal
// mask, and cache is ignored).
//   out: (T, C)   x: (T, C) at positions pos0 .. pos0+T-1   x_kv: (S, C) or NULL
//   S: rows of x_kv; ignored for self-attention
//   mask: (T, S_total) additive mask (0 or -inf, e.g. padding), shared by every head, or NULL
//   cache: NULL, or a cache for self-attention: the new rotated keys and values are stored at
//          rows pos0 .. pos0+T-1 and the queries attend to rows 0 .. pos0+T-1 (S_total = pos0 + T)
//          with causal offset pos0. Prefill is one call with pos0 = 0 and T tokens; decoding is
//          then one call per token with T = 1 and pos0 = its position. The result equals the
//          cache-free call on the whole sequence, row for row.
//          Without a cache, self-attention keys are the T new rows (S_total = T), still rotated
//          at positions pos0 .., with causal offset 0.
// out must not alias x. s must be sized for T and S_total.
void tw_mha_forward(float *out, tw_mha_acts *s, tw_kv_cache *cache,
                    const float *x, const float *x_kv, const float *mask,
                    const tw_mha_config *cfg, const tw_mha_weights *w,
                    int T, int S, int pos0);

// ---- backward (gradients accumulate, see tw.h) ----

// Gradients of the weights: the same layout as tw_mha_weights. A NULL entry is skipped (it must
// be NULL where the weight is: no bias, no QK-norm; and it may be NULL for a frozen weight, whose
// gradient is then not formed).
typedef struct {
    float *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo, *q_norm, *k_norm;
} tw_mha_grads;

// Backward of tw_mha_forward for training: the forward must have been called without a cache
// (keys are the T new rows, or the S rows of x_kv), and s must still hold that call's
// intermediates. Works step by step back through the forward:
//   out projection -> per head SDPA backward (through the saved pattern; a key/value head shared
//   by a group of H/G query heads collects the sum of their gradients) -> RoPE transposed ->
//   QK-norm backward (from the saved q_rms, k_rms) -> the three input projections.
//   dx: (T, C) or NULL: gradient of x (self-attention: from q, k and v; cross: from q only)
//   dx_kv: (S, C) or NULL: gradient of x_kv (cross-attention only)
//   dw: gradients of the weights   dout: (T, C)
//   ds: the gradients of the intermediates, in a second tw_mha_acts of the same sizes: on return
//       ds->z holds d z, ds->q_rot and ds->q d q after and before QK-norm + RoPE, ds->k_rot,
//       ds->k, ds->v those of the keys and values; ds->scores is one head's (T, S) d scores at a
//       time, and ds->qh .. zh its per-head rows (working rows: the last head's); the rest of ds
//       is not touched
//   s, x, x_kv, cfg, w, T, S, pos0: as given to (and filled by) tw_mha_forward; only s's per-head
//   rows (qh, kh, vh, zh) are overwritten, as working rows
void tw_mha_backward(float *dx, float *dx_kv, const tw_mha_grads *dw, tw_mha_acts *ds,
                     const float *dout, tw_mha_acts *s, const float *x,
                     const float *x_kv, const tw_mha_config *cfg, const tw_mha_weights *w,
                     int T, int S, int pos0);

#endif
