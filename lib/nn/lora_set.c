// lora_set.c: a model's LoRA adapters (see lora_set.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "nn/lora_set.h"

static const char *const NAMES[TW_LORA_N_KINDS] = { "wq", "wk", "wv", "wo", "w1", "w2", "w3" };

const char *tw_lora_target_name(int kind) {
    return kind >= 0 && kind < TW_LORA_N_KINDS ? NAMES[kind] : "?";
}

int tw_lora_target_parse(const char *name) {
    for (int k = 0; k < TW_LORA_N_KINDS; k++)
        if (strcmp(name, NAMES[k]) == 0) return k;
    return -1;
}

tw_status tw_lora_targets_parse(int *targets, int *n_targets, const char *list, char *err,
                                size_t err_len) {
    *n_targets = 0;
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[16];
        if (len == 0 || len >= sizeof name) {
            tw_set_err(err, err_len, "'%s': an empty or overlong name; give names from wq, wk, wv, wo, "
                       "w1, w2, w3 separated by commas", list);
            return TW_ERR_ARG;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        const int k = tw_lora_target_parse(name);
        if (k < 0) {
            tw_set_err(err, err_len, "'%s' is not a target: give names from wq, wk, wv, wo, w1, w2, w3", name);
            return TW_ERR_ARG;
        }
        for (int j = 0; j < *n_targets; j++)
            if (targets[j] == k) {
                tw_set_err(err, err_len, "'%s' is given twice", name);
                return TW_ERR_ARG;
            }
        targets[(*n_targets)++] = k;
        if (!comma) return TW_OK;
        p = comma + 1;
    }
}

tw_status tw_lora_target_shape(int *out, int *in, const tw_model_config *c, int kind) {
    const int C = c->block.attn.d_model, D = c->block.attn.head_dim, F = c->block.ffn_hidden;
    const int HD = c->block.attn.n_head * D, GD = c->block.attn.n_kv_head * D;
    const int swiglu = c->block.ffn == TW_FFN_SWIGLU;
    // A block with experts has no single FFN matrix: only the attention ones can be targeted.
    if (c->block.moe_experts > 0 && kind != TW_LORA_WQ && kind != TW_LORA_WK && kind != TW_LORA_WV &&
        kind != TW_LORA_WO)
        return TW_ERR_SHAPE;
    if (c->block.mla_kv_rank > 0 && (kind == TW_LORA_WQ || kind == TW_LORA_WK ||
                                     kind == TW_LORA_WV || kind == TW_LORA_WO))
        return TW_ERR_SHAPE;   // latent attention has none of these matrices
    switch (kind) {
    case TW_LORA_WQ: *out = HD; *in = C; return TW_OK;
    case TW_LORA_WK: *out = GD; *in = C; return TW_OK;
    case TW_LORA_WV: *out = GD; *in = C; return TW_OK;
    case TW_LORA_WO: *out = C; *in = HD; return TW_OK;
    case TW_LORA_W1: *out = F; *in = C; return TW_OK;
    case TW_LORA_W2: *out = C; *in = F; return TW_OK;
    case TW_LORA_W3: *out = F; *in = C; return swiglu ? TW_OK : TW_ERR_SHAPE;
    default: return TW_ERR_SHAPE;
    }
}

// The target's tw_weight in layer l of m.
static tw_weight *target_weight(const tw_model *m, int l, int kind) {
    tw_block_weights *w = &m->layers[l];
    const int swiglu = m->cfg.block.ffn == TW_FFN_SWIGLU;
    switch (kind) {
    case TW_LORA_WQ: return &w->attn.wq;
    case TW_LORA_WK: return &w->attn.wk;
    case TW_LORA_WV: return &w->attn.wv;
    case TW_LORA_WO: return &w->attn.wo;
    case TW_LORA_W1: return swiglu ? &w->ffn_gate : &w->ffn_w1;
    case TW_LORA_W2: return swiglu ? &w->ffn_down : &w->ffn_w2;
    case TW_LORA_W3: return swiglu ? &w->ffn_up : NULL;
    default: return NULL;
    }
}

float *tw_lora_base_weight(const tw_model *m, int l, int kind) {
    const tw_weight *w = target_weight(m, l, kind);
    // The model owns its memory: the const pointer of tw_weight points into m->memory.
    return w ? m->memory + (w->f32 - m->memory) : NULL;
}

long tw_lora_set_floats(const tw_model_config *c, int r, const int *targets, int n_targets) {
    long per_layer = 0;
    for (int i = 0; i < n_targets; i++) {
        int out, in;
        if (tw_lora_target_shape(&out, &in, c, targets[i]) != TW_OK) return -1;
        per_layer += (long)r * (in + out);
    }
    return per_layer * c->n_layer;
}

tw_status tw_lora_set_init(tw_lora_set *s, const tw_model_config *c, int r, float alpha,
                           const int *targets, int n_targets) {
    memset(s, 0, sizeof *s);
    if (r < 1 || r > TW_LORA_MAX_R || !isfinite(alpha) || alpha <= 0.0f) return TW_ERR_ARG;
    if (n_targets < 1 || n_targets > TW_LORA_N_KINDS) return TW_ERR_ARG;
    for (int i = 0; i < n_targets; i++) {
        if (targets[i] < 0 || targets[i] >= TW_LORA_N_KINDS) return TW_ERR_ARG;
        for (int j = 0; j < i; j++)
            if (targets[j] == targets[i]) return TW_ERR_ARG;
        if (tw_lora_target_shape(&s->out[i], &s->in[i], c, targets[i]) != TW_OK) return TW_ERR_SHAPE;
        s->targets[i] = targets[i];
    }
    s->r = r;
    s->alpha = alpha;
    s->n_targets = n_targets;
    s->n_layer = c->n_layer;
    s->n_floats = tw_lora_set_floats(c, r, targets, n_targets);
    s->memory = calloc((size_t)s->n_floats, sizeof(float));
    s->lin = calloc((size_t)c->n_layer * n_targets, sizeof(tw_lora));
    if (!s->memory || !s->lin) { tw_lora_set_free(s); return TW_ERR_NOMEM; }
    float *p = s->memory;
    for (int l = 0; l < c->n_layer; l++)
        for (int i = 0; i < n_targets; i++) {
            tw_lora *a = &s->lin[l * n_targets + i];
            a->r = r;
            a->scale = alpha / (float)r;
            a->A = p; p += (long)r * s->in[i];
            a->B = p; p += (long)s->out[i] * r;
        }
    return TW_OK;
}

void tw_lora_set_free(tw_lora_set *s) {
    free(s->memory);
    free(s->lin);
    memset(s, 0, sizeof *s);
}

float *tw_lora_A(const tw_lora_set *s, int l, int i) {
    return s->memory + (s->lin[l * s->n_targets + i].A - s->memory);
}

float *tw_lora_B(const tw_lora_set *s, int l, int i) {
    return s->memory + (s->lin[l * s->n_targets + i].B - s->memory);
}

void tw_lora_set_randomize(tw_lora_set *s, uint64_t seed) {
    tw_rng rng;
    tw_rng_init(&rng, seed);
    for (int l = 0; l < s->n_layer; l++)
        for (int i = 0; i < s->n_targets; i++) {
            const float bound = 1.0f / sqrtf((float)s->in[i]);
            tw_rng_fill_uniform(&rng, tw_lora_A(s, l, i), (long)s->r * s->in[i], -bound, bound);
            memset(tw_lora_B(s, l, i), 0, (size_t)s->out[i] * s->r * sizeof(float));
        }
}

int tw_lora_set_fits(const tw_lora_set *s, const tw_model_config *c) {
    if (s->n_layer != c->n_layer) return 0;
    for (int i = 0; i < s->n_targets; i++) {
        int out, in;
        if (tw_lora_target_shape(&out, &in, c, s->targets[i]) != TW_OK) return 0;
        if (out != s->out[i] || in != s->in[i]) return 0;
    }
    return 1;
}

tw_status tw_lora_attach(tw_model *m, const tw_lora_set *s) {
    if (!tw_lora_set_fits(s, &m->cfg)) return TW_ERR_SHAPE;
    for (int l = 0; l < s->n_layer; l++)
        for (int i = 0; i < s->n_targets; i++)
            target_weight(m, l, s->targets[i])->lora = &s->lin[l * s->n_targets + i];
    return TW_OK;
}

void tw_lora_detach(tw_model *m) {
    for (int l = 0; l < m->cfg.n_layer; l++)
        for (int k = 0; k < TW_LORA_N_KINDS; k++) {
            tw_weight *w = target_weight(m, l, k);
            if (w) w->lora = NULL;
        }
}

tw_status tw_lora_merge_model(tw_model *m, const tw_lora_set *s, int sign) {
    if (!tw_lora_set_fits(s, &m->cfg)) return TW_ERR_SHAPE;
    for (int l = 0; l < s->n_layer; l++)
        for (int i = 0; i < s->n_targets; i++) {
            const tw_lora *a = &s->lin[l * s->n_targets + i];
            tw_lora_merge(tw_lora_base_weight(m, l, s->targets[i]), a->A, a->B, a->scale, sign,
                          s->in[i], s->out[i], s->r);
        }
    return TW_OK;
}
