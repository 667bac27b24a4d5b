// parallel.h: a batch's backward split into parts that run on separate threads.
// tw_model_forward_backward runs a batch's sequences one after another through one state. Here the batch
// is cut into n_parts runs of whole sequences, each a tw_model_forward_backward call of its own (a
// micro-batch, weighted by its share of the targets), with its own states and, but for the first,
// its own gradient buffer; the parts run in parallel when the library is built with OpenMP
// (`make OMP=1`), one part per thread, and their gradients are then added into g in part order.
// The split, not the thread count, decides every sum's order: for a given n_parts the result is
// bit-identical on 1 or more threads. Against tw_model_forward_backward it differs by rounding only
// (the parts' gradients are summed separately, then added: tests/test_train_simd.c bounds it).
#ifndef TW_TRAIN_PARALLEL_H
#define TW_TRAIN_PARALLEL_H
#include "nn/model.h"
#include "train/forward_backward.h"
#include "train/optim.h"

// As tw_model_forward_backward (loss, g accumulated into, tokens, targets, B, T, loss_scale), with
//   g_part: (n_parts - 1) gradient buffers of tw_model_grads_init(.., m); overwritten
//   ds, s:  (n_parts) states each, made as tw_model_forward_backward's; overwritten
// Part p takes sequences [p B / n_parts, (p + 1) B / n_parts) (none when B < n_parts for some p).
// Returns what tw_model_forward_backward returns for the first part that fails, TW_ERR_ARG for
// n_parts < 1; g is then unspecified.
tw_status tw_model_forward_backward_split(float *loss, tw_model_grads *g, tw_model_grads *g_part,
                                  tw_model_state *ds, tw_model_state *s, const tw_model *m,
                                  const int *tokens, const int *targets, int B, int T,
                                  float loss_scale, int n_parts);

// As tw_model_loss (loss, tokens, targets, B, T) with the batch cut into n_parts parts as above,
// part p run forward through s[p] (n_parts states of tw_model_state_init(.., m, T_max >= T, 0)),
// in parallel with OpenMP. The parts' summed losses are combined in double in part order: the
// same bits on any number of threads, and within a rounding of tw_model_loss's.
tw_status tw_model_loss_split(float *loss, tw_model_state *s, const tw_model *m, const int *tokens,
                              const int *targets, int B, int T, int n_parts);

// AdamW (tw_adamw_step) on every parameter of m with gradient g (same table), moments adam_m and
// adam_v (n_floats each, in the parameters' layout), step counted from 1; hp->weight_decay goes
// to the parameters tw_adamw_decays names, 0 to the others. The update is elementwise, so it is
// shared among OpenMP threads in blocks of elements: the same bits on any number of threads.
void tw_adamw_step_model(tw_model *m, float *adam_m, float *adam_v, const tw_model_grads *g,
                         int step, const tw_adamw_hparams *hp);

#endif
