// expert_counts.h: how many tokens the routers of a model with experts (nn/block.h's
// moe_experts) sent to each expert during training, per layer, summed over the steps since the
// last reset: what ./train prints at intervals to show the load balance (and what the
// load-balancing loss, --aux-coef, evens out). A token counts once for each of its k experts.
#ifndef TW_EXPERT_COUNTS_H
#define TW_EXPERT_COUNTS_H
#include "core/status.h"
#include "train/step.h"

typedef struct {
    int   n_layer, E, n_parts;
    long *part;    // (n_parts, n_layer, E) one table per forward state of the trainer
} tw_expert_counts;

// Zeroed tables for t's forward states (t->s, or each of t->s_part). TW_ERR_ARG if m has no
// experts, TW_ERR_NOMEM. tw_expert_counts_free is safe on a zeroed struct.
tw_status tw_expert_counts_init(tw_expert_counts *c, const tw_trainer *t, const tw_model *m);
void      tw_expert_counts_free(tw_expert_counts *c);
// on 1: t's forward states count every forward from now on (set before a training step);
// on 0: they stop (after it, so validation and sampling forwards are not counted).
void      tw_expert_counts_attach(tw_expert_counts *c, tw_trainer *t, int on);
// total: (n_layer, E) the counts summed over the parts.
void      tw_expert_counts_sum(const tw_expert_counts *c, long *total);
void      tw_expert_counts_reset(tw_expert_counts *c);

#endif
