// seq_logprob.h: the log-probability a model gives a whole completion, log pi(y | x), the
// quantity preference learning compares (DPO, train/dpo.h):
//   log pi(y | x) = sum over the completion's tokens y_j of log softmax(logits at y_j's position)[y_j]
// The prompt x is read but its tokens are not counted. As for the cross-entropy (train/loss.h),
// a position whose target is TW_IGNORE_INDEX does not count, so one sequence x ++ y, its targets
// shifted by one and the prompt's set to TW_IGNORE_INDEX (tw_seq_targets), gives exactly the sum.
// This is minus the *summed* cross-entropy: a mean would make a long completion weigh as much as
// a short one, which is not the probability of the completion.
#ifndef TW_SEQ_LOGPROB_H
#define TW_SEQ_LOGPROB_H
#include "core/status.h"
#include "nn/model.h"

// The model's inputs and targets for prompt x (n_prompt >= 1 tokens) followed by completion y
// (n_completion >= 1 tokens): T = n_prompt + n_completion - 1 positions (the last token is only a
// target). inputs[t] = (x ++ y)[t]; targets[t] = (x ++ y)[t + 1] if that token is in y, else
// TW_IGNORE_INDEX. Returns T.   inputs, targets: (n_prompt + n_completion - 1)
int tw_seq_targets(int *inputs, int *targets, const int *prompt, int n_prompt, const int *completion,
                   int n_completion);

// logp = sum over the T positions with a target of log softmax(logits[t])[targets[t]], summed in
// double (each row's log-sum-exp after subtracting its maximum: finite logits of any size are safe).
//   logp: one double   probs: (T, V) receives softmax(logits) for the backward; may alias logits
//   logits: (T, V)   targets: (T) ids in [0, V) or TW_IGNORE_INDEX
// TW_ERR_SHAPE, with nothing written, for a target out of range.
tw_status tw_seq_logprob_forward(double *logp, float *probs, const float *logits, const int *targets,
                                 int T, int V);

// Backward: dlogits[t] += dlogp * (onehot(targets[t]) - probs[t]) at every counted position
// (d log softmax(z)[y] / dz = onehot(y) - softmax(z)); ignored positions get nothing.
//   dlogits: (T, V), must not alias probs   dlogp: the upstream gradient of logp (a scalar)
//   probs: (T, V) from the forward   targets: (T)
tw_status tw_seq_logprob_backward(float *dlogits, float dlogp, const float *probs, const int *targets,
                                  int T, int V);

// The model's log pi(completion | prompt) for one sequence: forward of inputs (T) into s, then
// tw_seq_logprob_forward; s->logits then hold the probabilities (for tw_model_seq_logprob_backward).
//   s: tw_model_state_init(s, m, T_max >= T, 0)   inputs, targets: (T) as tw_seq_targets makes them
tw_status tw_model_seq_logprob(double *logp, tw_model_state *s, const tw_model *m, const int *inputs,
                               const int *targets, int T);

// ADDS to g the gradient of dlogp * log pi, given s from tw_model_seq_logprob on the same inputs.
// ds as for tw_model_backward (overwritten).
tw_status tw_model_seq_logprob_backward(tw_model_grads *g, tw_model_state *ds, const tw_model_state *s,
                                        const tw_model *m, const int *inputs, const int *targets, int T,
                                        float dlogp);

#endif
