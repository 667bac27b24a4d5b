// embedding.h: token embedding lookup (torch.nn.Embedding).
#ifndef TW_EMBEDDING_H
#define TW_EMBEDDING_H
#include "core/status.h"

// out[t] = table[ids[t]].
//   out: (T, C)   ids: (T)   table: (V, C)
// Returns TW_ERR_SHAPE (and leaves out untouched) if any id is outside [0, V).
tw_status tw_embedding_forward(float *out, const int *ids, const float *table, int T, int V, int C);

// Backward of the lookup: dtable[ids[t]] += dout[t] (a scatter-add: a token that appears several
// times collects the sum of its rows' gradients). The ids carry no gradient.
//   dtable: (V, C)   dout: (T, C)   ids: (T)
// Returns TW_ERR_SHAPE (and leaves dtable untouched) if any id is outside [0, V).
tw_status tw_embedding_backward(float *dtable, const float *dout, const int *ids, int T, int V, int C);

#endif
