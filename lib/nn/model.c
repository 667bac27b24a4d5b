// model.c: tiny decoder-only language models in four styles (2017, gpt2, llama, qwen3), built from
// tw_block_forward. Parameters live in one allocation and are reachable by name (tw_param), so
// tests and tools can load PyTorch-exported tensors into them. See docs/model.md.
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nn/model.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/norm.h"
#include "nn/posenc.h"
#include "core/rng.h"
#include "simd/simd.h"

// ---- presets ----

// Shared by every preset: 2 layers, width 24, 65 symbols (an awkward vocabulary), so that few
// sizes are multiples of a SIMD width by accident. Small enough that the goldens stay small.
static void preset_common(tw_model_config *c, const char *style) {
    memset(c, 0, sizeof *c);
    c->style = style;
    c->vocab = 65;
    c->n_layer = 2;
    c->block.attn.d_model = 24;
    c->block.attn.causal = 1;
}

tw_status tw_model_config_preset(tw_model_config *c, const char *style) {
    if (!style) return TW_ERR_ARG;
    tw_block_config *b = &c->block;
    if (strcmp(style, "2017") == 0) {
        preset_common(c, "2017");
        c->max_seq = 16;
        b->attn.n_head = 4; b->attn.n_kv_head = 4; b->attn.head_dim = 6;
        b->attn.rope = TW_ROPE_NONE;
        b->prenorm = 0; b->norm = TW_NORM_LAYER; b->norm_eps = 1e-5f;
        b->ffn = TW_FFN_CLASSIC; b->act = TW_ACT_RELU; b->ffn_hidden = 96;    // 4C, as the paper
        c->pos = TW_POS_SINUSOIDAL; c->embed_scale = 1; c->final_norm = 0; c->tied = 1; c->bias = 1;
        c->embed_init = TW_EMBED_INIT_UNIT;
    } else if (strcmp(style, "gpt2") == 0) {
        preset_common(c, "gpt2");
        c->max_seq = 16;
        b->attn.n_head = 4; b->attn.n_kv_head = 4; b->attn.head_dim = 6;
        b->attn.rope = TW_ROPE_NONE;
        b->prenorm = 1; b->norm = TW_NORM_LAYER; b->norm_eps = 1e-5f;
        b->ffn = TW_FFN_CLASSIC; b->act = TW_ACT_GELU_TANH; b->ffn_hidden = 96;
        c->pos = TW_POS_LEARNED; c->embed_scale = 0; c->final_norm = 1; c->tied = 1; c->bias = 1;
    } else if (strcmp(style, "llama") == 0) {
        preset_common(c, "llama");
        c->max_seq = 32;
        b->attn.n_head = 4; b->attn.n_kv_head = 2; b->attn.head_dim = 6;
        b->attn.rope = TW_ROPE_ADJACENT; b->attn.rope_theta = 10000.0f;
        b->prenorm = 1; b->norm = TW_NORM_RMS; b->norm_eps = 1e-5f;
        // SwiGLU width 2/3 of 4C (= 64 here), which keeps its parameter count that of a 4C FFN.
        b->ffn = TW_FFN_SWIGLU; b->act = TW_ACT_SILU; b->ffn_hidden = 64;
        c->pos = TW_POS_NONE; c->embed_scale = 0; c->final_norm = 1; c->tied = 0; c->bias = 0;
    } else if (strcmp(style, "qwen3") == 0) {
        preset_common(c, "qwen3");
        c->max_seq = 32;
        b->attn.n_head = 4; b->attn.n_kv_head = 2; b->attn.head_dim = 8;    // H*D = 32 != C = 24
        b->attn.rope = TW_ROPE_HALVES; b->attn.rope_theta = 1000000.0f;
        b->attn.qk_norm = 1; b->attn.norm_eps = 1e-6f;
        b->prenorm = 1; b->norm = TW_NORM_RMS; b->norm_eps = 1e-6f;
        b->ffn = TW_FFN_SWIGLU; b->act = TW_ACT_SILU; b->ffn_hidden = 64;
        c->pos = TW_POS_NONE; c->embed_scale = 0; c->final_norm = 1; c->tied = 1; c->bias = 0;
    } else {
        return TW_ERR_ARG;
    }
    return TW_OK;
}

tw_status tw_model_config_check(const tw_model_config *c) {
    if (c->vocab <= 0 || c->max_seq <= 0 || c->n_layer <= 0) return TW_ERR_SHAPE;
    if (c->pos != TW_POS_NONE && c->pos != TW_POS_SINUSOIDAL && c->pos != TW_POS_LEARNED)
        return TW_ERR_ARG;
    if (c->bias && c->block.mla_kv_rank > 0) return TW_ERR_ARG;   // latent attention has no biases
    return tw_block_config_check(&c->block);
}

// ---- the parameter list ----

// Walks the parameter list twice: once to count (p == NULL), once to name and place each tensor.
typedef struct {
    tw_model *m;
    int       assign;   // 0: count only, 1: fill m->params and hand out pointers
    int       n;        // parameters so far
    long      off;      // floats so far
    int       too_big;  // 1: a size or the total passed TW_MODEL_MAX_FLOATS (counting only)
} param_walk;

// Every product and sum below is checked against TW_MODEL_MAX_FLOATS before it is formed, so
// sizes that would overflow a long (a heap overflow once the block is allocated) are caught by
// the counting walk, before anything is allocated.
static float *add_param(param_walk *w, tw_param_kind kind, long d0, long d1, const char *fmt, int layer,
                        const char *leaf) {
    const long d1_or_1 = d1 > 0 ? d1 : 1;
    if (d0 < 0 || d0 > TW_MODEL_MAX_FLOATS / d1_or_1 || d0 * d1_or_1 > TW_MODEL_MAX_FLOATS - w->off) {
        w->too_big = 1;
        return NULL;
    }
    long count = d0 * d1_or_1;
    float *data = NULL;
    if (w->assign) {
        tw_param *p = &w->m->params[w->n];
        if (layer >= 0) snprintf(p->name, sizeof p->name, fmt, layer, leaf);
        else            snprintf(p->name, sizeof p->name, "%s", fmt);
        p->kind = kind;
        p->data = data = w->m->memory + w->off;
        p->ndim = d1 > 0 ? 2 : 1;
        p->shape[0] = d0;
        p->shape[1] = d1 > 0 ? d1 : 0;
        p->count = count;
    }
    w->n++;
    w->off += count;
    return data;
}

#define LAYER_PARAM(kind, d0, d1, leaf) add_param(w, kind, d0, d1, "layers.%d.%s", l, leaf)

static void walk_params(param_walk *w) {
    tw_model *m = w->m;
    const tw_model_config *c = &m->cfg;
    const tw_mha_config *a = &c->block.attn;
    const long C = a->d_model, HD = (long)a->n_head * a->head_dim, GD = (long)a->n_kv_head * a->head_dim;
    const long D = a->head_dim, F = c->block.ffn_hidden, V = c->vocab;
    const int beta = c->bias && c->block.norm == TW_NORM_LAYER;   // RMSNorm never has a beta
    const int bias = c->bias;

    m->tok_emb = add_param(w, TW_PARAM_EMBED, V, C, "tok_emb", -1, NULL);
    m->pos_emb = c->pos == TW_POS_LEARNED
               ? add_param(w, TW_PARAM_EMBED, c->max_seq, C, "pos_emb", -1, NULL) : NULL;
    for (int l = 0; l < c->n_layer && !w->too_big; l++) {
        tw_block_weights bw;
        memset(&bw, 0, sizeof bw);
        bw.norm1_w = LAYER_PARAM(TW_PARAM_GAIN, C, 0, "norm1.w");
        if (beta) bw.norm1_b = LAYER_PARAM(TW_PARAM_BETA, C, 0, "norm1.b");
        if (c->block.mla_kv_rank > 0) {
            // Latent attention (nn/mla.h): head h's rows of q_b are its nope then rope part,
            // kv_a's first kv_rank rows give the latent and the last d_rope the shared key.
            const tw_block_config *b = &c->block;
            const long H = a->n_head, rq = b->mla_q_rank, rkv = b->mla_kv_rank;
            const long dq = b->mla_d_nope + b->mla_d_rope, dkv = b->mla_d_nope + b->mla_d_v;
            bw.mla.q_a       = LAYER_PARAM(TW_PARAM_WEIGHT, rq, C, "attn.q_a");
            bw.mla.q_a_norm  = LAYER_PARAM(TW_PARAM_GAIN, rq, 0, "attn.q_a_norm");
            bw.mla.q_b       = LAYER_PARAM(TW_PARAM_WEIGHT, H * dq, rq, "attn.q_b");
            bw.mla.kv_a      = LAYER_PARAM(TW_PARAM_WEIGHT, rkv + b->mla_d_rope, C, "attn.kv_a");
            bw.mla.kv_a_norm = LAYER_PARAM(TW_PARAM_GAIN, rkv, 0, "attn.kv_a_norm");
            bw.mla.kv_b      = LAYER_PARAM(TW_PARAM_WEIGHT, H * dkv, rkv, "attn.kv_b");
            bw.mla.o         = LAYER_PARAM(TW_PARAM_WEIGHT, C, H * b->mla_d_v, "attn.o");
        } else {
            bw.attn.wq = tw_weight_fp32(LAYER_PARAM(TW_PARAM_WEIGHT, HD, C, "attn.wq"));
            if (bias) bw.attn.bq = LAYER_PARAM(TW_PARAM_BIAS, HD, 0, "attn.bq");
            bw.attn.wk = tw_weight_fp32(LAYER_PARAM(TW_PARAM_WEIGHT, GD, C, "attn.wk"));
            if (bias) bw.attn.bk = LAYER_PARAM(TW_PARAM_BIAS, GD, 0, "attn.bk");
            bw.attn.wv = tw_weight_fp32(LAYER_PARAM(TW_PARAM_WEIGHT, GD, C, "attn.wv"));
            if (bias) bw.attn.bv = LAYER_PARAM(TW_PARAM_BIAS, GD, 0, "attn.bv");
            bw.attn.wo = tw_weight_fp32(LAYER_PARAM(TW_PARAM_WEIGHT, C, HD, "attn.wo"));
            if (bias) bw.attn.bo = LAYER_PARAM(TW_PARAM_BIAS, C, 0, "attn.bo");
            if (a->qk_norm) {
                bw.attn.q_norm = LAYER_PARAM(TW_PARAM_GAIN, D, 0, "attn.q_norm");
                bw.attn.k_norm = LAYER_PARAM(TW_PARAM_GAIN, D, 0, "attn.k_norm");
            }
        }
        bw.norm2_w = LAYER_PARAM(TW_PARAM_GAIN, C, 0, "norm2.w");
        if (beta) bw.norm2_b = LAYER_PARAM(TW_PARAM_BETA, C, 0, "norm2.b");
        if (c->block.moe_experts > 0) {
            // Experts: E of them stacked, expert e's rows e F .. (e+1) F - 1 of gate and up and
            // e C .. (e+1) C - 1 of down; then the shared experts as one SwiGLU of width Fs.
            const long E = c->block.moe_experts, Fs = (long)c->block.moe_shared * F;
            bw.moe.router = LAYER_PARAM(TW_PARAM_WEIGHT, E, C, "moe.router");
            bw.moe.gate = LAYER_PARAM(TW_PARAM_WEIGHT, E * F, C, "moe.gate");
            bw.moe.up   = LAYER_PARAM(TW_PARAM_WEIGHT, E * F, C, "moe.up");
            bw.moe.down = LAYER_PARAM(TW_PARAM_WEIGHT, E * C, F, "moe.down");
            if (Fs > 0) {
                bw.moe.s_gate = LAYER_PARAM(TW_PARAM_WEIGHT, Fs, C, "moe.shared_gate");
                bw.moe.s_up   = LAYER_PARAM(TW_PARAM_WEIGHT, Fs, C, "moe.shared_up");
                bw.moe.s_down = LAYER_PARAM(TW_PARAM_WEIGHT, C, Fs, "moe.shared_down");
            }
        } else if (c->block.ffn == TW_FFN_SWIGLU) {
            bw.ffn_gate = tw_weight_fp32(LAYER_PARAM(TW_PARAM_WEIGHT, F, C, "ffn.gate"));
            bw.ffn_up   = tw_weight_fp32(LAYER_PARAM(TW_PARAM_WEIGHT, F, C, "ffn.up"));
            bw.ffn_down = tw_weight_fp32(LAYER_PARAM(TW_PARAM_WEIGHT, C, F, "ffn.down"));
        } else {
            bw.ffn_w1 = tw_weight_fp32(LAYER_PARAM(TW_PARAM_WEIGHT, F, C, "ffn.w1"));
            if (bias) bw.ffn_b1 = LAYER_PARAM(TW_PARAM_BIAS, F, 0, "ffn.b1");
            bw.ffn_w2 = tw_weight_fp32(LAYER_PARAM(TW_PARAM_WEIGHT, C, F, "ffn.w2"));
            if (bias) bw.ffn_b2 = LAYER_PARAM(TW_PARAM_BIAS, C, 0, "ffn.b2");
        }
        if (w->assign) m->layers[l] = bw;
    }
    m->final_w = m->final_b = NULL;
    if (c->final_norm) {
        m->final_w = add_param(w, TW_PARAM_GAIN, C, 0, "final_norm.w", -1, NULL);
        if (beta) m->final_b = add_param(w, TW_PARAM_BETA, C, 0, "final_norm.b", -1, NULL);
    }
    m->head = tw_weight_fp32(c->tied ? m->tok_emb
                                     : add_param(w, TW_PARAM_WEIGHT, V, C, "head", -1, NULL));
}

#undef LAYER_PARAM

// ---- construction ----

// n zeroed floats, 64-byte aligned (one cache line; aligned_alloc wants a size that is a multiple
// of it). Every tensor of a model whose sizes are multiples of 16 then starts on a line, so no
// vector load of a weight row straddles two lines: with malloc's 16-byte alignment every 64-byte
// load was a split load, which slowed the decode matvec (docs/kernels.md, "Alignment").
// Freed with free(), as any aligned_alloc block.
static float *alloc_params_aligned(long n) {
    size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

tw_status tw_model_init(tw_model *m, const tw_model_config *c) {
    memset(m, 0, sizeof *m);
    tw_status st = tw_model_config_check(c);
    if (st != TW_OK) return st;
    m->cfg = *c;
    param_walk w = { m, 0, 0, 0, 0 };
    walk_params(&w);
    if (w.too_big) { memset(m, 0, sizeof *m); return TW_ERR_SHAPE; }
    m->memory = alloc_params_aligned(w.off);
    m->params = calloc((size_t)w.n, sizeof(tw_param));
    m->layers = calloc((size_t)c->n_layer, sizeof(tw_block_weights));
    if (!m->memory || !m->params || !m->layers) { tw_model_free(m); return TW_ERR_NOMEM; }
    m->n_floats = w.off;
    m->n_params = w.n;
    param_walk fill = { m, 1, 0, 0, 0 };
    walk_params(&fill);
    return TW_OK;
}

long tw_model_config_floats(const tw_model_config *c) {
    if (tw_model_config_check(c) != TW_OK) return -1;
    tw_model m;
    memset(&m, 0, sizeof m);
    m.cfg = *c;
    param_walk w = { &m, 0, 0, 0, 0 };
    walk_params(&w);   // counting only: the walk sets m's pointers to NULL and allocates nothing
    return w.too_big ? -1 : w.off;
}

void tw_model_free(tw_model *m) {
    tw_linear_copies_free(m->copies);
    free(m->memory);
    free(m->params);
    free(m->layers);
    memset(m, 0, sizeof *m);
}

void tw_model_randomize(tw_model *m, uint64_t seed) {
    tw_rng r;
    tw_rng_init(&r, seed);
    const float emb_std = m->cfg.embed_init == TW_EMBED_INIT_UNIT ? 1.0f : 0.02f;
    for (int i = 0; i < m->n_params; i++) {
        tw_param *p = &m->params[i];
        switch (p->kind) {
        case TW_PARAM_WEIGHT: case TW_PARAM_BIAS: tw_rng_fill_normal(&r, p->data, p->count, 0.02f); break;
        case TW_PARAM_BETA:   tw_rng_fill_normal(&r, p->data, p->count, 0.1f); break;
        case TW_PARAM_EMBED:  tw_rng_fill_normal(&r, p->data, p->count, emb_std); break;
        case TW_PARAM_GAIN:
            tw_rng_fill_normal(&r, p->data, p->count, 0.1f);
            for (long j = 0; j < p->count; j++) p->data[j] += 1.0f;
            break;
        }
    }
}

tw_param *tw_model_param(tw_model *m, const char *name) {
    for (int i = 0; i < m->n_params; i++)
        if (strcmp(m->params[i].name, name) == 0) return &m->params[i];
    return NULL;
}

long tw_model_count_params(const tw_model *m) {
    return m->n_floats;   // a tied head is not a separate tensor, so it is already counted once
}

// ---- activations ----

#define AT(field) offsetof(tw_model_state, field)

const tw_tensor_info tw_model_tensors[] = {
    { .name = "embed",      .shape = "TC", .field = AT(embed),
      .meaning = "token embeddings (rows of the embedding table; scaled and with positions added where the style does)" },
    { .name = "final_norm", .shape = "TC", .field = AT(final_norm),
      .meaning = "final norm of the last resid_post, with its gain (a copy of it if the style has no final norm)" },
    { .name = "final_mean", .shape = "T", .field = AT(final_mean), .has = TW_HAS_LAYERNORM,
      .flags = TW_TENSOR_STATS, .meaning = "the final norm's row means (LayerNorm)" },
    { .name = "final_rstd", .shape = "T", .field = AT(final_rstd), .has = TW_HAS_LAYERNORM,
      .flags = TW_TENSOR_STATS, .meaning = "the final norm's rows' 1/sqrt(var + eps) (LayerNorm)" },
    { .name = "final_rms",  .shape = "T", .field = AT(final_rms), .has = TW_HAS_RMSNORM,
      .flags = TW_TENSOR_STATS, .meaning = "the final norm's rows' sqrt(mean(x^2) + eps) (RMSNorm)" },
    { .name = "logits",     .shape = "TV", .field = AT(logits),
      .meaning = "final_norm head^T: row t scores the token after position t" },
};
const int tw_model_n_tensors = (int)(sizeof tw_model_tensors / sizeof tw_model_tensors[0]);
const int tw_model_n_tensors_before = 1;

#undef AT

int tw_model_has(const tw_model_config *c, const tw_tensor_info *t) {
    if (t->flags & TW_TENSOR_STATS && !c->final_norm) return 0;
    return tw_block_has(&c->block, t->has);
}

static float **model_slot(tw_model_state *s, const tw_tensor_info *t) {
    return (float **)(void *)((char *)s + t->field);
}

float *tw_model_tensor(const tw_model_state *s, const tw_tensor_info *t) {
    return *model_slot((tw_model_state *)(void *)s, t);   // read only
}

tw_dims tw_model_dims(const tw_model_config *c, long T, long S) {
    tw_dims d = tw_block_dims(&c->block, T, S);
    d.V = c->vocab;
    return d;
}

size_t tw_model_state_floats(const tw_model_config *c, int T_max, int S_max) {
    const tw_dims cap = tw_model_dims(c, T_max, S_max);
    size_t n = (size_t)c->n_layer * tw_block_acts_floats(&c->block, T_max, S_max);
    for (int i = 0; i < tw_model_n_tensors; i++)
        if (tw_model_has(c, &tw_model_tensors[i]))
            n += (size_t)tw_dims_count(&cap, tw_model_tensors[i].shape);
    return n;
}

tw_status tw_model_state_init(tw_model_state *s, const tw_model *m, int T_max, int cache_len) {
    memset(s, 0, sizeof *s);
    const tw_model_config *c = &m->cfg;
    if (T_max <= 0 || T_max > c->max_seq || cache_len < 0 || cache_len > c->max_seq) return TW_ERR_ARG;
    if (cache_len > 0 && cache_len < T_max) return TW_ERR_ARG;
    if (cache_len > 0 && c->block.mla_kv_rank > 0) return TW_ERR_ARG;   // no latent cache (yet)
    // With a cache the queries may attend to every position the cache holds.
    const int S_max = cache_len > 0 ? cache_len : T_max;
    s->T_max = T_max;
    s->S_max = S_max;
    s->n_floats = tw_model_state_floats(c, T_max, S_max);
    s->memory = calloc(s->n_floats, sizeof(float));
    s->layers = calloc((size_t)c->n_layer, sizeof(tw_block_acts));
    if (cache_len > 0) s->cache = calloc((size_t)c->n_layer, sizeof(tw_kv_cache));
    s->n_layer = c->n_layer;
    if (!s->memory || !s->layers || (cache_len > 0 && !s->cache)) {
        tw_model_state_free(s);
        return TW_ERR_NOMEM;
    }
    // The layout: the model's tensors before the layers, the layers, the model's tensors after.
    const tw_dims cap = tw_model_dims(c, T_max, S_max);
    float *p = s->memory;
    for (int i = 0; i < tw_model_n_tensors; i++) {
        const tw_tensor_info *t = &tw_model_tensors[i];
        if (i == tw_model_n_tensors_before)
            for (int l = 0; l < c->n_layer; l++)
                p += tw_block_acts_place(&s->layers[l], p, &c->block, T_max, S_max);
        if (!tw_model_has(c, t)) continue;
        *model_slot(s, t) = p;
        p += tw_dims_count(&cap, t->shape);
    }
    // Weights with other copies (int8) run the kernels of the level selected now (nn/linear.h).
    if (m->copies && tw_linear_copies_select(m->copies) != TW_OK) {
        tw_model_state_free(s);
        return TW_ERR_NOMEM;
    }
    for (int l = 0; l < c->n_layer && cache_len > 0; l++) {
        tw_status st = tw_kv_cache_init(&s->cache[l], cache_len, c->block.attn.n_kv_head,
                                        c->block.attn.head_dim);
        if (st != TW_OK) { tw_model_state_free(s); return st; }
    }
    return TW_OK;
}

void tw_model_state_free(tw_model_state *s) {
    for (int l = 0; l < s->n_layer && s->cache; l++) tw_kv_cache_free(&s->cache[l]);
    free(s->memory);
    free(s->layers);
    free(s->cache);
    memset(s, 0, sizeof *s);
}

// ---- forward ----

// x = tok_emb[tokens] (* sqrt(C)) (+ positions), for positions pos0 .. pos0+T-1, into s->embed.
// Uses s->final_norm as room for the sinusoidal table (it is written again at the end).
static tw_status embed_tokens(tw_model_state *s, const tw_model *m, const int *tokens, int T, int pos0) {
    const tw_model_config *c = &m->cfg;
    const int C = c->block.attn.d_model;
    const long n = (long)T * C;
    tw_status st = tw_embedding_forward(s->embed, tokens, m->tok_emb, T, c->vocab, C);
    if (st != TW_OK) return st;
    if (c->embed_scale) {
        // Vaswani et al. 3.4: scaling by sqrt(C) brings N(0, 1/C)-sized embeddings up to the
        // size of the sinusoids that are added next.
        const float scale = sqrtf((float)C);
        for (long i = 0; i < n; i++) s->embed[i] *= scale;
    }
    if (c->pos == TW_POS_SINUSOIDAL) {
        tw_posenc_sinusoidal(s->final_norm, T, C, pos0);
        tw_add_inplace(s->embed, s->final_norm, n);
    } else if (c->pos == TW_POS_LEARNED) {
        tw_posenc_learned_add(s->embed, m->pos_emb, T, C, pos0);
    }
    return TW_OK;
}

// all_logits 1: logits for every row; 0: only for the last one.
static tw_status model_forward(tw_model_state *s, const tw_model *m, const int *tokens, int T,
                               int pos0, int all_logits) {
    const tw_model_config *c = &m->cfg;
    const int C = c->block.attn.d_model, V = c->vocab, L = c->n_layer;
    if (T <= 0 || T > s->T_max || pos0 < 0) return TW_ERR_ARG;
    if (s->cache ? pos0 + T > s->S_max : pos0 != 0) return TW_ERR_ARG;
    tw_status st = embed_tokens(s, m, tokens, T, pos0);
    if (st != TW_OK) return st;

    // Layer l reads the stream layer l-1 left in its resid_post.
    const int H = c->block.attn.n_head;
    for (int l = 0; l < L; l++) {
        s->layers[l].attn.head_off = s->head_off ? s->head_off + (size_t)l * H : NULL;
        s->layers[l].attn.head_patch = s->head_patch ? s->head_patch + (size_t)l * T * H * c->block.attn.head_dim : NULL;
        tw_block_forward(s->layers[l].resid_post, &s->layers[l], s->cache ? &s->cache[l] : NULL,
                         l == 0 ? s->embed : s->layers[l - 1].resid_post, &c->block, &m->layers[l],
                         T, pos0);
        if (s->expert_count && c->block.moe_experts > 0)   // the router's choices, counted
            for (int e = 0; e < c->block.moe_experts; e++)
                s->expert_count[(size_t)l * c->block.moe_experts + e] += s->layers[l].moe.count[e];
    }
    const float *stream = s->layers[L - 1].resid_post;

    if (!c->final_norm)
        memcpy(s->final_norm, stream, (size_t)T * C * sizeof(float));
    else if (c->block.norm == TW_NORM_LAYER)
        tw_layernorm_forward(s->final_norm, s->final_mean, s->final_rstd, stream, m->final_w,
                             m->final_b, T, C, c->block.norm_eps);
    else
        tw_rmsnorm_forward(s->final_norm, s->final_rms, stream, m->final_w, T, C, c->block.norm_eps);

    // (The head may be int8, as every Linear weight: nn/linear.h.)
    if (all_logits)
        tw_linear_forward_weight(s->logits, s->final_norm, m->head, NULL, T, C, V);
    else   // generation needs only the next token after the last position
        tw_linear_forward_weight(s->logits + (size_t)(T - 1) * V,
                                 s->final_norm + (size_t)(T - 1) * C, m->head, NULL, 1, C, V);
    return TW_OK;
}

tw_status tw_model_forward(tw_model_state *s, const tw_model *m, const int *tokens, int T, int pos0) {
    return model_forward(s, m, tokens, T, pos0, 1);
}

tw_status tw_model_forward_next(tw_model_state *s, const tw_model *m, const int *tokens, int T,
                                int pos0) {
    return model_forward(s, m, tokens, T, pos0, 0);
}

// ---- training ----

tw_status tw_model_grads_init(tw_model_grads *g, const tw_model *m) {
    tw_status st = tw_model_init(g, &m->cfg);   // zeroed at init: zero gradients, the same layout
    if (st == TW_OK && g->n_floats != m->n_floats) { tw_model_free(g); return TW_ERR_ARG; }
    return st;
}

void tw_model_grads_free(tw_model_grads *g) { tw_model_free(g); }

void tw_model_grads_zero(tw_model_grads *g) {
    memset(g->memory, 0, (size_t)g->n_floats * sizeof(float));
}

float *tw_model_grad_of(const tw_model_grads *g, const tw_model *m, const float *p) {
    return p ? g->memory + (p - m->memory) : NULL;
}

int tw_model_param_index(const tw_model *m, const float *p) {
    for (int i = 0; i < m->n_params; i++)
        if (p && m->params[i].data == p) return i;
    return -1;
}

void tw_model_grads_freeze(tw_model_grads *g, int i, int frozen) {
    if (i < 0 || i >= g->n_params) return;
    tw_param *p = &g->params[i];
    if (frozen && !p->frozen) memset(p->data, 0, (size_t)p->count * sizeof(float));
    p->frozen = frozen != 0;
}

void tw_model_grads_zero_trained(tw_model_grads *g) {
    for (int i = 0; i < g->n_params; i++)
        if (!g->params[i].frozen)
            memset(g->params[i].data, 0, (size_t)g->params[i].count * sizeof(float));
}

// The gradient tensor at dp (one of g's own parameters' data, or NULL), or NULL when that
// parameter is frozen: what the backward is given to accumulate into.
static float *if_trained(const tw_model_grads *g, float *dp) {
    const int i = tw_model_param_index(g, dp);
    return i >= 0 && g->params[i].frozen ? NULL : dp;
}

// Layer l's weight gradients: the pointers of m->layers[l] moved into g, NULL for a frozen one.
static tw_block_grads block_grads(const tw_model_grads *g, const tw_model *m, int l) {
    const tw_block_weights *w = &m->layers[l];
    const tw_mha_weights *a = &w->attn;
#define G(p) if_trained(g, tw_model_grad_of(g, m, (p)))
    tw_block_grads d = {
        .norm1_w = G(w->norm1_w), .norm1_b = G(w->norm1_b),
        .attn = { .wq = G(a->wq.f32), .bq = G(a->bq), .wk = G(a->wk.f32), .bk = G(a->bk),
                  .wv = G(a->wv.f32), .bv = G(a->bv), .wo = G(a->wo.f32), .bo = G(a->bo),
                  .q_norm = G(a->q_norm), .k_norm = G(a->k_norm) },
        .norm2_w = G(w->norm2_w), .norm2_b = G(w->norm2_b),
        .ffn_w1 = G(w->ffn_w1.f32), .ffn_b1 = G(w->ffn_b1), .ffn_w2 = G(w->ffn_w2.f32),
        .ffn_b2 = G(w->ffn_b2), .ffn_gate = G(w->ffn_gate.f32), .ffn_up = G(w->ffn_up.f32),
        .ffn_down = G(w->ffn_down.f32),
        .moe = { .router = G(w->moe.router), .gate = G(w->moe.gate), .up = G(w->moe.up),
                 .down = G(w->moe.down), .s_gate = G(w->moe.s_gate), .s_up = G(w->moe.s_up),
                 .s_down = G(w->moe.s_down) },
        .mla = { .q_a = G(w->mla.q_a), .q_a_norm = G(w->mla.q_a_norm), .q_b = G(w->mla.q_b),
                 .kv_a = G(w->mla.kv_a), .kv_a_norm = G(w->mla.kv_a_norm), .kv_b = G(w->mla.kv_b),
                 .o = G(w->mla.o) },
    };
#undef G
    return d;
}

// The backward of embed_tokens: the token table (and a learned position table) collect d embed.
static tw_status embed_backward(tw_model_grads *g, tw_model_state *ds, const tw_model *m,
                                const int *tokens, int T) {
    const tw_model_config *c = &m->cfg;
    const int C = c->block.attn.d_model;
    // Positions are added in place: d embed already is the gradient of the scaled lookup too.
    if (c->pos == TW_POS_LEARNED && if_trained(g, g->pos_emb))
        tw_posenc_learned_backward(g->pos_emb, ds->embed, T, C, 0);
    if (!if_trained(g, g->tok_emb)) return TW_OK;   // frozen (the ids were checked)
    if (!c->embed_scale) return tw_embedding_backward(g->tok_emb, ds->embed, tokens, T, c->vocab, C);
    // The scaled lookup: row tokens[t] of the table receives sqrt(C) d embed[t] (ds->embed is
    // left as the gradient of embed; the ids were checked by tw_model_backward).
    const float scale = sqrtf((float)C);   // the forward's factor
    for (int t = 0; t < T; t++) {
        float *row = g->tok_emb + (size_t)tokens[t] * C;   // (C)
        const float *d = ds->embed + (size_t)t * C;        // (C)
        for (int i = 0; i < C; i++) row[i] += scale * d[i];
    }
    return TW_OK;
}

// Zeroes the gradient state before a sequence's backward, since every gradient accumulates, but
// for each layer's two attention tables of (H, T_max, S_max) floats, which are most of the state
// at long T and which no backward accumulates into: `scores` is the attention backward's
// per-head scratch (tw_sdpa_backward writes each row of it whole before reading it) and
// `pattern` is not used by the backward at all. No gradient depends on what they held before,
// and at long T zeroing them was most of the zeroing's cost (docs/performance.md).
// Zeroes ds->memory up to end, but the attention tables.
static void grad_state_zero_to(tw_model_state *ds, const tw_model *m, float *const end) {
    const int L = ds->n_layer;
    const size_t table = (size_t)m->cfg.block.attn.n_head * ds->T_max * ds->S_max;
    float *from = ds->memory;
    // The layers lie in order in memory, and in each, scores and pattern in that order (with
    // the tensors between them, if any, zeroed): block.h's table.
    for (int l = 0; l < L; l++) {
        float *skip[2] = { ds->layers[l].attn.scores, ds->layers[l].attn.pattern };
        if (skip[0] > skip[1]) { float *x = skip[0]; skip[0] = skip[1]; skip[1] = x; }
        for (int i = 0; i < 2; i++) {
            if (skip[i] == NULL || skip[i] < from || skip[i] + table > end) continue;
            memset(from, 0, (size_t)(skip[i] - from) * sizeof(float));
            from = skip[i] + table;
        }
    }
    if (end > from) memset(from, 0, (size_t)(end - from) * sizeof(float));
}

void tw_model_grad_state_zero(tw_model_state *ds, const tw_model *m) {
    grad_state_zero_to(ds, m, ds->memory + ds->n_floats);
}

void tw_model_grad_state_zero_but_logits(tw_model_state *ds, const tw_model *m) {
    float *const end = ds->memory + ds->n_floats;
    // The logits are the state's last tensor (tw_model_tensors); if a layout ever puts them
    // elsewhere, everything is zeroed, which is still right.
    const int logits_last = ds->logits + (size_t)ds->T_max * m->cfg.vocab == end;
    grad_state_zero_to(ds, m, logits_last ? ds->logits : end);
}

tw_status tw_model_backward(tw_model_grads *g, tw_model_state *ds, const tw_model_state *s,
                            const tw_model *m, const int *tokens, int T) {
    const tw_model_config *c = &m->cfg;
    const int C = c->block.attn.d_model, V = c->vocab, L = c->n_layer;
    if (T < 1 || T > s->T_max || T > ds->T_max || s->cache || ds->cache) return TW_ERR_ARG;
    if (ds->n_floats != s->n_floats || g->n_floats != m->n_floats || s->head_off || s->head_patch) return TW_ERR_ARG;
    for (int t = 0; t < T; t++)
        if (tokens[t] < 0 || tokens[t] >= V) return TW_ERR_SHAPE;
    // logits = final_norm head^T (a tied head's gradient lands in tok_emb's: same pointer).
    tw_linear_backward(ds->final_norm, if_trained(g, tw_model_grad_of(g, m, m->head.f32)), NULL,
                       ds->logits, s->final_norm, m->head.f32, T, C, V);
    float *d_stream = ds->layers[L - 1].resid_post;
    const float *stream = s->layers[L - 1].resid_post;
    if (!c->final_norm) {
        memcpy(d_stream, ds->final_norm, (size_t)T * C * sizeof(float));
    } else if (c->block.norm == TW_NORM_LAYER) {
        tw_layernorm_backward(d_stream, if_trained(g, g->final_w), if_trained(g, g->final_b),
                              ds->final_norm, stream, s->final_mean, s->final_rstd, m->final_w, T, C);
    } else {
        tw_rmsnorm_backward(d_stream, if_trained(g, g->final_w), ds->final_norm, stream,
                            s->final_rms, m->final_w, T, C);
    }
    // Layer l's input gradient is layer l-1's output gradient (or the embeddings').
    for (int l = L - 1; l >= 0; l--) {
        const tw_block_grads dw = block_grads(g, m, l);
        ds->layers[l].aux_weight = ds->aux_weight;   // each layer's load-balancing loss
        tw_block_backward(l > 0 ? ds->layers[l - 1].resid_post : ds->embed, &dw, &ds->layers[l],
                          ds->layers[l].resid_post, &s->layers[l], &c->block, &m->layers[l], T);
        if (ds->layer_done) ds->layer_done(ds->layer_ctx, l);
    }
    return embed_backward(g, ds, m, tokens, T);
}
