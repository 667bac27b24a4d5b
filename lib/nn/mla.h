// mla.h: multi-head latent attention (DeepSeek-V2, DeepSeek-V3), causal self-attention whose keys
// and values come from one small latent per token.
//
// Per token x (C), with H heads, r_q = q_rank, r_kv = kv_rank, d_n = d_nope, d_r = d_rope, d_v:
//   queries   c_q = RMSNorm(x W_qa^T)   (r_q)          q = c_q W_qb^T   (H, d_n + d_r)
//             q_h = [q_nope_h (d_n) ; RoPE(q_pe_h) (d_r)]
//   latent    [c_raw (r_kv) ; k_pe_raw (d_r)] = x W_kva^T
//             c = RMSNorm(c_raw) (r_kv)   k_pe = RoPE(k_pe_raw) (d_r): ONE RoPE key for all heads
//   expanded  [k_nope_h (d_n) ; v_h (d_v)] = (c W_kvb^T) for head h
//             k_h = [k_nope_h ; k_pe]
//   attention o_h = sum_s softmax_s(q_h . k_h(s) / sqrt(d_n + d_r)) v_h(s)   (causal)
//   output    y = [o_1 .. o_H] W_o^T
// So a decoder need only keep c and k_pe per token (r_kv + d_r numbers, against H (d_n + d_r +
// d_v) for MHA): tw_mla_decode_absorbed does exactly that, folding W_kvb into the query (for
// keys) and the output (for values). The decoupled RoPE is what makes the folding possible: a
// rotation that depends on the position cannot be folded into a fixed matrix, so the rotated
// part of each key is kept apart, shared across heads, and cached as it is.
// RoPE here pairs adjacent dimensions (TW_ROPE_ADJACENT, as DeepSeek's own inference code; the
// Hugging Face port permutes to halves, the same scores); no YaRN scaling.
#ifndef TW_MLA_H
#define TW_MLA_H
#include "core/status.h"

typedef struct {
    int   C, H;                     // model width, heads
    int   q_rank, kv_rank;          // q_lora_rank, kv_lora_rank
    int   d_nope, d_rope, d_v;      // qk_nope_head_dim, qk_rope_head_dim (even), v_head_dim
    float eps;                      // of both RMSNorms
    float theta;                    // RoPE base
} tw_mla_config;

typedef struct {
    const float *q_a;        // (q_rank, C)
    const float *q_a_norm;   // (q_rank)
    const float *q_b;        // (H (d_nope + d_rope), q_rank)   head h's rows: nope then rope
    const float *kv_a;       // (kv_rank + d_rope, C)
    const float *kv_a_norm;  // (kv_rank)
    const float *kv_b;       // (H (d_nope + d_v), kv_rank)     head h's rows: k_nope then v
    const float *o;          // (C, H d_v)
} tw_mla_weights;

typedef struct { float *q_a, *q_a_norm, *q_b, *kv_a, *kv_a_norm, *kv_b, *o; } tw_mla_grads;

// What the forward keeps for the backward, and the backward's scratch, for T_max tokens.
typedef struct {
    int    T_max;
    float *qa, *qa_rms, *cq;     // (T, q_rank), (T), (T, q_rank)
    float *q;                    // (T, H (d_nope + d_rope)) before RoPE
    float *qn, *qp;              // (T, H, d_nope), (T, H, d_rope) the latter rotated
    float *c_raw, *c_rms, *c;    // (T, kv_rank), (T), (T, kv_rank): c is the cached latent
    float *kp;                   // (T, d_rope) the rotated shared key: cached too
    float *kv;                   // (T, H (d_nope + d_v))
    float *kn, *v;               // (T, H, d_nope), (T, H, d_v)
    float *att;                  // (H, T, T) attention probabilities (row t: s <= t)
    float *ao;                   // (T, H d_v) the heads' outputs, concatenated
    float *d_ao, *d_qn, *d_qp, *d_kn, *d_v, *d_kp, *d_q, *d_kv, *d_c, *d_craw, *d_kva,
          *d_cq, *d_qa, *d_row;  // backward scratch, shaped like their forward tensors
} tw_mla_cache;

// TW_OK, TW_ERR_ARG (a size < 1, d_rope odd) or TW_ERR_NOMEM; free is safe on a failed init.
tw_status tw_mla_check_config(const tw_mla_config *cfg);
tw_status tw_mla_cache_init(tw_mla_cache *c, const tw_mla_config *cfg, int T_max);
void      tw_mla_cache_free(tw_mla_cache *c);

//   y: (T, C)   x: (T, C), positions 0 .. T-1   y must not alias x
void tw_mla_forward(float *y, tw_mla_cache *c, const float *x, const tw_mla_weights *W,
                    const tw_mla_config *cfg, int T);
// Backward of the last forward (gradients accumulate, see tw.h); dx (T, C) may be NULL.
void tw_mla_backward(float *dx, const tw_mla_grads *dW, tw_mla_cache *c, const float *dy,
                     const float *x, const tw_mla_weights *W, const tw_mla_config *cfg, int T);

// ---- decoding with the latent cache ----

// Numbers cached per token and layer: kv_rank + d_rope (MHA would cache H (d_nope + d_rope + d_v)).
int tw_mla_cache_per_token(const tw_mla_config *cfg);

// One decoding step for the token at position pos in the absorbed form: appends its latent and
// rotated shared key to the cache (row pos of c_cache and kp_cache) and attends over rows
// 0 .. pos without ever expanding a key or a value:
//   score_s = (q~_h . c(s) + q_pe_h . k_pe(s)) / sqrt(d_n + d_r),  q~_h = W_uk,h^T q_nope_h
//   o_h     = W_uv,h (sum_s p_s c(s))
// where W_uk,h (d_n, r_kv) and W_uv,h (d_v, r_kv) are head h's rows of W_kvb.
//   y: (C)   c_cache: (pos + 1, kv_rank)   kp_cache: (pos + 1, d_rope)   x: (C)
//   work: tw_mla_decode_work_floats(cfg, pos + 1) floats of scratch
void tw_mla_decode_absorbed(float *y, float *c_cache, float *kp_cache, float *work,
                            const float *x, int pos, const tw_mla_weights *W,
                            const tw_mla_config *cfg);
long tw_mla_decode_work_floats(const tw_mla_config *cfg, int n_pos);

#endif
