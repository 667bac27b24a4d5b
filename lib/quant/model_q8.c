// model_q8.c: int8 (Q8_0) copies of a model's Linear matrices, beside the fp32 ones (model.h).
// The copies are what the forward pass multiplies by when a state has int8 working memory; the
// fp32 matrices stay (the embedding lookup reads tok_emb, and lessons compare the two).
#include <stdlib.h>
#include <string.h>
#include "nn/model.h"

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

void tw_model_q8_free(tw_model *m) {
    free(m->q8);
    free(m->q8_memory);
    m->q8 = NULL;
    m->q8_memory = NULL;
    m->n_q8 = 0;
    m->head_q8 = NULL;
    m->q8_group = 0;
    for (int l = 0; l < m->cfg.n_layer && m->layers; l++) {
        m->layers[l].attn.q8 = NULL;
        m->layers[l].ffn_q8 = NULL;
    }
}

// Bytes of one copy's values (padded to a multiple of 4 so the scales after them are aligned)
// and of its scales.
static size_t values_bytes(long rows, long cols) { return ((size_t)(rows * cols) + 3) & ~(size_t)3; }
static size_t scales_bytes(long rows, long cols, int gs) { return (size_t)(rows * (cols / gs)) * sizeof(float); }

tw_status tw_model_q8_init(tw_model *m, int gs) {
    tw_model_q8_free(m);
    const tw_mha_config *a = &m->cfg.block.attn;
    const int widths[3] = { a->d_model, a->n_head * a->head_dim, m->cfg.block.ffn_hidden };
    for (int i = 0; i < 3; i++) {
        tw_status st = tw_quant_check_group(widths[i], gs);
        if (st != TW_OK) return st;
    }
    const int n = linear_matrices(NULL, m);
    const tw_param **mats = malloc((size_t)n * sizeof *mats);
    if (!mats) return TW_ERR_NOMEM;
    linear_matrices(mats, m);
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += values_bytes(mats[i]->shape[0], mats[i]->shape[1]) +
                 scales_bytes(mats[i]->shape[0], mats[i]->shape[1], gs);
    m->q8 = calloc((size_t)n, sizeof *m->q8);
    m->q8_memory = calloc(bytes, 1);
    if (!m->q8 || !m->q8_memory) { free(mats); tw_model_q8_free(m); return TW_ERR_NOMEM; }
    unsigned char *p = m->q8_memory;
    for (int i = 0; i < n; i++) {
        const long rows = mats[i]->shape[0], cols = mats[i]->shape[1];
        tw_q8_matrix *q = &m->q8[i];
        q->rows = (int)rows;
        q->cols = (int)cols;
        q->gs = gs;
        q->q = (const int8_t *)p;
        p += values_bytes(rows, cols);
        q->s = (const float *)(const void *)p;
        p += scales_bytes(rows, cols, gs);
    }
    free(mats);
    m->n_q8 = n;
    m->q8_group = gs;
    // Per layer, in params order: wq, wk, wv, wo, then the FFN's two or three; the head last.
    const int per_layer = 4 + (m->cfg.block.ffn == TW_FFN_SWIGLU ? 3 : 2);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        m->layers[l].attn.q8 = &m->q8[l * per_layer];
        m->layers[l].ffn_q8 = &m->q8[l * per_layer + 4];
    }
    m->head_q8 = &m->q8[n - 1];
    return TW_OK;
}

tw_status tw_model_quantize(tw_model *m, int gs) {
    tw_status st = tw_model_q8_init(m, gs);
    if (st != TW_OK) return st;
    const tw_param **mats = malloc((size_t)m->n_q8 * sizeof *mats);
    if (!mats) { tw_model_q8_free(m); return TW_ERR_NOMEM; }
    linear_matrices(mats, m);
    for (int i = 0; i < m->n_q8 && st == TW_OK; i++)
        st = tw_q8_quantize((int8_t *)(void *)(uintptr_t)m->q8[i].q, (float *)(uintptr_t)m->q8[i].s,
                            mats[i]->data, m->q8[i].rows, m->q8[i].cols, gs);
    free(mats);
    if (st != TW_OK) tw_model_q8_free(m);
    return st;
}

tw_q8_matrix *tw_model_q8_find(tw_model *m, const char *name) {
    if (!m->q8) return NULL;
    if (strcmp(name, "head") == 0) return (tw_q8_matrix *)(uintptr_t)m->head_q8;
    int k = 0;
    for (int i = 0; i < m->n_params; i++) {
        if (m->params[i].kind != TW_PARAM_WEIGHT) continue;
        if (strcmp(m->params[i].name, name) == 0) return &m->q8[k];
        k++;
    }
    return NULL;
}
