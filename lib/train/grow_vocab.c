// grow_vocab.c: appending token ids to a model (see grow_vocab.h).
#include <string.h>
#include "train/grow_vocab.h"

void tw_mean_row(float *mean, const float *table, int V, int C) {
    for (int c = 0; c < C; c++) {
        double s = 0.0;
        for (int v = 0; v < V; v++) s += (double)table[(size_t)v * C + c];
        mean[c] = (float)(s / (double)V);
    }
}

// dst (V + n_new, C) = src (V, C) followed by n_new copies of its mean row.
static void grow_table(float *dst, const float *src, int V, int n_new, int C) {
    memcpy(dst, src, (size_t)V * C * sizeof *dst);
    float *first_new = dst + (size_t)V * C;
    tw_mean_row(first_new, src, V, C);
    for (int k = 1; k < n_new; k++) memcpy(first_new + (size_t)k * C, first_new, (size_t)C * sizeof *dst);
}

tw_status tw_model_grow_vocab(tw_model *out, const tw_model *m, int n_new) {
    memset(out, 0, sizeof *out);
    if (n_new < 1 || m->copies != NULL) return TW_ERR_ARG;
    tw_model_config c = m->cfg;
    c.vocab += n_new;
    tw_status st = tw_model_init(out, &c);
    if (st != TW_OK) return st;
    const int V = m->cfg.vocab;
    for (int i = 0; i < m->n_params; i++) {
        const tw_param *a = &m->params[i];
        tw_param *b = &out->params[i];
        // The same list in the same order (tw_model_init), only the vocabulary rows differ.
        if (strcmp(a->name, "tok_emb") == 0 || strcmp(a->name, "head") == 0)   // (V, C) tables
            grow_table(b->data, a->data, V, n_new, (int)a->shape[1]);
        else memcpy(b->data, a->data, (size_t)a->count * sizeof *a->data);
    }
    return TW_OK;
}
