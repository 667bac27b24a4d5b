// train_parallel.h: a batch's backward split into parts that run on separate threads.
// tw_model_backward runs a batch's sequences one after another through one state. Here the batch
// is cut into n_parts runs of whole sequences, each a tw_model_backward call of its own (a
// micro-batch, weighted by its share of the targets), with its own states and, but for the first,
// its own gradient buffer; the parts run in parallel when the library is built with OpenMP
// (`make OMP=1`), one part per thread, and their gradients are then added into g in part order.
// The split, not the thread count, decides every sum's order: for a given n_parts the result is
// bit-identical on 1 or more threads. Against tw_model_backward it differs by rounding only
// (the parts' gradients are summed separately, then added: tests/test_train_simd.c bounds it).
#ifndef TW_TRAIN_PARALLEL_H
#define TW_TRAIN_PARALLEL_H
#include "nn/model.h"

// As tw_model_backward (loss, g accumulated into, tokens, targets, B, T, loss_scale), with
//   g_part: (n_parts - 1) gradient buffers of tw_model_grads_init(.., m); overwritten
//   ds, s:  (n_parts) states each, made as tw_model_backward's; overwritten
// Part p takes sequences [p B / n_parts, (p + 1) B / n_parts) (none when B < n_parts for some p).
// Returns what tw_model_backward returns for the first part that fails, TW_ERR_ARG for
// n_parts < 1; g is then unspecified.
tw_status tw_model_backward_split(float *loss, tw_model_grads *g, tw_model_grads *g_part,
                                  tw_model_state *ds, tw_model_state *s, const tw_model *m,
                                  const int *tokens, const int *targets, int B, int T,
                                  float loss_scale, int n_parts);

#endif
