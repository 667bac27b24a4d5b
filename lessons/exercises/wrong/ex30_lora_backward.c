// Exercise 30, a classic wrong attempt (make test-concept-exercises checks the checker rejects it):
// dx only through the adapter, du A, as if the frozen W had no gradient path either. W is frozen
// for the optimizer, not for the chain rule: x still reaches y through W.
// The checker says: dx: element [0] is
#include <string.h>
#include "concepts.h"

void ex_lora_backward(float *dx, float *dA, float *dB, const float *dy, const float *x,
                      const float *W, const float *A, const float *B, float s, int T, int C_in,
                      int C_out, int r) {
    (void)W;
    memset(dA, 0, sizeof(float) * (size_t)r * C_in);
    memset(dB, 0, sizeof(float) * (size_t)C_out * r);
    for (int t = 0; t < T; t++) {
        const float *x_t = x + (long)t * C_in, *dy_t = dy + (long)t * C_out;
        float u[64], du[64];
        for (int k = 0; k < r; k++) {
            float acc = 0.0f, dacc = 0.0f;
            for (int i = 0; i < C_in; i++) acc += A[k * C_in + i] * x_t[i];
            for (int o = 0; o < C_out; o++) dacc += dy_t[o] * B[o * r + k];
            u[k] = acc;
            du[k] = s * dacc;
        }
        for (int o = 0; o < C_out; o++)
            for (int k = 0; k < r; k++) dB[o * r + k] += s * dy_t[o] * u[k];
        for (int k = 0; k < r; k++)
            for (int i = 0; i < C_in; i++) dA[k * C_in + i] += du[k] * x_t[i];
        for (int i = 0; i < C_in; i++) {
            float acc = 0.0f;
            for (int k = 0; k < r; k++) acc += du[k] * A[k * C_in + i];
            dx[(long)t * C_in + i] = acc;
        }
    }
}
