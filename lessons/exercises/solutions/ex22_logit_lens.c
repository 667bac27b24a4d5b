// Exercise 22, a worked answer: the final RMSNorm, then the classifier.
#include <math.h>
#include <stdlib.h>
#include "concepts.h"

void ex_logit_lens(float *logits, const float *h, const float *g, const float *W, int C, int V,
                   float eps) {
    double ss = 0.0;
    for (int c = 0; c < C; c++) ss += (double)h[c] * h[c];
    const double inv_rms = 1.0 / sqrt(ss / C + eps);
    float *hn = malloc((size_t)C * sizeof *hn);   // (C) the normed stream
    if (!hn) return;
    for (int c = 0; c < C; c++) hn[c] = (float)(h[c] * inv_rms * g[c]);
    for (int v = 0; v < V; v++) {
        float acc = 0.0f;
        for (int c = 0; c < C; c++) acc += W[(long)v * C + c] * hn[c];
        logits[v] = acc;
    }
    free(hn);
}
