// linear_q8.c: the Linear layer with int8 (Q8_0) weights, what a quantized model runs (declared
// in q8_0.h beside the scheme; kept apart from q8_0.c so the int8 kernels and their checks link
// without the fp32 Linear layer and its dispatch).
#include <stddef.h>
#include <stdint.h>
#include "quant/q8_0.h"
#include "nn/linear.h"

// W's packed copy in work, or NULL if it has none (W is not one of work->mats, or work->ops is no
// longer the level the copies were made for). The addresses are compared as integers: W may
// point anywhere, not only into mats.
static const void *packed_copy(const tw_q8_work *work, const tw_q8_matrix *W) {
    if (!work->packed || work->ops != work->packed_ops) return NULL;
    const uintptr_t first = (uintptr_t)work->mats, at = (uintptr_t)W;
    if (at < first || at >= first + (uintptr_t)work->n_mats * sizeof *W) return NULL;
    return work->packed[(at - first) / sizeof *W];
}

void tw_linear_forward_q8(float *y, tw_q8_work *work, const float *x, const float *W_f32,
                          const tw_q8_matrix *W, const float *b, int T, int C_in, int C_out) {
    if (W == NULL || work == NULL || C_in > work->K_max) {
        tw_linear_forward(y, x, W_f32, b, T, C_in, C_out);
        return;
    }
    const void *P = packed_copy(work, W);
    for (int t = 0; t < T; t++) {
        float *y_t = y + (long)t * C_out;   // (C_out)
        const float *x_t = x + (long)t * C_in;   // (C_in)
        tw_q8_quantize_x(work->ops, work->xq, work->xs, x_t, C_in / W->gs, W->gs);   // one thread
        const tw_q8_job job = { .y = y_t, .W = W, .P = P };
        tw_q8_matvec_threaded(work, &job, 1);
        if (b)
            for (int o = 0; o < C_out; o++) y_t[o] += b[o];
    }
}

int tw_linear_forward_q8_many(int n, float *const y[], tw_q8_work *work, const float *x,
                              const tw_q8_matrix *const W[], const float *const b[], int T, int C_in) {
    if (n < 1 || n > 8 || work == NULL || C_in > work->K_max) return 0;
    for (int i = 0; i < n; i++)
        if (W[i] == NULL || W[i]->gs != W[0]->gs) return 0;
    const int gs = W[0]->gs;
    tw_q8_job jobs[8];
    for (int t = 0; t < T; t++) {
        const float *x_t = x + (long)t * C_in;   // (C_in)
        for (int i = 0; i < n; i++)
            jobs[i] = (tw_q8_job){ .y = y[i] + (long)t * W[i]->rows, .W = W[i], .P = packed_copy(work, W[i]) };
        tw_q8_quantize_x(work->ops, work->xq, work->xs, x_t, C_in / gs, gs);   // once for the n
        tw_q8_matvec_threaded(work, jobs, n);
        for (int i = 0; i < n; i++)
            if (b[i])
                for (int o = 0; o < W[i]->rows; o++) jobs[i].y[o] += b[i][o];
    }
    return 1;
}
