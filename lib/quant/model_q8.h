// model_q8.h: int8 (Q8_0) copies of a model's Linear matrices, beside the fp32 ones. The copies
// live in the model's tw_linear_copies (nn/linear.h: tw_q8_copies of quant/q8_0.h), and every
// tw_weight of the layers and the head points at its own copy, so the forward pass runs each
// Linear layer in int8 (the Linear layer is the only component that knows, nn/linear.h), while
// embeddings and norms stay fp32. A model state made afterwards picks the int8 kernels of the
// level tw_simd_init selected (tw_linear_copies_select). The kernels and the one quantized
// activation row belong to the model's copies, not to a state: the state made last decides the
// level for every state of that model, and two states of one int8 model must not run at the
// same time in two threads.
#ifndef TW_MODEL_Q8_H
#define TW_MODEL_Q8_H
#include "core/status.h"
#include "nn/model.h"
#include "quant/q8_0.h"

// Allocates zeroed Q8_0 copies, in groups of gs, of every Linear matrix (attention projections,
// FFN matrices, head; a tied head gets its own copy of tok_emb) into m->copies, with the int8
// working memory they run with, and points the layers' and the head's tw_weight at them.
// m->copies->mats is in the order of m->params, then the head when tied.
// TW_ERR_SHAPE if gs does not divide every input width (C, H*D, F), TW_ERR_ARG for gs <= 0,
// TW_ERR_NOMEM. Replaces copies made before. Make model states after this call.
tw_status tw_model_q8_init(tw_model *m, int gs);
// tw_model_q8_init, then each copy quantized from its fp32 matrix (tw_q8_quantize). TW_ERR_ARG if
// a weight is NaN or Inf (no copies are left then).
tw_status tw_model_quantize(tw_model *m, int gs);
// The copy of the Linear matrix named as in m->params ("layers.0.attn.wq", "head"); NULL if the
// model has no copies or no such matrix. Its q and s may be written (they are the model's).
tw_q8_matrix *tw_model_q8_find(tw_model *m, const char *name);
// Drops the copies (the model is fp32 again). Safe without copies; tw_model_free releases them too.
void tw_model_q8_free(tw_model *m);

#endif
