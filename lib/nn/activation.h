// activation.h: element-wise activations. All take y, x of n elements; y may alias x.
#ifndef TW_ACTIVATION_H
#define TW_ACTIVATION_H

void tw_relu(float *y, const float *x, long n);      // max(0, x)
void tw_gelu_erf(float *y, const float *x, long n);  // x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), PyTorch's default
void tw_gelu_tanh(float *y, const float *x, long n); // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), approximate='tanh'
void tw_silu(float *y, const float *x, long n);      // x * sigmoid(x) = x / (1 + exp(-x)), also called swish

// Scalar forms, for lessons that draw the curves.
float tw_relu1(float x);
float tw_gelu_erf1(float x);
float tw_gelu_tanh1(float x);
float tw_silu1(float x);

// Which activation a layer uses, and a function applying it by name.
typedef enum { TW_ACT_RELU = 0, TW_ACT_GELU_ERF, TW_ACT_GELU_TANH, TW_ACT_SILU } tw_act;
void        tw_activation(float *y, const float *x, long n, tw_act act);
const char *tw_act_name(tw_act act);   // "relu", "gelu", "gelu_tanh", "silu"

// ---- backward ----
// Derivatives at x, computed in double and rounded once (for lessons that draw them, too):
//   relu'  = 1 if x > 0 else 0 (0 at x = 0, as PyTorch)
//   gelu'  = Phi(x) + x phi(x),  phi the standard normal density
//   gelu_tanh' = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
//   silu'  = s (1 + x (1 - s)),  s = sigmoid(x)
float tw_relu_grad1(float x);
float tw_gelu_erf_grad1(float x);
float tw_gelu_tanh_grad1(float x);
float tw_silu_grad1(float x);

// dx[i] += dy[i] * f'(x[i]) for n elements (accumulates, see tw.h). x is the forward's input.
// dx must not alias dy or x.
void tw_relu_backward(float *dx, const float *dy, const float *x, long n);
void tw_gelu_erf_backward(float *dx, const float *dy, const float *x, long n);
void tw_gelu_tanh_backward(float *dx, const float *dy, const float *x, long n);
void tw_silu_backward(float *dx, const float *dy, const float *x, long n);
void tw_activation_backward(float *dx, const float *dy, const float *x, long n, tw_act act);
float tw_activation_grad1(float x, tw_act act);   // f'(x) by name

#endif
