// lora_step.h: one training step of LoRA adapters on a frozen model (nn/lora_set.h).
// How: the step runs the model's own forward and backward (train/forward_backward.h) on a working
// copy whose targeted weights are the merged W + (alpha/r) B A, recomputed from the frozen base
// at every step. The loss depends on A and B only through that sum, so the gradient G of each
// merged weight gives the adapters' gradients exactly (tw_lora_grads_from_weight_grad):
//   dA = s B^T G,   dB = s G A^T
// Then clipping by the adapters' global norm and AdamW on A and B only (both are matrices, so
// both get weight decay). The base model is only read.
// What a step saves against a full one: the base is frozen, so of its gradients only the targets'
// G are formed (tw_model_grads_freeze); the backward skips every other weight's dW product (the
// gradients of the activations still run through all of them), and neither the zeroing nor
// AdamW touches the frozen parameters (make bench-train prints LoRA step / full step).
#ifndef TW_LORA_STEP_H
#define TW_LORA_STEP_H
#include "core/status.h"
#include "nn/lora_set.h"
#include "train/step.h"

typedef struct {
    tw_lora_set g;            // the adapters' gradients, in their layout
    float *adam_m, *adam_v;   // (n_floats of the adapters) AdamW's moments
    long   step;              // steps completed
} tw_lora_trainer;

// Zeroed gradients and moments for the adapters ad. TW_ERR_NOMEM.
tw_status tw_lora_trainer_init(tw_lora_trainer *lt, const tw_lora_set *ad, const tw_model_config *c);
void      tw_lora_trainer_free(tw_lora_trainer *lt);

// Copies the base's targeted weights into work and merges ad into them: work is then the model
// base + adapters. work must be a copy of base (same configuration). TW_ERR_SHAPE otherwise.
tw_status tw_lora_refresh(tw_model *work, const tw_model *base, const tw_lora_set *ad);


// One step: work refreshed from base and ad, forward and backward of the batch through t (its
// gradients and activations; its AdamW moments are not used; its gradients but the targets' are
// frozen, so t serves LoRA steps from then on), the adapters' gradients, clipping,
// AdamW on ad; work refreshed again for the new adapters; lt->step and t->step count it.
// st as tw_train_step. If the loss or the
// norm is not finite, ad and the moments are left untouched and TW_ERR_ARG is returned.
tw_status tw_lora_train_step(tw_train_stats *st, tw_lora_trainer *lt, tw_trainer *t, tw_model *work,
                             const tw_model *base, tw_lora_set *ad, const int *inputs,
                             const int *targets, const tw_train_config *c);

// The adapters' gradients (written to g, in the adapters' layout) from the gradients of the merged
// weights in t->g (dA = s B^T G, dB = s G A^T): for steps whose loss is not tw_model_forward_backward's
// (train/dpo_step.h, train/grpo.h).
void tw_lora_adapter_grads(tw_lora_set *g, const tw_trainer *t, const tw_model *work, const tw_lora_set *ad);

// The second half of every adapters-only step, once a loss's backward has filled t->g for work =
// base + ad: the adapters' gradients, clipped by their global norm (*gnorm, before clipping); then,
// unless loss or *gnorm is NaN or Inf (TW_ERR_ARG, ad and the moments untouched), AdamW on ad at
// learning rate lr, the step counted in lt->step and t->step, and work refreshed for the new ad.
// tw_lora_train_step ends with it, and so do the DPO and GRPO steps with --lora.
tw_status tw_lora_update(float *gnorm, tw_lora_trainer *lt, tw_trainer *t, tw_model *work,
                         const tw_model *base, tw_lora_set *ad, float loss, float lr,
                         const tw_train_config *c);

#endif
