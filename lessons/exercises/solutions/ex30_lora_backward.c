// Exercise 30, a worked answer: per token, u = A x and du = s B^T dy first (r numbers each), then
// the three gradients from them.
#include <string.h>
#include "concepts.h"

void ex_lora_backward(float *dx, float *dA, float *dB, const float *dy, const float *x,
                      const float *W, const float *A, const float *B, float s, int T, int C_in,
                      int C_out, int r) {
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
            for (int o = 0; o < C_out; o++) acc += dy_t[o] * W[o * C_in + i];
            for (int k = 0; k < r; k++) acc += du[k] * A[k * C_in + i];
            dx[(long)t * C_in + i] = acc;
        }
    }
}
