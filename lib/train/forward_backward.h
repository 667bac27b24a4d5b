// forward_backward.h: the loss of a batch of sequences, and its gradient (each sequence forward,
// its cross-entropy, and the model's backward from the gradient of the logits).
#ifndef TW_FORWARD_BACKWARD_H
#define TW_FORWARD_BACKWARD_H
#include "core/status.h"
#include "nn/model.h"

// Forward only: the mean cross-entropy (train/loss.h) over the B*T positions whose target is not
// TW_IGNORE_INDEX.
//   loss: one float   s: a state of tw_model_state_init(s, m, T_max >= T, 0) (no cache)
//   tokens, targets: (B, T); targets[b*T + t] is the token that follows tokens[b*T + t]
// Returns TW_ERR_SHAPE for a token or target outside the vocabulary and TW_ERR_ARG for B < 1,
// T out of range or a state with a cache. s->logits holds the last sequence's probabilities.
tw_status tw_model_loss(float *loss, tw_model_state *s, const tw_model *m,
                        const int *tokens, const int *targets, int B, int T);

// Forward, loss and backward of every sequence: ADDS to g the gradient of loss_scale * (tw_model_loss's mean loss) and
// returns that mean loss, unscaled, in *loss. Accumulating k micro-batches: zero g once and call
// this k times with loss_scale = 1/k, which gives the gradient of the mean of their mean losses.
//   g: accumulated into   ds: the gradient of every activation, in the activations' own layout:
//   make it exactly as s, tw_model_state_init(ds, m, T_max, 0); it is overwritten, and holds the
//   last sequence's gradients on return (ds->logits the gradient of the logits, ds->layers[l].q
//   that of layer l's queries, ...; see tw_block_backward for the few exceptions)
//   s, tokens, targets, B, T: as for tw_model_loss; TW_ERR_ARG if s->head_off is set (the
//   backward does not model an ablation)
tw_status tw_model_forward_backward(float *loss, tw_model_grads *g, tw_model_state *ds,
                                    tw_model_state *s, const tw_model *m, const int *tokens,
                                    const int *targets, int B, int T, float loss_scale);

#endif
