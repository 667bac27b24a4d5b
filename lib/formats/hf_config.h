// hf_config.h: count the parameters of a decoder-only transformer from its Hugging Face config.json,
// component by component, following the module definitions in Hugging Face transformers for
// model_type gpt2, llama, mistral, qwen2 and qwen3. Also weight memory and KV-cache size.
//
// What each architecture holds per layer (C hidden, H heads, G kv heads, D head_dim, F MLP width):
//   gpt2     ln_1, ln_2: LayerNorm weight+bias (2C each); attn.c_attn: Conv1D (C, 3C) + 3C bias
//            (q, k and v fused); attn.c_proj (C, C) + C; mlp.c_fc (C, F) + F; mlp.c_proj (F, C)
//            + C; F = n_inner or 4C. Plus wte (V, C), wpe (n_positions, C), ln_f (2C); the
//            lm_head is always tied to wte unless tie_word_embeddings is false.
//   llama    RMSNorm weights (C) x2; q (H*D, C), k and v (G*D, C), o (C, H*D), biases on all four
//            only if attention_bias; SwiGLU gate/up (F, C), down (C, F), biases only if mlp_bias.
//   mistral  as llama, never any bias (MistralAttention/MistralMLP hard-code bias=False).
//   qwen2    as llama but q, k, v always carry a bias and o never does; MLP without bias.
//   qwen3    as llama with attention_bias (default false) on q/k/v/o, no MLP bias, plus q_norm
//            and k_norm: RMSNorm weights of size D in every layer.
// All llama-family models end with a final RMSNorm (C) and an lm_head (V, C) unless tied.
// Buffers (GPT-2's causal mask, RoPE's inv_freq) are not parameters and are not counted.
#ifndef TW_PARAMS_H
#define TW_PARAMS_H
#include <stdint.h>
#include "core/status.h"
#include "formats/json.h"

typedef enum { TW_ARCH_GPT2 = 0, TW_ARCH_LLAMA, TW_ARCH_MISTRAL, TW_ARCH_QWEN2, TW_ARCH_QWEN3 } tw_arch;

// Bits of tw_hf_config.defaulted: which values were not in config.json and came from the
// transformers config class's default (or the derived default, e.g. head_dim = C / H).
enum {
    TW_DEF_KV_HEADS = 1 << 0, TW_DEF_HEAD_DIM = 1 << 1, TW_DEF_TIE = 1 << 2,
    TW_DEF_ATTN_BIAS = 1 << 3, TW_DEF_MLP_BIAS = 1 << 4, TW_DEF_FFN = 1 << 5,
    TW_DEF_MAX_POS = 1 << 6
};

// The shape-deciding facts of a model, filled from config.json by tw_hf_config_from_json. The
// sizes use the names of lib/nn/ (model.h, block.h, mha.h), one per shape letter of tw.h; the
// comments give the config.json keys they come from.
typedef struct {
    tw_arch arch;
    int64_t vocab;           // V: vocab_size
    int64_t d_model;         // C: hidden_size (gpt2: n_embd)
    int64_t n_layer;
    int64_t n_head;          // H
    int64_t n_kv_head;       // G (H for gpt2)
    int64_t head_dim;        // D
    int64_t ffn_hidden;      // F: intermediate_size, or gpt2's n_inner (default 4C)
    int64_t max_seq;         // max_position_embeddings (gpt2: n_positions)
    int     tie_embeddings;  // lm_head shares the token embedding's storage
    int     qkv_bias;        // q, k and v projections have biases
    int     o_bias;          // output projection has a bias
    int     mlp_bias;        // every MLP projection has a bias
    int     qk_norm;         // qwen3's per-head RMSNorm on q and k
    int     layernorm;       // 1: LayerNorm with bias (gpt2), 0: RMSNorm weight only
    int     gated_mlp;       // 1: SwiGLU gate+up+down, 0: fc+proj (gpt2)
    int     learned_pos;     // gpt2's wpe table
    unsigned defaulted;      // TW_DEF_* bits
} tw_hf_config;

// Parameter counts. Per-layer fields describe one decoder layer (all layers are identical in
// these architectures); a zero means the module does not exist (e.g. gate for gpt2, lm_head when
// tied). For gpt2 q/k/v are the three thirds of the fused c_attn.
typedef struct {
    int64_t tok_embed;                   // V*C
    int64_t pos_embed;                   // n_positions*C (gpt2), else 0
    // one layer
    int64_t attn_norm;                   // ln_1 / input_layernorm
    int64_t q, k, v, o;                  // weights
    int64_t q_b, k_b, v_b, o_b;          // biases
    int64_t q_norm, k_norm;              // qwen3
    int64_t mlp_norm;                    // ln_2 / post_attention_layernorm
    int64_t gate, up, down;              // weights (gpt2: up = c_fc, down = mlp.c_proj)
    int64_t gate_b, up_b, down_b;        // biases
    int64_t attn_layer;                  // q..o with biases and qk-norms (norm before it excluded)
    int64_t mlp_layer;                   // gate/up/down with biases
    int64_t norms_layer;                 // attn_norm + mlp_norm
    int64_t layer;                       // everything in one layer
    int64_t layers;                      // layer * n_layer
    int64_t final_norm;                  // ln_f / norm
    int64_t lm_head;                     // V*C, or 0 when tied to tok_embed
    int64_t total;                       // unique parameters, as model.num_parameters() counts
} tw_param_counts;

// Fills cfg from a parsed config.json. On failure returns TW_ERR_FORMAT (missing or ill-typed
// key, unsupported model_type) or TW_ERR_SHAPE (sizes that cannot build a model, e.g. heads not
// dividing hidden_size with no head_dim), and err (if not NULL) gets one English line, e.g.
// "model_type \"bert\" is not supported (supported: gpt2, llama, mistral, qwen2, qwen3)".
tw_status tw_hf_config_from_json(tw_hf_config *cfg, const tw_json *root,
                                    char *err, size_t err_len);

// Counts every component. Returns TW_ERR_ARG if a count would overflow int64 (sizes far beyond
// any real model); *out is then zeroed.
tw_status tw_params_count(tw_param_counts *out, const tw_hf_config *cfg);

const char *tw_arch_name(tw_arch a);        // "gpt2", "llama", ...
extern const char tw_hf_supported[];    // "gpt2, llama, mistral, qwen2, qwen3"

// Bytes to hold n parameters at bytes_per_param (4 fp32, 2 bf16/fp16, 1 int8); -1 on overflow.
int64_t tw_params_weight_bytes(int64_t n_params, int bytes_per_param);

// KV cache for one sequence of `context` tokens: every layer keeps a key and a value vector of
// G*D numbers per token, so 2 * n_layer * G * D * context * bytes_per_elem.
// Returns -1 if that would overflow int64.
int64_t tw_hf_kv_bytes(const tw_hf_config *cfg, int64_t context, int bytes_per_elem);

// Writes n with a comma between groups of three digits, 1234567 -> "1,234,567", the way the
// published parameter totals are written. out must hold TW_COUNT_STR_LEN bytes; returns out.
#define TW_COUNT_STR_LEN 32
char *tw_format_count(char *out, int64_t n);

#endif
