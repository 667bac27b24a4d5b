// mha.h: multi-head attention with separate query and key/value head counts, so multi-head (MHA,
// G = H), grouped-query (GQA, 1 < G < H) and multi-query attention (MQA, G = 1) are one function.
// Query head h reads key/value head h / (H / G), as in llama2.c and Hugging Face's repeat_kv.
//
// The steps, each visible in the scratch struct after a call:
//   q = x Wq^T + bq            (T, H*D)      k = x_kv Wk^T + bk, v = x_kv Wv^T + bv   (S, G*D)
//   QK-norm (Qwen3): RMSNorm over each head's D values of q and of k, with gains (D)
//   RoPE on q and k (adjacent or halves pairing), at positions pos0 ..
//   per head: scores = q_h k_g^T / sqrt(D) (+ causal mask, + additive mask), weights = softmax
//   z_h = weights v_g           z: (T, H*D)    out = z Wo^T + bo   (T, C)
#ifndef TW_MHA_H
#define TW_MHA_H
#include "tw.h"
#include "rope.h"

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
} tw_attn_config;

// Weights; a NULL bias means no bias. Layouts as torch.nn.Linear: (out, in).
typedef struct {
    const float *wq, *bq;    // (H*D, C), (H*D)
    const float *wk, *bk;    // (G*D, C), (G*D)
    const float *wv, *bv;    // (G*D, C), (G*D)
    const float *wo, *bo;    // (C, H*D), (C)
    const float *q_norm;     // (D) gain of the QK-norm on queries, when qk_norm
    const float *k_norm;     // (D) gain of the QK-norm on keys
} tw_attn_weights;

// A key/value cache for one layer: the rotated keys and the values of every position so far.
//   k, v: (S_max, G, D); row p holds position p. Bytes: 2 * S_max * G * D * sizeof(float).
typedef struct {
    int    S_max, G, D;
    float *k, *v;
} tw_kv_cache;

tw_status tw_kv_cache_init(tw_kv_cache *c, int S_max, int G, int D);
void      tw_kv_cache_free(tw_kv_cache *c);   // safe on a zeroed struct; zeroes it again
size_t    tw_kv_cache_bytes(int S_max, int G, int D);

// Scratch that holds every intermediate of one call, so lessons and dumps can read them.
// Sized for up to T_max queries and S_max keys (keys = T for self-attention without a cache,
// pos0 + T with a cache, the encoder length for cross-attention).
typedef struct {
    int    T_max, S_max, H, G, D;
    float *q;        // (T_max, H*D)  after the projection, before QK-norm and RoPE
    float *k, *v;    // (S_max, G*D)  after the projection, before QK-norm and RoPE (new rows only)
    float *q_rot;    // (T_max, H*D)  after QK-norm and RoPE: what the scores use
    float *k_rot;    // (S_max, G*D)  after QK-norm and RoPE (new rows only)
    float *scores;   // (H, T_max, S_max) pre-softmax, row stride S of the last call
    float *weights;  // (H, T_max, S_max) the attention map, same layout
    float *z;        // (T_max, H*D)  weighted sums of values, heads side by side
    float *qh, *kh, *vh, *zh;   // one head's contiguous copies: (T_max, D), (S_max, D) x2, (T_max, D)
    int    T, S;     // sizes of the last call: scores for head h are scores + h*T*S, (T, S)
} tw_attn_scratch;

tw_status tw_attn_scratch_init(tw_attn_scratch *s, const tw_attn_config *cfg, int T_max, int S_max);
void      tw_attn_scratch_free(tw_attn_scratch *s);   // safe on a zeroed struct; zeroes it again

// Checks the configuration's sizes (C, H, G, D > 0, H % G == 0, D even when RoPE is on).
tw_status tw_attn_config_check(const tw_attn_config *cfg);

// Self-attention (x_kv == NULL) or cross-attention (x_kv != NULL: keys and values come from the
// S rows of x_kv, e.g. the encoder's output; no RoPE on them and no causal mask).
//   out: (T, C)   x: (T, C) at positions pos0 .. pos0+T-1   x_kv: (S, C) or NULL
//   mask: (T, S_total) additive mask (e.g. padding), or NULL
//   cache: NULL, or a cache for self-attention: the new keys/values are stored at rows
//          pos0 .. pos0+T-1 and the queries attend to rows 0 .. pos0+T-1 (S_total = pos0 + T).
//          Without a cache, self-attention keys are the T new rows (S_total = T).
// out must not alias x. s must be sized for T and S_total.
void tw_mha_forward(float *out, tw_attn_scratch *s, tw_kv_cache *cache,
                    const float *x, const float *x_kv, const float *mask,
                    const tw_attn_config *cfg, const tw_attn_weights *w,
                    int T, int S, int pos0);

#endif
