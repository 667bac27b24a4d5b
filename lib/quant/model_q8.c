// model_q8.c: int8 (Q8_0) copies of a model's Linear matrices, beside the fp32 ones (model_q8.h).
// The copies are what the forward pass multiplies by; the fp32 matrices stay (the embedding
// lookup reads tok_emb, the backward and lessons read them).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "quant/model_q8.h"

// Every Linear matrix of m in copy order: the params of kind TW_PARAM_WEIGHT, then tok_emb again
// when the head is tied. Fills up to n entries of out (NULL to count) and returns the count.
static int linear_matrices(const tw_param **out, const tw_model *m) {
    int n = 0;
    for (int i = 0; i < m->n_params; i++)
        if (m->params[i].kind == TW_PARAM_WEIGHT) {
            if (out) out[n] = &m->params[i];
            n++;
        }
    if (m->cfg.tied) {
        for (int i = 0; i < m->n_params; i++)
            if (strcmp(m->params[i].name, "tok_emb") == 0 && out) out[n] = &m->params[i];
        n++;
    }
    return n;
}

// Points each Linear weight of m at its copy (c == NULL: at none), in the copies' order: per layer
// wq, wk, wv, wo, then the FFN's gate, up, down or w1, w2 (the order of m->params); the head last.
static void point_weights(tw_model *m, tw_q8_copies *c) {
    int i = 0;
#define POINT(w) do { (w).q8 = c ? &c->mats[i] : NULL; (w).work = c ? &c->work : NULL; i++; } while (0)
    for (int l = 0; l < m->cfg.n_layer && m->layers; l++) {
        tw_block_weights *b = &m->layers[l];
        POINT(b->attn.wq); POINT(b->attn.wk); POINT(b->attn.wv); POINT(b->attn.wo);
        if (m->cfg.block.ffn == TW_FFN_SWIGLU) { POINT(b->ffn_gate); POINT(b->ffn_up); POINT(b->ffn_down); }
        else                                   { POINT(b->ffn_w1); POINT(b->ffn_w2); }
    }
    POINT(m->head);
#undef POINT
}

void tw_model_q8_free(tw_model *m) {
    if (!m->copies) return;
    point_weights(m, NULL);
    tw_q8_copies_free(m->copies);
    m->copies = NULL;
}

// Bytes of one copy's values (padded to a multiple of 4 so the scales after them are aligned)
// and of its scales.
static size_t values_bytes(long rows, long cols) { return ((size_t)(rows * cols) + 3) & ~(size_t)3; }
static size_t scales_bytes(long rows, long cols, int gs) { return (size_t)(rows * (cols / gs)) * sizeof(float); }

tw_status tw_model_q8_init(tw_model *m, int gs) {
    tw_model_q8_free(m);
    if (m->cfg.block.moe_experts > 0 || m->cfg.block.mla_kv_rank > 0)
        return TW_ERR_ARG;   // experts and latent attention are not quantized (yet)
    const tw_mha_config *a = &m->cfg.block.attn;
    const int widths[3] = { a->d_model, a->n_head * a->head_dim, m->cfg.block.ffn_hidden };
    for (int i = 0; i < 3; i++) {
        tw_status st = tw_quant_check_group(widths[i], gs);
        if (st != TW_OK) return st;
    }
    const int n = linear_matrices(NULL, m);
    const tw_param **mats = malloc((size_t)n * sizeof *mats);
    tw_q8_copies *c = calloc(1, sizeof *c);
    if (!mats || !c) { free(mats); free(c); return TW_ERR_NOMEM; }
    linear_matrices(mats, m);
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += values_bytes(mats[i]->shape[0], mats[i]->shape[1]) +
                 scales_bytes(mats[i]->shape[0], mats[i]->shape[1], gs);
    // The working memory: one activation row of the widest Linear input, shared by every layer
    // (one Linear runs at a time).
    int K_max = 0;
    for (int i = 0; i < 3; i++) if (widths[i] > K_max) K_max = widths[i];
    c->mats = calloc((size_t)n, sizeof *c->mats);
    c->memory = calloc(bytes, 1);
    c->work.xq = malloc((size_t)K_max);
    c->work.xs = malloc((size_t)K_max * sizeof(float));
    m->copies = c;
    if (!c->mats || !c->memory || !c->work.xq || !c->work.xs) {
        free(mats);
        tw_model_q8_free(m);
        return TW_ERR_NOMEM;
    }
    c->work.K_max = K_max;
    unsigned char *p = c->memory;
    for (int i = 0; i < n; i++) {
        const long rows = mats[i]->shape[0], cols = mats[i]->shape[1];
        tw_q8_matrix *q = &c->mats[i];
        q->rows = (int)rows;
        q->cols = (int)cols;
        q->gs = gs;
        q->q = (const int8_t *)p;
        p += values_bytes(rows, cols);
        q->s = (const float *)(const void *)p;
        p += scales_bytes(rows, cols, gs);
    }
    free(mats);
    c->n = n;
    c->gs = gs;
    point_weights(m, c);
    return TW_OK;
}

tw_status tw_model_quantize(tw_model *m, int gs) {
    tw_status st = tw_model_q8_init(m, gs);
    if (st != TW_OK) return st;
    tw_q8_copies *c = m->copies;
    const tw_param **mats = malloc((size_t)c->n * sizeof *mats);
    if (!mats) { tw_model_q8_free(m); return TW_ERR_NOMEM; }
    linear_matrices(mats, m);
    for (int i = 0; i < c->n && st == TW_OK; i++)
        st = tw_q8_quantize((int8_t *)(void *)(uintptr_t)c->mats[i].q, (float *)(uintptr_t)c->mats[i].s,
                            mats[i]->data, c->mats[i].rows, c->mats[i].cols, gs);
    free(mats);
    if (st != TW_OK) tw_model_q8_free(m);
    return st;
}

tw_q8_matrix *tw_model_q8_find(tw_model *m, const char *name) {
    if (!m->copies) return NULL;
    if (strcmp(name, "head") == 0) return &m->copies->mats[m->copies->n - 1];
    int k = 0;
    for (int i = 0; i < m->n_params; i++) {
        if (m->params[i].kind != TW_PARAM_WEIGHT) continue;
        if (strcmp(m->params[i].name, name) == 0) return &m->copies->mats[k];
        k++;
    }
    return NULL;
}
