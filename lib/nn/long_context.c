// long_context.c: a model configuration for running past its trained context (long_context.h).
#include <math.h>
#include "nn/long_context.h"

tw_status tw_model_config_apply_rope_scaling(tw_model_config *c, const tw_rope_scaling *sc,
                                             long max_seq_limit) {
    if (sc->kind == TW_ROPE_SCALING_NONE) return TW_OK;
    if (c->block.attn.rope == TW_ROPE_NONE) return TW_ERR_SHAPE;
    tw_rope_scaling s = *sc;
    if (s.original_max_pos <= 0) s.original_max_pos = c->max_seq;
    if (tw_rope_scaling_check(&s) != TW_OK) return TW_ERR_ARG;
    const double reach = ceil((double)s.factor * s.original_max_pos);
    if (reach > (double)max_seq_limit) return TW_ERR_ARG;
    c->block.attn.rope_scaling = s;
    if (reach > c->max_seq) c->max_seq = (int)reach;
    return TW_OK;
}

tw_status tw_model_config_set_rope_scaling(tw_model_config *c, tw_rope_scaling_kind kind,
                                           float factor, int original_max_pos, long max_seq_limit) {
    if (kind == TW_ROPE_SCALING_NONE) return TW_OK;
    const tw_rope_scaling sc = tw_rope_scaling_make(kind, factor, original_max_pos);
    return tw_model_config_apply_rope_scaling(c, &sc, max_seq_limit);
}
