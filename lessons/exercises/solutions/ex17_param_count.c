// Exercise 17, a worked answer: one Linear layer holds n_out x n_in weights.
#include "concepts.h"

void ex_count_params(ex_param_counts *out, const ex_model_config *c) {
    out->embed       = c->V * c->C;
    out->attn_layer  = c->H * c->D * c->C          // q
                     + 2 * c->G * c->D * c->C      // k and v: only G heads
                     + c->C * c->H * c->D;         // o
    out->mlp_layer   = 3 * c->F * c->C;            // gate, up, down
    out->norms_layer = 2 * c->C;
    out->final_norm  = c->C;
    out->lm_head     = c->tied ? 0 : c->V * c->C;
    out->total = out->embed + c->L * (out->attn_layer + out->mlp_layer + out->norms_layer) +
                 out->final_norm + out->lm_head;
}
