// grow_vocab.h: a model with more token ids, for new special tokens (<|user|>, <|assistant|>,
// <|end|>: tokenize/special.h) before supervised fine-tuning.
//
// The grown model is the old one with n_new rows appended to the token embedding table (and to
// the classifier when it is separate from that table); every other parameter is copied. A new
// row is the mean of the old rows of its table (each coordinate summed in double over the V old
// rows, divided by V, rounded once to float). So:
//   - every old id's embedding and classifier row is unchanged, and its logit is the same float,
//     bit for bit, as the old model's (the same dot product of the same row with the same hidden
//     state); only the softmax over them changes, as the new ids join its denominator;
//   - a new id's logit, with a tied classifier, is about the mean of the old logits: the new
//     tokens start as likely as an average token, not as the most or least likely one.
#ifndef TW_GROW_VOCAB_H
#define TW_GROW_VOCAB_H
#include "core/status.h"
#include "nn/model.h"

// out = m with n_new more ids as described above (tw_model_init; free with tw_model_free).
// TW_ERR_ARG if n_new < 1 or m has int8 copies of its weights; TW_ERR_SHAPE, TW_ERR_NOMEM as
// tw_model_init. On failure *out is zeroed.
tw_status tw_model_grow_vocab(tw_model *out, const tw_model *m, int n_new);

// The mean of the rows of table (V, C), each coordinate summed in double and rounded once.
//   mean: (C)
void tw_mean_row(float *mean, const float *table, int V, int C);

#endif
