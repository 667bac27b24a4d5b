// expert_counts.c: the per-expert token counts of training (expert_counts.h), kept by the model
// forward itself (tw_model_state.expert_count, nn/model.h) in one table per forward state.
#include <stdlib.h>
#include <string.h>
#include "train/expert_counts.h"

tw_status tw_expert_counts_init(tw_expert_counts *c, const tw_trainer *t, const tw_model *m) {
    memset(c, 0, sizeof *c);
    if (m->cfg.block.moe_experts < 1) return TW_ERR_ARG;
    c->n_layer = m->cfg.n_layer;
    c->E = m->cfg.block.moe_experts;
    c->n_parts = t->n_parts > 1 ? t->n_parts : 1;
    c->part = calloc((size_t)c->n_parts * c->n_layer * c->E, sizeof *c->part);
    return c->part ? TW_OK : TW_ERR_NOMEM;
}

void tw_expert_counts_free(tw_expert_counts *c) {
    free(c->part);
    memset(c, 0, sizeof *c);
}

void tw_expert_counts_attach(tw_expert_counts *c, tw_trainer *t, int on) {
    const size_t table = (size_t)c->n_layer * c->E;
    if (t->n_parts > 1)
        for (int p = 0; p < c->n_parts; p++) t->s_part[p].expert_count = on ? c->part + p * table : NULL;
    else
        t->s.expert_count = on ? c->part : NULL;
}

void tw_expert_counts_sum(const tw_expert_counts *c, long *total) {
    const size_t table = (size_t)c->n_layer * c->E;
    memset(total, 0, table * sizeof *total);
    for (int p = 0; p < c->n_parts; p++)
        for (size_t i = 0; i < table; i++) total[i] += c->part[p * table + i];
}

void tw_expert_counts_reset(tw_expert_counts *c) {
    memset(c->part, 0, (size_t)c->n_parts * c->n_layer * c->E * sizeof *c->part);
}
