// ffn.c: the position-wise feed-forward network, classic (Linear, activation, Linear) and gated
// (SwiGLU). Both are compositions of tw_linear_forward and the activations of activation.c.
// After tw_simd_init with a SIMD level, SwiGLU's silu(gate) * up runs the selected vectorised
// kernel (lib/simd/simd.h); at the default naive level it is the loop below, unchanged.
#include <assert.h>
#include <stddef.h>
#include "nn/ffn.h"
#include "nn/linear.h"
#include "simd/simd.h"

void tw_ffn_forward(float *out, float *hidden, const float *x,
                    const float *W1, const float *b1, const float *W2, const float *b2,
                    int T, int C, int F, tw_act act) {
    assert(T > 0 && C > 0 && F > 0);
    tw_linear_forward(hidden, x, W1, b1, T, C, F);          // expand to F (4C in the paper)
    tw_activation(hidden, hidden, (long)T * F, act);        // in place: activation allows y == x
    tw_linear_forward(out, hidden, W2, b2, T, F, C);        // project back to C
}

void tw_swiglu(float *y, const float *gate, const float *up, long n) {
    tw_silu(y, gate, n);
    for (long i = 0; i < n; i++) y[i] *= up[i];
}

void tw_swiglu_forward(float *out, float *gate, float *up, float *act, const float *x,
                       const float *Wg, const float *Wu, const float *Wd, int T, int C, int F) {
    assert(T > 0 && C > 0 && F > 0);
    const long n = (long)T * F;
    tw_linear_forward(gate, x, Wg, NULL, T, C, F);
    tw_linear_forward(up, x, Wu, NULL, T, C, F);
    // The gate decides, per hidden unit, how much of the linear "up" signal passes (Shazeer 2020).
    if (!tw_simd_swiglu(act, gate, up, n))   // declines at the naive level
        tw_swiglu(act, gate, up, n);
    tw_linear_forward(out, act, Wd, NULL, T, F, C);
}
