// train_elementwise.c: the training path's elementwise exponentials on the level's vector exp
// (simd.h, "train_elementwise.c"). At the SIMD level the loss's softmax over the vocabulary and
// SwiGLU's derivative took two double-precision exp() calls per element each (a tenth of a
// stories260K-shape training step); here each element takes one exponential, in float, from the
// kernel the forward's softmax uses. This file has no ISA flags: the loops around the kernel are
// plain C. Results differ from the components' loops by float rounding (tests/test_train_simd.c
// bounds it).
#include <math.h>
#include <stddef.h>
#include "simd.h"

int tw_simd_cross_entropy_row(double *lse, float *p, const float *z, int V) {
    if (!tw_simd.exp || V < 1) return 0;
    float max = z[0];   // the loop of loss.c, so the same value
    for (int v = 1; v < V; v++) if (z[v] > max) max = z[v];
    if (!isfinite(max)) return 0;
    for (int v = 0; v < V; v++) p[v] = z[v] - max;   // every exponent <= 0: no overflow
    tw_simd.exp(p, p, V);
    double sum = 0.0;   // >= 1: the largest term is exp(0)
    for (int v = 0; v < V; v++) sum += p[v];
    const double inv = 1.0 / sum;
    for (int v = 0; v < V; v++) p[v] = (float)(p[v] * inv);
    *lse = max + log(sum);
    return 1;
}

// With e = exp(-g) and s = sigmoid(g) = 1 / (1 + e): silu(g) = g s and silu'(g) = s (1 + g (1 - s))
// = s (1 + g e s), the last form exact where s rounds to 1 (1 - s would cancel). For very
// negative g, e = inf and s = 0 (e s is then taken as its limit, 1): both are 0, their limits.
int tw_simd_swiglu_backward_gating(float *dgate, float *dup, const float *gate, const float *up,
                                   long n) {
    if (!tw_simd.exp) return 0;
    for (long i = 0; i < n; i++) dup[i] = -gate[i];
    tw_simd.exp(dup, dup, n);   // dup holds e for now
    for (long i = 0; i < n; i++) {
        const float g = gate[i], e = dup[i], s = 1.0f / (1.0f + e), da = dgate[i];
        const float es = e == INFINITY ? 1.0f : e * s;   // 1 - s
        dup[i] = da * (g * s);
        dgate[i] = da * up[i] * (s * (1.0f + g * es));
    }
    return 1;
}
