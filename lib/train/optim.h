// optim.h: what turns gradients into a training step: AdamW (Loshchilov & Hutter 2019), the
// weight-decay rule of nanoGPT and llama2.c's train.py, gradient clipping by the global norm, and
// the warm-up + cosine learning-rate schedule. The caller owns every buffer (parameters, moments,
// gradients); nothing here allocates.
#ifndef TW_OPTIM_H
#define TW_OPTIM_H

typedef struct {
    float lr;             // learning rate of this step (from tw_lr_schedule)
    float beta1, beta2;   // moment decay rates (0.9, 0.95 in nanoGPT / llama2.c; torch: 0.9, 0.999)
    float eps;            // added to sqrt(v_hat) (1e-8)
    float weight_decay;   // decoupled decay; pass 0 for tensors that tw_adamw_decays excludes
} tw_adamw_hparams;

// One AdamW step on n parameters, exactly torch.optim.AdamW's update (step counted from 1):
//   p *= 1 - lr * wd                                 decoupled decay, before the Adam update
//   m  = beta1 m + (1 - beta1) g,   v = beta2 v + (1 - beta2) g^2
//   p -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)
//   param, m, v: (n) updated in place (m, v start at 0)   grad: (n)
// Each element is computed in double and rounded to float once.
void tw_adamw_step(float *param, float *m, float *v, const float *grad, long n, int step,
                   const tw_adamw_hparams *hp);

// 1 if a parameter of ndim dimensions gets weight decay: every matrix (Linear weights and the
// embedding tables, ndim >= 2), never a vector (norm gains, LayerNorm betas, biases), as
// nanoGPT's configure_optimizers and llama2.c's train.py decide.
int tw_adamw_decays(int ndim);

// The global L2 norm of n_tensors gradient tensors, sqrt(sum of every squared element), summed
// in double.   grads[i]: (counts[i])
float tw_grad_global_norm(float *const *grads, const long *counts, int n_tensors);

// torch.nn.utils.clip_grad_norm_: if the global norm exceeds max_norm, scales every gradient by
// max_norm / (norm + 1e-6). max_norm <= 0 turns clipping off. Returns the norm before clipping.
float tw_clip_grad_norm(float *const *grads, const long *counts, int n_tensors, float max_norm);

// The learning rate of step (counted from 0), as llama2.c's train.py get_lr:
//   step < warmup:                 lr * step / warmup           (linear warm-up from 0)
//   warmup <= step <= decay_steps: min_lr + (lr - min_lr) (1 + cos(pi r)) / 2,
//                                  r = (step - warmup) / (decay_steps - warmup)
//   step > decay_steps:            min_lr
// lr == min_lr with warmup 0 gives a constant rate.
float tw_lr_schedule(int step, float lr, float min_lr, int warmup, int decay_steps);

#endif
