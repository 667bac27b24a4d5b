// Wrong attempt at exercise 22 (make test builds it and requires the checker to reject it).
// The mistake: the classifier applied to the raw stream, without the final RMSNorm: the logits
// come out scaled by rms(h) / g, tens of times too large at a late layer.
// The checker says: the final RMSNorm comes before the classifier
#include "concepts.h"

void ex_logit_lens(float *logits, const float *h, const float *g, const float *W, int C, int V,
                   float eps) {
    (void)g; (void)eps;
    for (int v = 0; v < V; v++) {
        float acc = 0.0f;
        for (int c = 0; c < C; c++) acc += W[(long)v * C + c] * h[c];
        logits[v] = acc;
    }
}
