// embedding.c: token embedding lookup, out[t] = table[ids[t]] (a row copy per token).
#include <string.h>
#include "nn/embedding.h"

tw_status tw_embedding_forward(float *out, const int *ids, const float *table, int T, int V, int C) {
    // Validate every id before writing anything, so a bad id leaves out untouched.
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= V) return TW_ERR_SHAPE;
    for (int t = 0; t < T; t++)
        memcpy(out + (size_t)t * C, table + (size_t)ids[t] * C, (size_t)C * sizeof(float));
    return TW_OK;
}

tw_status tw_embedding_backward(float *dtable, const float *dout, const int *ids, int T, int V, int C) {
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= V) return TW_ERR_SHAPE;
    for (int t = 0; t < T; t++) {
        float *row = dtable + (size_t)ids[t] * C;    // (C)
        const float *d = dout + (size_t)t * C;       // (C)
        for (int c = 0; c < C; c++) row[c] += d[c];
    }
    return TW_OK;
}
