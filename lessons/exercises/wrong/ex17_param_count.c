// Wrong attempt at exercise 17 (make test builds it and requires the checker to reject it).
// The mistake: the attention counted as four C x C matrices, which is right for multi-head
// attention with H * D = C, but not with grouped-query attention (k and v have G heads, not H).
// The checker says: k and v: G*D x C each
#include "concepts.h"

void ex_count_params(ex_param_counts *out, const ex_model_config *c) {
    out->embed       = c->V * c->C;
    out->attn_layer  = 4 * c->C * c->C;
    out->mlp_layer   = 3 * c->F * c->C;
    out->norms_layer = 2 * c->C;
    out->final_norm  = c->C;
    out->lm_head     = c->tied ? 0 : c->V * c->C;
    out->total = out->embed + c->L * (out->attn_layer + out->mlp_layer + out->norms_layer) +
                 out->final_norm + out->lm_head;
}
