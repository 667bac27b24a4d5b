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

// ---- backward ----

float tw_relu_grad1(float x) { return x > 0.0f ? 1.0f : 0.0f; }

float tw_gelu_erf_grad1(float x) {
    const double inv_sqrt2 = 0.70710678118654752440, inv_sqrt_2pi = 0.39894228040143267794;
    const double xd = x;
    return (float)(0.5 * (1.0 + erf(xd * inv_sqrt2)) + xd * inv_sqrt_2pi * exp(-0.5 * xd * xd));
}

float tw_gelu_tanh_grad1(float x) {
    const double k = 0.79788456080286535588, a = 0.044715;   // sqrt(2/pi), as the forward
    const double xd = x, th = tanh(k * (xd + a * xd * xd * xd));
    return (float)(0.5 * (1.0 + th) + 0.5 * xd * (1.0 - th * th) * k * (1.0 + 3.0 * a * xd * xd));
}

// For very negative x, exp(-x) overflows to inf, s = 0 and the result is 0 (the right limit).
float tw_silu_grad1(float x) {
    const double xd = x, s = 1.0 / (1.0 + exp(-xd));
    return (float)(s * (1.0 + xd * (1.0 - s)));
}

float tw_activation_grad1(float x, tw_act act) {
    switch (act) {
    case TW_ACT_RELU:      return tw_relu_grad1(x);
    case TW_ACT_GELU_ERF:  return tw_gelu_erf_grad1(x);
    case TW_ACT_GELU_TANH: return tw_gelu_tanh_grad1(x);
    case TW_ACT_SILU:      return tw_silu_grad1(x);
    }
    return 0.0f;
}

void tw_relu_backward(float *dx, const float *dy, const float *x, long n)      { for (long i = 0; i < n; i++) dx[i] += dy[i] * tw_relu_grad1(x[i]); }
void tw_gelu_erf_backward(float *dx, const float *dy, const float *x, long n)  { for (long i = 0; i < n; i++) dx[i] += dy[i] * tw_gelu_erf_grad1(x[i]); }
void tw_gelu_tanh_backward(float *dx, const float *dy, const float *x, long n) { for (long i = 0; i < n; i++) dx[i] += dy[i] * tw_gelu_tanh_grad1(x[i]); }
void tw_silu_backward(float *dx, const float *dy, const float *x, long n)      { for (long i = 0; i < n; i++) dx[i] += dy[i] * tw_silu_grad1(x[i]); }

void tw_activation_backward(float *dx, const float *dy, const float *x, long n, tw_act act) {
    switch (act) {
    case TW_ACT_RELU:      tw_relu_backward(dx, dy, x, n); break;
    case TW_ACT_GELU_ERF:  tw_gelu_erf_backward(dx, dy, x, n); break;
    case TW_ACT_GELU_TANH: tw_gelu_tanh_backward(dx, dy, x, n); break;
    case TW_ACT_SILU:      tw_silu_backward(dx, dy, x, n); break;
    }
}
