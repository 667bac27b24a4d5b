// hf_config.c: parameter counting from a Hugging Face config.json (see hf_config.h for the module
// inventory of each architecture). Defaults are those of the transformers config classes
// (GPT2Config, LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config); a JSON null counts as
// "not given", as it does for the Python classes' None.
#include <stdio.h>
#include <string.h>
#include "formats/hf_config.h"

const char tw_hf_supported[] = "gpt2, llama, mistral, qwen2, qwen3";

const char *tw_arch_name(tw_arch a) {
    switch (a) {
    case TW_ARCH_GPT2:    return "gpt2";
    case TW_ARCH_LLAMA:   return "llama";
    case TW_ARCH_MISTRAL: return "mistral";
    case TW_ARCH_QWEN2:   return "qwen2";
    case TW_ARCH_QWEN3:   return "qwen3";
    }
    return "unknown";
}

// ---- reading keys ----

// Sizes above this are rejected: far beyond any real model, and small enough that the products
// below stay well inside int64 before the explicit overflow checks even matter.
#define MAX_DIM ((int64_t)1 << 32)

// The value of the first of `keys` present and not null (aliases, e.g. gpt2's n_embd and
// hidden_size), or NULL. *which receives the key found.
static const tw_json *lookup(const tw_json *root, const char *const *keys, const char **which) {
    for (; *keys; keys++) {
        const tw_json *v = tw_json_get(root, *keys);
        if (v && v->type != TW_JSON_NULL) { *which = *keys; return v; }
    }
    *which = NULL;
    return NULL;
}

// Reads a positive integer. Returns 1 and sets *out when present, 0 when absent (or null), and
// -1 with a message in err when present but not a positive integer <= MAX_DIM.
static int read_dim(const tw_json *root, const char *const *keys, int64_t *out,
                    char *err, size_t err_len) {
    const char *k;
    const tw_json *v = lookup(root, keys, &k);
    if (!v) return 0;
    if (v->type != TW_JSON_NUMBER || !v->is_integer) {
        snprintf(err, err_len, "\"%s\" must be an integer, not a %s", k,
                 v->type == TW_JSON_NUMBER ? "fraction" : tw_json_type_name(v->type));
        return -1;
    }
    if (v->integer < 1 || v->integer > MAX_DIM) {
        snprintf(err, err_len, "\"%s\" is %lld; expected 1 .. %lld", k, (long long)v->integer,
                 (long long)MAX_DIM);
        return -1;
    }
    *out = v->integer;
    return 1;
}

static int require_dim(const tw_json *root, const char *const *keys, int64_t *out,
                       char *err, size_t err_len) {
    int r = read_dim(root, keys, out, err, err_len);
    if (r == 0) snprintf(err, err_len, "missing key \"%s\" (it decides the model's shape)", keys[0]);
    return r == 1;
}

// Like read_dim for booleans.
static int read_bool(const tw_json *root, const char *key, int *out, char *err, size_t err_len) {
    const tw_json *v = tw_json_get(root, key);
    if (!v || v->type == TW_JSON_NULL) return 0;
    if (v->type != TW_JSON_BOOL) {
        snprintf(err, err_len, "\"%s\" must be true or false, not a %s", key,
                 tw_json_type_name(v->type));
        return -1;
    }
    *out = v->boolean;
    return 1;
}

#define KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

// ---- per-architecture config readers ----

static tw_status gpt2_config(tw_hf_config *c, const tw_json *root, char *err, size_t n) {
    // GPT2Config.attribute_map lets hidden_size & co. stand for the n_* names.
    if (!require_dim(root, KEYS("vocab_size"), &c->vocab, err, n) ||
        !require_dim(root, KEYS("n_embd", "hidden_size"), &c->d_model, err, n) ||
        !require_dim(root, KEYS("n_layer", "num_hidden_layers"), &c->n_layer, err, n) ||
        !require_dim(root, KEYS("n_head", "num_attention_heads"), &c->n_head, err, n))
        return TW_ERR_FORMAT;
    int r = read_dim(root, KEYS("n_positions", "max_position_embeddings"), &c->max_seq, err, n);
    if (r < 0) return TW_ERR_FORMAT;
    if (r == 0) { c->max_seq = 1024; c->defaulted |= TW_DEF_MAX_POS; }
    r = read_dim(root, KEYS("n_inner"), &c->ffn_hidden, err, n);
    if (r < 0) return TW_ERR_FORMAT;
    if (r == 0) { c->ffn_hidden = 4 * c->d_model; c->defaulted |= TW_DEF_FFN; }
    c->tie_embeddings = 1;   // PretrainedConfig's default; GPT2Config does not override it
    r = read_bool(root, "tie_word_embeddings", &c->tie_embeddings, err, n);
    if (r < 0) return TW_ERR_FORMAT;
    if (r == 0) c->defaulted |= TW_DEF_TIE;
    int cross = 0;
    if (read_bool(root, "add_cross_attention", &cross, err, n) < 0) return TW_ERR_FORMAT;
    if (cross) {
        snprintf(err, n, "gpt2 with add_cross_attention is not supported (encoder-decoder use)");
        return TW_ERR_FORMAT;
    }
    if (c->d_model % c->n_head != 0) {
        snprintf(err, n, "n_embd (%lld) is not a multiple of n_head (%lld)",
                 (long long)c->d_model, (long long)c->n_head);
        return TW_ERR_SHAPE;
    }
    c->n_kv_head = c->n_head;
    c->head_dim = c->d_model / c->n_head;
    c->qkv_bias = c->o_bias = c->mlp_bias = 1;   // Conv1D always has a bias
    c->layernorm = 1;
    c->learned_pos = 1;
    return TW_OK;
}

static tw_status llama_family_config(tw_hf_config *c, const tw_json *root, char *err, size_t n) {
    if (!require_dim(root, KEYS("vocab_size"), &c->vocab, err, n) ||
        !require_dim(root, KEYS("hidden_size"), &c->d_model, err, n) ||
        !require_dim(root, KEYS("intermediate_size"), &c->ffn_hidden, err, n) ||
        !require_dim(root, KEYS("num_hidden_layers"), &c->n_layer, err, n) ||
        !require_dim(root, KEYS("num_attention_heads"), &c->n_head, err, n))
        return TW_ERR_FORMAT;

    // num_key_value_heads: null always means "= num_attention_heads"; an absent key takes the
    // class default, which is None for Llama but 8 for Mistral and 32 for Qwen2/Qwen3.
    const tw_json *kv = tw_json_get(root, "num_key_value_heads");
    int r = read_dim(root, KEYS("num_key_value_heads"), &c->n_kv_head, err, n);
    if (r < 0) return TW_ERR_FORMAT;
    if (r == 0) {
        c->defaulted |= TW_DEF_KV_HEADS;
        if (kv || c->arch == TW_ARCH_LLAMA) c->n_kv_head = c->n_head;
        else c->n_kv_head = c->arch == TW_ARCH_MISTRAL ? 8 : 32;
    }

    // head_dim: explicit if given; Qwen3Config defaults it to 128, the others derive C / H.
    r = read_dim(root, KEYS("head_dim"), &c->head_dim, err, n);
    if (r < 0) return TW_ERR_FORMAT;
    if (r == 0) {
        c->defaulted |= TW_DEF_HEAD_DIM;
        if (c->arch == TW_ARCH_QWEN3) {
            c->head_dim = 128;
        } else {
            if (c->d_model % c->n_head != 0) {
                snprintf(err, n, "hidden_size (%lld) is not a multiple of num_attention_heads "
                         "(%lld) and there is no head_dim", (long long)c->d_model,
                         (long long)c->n_head);
                return TW_ERR_SHAPE;
            }
            c->head_dim = c->d_model / c->n_head;
        }
    }
    if (c->n_head % c->n_kv_head != 0) {   // repeat_kv shares each kv head among H/G query heads
        snprintf(err, n, "num_attention_heads (%lld) is not a multiple of num_key_value_heads (%lld)",
                 (long long)c->n_head, (long long)c->n_kv_head);
        return TW_ERR_SHAPE;
    }

    r = read_dim(root, KEYS("max_position_embeddings"), &c->max_seq, err, n);
    if (r < 0) return TW_ERR_FORMAT;
    if (r == 0) {
        c->defaulted |= TW_DEF_MAX_POS;
        c->max_seq = c->arch == TW_ARCH_LLAMA ? 2048
                         : c->arch == TW_ARCH_MISTRAL ? 4096 * 32 : 32768;
    }

    c->tie_embeddings = 0;   // all four config classes default tie_word_embeddings to False
    r = read_bool(root, "tie_word_embeddings", &c->tie_embeddings, err, n);
    if (r < 0) return TW_ERR_FORMAT;
    if (r == 0) c->defaulted |= TW_DEF_TIE;

    int attention_bias = 0, mlp_bias = 0;
    if (c->arch == TW_ARCH_LLAMA || c->arch == TW_ARCH_QWEN3) {
        r = read_bool(root, "attention_bias", &attention_bias, err, n);
        if (r < 0) return TW_ERR_FORMAT;
        if (r == 0) c->defaulted |= TW_DEF_ATTN_BIAS;
    }
    if (c->arch == TW_ARCH_LLAMA) {
        r = read_bool(root, "mlp_bias", &mlp_bias, err, n);
        if (r < 0) return TW_ERR_FORMAT;
        if (r == 0) c->defaulted |= TW_DEF_MLP_BIAS;
    }
    // Mistral ignores both keys; Qwen2 hard-codes bias=True on q/k/v and False on o.
    c->qkv_bias = c->arch == TW_ARCH_QWEN2 ? 1 : attention_bias;
    c->o_bias = c->arch == TW_ARCH_QWEN2 ? 0 : attention_bias;
    c->mlp_bias = mlp_bias;
    c->qk_norm = c->arch == TW_ARCH_QWEN3;
    c->gated_mlp = 1;
    return TW_OK;
}

tw_status tw_hf_config_from_json(tw_hf_config *cfg, const tw_json *root,
                                    char *err, size_t err_len) {
    char scratch[8];
    if (!err) { err = scratch; err_len = sizeof scratch; }
    err[0] = '\0';
    memset(cfg, 0, sizeof *cfg);
    if (!root || root->type != TW_JSON_OBJECT) {
        snprintf(err, err_len, "the top level is a %s, expected an object",
                 root ? tw_json_type_name(root->type) : "nothing");
        return TW_ERR_FORMAT;
    }
    const tw_json *mt = tw_json_get(root, "model_type");
    if (!mt || mt->type != TW_JSON_STRING) {
        snprintf(err, err_len, "missing string key \"model_type\" (supported: %s)", tw_hf_supported);
        return TW_ERR_FORMAT;
    }
    static const struct { const char *name; tw_arch arch; } TYPES[] = {
        { "gpt2", TW_ARCH_GPT2 }, { "llama", TW_ARCH_LLAMA }, { "mistral", TW_ARCH_MISTRAL },
        { "qwen2", TW_ARCH_QWEN2 }, { "qwen3", TW_ARCH_QWEN3 },
    };
    size_t i;
    for (i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (strcmp(mt->string, TYPES[i].name) == 0) break;
    if (i == sizeof TYPES / sizeof TYPES[0]) {
        snprintf(err, err_len, "model_type \"%.40s\" is not supported (supported: %s)",
                 mt->string, tw_hf_supported);
        return TW_ERR_FORMAT;
    }
    cfg->arch = TYPES[i].arch;
    tw_status st = cfg->arch == TW_ARCH_GPT2 ? gpt2_config(cfg, root, err, err_len)
                                             : llama_family_config(cfg, root, err, err_len);
    if (st != TW_OK) {
        tw_arch a = cfg->arch;
        memset(cfg, 0, sizeof *cfg);
        cfg->arch = a;
    }
    return st;
}

// ---- counting ----

// Checked int64 arithmetic: *ok becomes 0 on overflow (all operands are non-negative here).
static int64_t mul(int64_t a, int64_t b, int *ok) {
    if (a != 0 && b > INT64_MAX / a) { *ok = 0; return 0; }
    return a * b;
}
static int64_t add(int64_t a, int64_t b, int *ok) {
    if (b > INT64_MAX - a) { *ok = 0; return 0; }
    return a + b;
}

tw_status tw_params_count(tw_param_counts *p, const tw_hf_config *c) {
    memset(p, 0, sizeof *p);
    int ok = 1;
    const int64_t C = c->d_model, V = c->vocab, F = c->ffn_hidden;
    const int64_t qdim = mul(c->n_head, c->head_dim, &ok);      // H*D (= C for gpt2)
    const int64_t kvdim = mul(c->n_kv_head, c->head_dim, &ok);  // G*D
    const int64_t norm = c->layernorm ? mul(2, C, &ok) : C;     // LayerNorm has weight and bias

    p->tok_embed = mul(V, C, &ok);
    p->pos_embed = c->learned_pos ? mul(c->max_seq, C, &ok) : 0;

    p->attn_norm = p->mlp_norm = norm;
    p->q = mul(C, qdim, &ok);
    p->k = mul(C, kvdim, &ok);
    p->v = mul(C, kvdim, &ok);
    p->o = mul(qdim, C, &ok);
    if (c->qkv_bias) { p->q_b = qdim; p->k_b = kvdim; p->v_b = kvdim; }
    if (c->o_bias) p->o_b = C;
    if (c->qk_norm) { p->q_norm = c->head_dim; p->k_norm = c->head_dim; }
    if (c->gated_mlp) p->gate = mul(C, F, &ok);
    p->up = mul(C, F, &ok);
    p->down = mul(F, C, &ok);
    if (c->mlp_bias) { p->gate_b = c->gated_mlp ? F : 0; p->up_b = F; p->down_b = C; }

    const int64_t attn[] = { p->q, p->k, p->v, p->o, p->q_b, p->k_b, p->v_b, p->o_b,
                             p->q_norm, p->k_norm };
    for (size_t i = 0; i < sizeof attn / sizeof attn[0]; i++) p->attn_layer = add(p->attn_layer, attn[i], &ok);
    const int64_t mlp[] = { p->gate, p->up, p->down, p->gate_b, p->up_b, p->down_b };
    for (size_t i = 0; i < sizeof mlp / sizeof mlp[0]; i++) p->mlp_layer = add(p->mlp_layer, mlp[i], &ok);
    p->norms_layer = add(p->attn_norm, p->mlp_norm, &ok);
    p->layer = add(add(p->attn_layer, p->mlp_layer, &ok), p->norms_layer, &ok);
    p->layers = mul(p->layer, c->n_layer, &ok);

    p->final_norm = norm;
    p->lm_head = c->tie_embeddings ? 0 : p->tok_embed;   // tied: the same storage, counted once
    p->total = add(add(add(add(p->tok_embed, p->pos_embed, &ok), p->layers, &ok),
                       p->final_norm, &ok), p->lm_head, &ok);
    if (!ok) {
        memset(p, 0, sizeof *p);
        return TW_ERR_ARG;
    }
    return TW_OK;
}

int64_t tw_params_weight_bytes(int64_t n_params, int bytes_per_param) {
    int ok = 1;
    int64_t b = mul(n_params, bytes_per_param, &ok);
    return ok ? b : -1;
}

int64_t tw_hf_kv_bytes(const tw_hf_config *c, int64_t context, int bytes_per_elem) {
    int ok = 1;
    int64_t per_token = mul(mul(mul(2, c->n_layer, &ok), c->n_kv_head, &ok), c->head_dim, &ok);
    int64_t b = mul(mul(per_token, context, &ok), bytes_per_elem, &ok);
    return ok ? b : -1;
}

char *tw_format_count(char *out, int64_t n) {
    char digits[24];
    // the magnitude as unsigned, so INT64_MIN is printed correctly too
    uint64_t mag = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)mag), o = 0;
    if (n < 0) out[o++] = '-';
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return out;
}
