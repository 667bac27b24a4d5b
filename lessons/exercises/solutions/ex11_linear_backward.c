// Exercise 11, a worked answer: three sums, one per gradient, each over the index the forward
// summed or repeated over.
#include "concepts.h"

void ex_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        const float *W, int T, int C_in, int C_out) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C_in; i++) {
            float acc = 0.0f;
            for (int o = 0; o < C_out; o++) acc += dy[t * C_out + o] * W[o * C_in + i];
            dx[t * C_in + i] = acc;
        }
    for (int o = 0; o < C_out; o++) {
        for (int i = 0; i < C_in; i++) {
            float acc = 0.0f;
            for (int t = 0; t < T; t++) acc += dy[t * C_out + o] * x[t * C_in + i];
            dW[o * C_in + i] = acc;
        }
        float acc = 0.0f;
        for (int t = 0; t < T; t++) acc += dy[t * C_out + o];
        db[o] = acc;
    }
}
