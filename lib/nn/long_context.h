// long_context.h: a model configuration set up to run past the context it was trained at, with
// one of the scaled RoPEs of nn/rope_scaling.h: what ./generate and ./train do with
// --rope-scaling KIND --rope-factor F [--rope-original L].
#ifndef TW_LONG_CONTEXT_H
#define TW_LONG_CONTEXT_H
#include "nn/model.h"
#include "nn/rope_scaling.h"

// Sets the blocks' scaling (trained context L = original_max_pos, or the model's max_seq when 0)
// and raises max_seq to ceil(F L), the positions the scaled model may now run. Returns TW_OK;
// TW_ERR_SHAPE if the model has no RoPE (nothing to scale; learned positions end at max_seq);
// TW_ERR_ARG if the scaling fails tw_rope_scaling_check or ceil(F L) exceeds max_seq_limit.
// Kind NONE changes nothing.
tw_status tw_model_config_set_rope_scaling(tw_model_config *c, tw_rope_scaling_kind kind,
                                           float factor, int original_max_pos, long max_seq_limit);

// The same with a whole scaling (as read from a config, betas included): its original_max_pos,
// or the model's max_seq when it is 0, is the trained context L.
tw_status tw_model_config_apply_rope_scaling(tw_model_config *c, const tw_rope_scaling *sc,
                                             long max_seq_limit);

#endif
