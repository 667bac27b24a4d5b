// block.h: one transformer block: attention and feed-forward sub-layers with residual
// connections, in either arrangement:
//   pre-norm  (GPT-2, Llama, Qwen):  h = x + Attn(Norm1(x));   y = h + FFN(Norm2(h))
//   post-norm (Vaswani et al. 2017): h = Norm1(x + Attn(x));   y = Norm2(h + FFN(h))
#ifndef TW_BLOCK_H
#define TW_BLOCK_H
#include "nn/status.h"
#include "nn/mha.h"
#include "nn/activation.h"

typedef enum { TW_NORM_LAYER = 0, TW_NORM_RMS } tw_norm_kind;
typedef enum { TW_FFN_CLASSIC = 0, TW_FFN_SWIGLU } tw_ffn_kind;

typedef struct {
    tw_attn_config attn;       // d_model, heads, head_dim, RoPE, QK-norm, causal
    int            prenorm;    // 1: pre-norm, 0: post-norm
    tw_norm_kind   norm;       // LayerNorm or RMSNorm for both norms of the block
    float          norm_eps;
    tw_ffn_kind    ffn;        // classic FFN or SwiGLU
    tw_act         act;        // activation of the classic FFN (SwiGLU always uses SiLU)
    int            ffn_hidden; // F
} tw_block_config;

// A NULL bias or LayerNorm beta means none.
typedef struct {
    const float *norm1_w, *norm1_b;            // (C), (C)
    tw_attn_weights attn;
    const float *norm2_w, *norm2_b;            // (C), (C)
    const float *ffn_w1, *ffn_b1, *ffn_w2, *ffn_b2;   // classic: (F, C), (F), (C, F), (C)
    const float *ffn_gate, *ffn_up, *ffn_down;        // SwiGLU:  (F, C), (F, C), (C, F)
} tw_block_weights;

// Every intermediate of the last call, for lessons and dumps (T rows used of T_max).
typedef struct {
    int   T_max;
    tw_attn_scratch attn;
    float *attn_in;    // (T_max, C) the residual stream entering the block
    float *norm1;      // (T_max, C) pre-norm: Norm1(x); post-norm: Norm1(x + attn_out)
    float *attn_out;   // (T_max, C) after the output projection (Wo, bo)
    float *resid_mid;  // (T_max, C) h, the stream between the two sub-layers: pre-norm x + attn_out,
                       // post-norm a copy of norm1
    float *norm2;      // (T_max, C) pre-norm: Norm2(h); post-norm: Norm2(h + ffn_out) = the output
    float *ffn_hidden; // (T_max, F) classic: act(x W1^T + b1); SwiGLU: x Wg^T (before SiLU)
    float *ffn_up;     // (T_max, F) SwiGLU: x Wu^T (unused for the classic FFN)
    float *ffn_act;    // (T_max, F) SwiGLU: silu(gate) * up (unused for the classic FFN)
    float *ffn_out;    // (T_max, C)
    float *mean, *rstd;// (T_max) row statistics of the last norm applied (LayerNorm: mean, 1/std;
                       // RMSNorm: rstd holds the rms, mean unused)
} tw_block_scratch;

tw_status tw_block_config_check(const tw_block_config *cfg);
// S_max: the most keys a query may see (T_max without a cache, the cache length with one).
tw_status tw_block_scratch_init(tw_block_scratch *s, const tw_block_config *cfg, int T_max, int S_max);
void      tw_block_scratch_free(tw_block_scratch *s);   // safe on a zeroed struct

// out = block(x) for T positions starting at pos0 (see mha.h for cache, which may be NULL; with a
// cache, s must have been made with S_max >= pos0 + T).
//   out: (T, C)   x: (T, C). out may alias x (x is copied to s->attn_in first).
// The block's attention is always self-attention without an extra mask (cfg->attn.causal decides
// causality). All intermediates are left in s, T rows each; ffn_out = out - resid_mid (pre-norm).
void tw_block_forward(float *out, tw_block_scratch *s, tw_kv_cache *cache, const float *x,
                      const tw_block_config *cfg, const tw_block_weights *w, int T, int pos0);

#endif
