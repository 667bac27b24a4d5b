// Wrong attempt at exercise 9 (make test builds it and requires the checker to reject it).
// The mistake: silu on the up projection instead of the gate: silu(Wu x) * (Wg x).
// The checker says: silu goes on the gate
#include <math.h>
#include <stdlib.h>
#include "concepts.h"

void ex_swiglu(float *out, const float *x, const float *Wg, const float *Wu, const float *Wd,
               int C, int F) {
    float *h = malloc((size_t)F * sizeof *h);   // (F)
    if (!h) return;
    for (int f = 0; f < F; f++) {
        float g = 0.0f, u = 0.0f;
        for (int c = 0; c < C; c++) { g += Wg[f * C + c] * x[c]; u += Wu[f * C + c] * x[c]; }
        h[f] = u / (1.0f + expf(-u)) * g;
    }
    for (int c = 0; c < C; c++) {
        float acc = 0.0f;
        for (int f = 0; f < F; f++) acc += Wd[c * F + f] * h[f];
        out[c] = acc;
    }
    free(h);
}
