// block.h: one transformer block: attention and feed-forward sub-layers with residual
// connections, in either arrangement:
//   pre-norm  (GPT-2, Llama, Qwen):  h = x + Attn(Norm1(x));   y = h + FFN(Norm2(h))
//   post-norm (Vaswani et al. 2017): h = Norm1(x + Attn(x));   y = Norm2(h + FFN(h))
#ifndef TW_BLOCK_H
#define TW_BLOCK_H
#include <stddef.h>
#include "core/status.h"
#include "nn/mha.h"
#include "nn/activation.h"
#include "nn/linear.h"
#include "nn/moe.h"
#include "nn/mla.h"

typedef enum { TW_NORM_LAYER = 0, TW_NORM_RMS } tw_norm_kind;
typedef enum { TW_FFN_CLASSIC = 0, TW_FFN_SWIGLU } tw_ffn_kind;

typedef struct {
    tw_mha_config attn;       // d_model, heads, head_dim, RoPE, QK-norm, causal
    int            prenorm;    // 1: pre-norm, 0: post-norm
    tw_norm_kind   norm;       // LayerNorm or RMSNorm for both norms of the block
    float          norm_eps;
    tw_ffn_kind    ffn;        // classic FFN or SwiGLU
    tw_act         act;        // activation of the classic FFN (SwiGLU always uses SiLU)
    int            ffn_hidden; // F (with experts: the width of one routed expert)
    // Mixture-of-experts FFN (nn/moe.h), the SwiGLU FFN's replacement when moe_experts > 0: a
    // router (softmax over the E experts' logits, no bias), the top k, and E SwiGLU experts of
    // width F, plus moe_shared shared experts of width F that every token uses (one SwiGLU of
    // width moe_shared * F). 0 experts (the zero value): the dense FFN above, unchanged.
    int            moe_experts;   // E
    int            moe_top_k;     // k, 1 <= k <= E
    int            moe_shared;    // shared experts (0: none)
    int            moe_norm_topk; // 1: the k gate weights divided by their sum (norm_topk_prob)
    float          moe_aux_coef;  // training only (never stored in a file): the weight of the
                                  // load-balancing loss E sum_i f_i P_i of each layer (router.h)
    // Multi-head latent attention (nn/mla.h, DeepSeek-V2/V3), attention's replacement when
    // mla_kv_rank > 0: queries through a rank mla_q_rank bottleneck, keys and values from one
    // latent of mla_kv_rank per token, a shared RoPE key of mla_d_rope. Its heads are
    // attn.n_head, its width attn.d_model, its RoPE base attn.rope_theta, its two norms' eps
    // norm_eps; attn's other fields (kv heads, head_dim, biases) are unused. 0 (the zero value):
    // the attention of attn above, unchanged. No QK-norm, tiling or KV cache with it.
    int            mla_q_rank;    // q_lora_rank
    int            mla_kv_rank;   // kv_lora_rank (0: no MLA)
    int            mla_d_nope;    // qk_nope_head_dim
    int            mla_d_rope;    // qk_rope_head_dim (even)
    int            mla_d_v;       // v_head_dim
} tw_block_config;

// A NULL bias or LayerNorm beta means none.
typedef struct {
    const float *norm1_w, *norm1_b;            // (C), (C)
    tw_mha_weights attn;
    const float *norm2_w, *norm2_b;            // (C), (C)
    tw_weight    ffn_w1; const float *ffn_b1;   // classic: (F, C), (F)
    tw_weight    ffn_w2; const float *ffn_b2;   //          (C, F), (C)
    tw_weight    ffn_gate, ffn_up, ffn_down;    // SwiGLU:  (F, C), (F, C), (C, F)
    tw_moe_weights moe;                         // experts: router (E, C), gate, up (E F, C),
                                                // down (E C, F), shared (Fs, C) (Fs, C) (C, Fs)
    tw_mla_weights mla;                         // latent attention instead of attn (mla.h)
} tw_block_weights;

// Every intermediate of the last call, for lessons, dumps and (later) gradients: T rows used of
// T_max. Each float pointer is one tensor of tw_block_tensors below, which gives its name, shape,
// meaning and size; a tensor the block's configuration does not have is NULL.
typedef struct {
    int   T_max, S_max;
    tw_mha_acts attn;   // q, k, v, q_rot, k_rot, scores, pattern, z (+ per-head work rows)
    float *attn_in;         // (T_max, C) the residual stream entering the block
    float *attn_norm;       // (T_max, C) pre-norm: Norm1(x); post-norm: Norm1(x + attn_out)
    float *attn_out;        // (T_max, C) after the output projection (Wo, bo)
    float *resid_mid;       // (T_max, C) h, the stream between the two sub-layers: pre-norm
                            //            x + attn_out, post-norm a copy of attn_norm
    float *ffn_norm;        // (T_max, C) pre-norm: Norm2(h); post-norm: Norm2(h + ffn_out)
    float *ffn_hidden;      // (T_max, F) classic FFN: act(x W1^T + b1)
    float *ffn_gate;        // (T_max, F) SwiGLU: x Wg^T, before SiLU
    float *ffn_up;          // (T_max, F) SwiGLU: x Wu^T
    float *ffn_act;         // (T_max, F) SwiGLU: silu(ffn_gate) * ffn_up
    float *ffn_out;         // (T_max, C) the FFN sub-layer's output
    float *resid_post;      // (T_max, C) the stream leaving the block (what tw_block_forward returns)
    float *attn_norm_mean, *attn_norm_rstd;   // (T_max) LayerNorm's row mean and 1/std (Norm1)
    float *attn_norm_rms;                     // (T_max) RMSNorm's row rms (Norm1)
    float *ffn_norm_mean, *ffn_norm_rstd;     // (T_max) the same for Norm2
    float *ffn_norm_rms;                      // (T_max)
    float *attn_sum;        // (T_max, C) post-norm: attn_in + attn_out, Norm1's input } kept for the
    float *ffn_sum;         // (T_max, C) post-norm: resid_mid + ffn_out, Norm2's input } backward
    float *ffn_pre;         // (T_max, F) classic FFN: x W1^T + b1, before the activation (kept for
                            //            the backward, which needs the activation's slope there)
    tw_moe_cache moe;       // experts: the router's and the experts' intermediates (moe.h)
    tw_mla_cache mla;       // latent attention: its intermediates and backward rows (mla.h)
    float *moe_sel, *moe_row, *moe_tok, *moe_count, *moe_start;   // the rows that hold moe's
                            // integer bookkeeping (moe.sel, .row, .tok, .count, .start point
                            // into them as int; 4-byte ints, as floats)
    float aux_weight;       // on a gradient record (ds of tw_block_backward): the weight w of
                            // this call's load-balancing loss; the backward adds the gradient of
                            // w * cfg->moe_aux_coef * aux (0, the default: none)
    float *memory;          // the allocation of tw_block_acts_init, or NULL when the tensors
                            // live in someone else's (a model's tw_model_state)
} tw_block_acts;

// ---- the table of a block's intermediates ----
// One row per tensor of tw_block_acts, in the order the forward pass computes them. The
// dump (L{l}.<name>.npy), the NaN/Inf check (which names L{l}.<name>), lesson 9 and the
// allocation below all read this table; a backward pass can allocate the same layout again for
// the gradients.

// The sizes a shape letter stands for (tw.h): T rows (queries), S keys, C, H, G, D, F, V, and
// N, the rows of keys and values a call projects: T in a block (self-attention), S in
// cross-attention (tw_mha_acts_init sizes them for S_max). With experts: E experts, K chosen per
// token, P = E + 1, Q the shared experts' width (moe_shared F), M = max(F, Q); 0 without.
// With latent attention (mla.h's names): A = q_rank, R = kv_rank, U = d_rope, O = R + U,
// B = H (d_nope + d_rope), W = H d_nope, X = H d_rope, Y = H d_v, Z = H (d_nope + d_v); 0 without.
typedef struct { long T, S, C, H, G, D, F, V, N, E, K, P, Q, M, A, R, U, O, B, W, X, Y, Z; } tw_dims;
long tw_dims_of(const tw_dims *d, char letter);                // 0 for an unknown letter
long tw_dims_count(const tw_dims *d, const char *letters);    // product of the letters' sizes

// Which blocks have a tensor.
typedef enum {
    TW_HAS_ALWAYS = 0, TW_HAS_CLASSIC_FFN, TW_HAS_SWIGLU, TW_HAS_LAYERNORM, TW_HAS_RMSNORM,
    TW_HAS_QK_NORM,         // blocks whose attention has a QK-norm (Qwen3)
    TW_HAS_POSTNORM,        // post-norm blocks
    TW_HAS_MATERIALISED,    // attention that keeps its (H, T, S) scores and pattern (the default)
    TW_HAS_TILED,           // tiled attention (cfg->attn.tiled): per-row statistics instead
    TW_HAS_MOE,             // blocks whose FFN is a mixture of experts (cfg->moe_experts > 0)
    TW_HAS_MOE_SHARED,      // ... with shared experts
    TW_HAS_MHA,             // blocks whose attention is mha.h's (every block without MLA)
    TW_HAS_MLA              // blocks whose attention is latent attention (cfg->mla_kv_rank > 0)
} tw_tensor_has;

enum {
    TW_TENSOR_MASKED = 1,   // holds -inf by design (causally hidden scores): no NaN/Inf check
    TW_TENSOR_STATS  = 2,   // kept only for a backward pass (a norm's row statistics, the QK-norm's,
                            // the classic FFN's pre-activation): not dumped
    TW_TENSOR_WORK   = 4,   // working rows of a kernel, not an intermediate: not dumped or checked
    TW_TENSOR_INT    = 8,   // holds 4-byte ints (the router's choices), always with TW_TENSOR_WORK
};

typedef struct {
    const char   *name;     // e.g. "attn_norm"; layer l's copy is called "L{l}.attn_norm"
    const char   *shape;    // shape letters after a call over T rows seeing S keys, e.g. "HTS"
    const char   *meaning;  // one line
    size_t        field;    // where it lives: offsetof(tw_block_acts, <its float *>)
    tw_tensor_has has;
    int           flags;    // TW_TENSOR_*
} tw_tensor_info;

extern const tw_tensor_info tw_block_tensors[];
extern const int            tw_block_n_tensors;

// 1 if a block of this configuration has the tensor.
int tw_block_has(const tw_block_config *cfg, tw_tensor_has has);
// The sizes of a block's letters (V = 0: a block has no vocabulary), for T rows and S keys.
tw_dims tw_block_dims(const tw_block_config *cfg, long T, long S);
// The tensor a table row describes, inside s (NULL if the configuration lacks it).
float *tw_block_tensor(const tw_block_acts *s, const tw_tensor_info *t);

// Floats that every tensor of one block takes for T_max rows and S_max keys.
size_t tw_block_acts_floats(const tw_block_config *cfg, int T_max, int S_max);
// Points every tensor of s into mem (tw_block_acts_floats floats, zeroed by the caller), in
// table order; s->memory stays NULL (mem belongs to the caller). Returns the floats used.
size_t tw_block_acts_place(tw_block_acts *s, float *mem, const tw_block_config *cfg,
                              int T_max, int S_max);

tw_status tw_block_config_check(const tw_block_config *cfg);
// The mixture-of-experts layer a block with experts runs (moe.h): softmax router without bias or
// groups, scale 1, F = ffn_hidden, F_shared = moe_shared * ffn_hidden.
tw_moe_config tw_block_moe_config(const tw_block_config *cfg);
// The latent attention a block with mla_kv_rank > 0 runs (mla.h): C, H and theta from attn,
// eps = norm_eps.
tw_mla_config tw_block_mla_config(const tw_block_config *cfg);

// Attention alone (lessons 7 and 9's cross-attention, the tests): one allocation laid out by
// attention's rows of the table above (those whose tensor lives in tw_block_acts.attn), the
// same rows a block places in its own activations, for T_max queries and S_max keys (k, v, k_rot,
// kh, vh: S_max rows, which covers cross-attention's S new rows and a cache's S_max keys).
// q_rms and k_rms exist only when cfg->qk_norm. A second one of the same sizes holds the
// gradients for tw_mha_backward.
tw_status tw_mha_acts_init(tw_mha_acts *s, const tw_mha_config *cfg, int T_max, int S_max);
void      tw_mha_acts_free(tw_mha_acts *s);   // safe on a zeroed struct; zeroes it again
// S_max: the most keys a query may see (T_max without a cache, the cache length with one;
// S_max >= T_max). One allocation of tw_block_acts_floats floats, laid out by the table.
tw_status tw_block_acts_init(tw_block_acts *s, const tw_block_config *cfg, int T_max, int S_max);
void      tw_block_acts_free(tw_block_acts *s);   // safe on a zeroed struct

// out = block(x) for T positions starting at pos0 (see mha.h for cache, which may be NULL; with a
// cache, s must have been made with S_max >= pos0 + T).
//   out: (T, C)   x: (T, C). out may alias x (x is copied to s->attn_in first), and may be
//   s->resid_post (the result is always left there as well).
// The block's attention is always self-attention without an extra mask (cfg->attn.causal decides
// causality). All intermediates are left in s, T rows each; ffn_out = out - resid_mid (pre-norm).
// Latent attention (mla_kv_rank > 0) runs without a cache from pos0 = 0 only (asserted).
void tw_block_forward(float *out, tw_block_acts *s, tw_kv_cache *cache, const float *x,
                      const tw_block_config *cfg, const tw_block_weights *w, int T, int pos0);

// ---- backward (gradients accumulate, see tw.h) ----

// Gradients of a block's weights: tw_block_weights' fields, writable. An entry must be NULL
// where the weight is (no bias, no LayerNorm beta, the other FFN kind, no QK-norm), and is NULL
// for a frozen weight: its gradient is not formed (the Linear backward skips its dW product),
// while the gradients of the activations flow through it unchanged (tw_model_backward).
typedef struct {
    float *norm1_w, *norm1_b;                   // (C), (C)
    tw_mha_grads attn;
    float *norm2_w, *norm2_b;                   // (C), (C)
    float *ffn_w1, *ffn_b1, *ffn_w2, *ffn_b2;   // classic: (F, C), (F), (C, F), (C)
    float *ffn_gate, *ffn_up, *ffn_down;        // SwiGLU:  (F, C), (F, C), (C, F)
    tw_moe_grads moe;                           // experts: as tw_block_weights.moe
    tw_mla_grads mla;                           // latent attention: as tw_block_weights.mla
} tw_block_grads;

// Backward of tw_block_forward for training (the forward ran without a cache at pos0 = 0, and s
// still holds its intermediates). The gradients of the intermediates go to ds, a second tw_block_acts
// of the same layout (tw_block_acts_place or _init with the same config and sizes): each of
// its tensors receives the gradient of the loss with respect to the tensor of the same name in s
// (post-norm's attn_sum and ffn_sum included), with these exceptions: the rows of norm
// statistics, q_rms, k_rms and ffn_pre stay 0, pattern stays 0, scores holds only one head's
// (T, S) gradient of the scores at a time, and the work rows are working memory. With experts,
// ds holds the gradients of router_logits, moe_gates and expert_out; the other expert rows
// stay 0 (the experts' own backward works in s's work rows: moe.h). With latent attention the
// same holds: its backward works in s's mla work rows (mla_d_*), ds's mla rows stay 0.
//   dx: (T, C) += the gradient of the block's input x
//   dw: the weights' gradients, += as well
//   ds: all zero on entry; dout is copied to ds->resid_post
//   dout: (T, C) gradient of the block's output (may be ds->resid_post)
//   s: the forward's intermediates (its per-head work rows are overwritten)
// dx must not alias dout or any tensor of s or ds.
void tw_block_backward(float *dx, const tw_block_grads *dw, tw_block_acts *ds,
                       const float *dout, tw_block_acts *s, const tw_block_config *cfg,
                       const tw_block_weights *w, int T);

#endif
