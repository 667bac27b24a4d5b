// Exercise 30: the backward of a LoRA Linear (lesson 21). The forward is
//   y = x W^T + s (x A^T) B^T,    s = alpha / r,   W frozen (it gets no gradient)
// Name the small intermediate u = x A^T (T, r). Going back from dy (T, C_out):
//   du = s dy B          (T, r)       the gradient reaching u through B
//   dB = s dy^T u        (C_out, r)
//   dA = du^T x          (r, C_in)
//   dx = dy W + du A     (T, C_in)    both paths from x: the frozen one and the adapter's
// Write the results (the buffers hold garbage on entry). Every matrix is row-major.
// Check it with:  make exercise30
#include "concepts.h"

void ex_lora_backward(float *dx, float *dA, float *dB, const float *dy, const float *x,
                      const float *W, const float *A, const float *B, float s, int T, int C_in,
                      int C_out, int r) {
    // TODO: fill dx (T, C_in), dA (r, C_in) and dB (C_out, r). Delete these lines.
    (void)dx; (void)dA; (void)dB; (void)dy; (void)x; (void)W; (void)A; (void)B; (void)s; (void)T;
    (void)C_in; (void)C_out; (void)r;
    ex_not_implemented();
}
