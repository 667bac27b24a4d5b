// activation.c: element-wise nonlinearities used between the two Linear layers of a feed-forward
// block. Computed in float with libm's erff/tanhf/expf, matching PyTorch's float32 formulas.
#include <math.h>
#include "nn/activation.h"

float tw_relu1(float x) { return x > 0.0f ? x : 0.0f; }

// GELU (Hendrycks & Gimpel 2016): x times the standard normal CDF, Phi(x) = (1 + erf(x/sqrt2))/2.
float tw_gelu_erf1(float x) {
    const float inv_sqrt2 = 0.70710678118654752440f;
    return 0.5f * x * (1.0f + erff(x * inv_sqrt2));
}

// The tanh approximation of GELU used by GPT-2; the same expression as PyTorch's
// gelu(approximate='tanh'): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
float tw_gelu_tanh1(float x) {
    const float sqrt_2_over_pi = 0.79788456080286535588f;
    float inner = sqrt_2_over_pi * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
}

// SiLU / swish (Elfwing et al. 2018; Ramachandran et al. 2017). For very negative x, expf(-x)
// overflows to +inf and x / inf = -0, which is the right limit, so no special case is needed.
float tw_silu1(float x) { return x / (1.0f + expf(-x)); }

void tw_relu(float *y, const float *x, long n)      { for (long i = 0; i < n; i++) y[i] = tw_relu1(x[i]); }
void tw_gelu_erf(float *y, const float *x, long n)  { for (long i = 0; i < n; i++) y[i] = tw_gelu_erf1(x[i]); }
void tw_gelu_tanh(float *y, const float *x, long n) { for (long i = 0; i < n; i++) y[i] = tw_gelu_tanh1(x[i]); }
void tw_silu(float *y, const float *x, long n)      { for (long i = 0; i < n; i++) y[i] = tw_silu1(x[i]); }

void tw_activation(float *y, const float *x, long n, tw_act act) {
    switch (act) {
    case TW_ACT_RELU:      tw_relu(y, x, n); break;
    case TW_ACT_GELU_ERF:  tw_gelu_erf(y, x, n); break;
    case TW_ACT_GELU_TANH: tw_gelu_tanh(y, x, n); break;
    case TW_ACT_SILU:      tw_silu(y, x, n); break;
    }
}

const char *tw_act_name(tw_act act) {
    switch (act) {
    case TW_ACT_RELU:      return "relu";
    case TW_ACT_GELU_ERF:  return "gelu";
    case TW_ACT_GELU_TANH: return "gelu_tanh";
    case TW_ACT_SILU:      return "silu";
    }
    return "unknown";
}
