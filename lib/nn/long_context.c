// long_context.c: a model configuration for running past its trained context (long_context.h).
#include <math.h>
#include "nn/long_context.h"

tw_status tw_model_config_set_rope_scaling(tw_model_config *c, tw_rope_scaling_kind kind,
                                           float factor, int original_max_pos, long max_seq_limit) {
    if (kind == TW_ROPE_SCALING_NONE) return TW_OK;
    if (c->block.attn.rope == TW_ROPE_NONE) return TW_ERR_SHAPE;
    const int L = original_max_pos > 0 ? original_max_pos : c->max_seq;
    const tw_rope_scaling sc = tw_rope_scaling_make(kind, factor, L);
    if (tw_rope_scaling_check(&sc) != TW_OK) return TW_ERR_ARG;
    const double reach = ceil((double)factor * L);
    if (reach > (double)max_seq_limit) return TW_ERR_ARG;
    c->block.attn.rope_scaling = sc;
    if (reach > c->max_seq) c->max_seq = (int)reach;
    return TW_OK;
}
