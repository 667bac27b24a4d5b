// step.h: one training step, the loop every trainer runs (llama2.c's train.py, nanoGPT, llm.c):
//   zero the gradients; forward and loss; backward; clip by the global norm; the learning rate
//   of this step from the warm-up + cosine schedule; AdamW on every parameter.
// The trainer owns what a step needs besides the model: the gradients, the activations and their
// gradients, and AdamW's two moments. Everything is computed from its inputs: the same weights,
// moments, step number and batch give the same bits, which is what makes a resumed run identical
// to an uninterrupted one.
#ifndef TW_TRAIN_H
#define TW_TRAIN_H
#include "core/status.h"
#include "nn/model.h"
#include "train/optim.h"

typedef struct {
    int   B, T;          // rows per batch, positions per row
    int   steps;         // the schedule's length: cosine decay from lr to min_lr over it
    int   warmup;        // linear warm-up steps (0: none)
    float lr, min_lr;    // equal: a constant rate
    float weight_decay;  // decoupled, on parameters of two or more dimensions only
    float beta1, beta2, eps;
    float clip;          // global-norm clipping threshold; 0 turns it off
} tw_train_config;

typedef struct {
    tw_model_grads g;        // the gradient of every parameter (same table as the model)
    tw_model_state s, ds;    // activations of one sequence and their gradients
    float *adam_m, *adam_v;  // (n_floats) AdamW's moments, in the parameters' layout
    float **grad_ptrs;       // (n_params) g.params[i].data, for the global norm
    long  *counts;           // (n_params)
    long   step;             // steps completed
    // The batch split into n_parts parts that run on separate threads (train/parallel.h);
    // 1: not split, tw_model_forward_backward over the whole batch (and the arrays below are NULL).
    int    n_parts;
    tw_model_grads *g_part;            // (n_parts - 1) the other parts' gradients
    tw_model_state *s_part, *ds_part;  // (n_parts) each part's activations and their gradients
} tw_trainer;

typedef struct {
    float loss;    // mean cross-entropy of the batch before the update
    float lr;      // the rate this step used
    float gnorm;   // global gradient norm before clipping
} tw_train_stats;

// Allocates for sequences of up to T_max positions. TW_ERR_NOMEM / TW_ERR_ARG.
tw_status tw_trainer_init(tw_trainer *t, const tw_model *m, int T_max);
void      tw_trainer_free(tw_trainer *t);   // safe on a zeroed struct
// The same, for steps whose batch is split into n_parts parts (1 .. 64) trained in parallel when
// the library is built with OpenMP (tw_model_forward_backward_split, train/parallel.h): for a given
// n_parts every step gives the same bits on any number of threads; against n_parts = 1 the
// gradients differ by one rounding of each element (the parts' sums are added at the end).
tw_status tw_trainer_init_split(tw_trainer *t, const tw_model *m, int T_max, int n_parts);

// One step on inputs, targets (B, T). Fills *st. If the loss or the gradient norm is NaN or Inf
// the weights and moments are left untouched and TW_ERR_ARG is returned (the caller can then
// look for the tensor that went bad: t->s holds the last sequence's activations, t->g the
// gradients). Other errors as tw_model_forward_backward.
tw_status tw_train_step(tw_train_stats *st, tw_trainer *t, tw_model *m, const int *inputs,
                        const int *targets, const tw_train_config *c);

// The second half of every step on the whole model, once a loss's backward has filled t->g: clip
// by the global norm (*gnorm: the norm before clipping), then, unless loss or *gnorm is NaN or Inf
// (TW_ERR_ARG, weights and moments untouched), AdamW at learning rate lr, and count the step.
// tw_train_step ends with it, and so do the distillation, DPO and GRPO steps.
tw_status tw_train_update(float *gnorm, tw_trainer *t, tw_model *m, float loss, float lr,
                          const tw_train_config *c);

#endif
