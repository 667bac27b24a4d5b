// Exercise 38, a classic wrong attempt (make test shows the checker rejects it): the scale is
// 1 / sqrt(d_nope), the head size of the latent part alone, forgetting that the key also has the
// d_rope RoPE dimensions. The folding itself is right.
// The checker says: S = 1, d_nope = 1, d_rope = 2, r = 1: element [0]
#include <math.h>
#include "concepts.h"

void ex_latent_scores(float *scores, const float *q_nope, const float *q_pe, const float *W_uk,
                      const float *cache, int S, int d_nope, int d_rope, int r) {
    float qt[256];
    for (int j = 0; j < r; j++) {
        float a = 0.0f;
        for (int i = 0; i < d_nope; i++) a += q_nope[i] * W_uk[i * r + j];
        qt[j] = a;
    }
    const float scale = 1.0f / sqrtf((float)d_nope);
    for (int s = 0; s < S; s++) {
        const float *row = cache + (long)s * (r + d_rope);
        float d = 0.0f;
        for (int j = 0; j < r; j++) d += qt[j] * row[j];
        for (int i = 0; i < d_rope; i++) d += q_pe[i] * row[r + i];
        scores[s] = d * scale;
    }
}
