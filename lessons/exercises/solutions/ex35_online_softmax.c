// Exercise 35, a worked answer: the online softmax of lib/nn/sdpa_tiled.c for one row, the block's
// maximum first, then the rescale, then the block's terms.
#include <math.h>
#include "concepts.h"

float ex_online_attention_row(float *out, const float *x, const float *v, int n, int D, int B) {
    float m = -INFINITY;
    double l = 0.0;
    for (int d = 0; d < D; d++) out[d] = 0.0f;
    for (int s0 = 0; s0 < n; s0 += B) {
        const int nb = n - s0 < B ? n - s0 : B;
        float bmax = -INFINITY;
        for (int j = 0; j < nb; j++) bmax = x[s0 + j] > bmax ? x[s0 + j] : bmax;
        if (bmax == -INFINITY) continue;
        if (bmax > m) {
            if (m != -INFINITY) {
                const float scale = expf(m - bmax);
                l *= scale;
                for (int d = 0; d < D; d++) out[d] *= scale;
            }
            m = bmax;
        }
        for (int j = 0; j < nb; j++) {
            const float e = expf(x[s0 + j] - m);
            l += e;
            if (e == 0.0f) continue;
            for (int d = 0; d < D; d++) out[d] += e * v[(long)(s0 + j) * D + d];
        }
    }
    if (l == 0.0) return -INFINITY;
    for (int d = 0; d < D; d++) out[d] = (float)(out[d] / l);
    return (float)(m + log(l));
}
