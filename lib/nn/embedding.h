// embedding.h: token embedding lookup (torch.nn.Embedding).
#ifndef TW_EMBEDDING_H
#define TW_EMBEDDING_H
#include "nn/status.h"

// out[t] = table[ids[t]].
//   out: (T, C)   ids: (T)   table: (V, C)
// Returns TW_ERR_SHAPE (and leaves out untouched) if any id is outside [0, V).
tw_status tw_embedding_forward(float *out, const int *ids, const float *table, int T, int V, int C);

#endif
