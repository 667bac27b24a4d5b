// Exercise 11: the backward of a Linear layer, y = x W^T + b, over T tokens (lesson 13).
// Each output y[t][o] = sum_i x[t][i] W[o][i] + b[o]. By the chain rule, with dy the gradient of
// the loss with respect to y:
//   dx[t][i] = sum_o dy[t][o] W[o][i]       (each input fed every output)
//   dW[o][i] = sum_t dy[t][o] x[t][i]       (each weight was used at every token)
//   db[o]    = sum_t dy[t][o]
// Write the results (the buffers hold garbage on entry); W and dW are (C_out, C_in) row-major.
// Check it with:  make exercise11
#include "concepts.h"

void ex_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        const float *W, int T, int C_in, int C_out) {
    // TODO: fill dx (T, C_in), dW (C_out, C_in) and db (C_out). Delete these lines.
    (void)dx; (void)dW; (void)db; (void)dy; (void)x; (void)W; (void)T; (void)C_in; (void)C_out;
    ex_not_implemented();
}
