// hf_moe.h: count the parameters of the mixture-of-experts models of Hugging Face transformers
// from their config.json, following the module definitions of model_type mixtral, qwen3_moe and
// deepseek_v3 (hf_config.h does the dense ones). Also the parameters one token activates and the
// KV cache per token, multi-head latent attention's against what MHA and GQA would cache.
//
// What each holds per layer (C hidden, H heads, G kv heads, D head_dim, E experts, Fe one
// expert's width, F the dense MLP width):
//   mixtral     RMSNorm (C) x2; q (H*D, C), k and v (G*D, C), o (C, H*D), no biases; every layer
//               MoE: router gate (E, C) without bias, E SwiGLU experts w1, w3 (Fe, C), w2 (C, Fe).
//   qwen3_moe   as mixtral plus q_norm and k_norm (D each), biases on q/k/v/o if attention_bias;
//               layer i is MoE unless i is in mlp_only_layers or (i + 1) % decoder_sparse_step != 0,
//               then a dense SwiGLU of intermediate_size.
//   deepseek_v3 multi-head latent attention: q_a_proj (q_lora_rank, C), q_a_layernorm
//               (q_lora_rank), q_b_proj (H*(nope+rope), q_lora_rank) (or q_proj (H*(nope+rope), C)
//               when q_lora_rank is null), kv_a_proj_with_mqa (kv_lora_rank + rope, C),
//               kv_a_layernorm (kv_lora_rank), kv_b_proj (H*(nope+v), kv_lora_rank), o_proj
//               (C, H*v); q_a, kv_a and o carry biases if attention_bias. Layer i is MoE if
//               i >= first_k_dense_replace and i % moe_layer_freq == 0: router gate (E, C), the
//               e_score_correction_bias (E) when topk_method is noaux_tc, E experts of
//               moe_intermediate_size, and one shared SwiGLU of n_shared_experts * Fe; otherwise a
//               dense SwiGLU of intermediate_size. num_nextn_predict_layers multi-token-prediction
//               modules follow (checkpoint layers 61 ..): each is one more MoE decoder layer plus
//               enorm, hnorm (C), eh_proj (C, 2C), shared_head.norm (C), and its own stored copies
//               of embed_tokens and shared_head.head (V, C) (the same values as the main model's).
// All end with a final RMSNorm (C) and lm_head (V, C) unless tied.
#ifndef TW_HF_MOE_H
#define TW_HF_MOE_H
#include <stdint.h>
#include "core/status.h"
#include "formats/json.h"

typedef enum { TW_MOE_MIXTRAL = 0, TW_MOE_QWEN3, TW_MOE_DEEPSEEK_V3 } tw_moe_arch;

typedef struct {
    tw_moe_arch arch;
    int64_t vocab, d_model, n_layer;   // V, C
    int64_t max_seq;                   // max_position_embeddings, 0 if absent
    int64_t n_head, n_kv_head, head_dim;   // H, G, D (G = H, D unused for deepseek_v3)
    int64_t ffn_hidden;                // F: dense layers' MLP width
    int64_t expert_hidden;             // Fe
    int64_t n_expert, top_k, n_shared; // E, k, shared experts (deepseek_v3)
    int64_t n_moe_layers, n_dense_layers;
    int     tie_embeddings, attn_bias, qk_norm, expert_bias, norm_topk;
    // multi-head latent attention (deepseek_v3)
    int     mla;
    int64_t q_lora_rank;               // 0: queries by one q_proj
    int64_t kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim;
    int64_t n_mtp;                     // num_nextn_predict_layers
    int64_t fp8_block;                 // quantization_config.weight_block_size (square), or 0
} tw_hf_moe_config;

typedef struct {
    int64_t tok_embed, final_norm, lm_head;
    // attention of one layer
    int64_t q, k, v, o, attn_biases, q_norm, k_norm;           // GQA (q also MLA's plain q_proj)
    int64_t q_a, q_a_norm, q_b, kv_a, kv_a_norm, kv_b;          // MLA
    int64_t attn_layer, norms_layer;                            // norms: the two RMSNorms (2C)
    int64_t dense_mlp;                                          // one dense layer's MLP
    int64_t router, expert_bias, expert, experts, shared;       // one MoE layer (expert: one)
    int64_t moe_mlp, moe_mlp_active;                            // all of it; what one token uses
    int64_t layers;                                             // every main decoder layer
    int64_t main_total;                                         // the model without MTP
    int64_t mtp_layer, mtp_extra, mtp_copies, mtp;              // one MTP module's parts; all
    int64_t total;                                              // main_total + mtp (as stored)
    int64_t active;                                             // per token: main_total less
                                                                // the experts not chosen
    int64_t active_no_embed;                                    // the same without embed_tokens
    int64_t fp8_scales;                                         // weight_scale_inv entries, or 0
} tw_moe_param_counts;

// 1 if root's model_type is one of these (then tw_hf_moe_from_json reads it, not hf_config.h).
int tw_hf_moe_is_moe(const tw_json *root);
extern const char tw_hf_moe_supported[];   // "mixtral, qwen3_moe, deepseek_v3"

// Fills cfg. TW_ERR_FORMAT (a key missing or ill-typed) or TW_ERR_SHAPE (sizes that cannot
// build the model), with one line in err.
tw_status tw_hf_moe_from_json(tw_hf_moe_config *cfg, const tw_json *root, char *err, size_t n);
// TW_ERR_ARG if a count overflows int64.
tw_status tw_hf_moe_count(tw_moe_param_counts *p, const tw_hf_moe_config *cfg);
const char *tw_moe_arch_name(tw_moe_arch a);

// Numbers cached per token, over all layers (multiply by the bytes of one number):
//   latent   MLA's cache: kv_lora_rank + qk_rope_dim per layer (the compressed latent and the
//            shared RoPE key); for mixtral/qwen3_moe, 0
//   gqa      what the model caches if it is GQA: 2 G D per layer; for deepseek_v3 what a GQA
//            with gqa_groups kv heads of the same widths would: gqa_groups (nope + rope + v)
//   mha      what plain multi-head attention caches: H (qk dim + v dim) per layer
// All three are -1 if a count overflows int64.
typedef struct { int64_t latent, gqa, mha; } tw_kv_per_token;
tw_kv_per_token tw_hf_moe_kv_per_token(const tw_hf_moe_config *cfg, int64_t gqa_groups);

#endif
