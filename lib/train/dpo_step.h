// dpo_step.h: one training step of DPO (train/dpo.h) on a batch of preference pairs
// (train/pairs.h), the loop of tw_train_step with another loss:
//   zero the gradients; for each pair of the batch: log pi of the chosen and of the rejected
//   completion (two forwards, train/seq_logprob.h), the pair's loss with the reference's
//   log-probabilities, and the backward of both sequences scaled by d loss / d log pi / B;
//   clip by the global norm; AdamW.
// The reference is frozen, so its log-probabilities are constants: they are computed once, for
// every pair, before training (tw_dpo_reference), and no copy of the reference is kept.
#ifndef TW_DPO_STEP_H
#define TW_DPO_STEP_H
#include "core/status.h"
#include "nn/lora_set.h"
#include "train/lora_step.h"
#include "train/pairs.h"
#include "train/step.h"

typedef struct {
    tw_model_state s_rejected;   // the rejected completion's activations (the trainer's s: the chosen's)
    int *in_w, *tg_w, *in_l, *tg_l;   // (T_max) inputs and targets of the chosen and the rejected
    int  T_max;
} tw_dpo_scratch;

typedef struct {
    float loss;       // mean DPO loss over the step's pairs, before the update
    float margin;     // mean reward margin z (dpo.h)
    float accuracy;   // share of the step's pairs with z > 0
    float lr, gnorm;  // as tw_train_stats
} tw_dpo_stats;

// Room for pairs of up to T_max positions (tw_pairs_read's max_seq). TW_ERR_NOMEM.
tw_status tw_dpo_scratch_init(tw_dpo_scratch *d, const tw_model *m, int T_max);
void      tw_dpo_scratch_free(tw_dpo_scratch *d);   // safe on a zeroed struct

// ref: (p->n, 2) receives log pi_ref(chosen | prompt) and log pi_ref(rejected | prompt) of every
// pair under model `ref` (any model of the same vocabulary whose context holds the pairs).
tw_status tw_dpo_reference(double *ref, tw_dpo_scratch *d, const tw_model *ref_model, const tw_pairs *p);

// ADDS to g the gradient of the mean DPO loss of pairs idx[0 .. B-1] of p under model m, and
// fills st's loss, margin and accuracy. t's s and ds are the activations (overwritten).
tw_status tw_dpo_forward_backward(tw_dpo_stats *st, tw_model_grads *g, tw_trainer *t, tw_dpo_scratch *d,
                                  const tw_model *m, const tw_pairs *p, const long *idx, int B,
                                  const double *ref, float beta);

// One step of full training (every weight of m), as tw_train_step: if the loss or the norm is not
// finite, nothing is updated and TW_ERR_ARG is returned. c: lr schedule, AdamW, clip (B, T unused).
tw_status tw_dpo_train_step(tw_dpo_stats *st, tw_trainer *t, tw_dpo_scratch *d, tw_model *m,
                            const tw_pairs *p, const long *idx, int B, const double *ref, float beta,
                            const tw_train_config *c);

// One step of LoRA adapters ad on the frozen base (work = base + ad, as tw_lora_train_step).
tw_status tw_dpo_lora_train_step(tw_dpo_stats *st, tw_lora_trainer *lt, tw_trainer *t, tw_dpo_scratch *d,
                                 tw_model *work, const tw_model *base, tw_lora_set *ad, const tw_pairs *p,
                                 const long *idx, int B, const double *ref, float beta,
                                 const tw_train_config *c);

#endif
