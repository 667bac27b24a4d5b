// hf_moe.c: parameter counting for mixture-of-experts configs (see hf_moe.h for the module
// inventory of each). Keys that decide shapes are required unless listed with a default below
// (the default of the transformers config class): tie_word_embeddings (false), attention_bias
// (false), mlp_only_layers ([]), decoder_sparse_step (1), head_dim (mixtral: C / H; qwen3_moe:
// 128), q_lora_rank (null), num_nextn_predict_layers (0), quantization_config (none).
#include <stdio.h>
#include <string.h>
#include "formats/hf_moe.h"

const char tw_hf_moe_supported[] = "mixtral, qwen3_moe, deepseek_v3";

static const struct { const char *name; tw_moe_arch arch; } TYPES[] = {
    { "mixtral", TW_MOE_MIXTRAL }, { "qwen3_moe", TW_MOE_QWEN3 },
    { "deepseek_v3", TW_MOE_DEEPSEEK_V3 },
};

const char *tw_moe_arch_name(tw_moe_arch a) {
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (TYPES[i].arch == a) return TYPES[i].name;
    return "unknown";
}

static int type_index(const tw_json *root) {
    const tw_json *mt = root && root->type == TW_JSON_OBJECT ? tw_json_get(root, "model_type") : NULL;
    if (!mt || mt->type != TW_JSON_STRING) return -1;
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (strcmp(mt->string, TYPES[i].name) == 0) return (int)i;
    return -1;
}

int tw_hf_moe_is_moe(const tw_json *root) { return type_index(root) >= 0; }

#define MAX_DIM ((int64_t)1 << 32)

// The value of key if present and not null, else NULL.
static const tw_json *get(const tw_json *root, const char *key) {
    const tw_json *v = tw_json_get(root, key);
    return v && v->type != TW_JSON_NULL ? v : NULL;
}

// A non-negative integer <= MAX_DIM (>= 1 unless zero_ok). 1 read, 0 absent, -1 bad (err set).
static int read_int(const tw_json *root, const char *key, int64_t *out, int zero_ok,
                    char *err, size_t n) {
    const tw_json *v = get(root, key);
    if (!v) return 0;
    if (v->type != TW_JSON_NUMBER || !v->is_integer) {
        snprintf(err, n, "\"%s\" must be an integer, not a %s", key,
                 v->type == TW_JSON_NUMBER ? "fraction" : tw_json_type_name(v->type));
        return -1;
    }
    if (v->integer < (zero_ok ? 0 : 1) || v->integer > MAX_DIM) {
        snprintf(err, n, "\"%s\" is %lld; expected %d .. %lld", key, (long long)v->integer,
                 zero_ok ? 0 : 1, (long long)MAX_DIM);
        return -1;
    }
    *out = v->integer;
    return 1;
}

static int need_int(const tw_json *root, const char *key, int64_t *out, char *err, size_t n) {
    int r = read_int(root, key, out, 0, err, n);
    if (r == 0) snprintf(err, n, "missing key \"%s\" (it decides the model's shape)", key);
    return r == 1;
}

// An optional integer with a default: 1 ok, 0 bad.
static int opt_int(const tw_json *root, const char *key, int64_t *out, int64_t def, int zero_ok,
                   char *err, size_t n) {
    int r = read_int(root, key, out, zero_ok, err, n);
    if (r == 0) *out = def;
    return r >= 0;
}

static int opt_bool(const tw_json *root, const char *key, int *out, int def, char *err, size_t n) {
    const tw_json *v = get(root, key);
    *out = def;
    if (!v) return 1;
    if (v->type != TW_JSON_BOOL) {
        snprintf(err, n, "\"%s\" must be true or false, not a %s", key, tw_json_type_name(v->type));
        return 0;
    }
    *out = v->boolean;
    return 1;
}

// How many distinct entries of qwen3_moe's mlp_only_layers (integers, checked) name a layer i < L
// that the step rule would make MoE ((i + 1) % step == 0): those layers are dense instead.
static int64_t listed_moe_layers(const tw_json *list, int64_t L, int64_t step) {
    int64_t n = 0;
    for (size_t j = 0; list && j < list->count; j++) {
        const int64_t i = list->items[j].integer;
        int seen = 0;
        for (size_t q = 0; q < j && !seen; q++) seen = list->items[q].integer == i;
        if (!seen && i >= 0 && i < L && (i + 1) % step == 0) n++;
    }
    return n;
}

static tw_status common(tw_hf_moe_config *c, const tw_json *root, char *err, size_t n) {
    if (!need_int(root, "vocab_size", &c->vocab, err, n) ||
        !need_int(root, "hidden_size", &c->d_model, err, n) ||
        !need_int(root, "num_hidden_layers", &c->n_layer, err, n) ||
        !need_int(root, "num_attention_heads", &c->n_head, err, n) ||
        !need_int(root, "num_experts_per_tok", &c->top_k, err, n) ||
        !opt_int(root, "max_position_embeddings", &c->max_seq, 0, 1, err, n) ||
        !opt_bool(root, "tie_word_embeddings", &c->tie_embeddings, 0, err, n) ||
        !opt_bool(root, "attention_bias", &c->attn_bias, 0, err, n))
        return TW_ERR_FORMAT;
    return TW_OK;
}

static tw_status gqa_attention(tw_hf_moe_config *c, const tw_json *root, char *err, size_t n) {
    if (!need_int(root, "num_key_value_heads", &c->n_kv_head, err, n)) return TW_ERR_FORMAT;
    int64_t def_hd = c->arch == TW_MOE_QWEN3 ? 128 : c->d_model / c->n_head;
    if (!opt_int(root, "head_dim", &c->head_dim, def_hd, 0, err, n)) return TW_ERR_FORMAT;
    if (c->head_dim < 1 || c->n_head % c->n_kv_head != 0) {
        snprintf(err, n, "num_attention_heads (%lld) must be a multiple of num_key_value_heads "
                 "(%lld), and head_dim at least 1", (long long)c->n_head, (long long)c->n_kv_head);
        return TW_ERR_SHAPE;
    }
    return TW_OK;
}

static tw_status mixtral(tw_hf_moe_config *c, const tw_json *root, char *err, size_t n) {
    if (!need_int(root, "intermediate_size", &c->expert_hidden, err, n) ||
        !need_int(root, "num_local_experts", &c->n_expert, err, n))
        return TW_ERR_FORMAT;
    c->attn_bias = 0;   // MixtralAttention hard-codes bias=False
    c->n_moe_layers = c->n_layer;
    c->norm_topk = 1;   // softmax over all, then the top k divided by their sum
    return gqa_attention(c, root, err, n);
}

static tw_status qwen3_moe(tw_hf_moe_config *c, const tw_json *root, char *err, size_t n) {
    int64_t step;
    if (!need_int(root, "intermediate_size", &c->ffn_hidden, err, n) ||
        !need_int(root, "moe_intermediate_size", &c->expert_hidden, err, n) ||
        !need_int(root, "num_experts", &c->n_expert, err, n) ||
        !opt_int(root, "decoder_sparse_step", &step, 1, 0, err, n) ||
        !opt_bool(root, "norm_topk_prob", &c->norm_topk, 0, err, n))
        return TW_ERR_FORMAT;
    const tw_json *only = get(root, "mlp_only_layers");
    if (only && only->type != TW_JSON_ARRAY) {
        snprintf(err, n, "\"mlp_only_layers\" must be an array of layer numbers");
        return TW_ERR_FORMAT;
    }
    for (size_t j = 0; only && j < only->count; j++)
        if (only->items[j].type != TW_JSON_NUMBER || !only->items[j].is_integer) {
            snprintf(err, n, "\"mlp_only_layers\" must hold integers only");
            return TW_ERR_FORMAT;
        }
    // counted, not looped: n_layer may be as large as 2^32
    c->n_moe_layers = c->n_layer / step - listed_moe_layers(only, c->n_layer, step);
    c->n_dense_layers = c->n_layer - c->n_moe_layers;
    c->qk_norm = 1;
    return gqa_attention(c, root, err, n);
}

static tw_status deepseek_v3(tw_hf_moe_config *c, const tw_json *root, char *err, size_t n) {
    int64_t first_dense, freq;
    if (!need_int(root, "intermediate_size", &c->ffn_hidden, err, n) ||
        !need_int(root, "moe_intermediate_size", &c->expert_hidden, err, n) ||
        !need_int(root, "n_routed_experts", &c->n_expert, err, n) ||
        !opt_int(root, "n_shared_experts", &c->n_shared, 0, 1, err, n) ||
        !opt_int(root, "first_k_dense_replace", &first_dense, 0, 1, err, n) ||
        !need_int(root, "moe_layer_freq", &freq, err, n) ||
        !opt_int(root, "q_lora_rank", &c->q_lora_rank, 0, 0, err, n) ||
        !need_int(root, "kv_lora_rank", &c->kv_lora_rank, err, n) ||
        !need_int(root, "qk_nope_head_dim", &c->qk_nope_dim, err, n) ||
        !need_int(root, "qk_rope_head_dim", &c->qk_rope_dim, err, n) ||
        !need_int(root, "v_head_dim", &c->v_head_dim, err, n) ||
        !opt_int(root, "num_nextn_predict_layers", &c->n_mtp, 0, 1, err, n) ||
        !opt_bool(root, "norm_topk_prob", &c->norm_topk, 0, err, n))
        return TW_ERR_FORMAT;
    const tw_json *m = get(root, "topk_method");
    c->expert_bias = m && m->type == TW_JSON_STRING && strcmp(m->string, "noaux_tc") == 0;
    // layers i >= first_dense with i % freq == 0, counted: the multiples of freq in
    // [first_dense, n_layer)
    const int64_t from = first_dense < c->n_layer ? first_dense : c->n_layer;
    c->n_moe_layers = (c->n_layer + freq - 1) / freq - (from + freq - 1) / freq;
    c->n_dense_layers = c->n_layer - c->n_moe_layers;
    const tw_json *q = get(root, "quantization_config");
    const tw_json *bs = q && q->type == TW_JSON_OBJECT ? get(q, "weight_block_size") : NULL;
    if (bs) {
        if (bs->type != TW_JSON_ARRAY || bs->count != 2 || bs->items[0].type != TW_JSON_NUMBER ||
            !bs->items[0].is_integer || bs->items[0].integer < 1 || bs->items[0].integer > MAX_DIM ||
            bs->items[1].type != TW_JSON_NUMBER || bs->items[1].integer != bs->items[0].integer) {
            snprintf(err, n, "\"quantization_config.weight_block_size\" must be [B, B], a square block");
            return TW_ERR_FORMAT;
        }
        c->fp8_block = bs->items[0].integer;
    }
    c->mla = 1;
    c->n_kv_head = c->n_head;
    return TW_OK;
}

tw_status tw_hf_moe_from_json(tw_hf_moe_config *cfg, const tw_json *root, char *err, size_t n) {
    char scratch[8];
    if (!err) { err = scratch; n = sizeof scratch; }
    err[0] = '\0';
    memset(cfg, 0, sizeof *cfg);
    int t = type_index(root);
    if (t < 0) {
        snprintf(err, n, "model_type is not one of %s", tw_hf_moe_supported);
        return TW_ERR_FORMAT;
    }
    cfg->arch = TYPES[t].arch;
    tw_status st = common(cfg, root, err, n);
    if (st == TW_OK)
        st = cfg->arch == TW_MOE_MIXTRAL ? mixtral(cfg, root, err, n)
           : cfg->arch == TW_MOE_QWEN3   ? qwen3_moe(cfg, root, err, n)
                                         : deepseek_v3(cfg, root, err, n);
    if (st == TW_OK && (cfg->top_k > cfg->n_expert)) {
        snprintf(err, n, "num_experts_per_tok (%lld) is more than the %lld experts",
                 (long long)cfg->top_k, (long long)cfg->n_expert);
        st = TW_ERR_SHAPE;
    }
    if (st != TW_OK) {
        tw_moe_arch a = cfg->arch;
        memset(cfg, 0, sizeof *cfg);
        cfg->arch = a;
    }
    return st;
}

// ---- counting, in checked int64 arithmetic (*ok becomes 0 on overflow) ----

static int64_t mul(int64_t a, int64_t b, int *ok) {
    if (a != 0 && b > INT64_MAX / a) { *ok = 0; return 0; }
    return a * b;
}
static int64_t add(int64_t a, int64_t b, int *ok) {
    if (b > INT64_MAX - a) { *ok = 0; return 0; }
    return a + b;
}
static int64_t sum(const int64_t *v, size_t n, int *ok) {
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) s = add(s, v[i], ok);
    return s;
}
#define SUM(ok, ...) sum((const int64_t[]){ __VA_ARGS__ }, \
                         sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), (ok))

// FP8 block scales of one (out, in) weight: one per B x B block, ceil(out/B) ceil(in/B).
static int64_t blocks(int64_t out, int64_t in, int64_t B, int *ok) {
    return B ? mul(out / B + (out % B != 0), in / B + (in % B != 0), ok) : 0;
}

static void count_attention(tw_moe_param_counts *p, const tw_hf_moe_config *c, int *ok) {
    const int64_t C = c->d_model, H = c->n_head;
    if (!c->mla) {
        const int64_t qd = mul(H, c->head_dim, ok), kvd = mul(c->n_kv_head, c->head_dim, ok);
        p->q = mul(C, qd, ok); p->k = mul(C, kvd, ok); p->v = p->k; p->o = mul(qd, C, ok);
        p->attn_biases = c->attn_bias ? SUM(ok, qd, kvd, kvd, C) : 0;
        if (c->qk_norm) p->q_norm = p->k_norm = c->head_dim;
        p->attn_layer = SUM(ok, p->q, p->k, p->v, p->o, p->attn_biases, p->q_norm, p->k_norm);
        return;
    }
    const int64_t qk = add(c->qk_nope_dim, c->qk_rope_dim, ok);
    if (c->q_lora_rank) {
        p->q_a = mul(C, c->q_lora_rank, ok);
        p->q_a_norm = c->q_lora_rank;
        p->q_b = mul(c->q_lora_rank, mul(H, qk, ok), ok);
    } else {
        p->q = mul(C, mul(H, qk, ok), ok);
    }
    p->kv_a = mul(C, add(c->kv_lora_rank, c->qk_rope_dim, ok), ok);
    p->kv_a_norm = c->kv_lora_rank;
    p->kv_b = mul(c->kv_lora_rank, mul(H, add(c->qk_nope_dim, c->v_head_dim, ok), ok), ok);
    p->o = mul(mul(H, c->v_head_dim, ok), C, ok);
    if (c->attn_bias)   // q_a_proj (or nothing: q_proj has none), kv_a_proj_with_mqa, o_proj
        p->attn_biases = SUM(ok, c->q_lora_rank, c->kv_lora_rank + c->qk_rope_dim, C);
    p->attn_layer = SUM(ok, p->q, p->q_a, p->q_a_norm, p->q_b, p->kv_a, p->kv_a_norm, p->kv_b,
                        p->o, p->attn_biases);
}

// The FP8 scale entries (weight_scale_inv) of one layer's attention and MLP Linear weights; the
// router, norms, biases, embeddings, heads and the MTP module's eh_proj are stored in bf16.
static int64_t layer_scales(const tw_hf_moe_config *c, int moe, int *ok) {
    const int64_t B = c->fp8_block, C = c->d_model, H = c->n_head, r = c->q_lora_rank;
    const int64_t qk = mul(H, c->qk_nope_dim + c->qk_rope_dim, ok);
    const int64_t kv = mul(H, c->qk_nope_dim + c->v_head_dim, ok), vo = mul(H, c->v_head_dim, ok);
    int64_t s = SUM(ok, r ? add(blocks(r, C, B, ok), blocks(qk, r, B, ok), ok) : blocks(qk, C, B, ok),
                    blocks(c->kv_lora_rank + c->qk_rope_dim, C, B, ok),
                    blocks(kv, c->kv_lora_rank, B, ok), blocks(C, vo, B, ok));
    const int64_t Fe = c->expert_hidden, Fs = mul(c->n_shared, Fe, ok), F = c->ffn_hidden;
    const int64_t one_expert = SUM(ok, blocks(Fe, C, B, ok), blocks(Fe, C, B, ok), blocks(C, Fe, B, ok));
    const int64_t shared = Fs ? SUM(ok, blocks(Fs, C, B, ok), blocks(Fs, C, B, ok), blocks(C, Fs, B, ok)) : 0;
    if (moe)
        return SUM(ok, s, mul(c->n_expert, one_expert, ok), shared);
    return SUM(ok, s, blocks(F, C, B, ok), blocks(F, C, B, ok), blocks(C, F, B, ok));
}

tw_status tw_hf_moe_count(tw_moe_param_counts *p, const tw_hf_moe_config *c) {
    memset(p, 0, sizeof *p);
    int ok = 1;
    const int64_t C = c->d_model, V = c->vocab, E = c->n_expert, Fe = c->expert_hidden;
    p->tok_embed = mul(V, C, &ok);
    p->final_norm = C;
    p->lm_head = c->tie_embeddings ? 0 : p->tok_embed;
    count_attention(p, c, &ok);
    p->norms_layer = mul(2, C, &ok);
    p->dense_mlp = mul(3, mul(C, c->ffn_hidden, &ok), &ok);
    p->router = mul(E, C, &ok);
    p->expert_bias = c->expert_bias ? E : 0;
    p->expert = mul(3, mul(C, Fe, &ok), &ok);
    p->experts = mul(E, p->expert, &ok);
    p->shared = mul(c->n_shared, p->expert, &ok);   // one SwiGLU of n_shared * Fe
    p->moe_mlp = SUM(&ok, p->router, p->expert_bias, p->experts, p->shared);
    p->moe_mlp_active = SUM(&ok, p->router, p->expert_bias, mul(c->top_k, p->expert, &ok), p->shared);
    const int64_t base = add(p->attn_layer, p->norms_layer, &ok);
    p->layers = add(mul(c->n_moe_layers, add(base, p->moe_mlp, &ok), &ok),
                    mul(c->n_dense_layers, add(base, p->dense_mlp, &ok), &ok), &ok);
    p->main_total = SUM(&ok, p->tok_embed, p->layers, p->final_norm, p->lm_head);
    if (c->n_mtp) {
        p->mtp_layer = add(base, p->moe_mlp, &ok);
        p->mtp_extra = SUM(&ok, C, C, mul(C, 2 * C, &ok), C);   // enorm, hnorm, eh_proj, head norm
        p->mtp_copies = mul(2, p->tok_embed, &ok);              // embed_tokens, shared_head.head
        p->mtp = mul(c->n_mtp, SUM(&ok, p->mtp_layer, p->mtp_extra, p->mtp_copies), &ok);
    }
    p->total = add(p->main_total, p->mtp, &ok);
    const int64_t routed_off = mul(mul(c->n_moe_layers, E - c->top_k, &ok), p->expert, &ok);
    p->active = p->main_total - routed_off;   // the main model: MTP only serves speculation
    p->active_no_embed = p->active - p->tok_embed;
    if (c->fp8_block)
        p->fp8_scales = SUM(&ok, mul(c->n_moe_layers, layer_scales(c, 1, &ok), &ok),
                            mul(c->n_dense_layers, layer_scales(c, 0, &ok), &ok),
                            mul(c->n_mtp, layer_scales(c, 1, &ok), &ok));
    if (!ok) { memset(p, 0, sizeof *p); return TW_ERR_ARG; }
    return TW_OK;
}

tw_kv_per_token tw_hf_moe_kv_per_token(const tw_hf_moe_config *c, int64_t gqa_groups) {
    tw_kv_per_token k = { 0, 0, 0 };
    int ok = 1;
    const int64_t L = c->n_layer, H = c->n_head;
    if (c->mla) {
        const int64_t kv = SUM(&ok, c->qk_nope_dim, c->qk_rope_dim, c->v_head_dim);
        k.latent = mul(L, add(c->kv_lora_rank, c->qk_rope_dim, &ok), &ok);
        k.mha = mul(mul(L, H, &ok), kv, &ok);
        k.gqa = mul(mul(L, gqa_groups, &ok), kv, &ok);
    } else {
        k.gqa = mul(mul(L, 2 * c->n_kv_head, &ok), c->head_dim, &ok);
        k.mha = mul(mul(L, 2 * H, &ok), c->head_dim, &ok);
    }
    if (!ok) k.latent = k.gqa = k.mha = -1;
    return k;
}
