// Wrong attempt at exercise 15 (make test builds it and requires the checker to reject it).
// The mistake: a reshape without the transposition: head h taken as the contiguous block of T
// rows of D starting at h*T*D (the (H, T, D) layout), while each row of q holds all the heads side
// by side (T, H, D). Right only with a single head.
// The checker says: not a block of T rows
#include <stdlib.h>
#include "concepts.h"
#include "nn/sdpa.h"

void ex_gqa_attention(float *z, const float *q, const float *k, const float *v, int T, int H,
                      int G, int D) {
    float *w = malloc((size_t)T * T * sizeof *w);
    if (!w) return;
    for (int h = 0; h < H; h++) {
        const int g = h / (H / G);
        tw_sdpa_forward(z + (long)h * T * D, NULL, w, q + (long)h * T * D, k + (long)g * T * D,
                        v + (long)g * T * D, NULL, T, T, D, 1, 0);
    }
    free(w);
}
