// Wrong attempt at exercise 8 (make test builds it and requires the checker to reject it).
// The mistake: the softmax without the max subtraction. Right for ordinary scores; a score above
// 88.7 overflows expf to inf and the row becomes inf / inf = NaN.
// The checker says: subtract each row's max first
#include <math.h>
#include <stdlib.h>
#include "concepts.h"

void ex_causal_attention(float *out, const float *q, const float *k, const float *v, int T, int D) {
    float *w = malloc((size_t)T * sizeof *w);   // (T) weights of one row
    if (!w) return;
    const float scale = 1.0f / sqrtf((float)D);
    for (int t = 0; t < T; t++) {
        double sum = 0.0;
        for (int j = 0; j <= t; j++) {
            float s = 0.0f;
            for (int d = 0; d < D; d++) s += q[t * D + d] * k[j * D + d];
            w[j] = expf(s * scale);
            sum += w[j];
        }
        for (int d = 0; d < D; d++) {
            double acc = 0.0;
            for (int j = 0; j <= t; j++) acc += w[j] / sum * v[j * D + d];
            out[t * D + d] = (float)acc;
        }
    }
    free(w);
}
