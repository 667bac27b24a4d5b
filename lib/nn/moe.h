// moe.h: the mixture-of-experts feed-forward layer (Shazeer et al. 2017; Switch, Mixtral,
// Qwen3-MoE, DeepSeek-V3): a router (router.h) chooses k of E SwiGLU experts per token, and the
// token's output is the gate-weighted sum of the chosen experts' outputs, plus the output of an
// optional shared expert that every token goes through (DeepSeek; Qwen2-MoE without its gate):
//     y_t = sum_j w_tj * SwiGLU_{sel_tj}(x_t)  +  SwiGLU_shared(x_t)
// n shared experts of width F_s each are one SwiGLU of width n * F_s (what DeepSeek-V3 builds),
// so the layer has one shared expert of width F_shared (0: none).
// With E = 1, k = 1 and no shared expert the layer is tw_swiglu_forward, bit for bit.
#ifndef TW_MOE_H
#define TW_MOE_H
#include "core/status.h"
#include "nn/router.h"

typedef struct {
    tw_router_config router;   // E, k, scores, norm_topk_prob, scale, groups
    int C;                     // model width
    int F;                     // hidden width of one routed expert (moe_intermediate_size)
    int F_shared;              // hidden width of the shared expert, 0 for none
} tw_moe_config;

// Expert e's matrices are the e-th (F, C) or (C, F) block of gate, up, down.
typedef struct {
    const float *router;            // (E, C)   router logits = x router^T (no bias)
    const float *bias;              // (E) selection-only bias (DeepSeek-V3), or NULL
    const float *gate, *up;         // (E, F, C)
    const float *down;              // (E, C, F)
    const float *s_gate, *s_up;     // (F_shared, C), NULL when F_shared = 0
    const float *s_down;            // (C, F_shared)
} tw_moe_weights;

// Gradients, laid out as the weights (the bias is chosen by a rule, not learned: none).
typedef struct {
    float *router, *gate, *up, *down, *s_gate, *s_up, *s_down;
} tw_moe_grads;

// What the forward keeps for the backward, and the backward's scratch, for T_max tokens. The
// chosen (token, slot) pairs are grouped by expert: expert e's rows of the grouped buffers are
// start[e] .. start[e+1]-1, in token order, so each expert runs as one matrix product.
typedef struct {
    int    T_max;
    float *logits, *probs;     // (T, E) router logits and scores
    int   *sel;                // (T, k) chosen experts, best first
    float *w;                  // (T, k) their gate weights
    int   *count, *start;      // (E), (E + 1) rows of each expert in the grouped buffers
    int   *row;                // (T, k) the grouped row of (t, j)
    int   *tok;                // (T k) the token of each grouped row
    float *xs;                 // (T k, C) grouped inputs
    float *g, *u, *a;          // (T k, F) each expert's gate, up, silu(gate) * up
    float *eo;                 // (T k, C) each expert's output
    float *sg, *su, *sa;       // (T, F_shared) the shared expert's, or NULL
    float *so;                 // (T, C) the shared expert's output, or NULL
    float *dw;                 // (T, k)   backward scratch from here on
    float *deo, *dxs;          // (T k, C)
    float *dg, *du;            // (max(T k, T), max(F, F_shared))
    float *dlogits;            // (T, E)
} tw_moe_cache;

// TW_OK, TW_ERR_ARG (a config that cannot route: k outside 1..E, E not divisible into groups,
// fewer experts in topk_group groups than k), or TW_ERR_NOMEM. tw_moe_cache_free frees the
// buffers (not c itself) and is safe on a zeroed or failed cache.
tw_status tw_moe_check_config(const tw_moe_config *cfg);
tw_status tw_moe_cache_init(tw_moe_cache *c, const tw_moe_config *cfg, int T_max);
void      tw_moe_cache_free(tw_moe_cache *c);

//   y: (T, C)   c: the cache, T <= T_max   x: (T, C)   y must not alias x
void tw_moe_forward(float *y, tw_moe_cache *c, const float *x, const tw_moe_weights *W,
                    const tw_moe_config *cfg, int T);

// Backward of the last tw_moe_forward for L = <dy, y> + aux_coef * aux (router.h's aux loss).
// Gradients accumulate (see tw.h); dx (T, C) may be NULL.   dy: (T, C)   x: (T, C)
void tw_moe_backward(float *dx, const tw_moe_grads *dW, tw_moe_cache *c, const float *dy,
                     const float *x, const tw_moe_weights *W, const tw_moe_config *cfg, int T,
                     float aux_coef);

// Parameters of the layer: total, and those one token uses (router, k experts, shared expert);
// the selection bias (E numbers, DeepSeek-V3) is not included.
long long tw_moe_params_total(const tw_moe_config *cfg);
long long tw_moe_params_active(const tw_moe_config *cfg);

#endif
