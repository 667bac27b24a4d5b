// Exercise 8, a worked answer: one query row at a time, only the keys it may see.
#include <math.h>
#include <stdlib.h>
#include "concepts.h"

void ex_causal_attention(float *out, const float *q, const float *k, const float *v, int T, int D) {
    float *w = malloc((size_t)T * sizeof *w);   // (T) weights of one row
    if (!w) return;
    const float scale = 1.0f / sqrtf((float)D);
    for (int t = 0; t < T; t++) {
        float max = -INFINITY;
        for (int j = 0; j <= t; j++) {
            float s = 0.0f;
            for (int d = 0; d < D; d++) s += q[t * D + d] * k[j * D + d];
            w[j] = s * scale;
            if (w[j] > max) max = w[j];
        }
        double sum = 0.0;
        for (int j = 0; j <= t; j++) { w[j] = expf(w[j] - max); sum += w[j]; }
        for (int d = 0; d < D; d++) {
            double acc = 0.0;
            for (int j = 0; j <= t; j++) acc += w[j] / sum * v[j * D + d];
            out[t * D + d] = (float)acc;
        }
    }
    free(w);
}
