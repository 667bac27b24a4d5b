// lora.c: the LoRA Linear layer (see lora.h).
#include <assert.h>
#include <stddef.h>
#include "nn/lora.h"
#include "nn/linear.h"

// u_t = A x_t: r dot products of length in.   u_t: (r)   x_t: (in)   A: (r, in)
static void down_project(float *u_t, const float *x_t, const float *A, int in, int r) {
    for (int k = 0; k < r; k++) {
        const float *a_k = A + (size_t)k * in;   // (in)
        float sum = 0.0f;
        for (int c = 0; c < in; c++) sum += a_k[c] * x_t[c];
        u_t[k] = sum;
    }
}

void tw_lora_forward(float *y, float *u, const float *x, const float *A, const float *B,
                     float scale, int T, int in, int out, int r) {
    assert(r >= 1 && r <= TW_LORA_MAX_R);
    float row[TW_LORA_MAX_R];
    for (int t = 0; t < T; t++) {
        float *u_t = u ? u + (size_t)t * r : row;   // (r)
        down_project(u_t, x + (size_t)t * in, A, in, r);
        float *y_t = y + (size_t)t * out;           // (out)
        for (int o = 0; o < out; o++) {
            const float *b_o = B + (size_t)o * r;   // (r)
            float sum = 0.0f;
            for (int k = 0; k < r; k++) sum += b_o[k] * u_t[k];
            y_t[o] += scale * sum;
        }
    }
}

void tw_lora_linear_forward(float *y, float *u, const float *x, const float *W, const float *b,
                            const float *A, const float *B, float scale, int T, int in, int out,
                            int r) {
    tw_linear_forward(y, x, W, b, T, in, out);
    tw_lora_forward(y, u, x, A, B, scale, T, in, out, r);
}

void tw_lora_linear_backward(float *dx, float *dA, float *dB, const float *dy, const float *x,
                             const float *u, const float *W, const float *A, const float *B,
                             float scale, int T, int in, int out, int r) {
    assert(r >= 1 && r <= TW_LORA_MAX_R);
    for (int t = 0; t < T; t++) {
        const float *dy_t = dy + (size_t)t * out;   // (out)
        const float *x_t = x + (size_t)t * in;      // (in)
        const float *u_t = u + (size_t)t * r;       // (r)
        float du[TW_LORA_MAX_R];                    // (r) s * dy_t B
        for (int k = 0; k < r; k++) du[k] = 0.0f;
        for (int o = 0; o < out; o++) {
            const float g = dy_t[o];
            const float *b_o = B + (size_t)o * r;
            float *db_o = dB + (size_t)o * r;
            for (int k = 0; k < r; k++) {
                du[k] += g * b_o[k];
                db_o[k] += scale * g * u_t[k];
            }
        }
        for (int k = 0; k < r; k++) du[k] *= scale;
        for (int k = 0; k < r; k++) {
            float *da_k = dA + (size_t)k * in;
            for (int c = 0; c < in; c++) da_k[c] += du[k] * x_t[c];
        }
        if (!dx) continue;
        float *dx_t = dx + (size_t)t * in;          // (in)
        for (int c = 0; c < in; c++) {
            float sum = 0.0f;
            for (int o = 0; o < out; o++) sum += dy_t[o] * W[(size_t)o * in + c];
            for (int k = 0; k < r; k++) sum += du[k] * A[(size_t)k * in + c];
            dx_t[c] += sum;
        }
    }
}

void tw_lora_grads_from_weight_grad(float *dA, float *dB, const float *G, const float *A,
                                    const float *B, float scale, int in, int out, int r) {
    for (int k = 0; k < r; k++)            // dA[k][c] = s sum_o B[o][k] G[o][c]
        for (int c = 0; c < in; c++) {
            double sum = 0.0;
            for (int o = 0; o < out; o++) sum += (double)B[(size_t)o * r + k] * G[(size_t)o * in + c];
            dA[(size_t)k * in + c] += (float)(scale * sum);
        }
    for (int o = 0; o < out; o++)          // dB[o][k] = s sum_c G[o][c] A[k][c]
        for (int k = 0; k < r; k++) {
            double sum = 0.0;
            for (int c = 0; c < in; c++) sum += (double)G[(size_t)o * in + c] * A[(size_t)k * in + c];
            dB[(size_t)o * r + k] += (float)(scale * sum);
        }
}

void tw_lora_merge(float *W, const float *A, const float *B, float scale, int sign, int in,
                   int out, int r) {
    for (int o = 0; o < out; o++)
        for (int c = 0; c < in; c++) {
            double sum = 0.0;   // (B A)[o][c]
            for (int k = 0; k < r; k++) sum += (double)B[(size_t)o * r + k] * A[(size_t)k * in + c];
            W[(size_t)o * in + c] = (float)(W[(size_t)o * in + c] + sign * (double)scale * sum);
        }
}
