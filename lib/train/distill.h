// distill.h: knowledge distillation (Hinton, Vinyals & Dean 2015, "Distilling the Knowledge in a
// Neural Network"): a student learns from a teacher's whole next-token distribution, softened by
// a temperature tau, as well as from the hard label. Per counted position t (target not
// TW_IGNORE_INDEX):
//   loss_t = a tau^2 KL(softmax(zt_t / tau) || softmax(zs_t / tau)) + (1 - a) CE(zs_t, target_t)
// averaged over the counted positions. The tau^2 keeps the soft term's gradient the size of the
// hard one's as tau grows: d loss_t / d zs_t = a tau (q - p) + (1 - a) (softmax(zs_t) - onehot),
// with p = softmax(zt/tau), q = softmax(zs/tau). The teacher gets no gradient.
#ifndef TW_DISTILL_H
#define TW_DISTILL_H
#include "core/status.h"
#include "nn/model.h"
#include "train/step.h"

// The loss above over T positions, and (when dlogits is not NULL) its gradient scaled by dloss
// ADDED to dlogits. Each row's softmaxes and sums in double.
//   loss: one float (0 when no position counts)   dlogits: (T, V) or NULL
//   student, teacher: (T, V) logits   targets: (T) ids in [0, V) or TW_IGNORE_INDEX
//   a in [0, 1]   tau > 0
// TW_ERR_SHAPE for a target outside the vocabulary; TW_ERR_ARG for a or tau out of range.
tw_status tw_distill_loss(float *loss, float *dlogits, float dloss, const float *student,
                          const float *teacher, const int *targets, int T, int V, float a, float tau);

// ./train --teacher: the teacher's forward (no gradient) and the student's forward and backward
// with the loss above, for B sequences; ADDS the gradient to g and returns the batch's mean loss
// (over all its counted positions, rows together) in *loss. ts: a state of the teacher's for T
// positions. TW_ERR_SHAPE if the vocabularies differ or a token is out of range.
tw_status tw_distill_forward_backward(float *loss, tw_model_grads *g, tw_model_state *ds,
                                      tw_model_state *s, const tw_model *m, tw_model_state *ts,
                                      const tw_model *teacher, const int *tokens, const int *targets,
                                      int B, int T, float a, float tau);

// tw_train_step with the distillation loss (same clipping, schedule and AdamW; one part only).
tw_status tw_distill_train_step(tw_train_stats *st, tw_trainer *t, tw_model *m, tw_model_state *ts,
                                const tw_model *teacher, const int *inputs, const int *targets,
                                const tw_train_config *c, float a, float tau);

#endif
