// model.h: tiny decoder-only language models assembled from tw_block_forward:
//   tokens -> embedding (+ positions) -> N blocks -> final norm -> logits (tied or untied head)
// in the four styles the course teaches:
//   "2017"  post-norm, LayerNorm, sinusoidal positions, ReLU FFN with biases, embeddings scaled by
//           sqrt(C) (Vaswani et al. 3.4), no final norm (post-norm blocks already end in one)
//   "gpt2"  pre-norm, LayerNorm, learned positions, GELU (tanh form), biases everywhere, tied head
//   "llama" pre-norm, RMSNorm, RoPE adjacent pairs (base 1e4), GQA, SwiGLU, no biases, untied head
//   "qwen3" pre-norm, RMSNorm, QK-norm, RoPE split halves (base 1e6), GQA, SwiGLU, explicit
//           head_dim (H*D != C), no biases, tied head (as the small Qwen3 models)
#ifndef TW_MODEL_H
#define TW_MODEL_H
#include "core/status.h"
#include "nn/block.h"
#include "nn/linear.h"

typedef enum { TW_POS_NONE = 0, TW_POS_SINUSOIDAL, TW_POS_LEARNED } tw_pos_kind; // RoPE lives in attn

// The normal distribution tw_model_randomize draws the token and position tables from.
typedef enum {
    TW_EMBED_INIT_SMALL = 0,   // N(0, 0.02), as GPT-2 (the zero value: every style but 2017)
    TW_EMBED_INIT_UNIT,        // N(0, 1): 2017, whose embeddings are then scaled by sqrt(C)
} tw_embed_init;

typedef struct {
    const char     *style;       // "2017", "gpt2", "llama", "qwen3" (informational: no behaviour
                                 // depends on it; the fields below say what the model does)
    int             vocab;       // V
    int             max_seq;     // longest sequence (size of the learned position table)
    int             n_layer;
    tw_block_config block;       // every layer has the same shape
    tw_pos_kind     pos;
    int             embed_scale; // 1: multiply embeddings by sqrt(C) (2017)
    int             final_norm;  // 1: a norm (of the block's kind) before the head
    int             tied;        // 1: the head reuses the token embedding table
    int             bias;        // 1: attention and FFN projections carry biases, LayerNorm a beta
    tw_embed_init   embed_init;  // how tw_model_randomize draws the embedding tables
} tw_model_config;

// Fills c with the tiny configuration of a named style (sizes chosen to be readable in a lesson).
// Returns TW_ERR_ARG for an unknown name.
tw_status tw_model_config_preset(tw_model_config *c, const char *style);
tw_status tw_model_config_check(const tw_model_config *c);

// The most floats a model's parameters may take (2^40: 4 TiB, far beyond any machine this runs
// on); the bound that keeps every size product of tw_model_init inside a 64-bit long.
#define TW_MODEL_MAX_FLOATS (1L << 40)

// What a parameter is, which decides its random initialisation.
typedef enum {
    TW_PARAM_WEIGHT = 0,   // a Linear layer's (C_out, C_in) matrix
    TW_PARAM_BIAS,         // a Linear layer's bias
    TW_PARAM_GAIN,         // a norm's multiplicative weight (LayerNorm gamma, RMSNorm weight, QK-norm)
    TW_PARAM_BETA,         // LayerNorm's additive bias
    TW_PARAM_EMBED,        // token or learned position table
} tw_param_kind;

// One named parameter tensor, named as in PyTorch-style state dicts, e.g. "layers.0.attn.wq".
// The full list of names is in docs/model.md and in the comment above tw_model_init.
typedef struct {
    char   name[48];
    tw_param_kind kind;
    float *data;
    int    ndim;
    long   shape[2];
    long   count;
    int    frozen;   // on gradients (tw_model_grads) only: 1 = not trained, not formed by the
                     // backward (tw_model_grads_freeze); 0 in every tensor tw_model_init makes
} tw_param;

typedef struct {
    tw_model_config   cfg;
    float            *memory;     // every parameter, in one allocation
    long              n_floats;
    tw_param         *params;     // (n_params) in a fixed documented order
    int               n_params;
    float            *tok_emb;    // (V, C)
    float            *pos_emb;    // (max_seq, C) learned positions, or NULL
    tw_block_weights *layers;     // (n_layer) pointers into memory
    float            *final_w, *final_b;   // (C), (C) or NULL
    tw_weight         head;       // (V, C): tok_emb when tied
    tw_linear_copies *copies;     // NULL, or the memory of other copies of the Linear weights: int8
                                  // ones, made by the quantization chapter (lib/quant/), which
                                  // points the tw_weight fields of layers and head into it
                                  // (nn/linear.h); tw_model_free releases it
} tw_model;

// Allocates zeroed parameters for c. tw_model_free releases them (safe on a zeroed struct).
// Parameters, in this order (L = layer index; a name appears only if the config needs it):
//   tok_emb (V, C)                      pos_emb (max_seq, C)            learned positions only
//   layers.L.norm1.w (C)  layers.L.norm1.b (C)                          .b: LayerNorm with bias
//   layers.L.attn.wq (H*D, C)  .bq (H*D)   .wk (G*D, C)  .bk (G*D)   .wv (G*D, C)  .bv (G*D)
//   layers.L.attn.wo (C, H*D)  .bo (C)     .q_norm (D)  .k_norm (D)       (biases if bias=1)
//   layers.L.attn.q_a (Rq, C) .q_a_norm (Rq) .q_b (H (Dn+Dr), Rq) .kv_a (Rkv+Dr, C)   latent
//   layers.L.attn.kv_a_norm (Rkv) .kv_b (H (Dn+Dv), Rkv) .o (C, H Dv)   attention instead of wq..wo
//   layers.L.norm2.w (C)  layers.L.norm2.b (C)
//   layers.L.ffn.w1 (F, C) .b1 (F) .w2 (C, F) .b2 (C)                   classic FFN
//   layers.L.ffn.gate (F, C)  .up (F, C)  .down (C, F)                  SwiGLU
//   layers.L.moe.router (E, C)  .gate (E F, C)  .up (E F, C)  .down (E C, F)   experts instead
//   layers.L.moe.shared_gate (Fs, C)  .shared_up (Fs, C)  .shared_down (C, Fs) (Fs = shared F)
//   final_norm.w (C)  final_norm.b (C)  head (V, C)                     head only when untied
// TW_ERR_SHAPE if the parameters would take more than TW_MODEL_MAX_FLOATS floats (the count is
// made with overflow-checked arithmetic before anything is allocated), TW_ERR_NOMEM.
tw_status tw_model_init(tw_model *m, const tw_model_config *c);
void      tw_model_free(tw_model *m);
// The parameters' float count for c without allocating anything (what m->n_floats would be), or
// -1 if c is invalid or the count exceeds TW_MODEL_MAX_FLOATS.
long      tw_model_config_floats(const tw_model_config *c);
// Seeded random weights: Linear weights ~ N(0, 0.02) (GPT-2's init), biases ~ N(0, 0.02), norm
// gains 1 + N(0, 0.1) and betas N(0, 0.1) (not 1 and 0, so tests see them), embeddings as
// cfg.embed_init says (N(0, 1) or N(0, 0.02)). Parameters are filled in the order of m->params.
void      tw_model_randomize(tw_model *m, uint64_t seed);
// Looks a parameter up by name; NULL if there is none.
tw_param *tw_model_param(tw_model *m, const char *name);
long      tw_model_count_params(const tw_model *m);   // tied head counted once

// ---- the activations of one forward pass ----
// Every float of a forward pass lives in one allocation (memory), laid out by two tables: the
// model's own tensors (tw_model_tensors: embed first, then final_norm, its statistics and the
// logits) around n_layer copies of a block's (tw_block_tensors, block.h). A backward pass can
// make a second state of the same sizes to hold the gradients in the same layout.
typedef struct {
    int               T_max;      // most tokens per call
    int               S_max;      // most keys a query sees: the cache length, or T_max without one
    int               n_layer;
    float            *memory;     // (n_floats) every tensor below
    size_t            n_floats;
    float            *embed;      // (T_max, C) embeddings (+ positions) entering layer 0
    tw_block_acts *layers;     // (n_layer) layer l's intermediates; layers[n_layer-1].resid_post
                                  // is the stream after the last block
    float            *final_norm; // (T_max, C) after the final norm (a copy of the stream if none)
    float            *final_mean, *final_rstd;   // (T_max) the final LayerNorm's statistics
    float            *final_rms;  // (T_max) the final RMSNorm's row rms
    float            *logits;     // (T_max, V) row t scores the token after position t
    tw_kv_cache      *cache;      // (n_layer) or NULL when made without a cache
    const unsigned char *head_off;   // (n_layer, H) or NULL (the default): set by the caller to
                                  // switch heads off; 1 at [l*H + h] zeroes head h of layer l's
                                  // output before its Wo (ablation, lesson 18). The caller owns it.
    const float *head_patch;      // (n_layer, T, H*D) or NULL: with head_off, a switched-off head
                                  // takes its output (the z entering Wo) from layer l's (T, H*D)
                                  // slice here, T of the call, instead of zeros: mean-ablation and
                                  // activation patching (lesson 18). The caller owns it.
    // On a gradient state (ds of tw_model_backward): NULL (the default), or called with layer_ctx
    // as soon as layer l's weight gradients for the sequence are added, before layer l-1's
    // backward starts, so a data-parallel trainer can send them while the rest is computed
    // (train/dist.h). The caller sets both.
    void (*layer_done)(void *layer_ctx, int l);
    void *layer_ctx;
    // Models with experts (block.moe_experts > 0). On a forward state: NULL (the default), or
    // (n_layer, E) counts to which every forward adds how many tokens the router sent to each
    // expert of each layer (a token counts once for each of its k experts). The caller owns it.
    long *expert_count;
    // On a gradient state: the weight w of this sequence's load-balancing losses; the backward
    // adds the gradient of w * block.moe_aux_coef * sum over the layers of E sum_i f_i P_i
    // (router.h). 0 (the default): none. tw_model_forward_backward sets it to the sequence's
    // weight in the batch's mean loss, so the objective is the mean cross-entropy plus
    // moe_aux_coef times the (target-weighted) mean over the sequences of the layers' summed aux.
    float aux_weight;
} tw_model_state;

// The model's own rows of the table (offsets into tw_model_state), in the order computed;
// the first tw_model_n_tensors_before rows come before the layers, the rest after them.
extern const tw_tensor_info tw_model_tensors[];
extern const int            tw_model_n_tensors;
extern const int            tw_model_n_tensors_before;
// 1 if the model has the tensor (TW_HAS_LAYERNORM/RMSNORM follow the block's norm and, for the
// final statistics, whether there is a final norm).
int    tw_model_has(const tw_model_config *c, const tw_tensor_info *t);
float *tw_model_tensor(const tw_model_state *s, const tw_tensor_info *t);
// The sizes of the shape letters for a call over T tokens seeing S keys.
tw_dims tw_model_dims(const tw_model_config *c, long T, long S);

// cache_len 0: no KV cache; every call starts at position 0 and sees only its own T tokens.
// cache_len > 0: a KV cache of cache_len positions per layer (T_max <= cache_len <= max_seq), and
// attention sized for cache_len keys (after a decode step at position p, layer l's scores are
// s->layers[l].attn.scores, (H, 1, p + 1)).
tw_status tw_model_state_init(tw_model_state *s, const tw_model *m, int T_max, int cache_len);
void      tw_model_state_free(tw_model_state *s);
// Floats of activations a state for these sizes holds (the KV cache not counted).
size_t    tw_model_state_floats(const tw_model_config *c, int T_max, int S_max);

// The forward pass: the one function that runs a model's layers. Runs T tokens at positions
// pos0 .. pos0+T-1. With s->cache set, keys/values are appended to the cache and the tokens
// attend to all earlier positions (prefill, then one token at a time); without it pos0 must be 0.
// tw_model_forward leaves the logits of every position in s->logits (T, V); tw_model_forward_next
// computes only the last row's, s->logits + (T-1)*V, which is all that generation needs.
// Returns TW_ERR_SHAPE for a token id outside the vocabulary and TW_ERR_ARG for T or positions
// out of range (T > T_max, pos0 + T beyond the cache, or pos0 != 0 without a cache).
tw_status tw_model_forward(tw_model_state *s, const tw_model *m, const int *tokens, int T, int pos0);
tw_status tw_model_forward_next(tw_model_state *s, const tw_model *m, const int *tokens, int T,
                                int pos0);

// ---- training: the loss, the backward pass and the gradients ----
// Training runs without a KV cache over B sequences of T tokens, each from position 0. The batch
// is a loop over its B sequences, each run forward and then backward through one state of one
// sequence's size: every gradient accumulates (+=, tw.h), so the sum over the sequences is the
// batch's gradient, and the memory is that of one sequence whatever B is.

// The gradient of every parameter, in the parameters' own layout: a tw_model made by
// tw_model_init with the same configuration, so g->params[i] has m->params[i]'s name, kind and
// shape and g->memory[j] is the gradient of m->memory[j]. A tied head has no tensor of its own:
// its gradient is added into tok_emb's.
typedef tw_model tw_model_grads;

tw_status tw_model_grads_init(tw_model_grads *g, const tw_model *m);   // zeroed gradients
void      tw_model_grads_free(tw_model_grads *g);                      // safe on a zeroed struct
void      tw_model_grads_zero(tw_model_grads *g);
// The gradient of the parameter stored at p (a pointer into m->memory), or NULL for NULL.
float    *tw_model_grad_of(const tw_model_grads *g, const tw_model *m, const float *p);
// The index in m->params of the parameter whose data starts at p, or -1 if none does.
int       tw_model_param_index(const tw_model *m, const float *p);

// Frozen parameters: a parameter that is not trained (LoRA's frozen base, train/lora_step.h)
// needs no gradient. tw_model_grads_freeze(g, i, 1) marks gradient i frozen and zeroes it; from
// then on tw_model_backward does not form it (the Linear backward skips that weight's dW product,
// the norms their gain's sum) and it stays 0. The gradients of the activations still flow through
// the frozen weights, so every other gradient is the same, bit for bit, as with nothing frozen.
// frozen 0 trains it again; an i outside [0, n_params) changes nothing. A tied head's gradient is
// tok_emb's, frozen with it.
void      tw_model_grads_freeze(tw_model_grads *g, int i, int frozen);
// tw_model_grads_zero for the gradients that are not frozen only (the frozen ones are 0).
void      tw_model_grads_zero_trained(tw_model_grads *g);

// The backward of tw_model_forward for one sequence of T tokens from position 0 (no cache): ADDS to
// g the gradient of the parameters, given the gradient of the logits.
//   g: accumulated into (a tied head's gradient lands in tok_emb's); a frozen gradient
//      (tw_model_grads_freeze) is not formed
//   ds: a state made as s, tw_model_state_init(ds, m, T_max, 0): on entry ds->logits (T, V) holds
//       d logits and every other tensor 0 (tw_model_grad_state_zero, then write ds->logits); on
//       return it holds the gradient of every activation (ds->layers[l].q that of layer l's
//       queries, ...; see tw_block_backward for the few exceptions)
//   s: the forward's state over the same tokens   tokens: (T)
// TW_ERR_SHAPE for a token outside the vocabulary; TW_ERR_ARG for T out of range, a state with a
// cache, mismatched states, or s->head_off set (the backward does not model an ablation).
// train/forward_backward.h runs it after the loss, over a batch.
tw_status tw_model_backward(tw_model_grads *g, tw_model_state *ds, const tw_model_state *s,
                            const tw_model *m, const int *tokens, int T);
// Zeroes every gradient ds holds but the two attention tables that no backward accumulates into.
void tw_model_grad_state_zero(tw_model_state *ds, const tw_model *m);
// The same but for ds->logits, left as they are: for a caller that then writes every element of
// d logits (lib/train/forward_backward.c; at stories15M's vocabulary they are half of ds).
void tw_model_grad_state_zero_but_logits(tw_model_state *ds, const tw_model *m);

#endif
