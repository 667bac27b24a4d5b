// loss.h: the training loss of a language model: cross-entropy of the next token over the
// vocabulary, fused with the softmax (torch.nn.functional.cross_entropy with reduction='mean'
// and ignore_index).
#ifndef TW_LOSS_H
#define TW_LOSS_H
#include "core/status.h"

// The target id that marks a position without a target (padding), as PyTorch's default.
#define TW_IGNORE_INDEX (-100)

// loss = mean over the positions t with targets[t] != ignore_index of
//        -log softmax(logits[t])[targets[t]] = logsumexp(logits[t]) - logits[t][targets[t]].
//   loss: one float   losses: (T) or NULL: each position's loss (0 at ignored positions)
//   probs: (T, V) receives softmax(logits) (kept for the backward); it may alias logits
//   logits: (T, V)   targets: (T) ids in [0, V), or ignore_index
// The log-sum-exp is taken after subtracting the row maximum and summed in double, so logits of
// any finite size are safe. If every position is ignored the loss is 0 (PyTorch returns NaN) and
// the backward adds nothing. Returns TW_ERR_SHAPE, writing nothing, if a target is out of range.
tw_status tw_cross_entropy_forward(float *loss, float *losses, float *probs, const float *logits,
                                   const int *targets, int T, int V, int ignore_index);

// Backward of the mean loss, fused with the softmax:
//   dlogits[t] += dloss / n * (probs[t] - onehot(targets[t]))   for every counted position t,
// where n is the number of positions with a target; ignored positions get nothing.
//   dlogits: (T, V)   dloss: upstream gradient of the loss (1 for the loss itself)
//   probs: (T, V) from the forward   targets: (T)
// dlogits must not alias probs. Returns TW_ERR_SHAPE, writing nothing, on an out-of-range target.
tw_status tw_cross_entropy_backward(float *dlogits, float dloss, const float *probs,
                                    const int *targets, int T, int V, int ignore_index);

// The same gradient written (=) instead of added: the bits that tw_cross_entropy_backward adds onto
// a zeroed dlogits, ignored positions' rows 0, so the caller need not zero dlogits first (that
// memset and the read back of the zeros were two of the four passes over a stories15M row of
// 32000 floats: lib/train/forward_backward.c). Same contract otherwise.
tw_status tw_cross_entropy_grad(float *dlogits, float dloss, const float *probs,
                                const int *targets, int T, int V, int ignore_index);

#endif
