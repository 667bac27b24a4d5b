// fuzz_q8file.c: libFuzzer target for the reader of llama2.c's version-2 (Q8_0) files
// (lib/quant/q8file.c). The input is a file: tw_q8file_read must accept it or fail with a message. An
// accepted file has every tensor dequantized and one row of it multiplied by a quantized vector
// with the naive and the best int8 kernel, so inconsistent sizes would show up as out-of-bounds
// accesses under ASan, every dequantized weight and every group's largest product dot * scale must
// be finite (the reader's bound on the scales), and the two results must agree within the bound of tests/q8_cases.h,
// (2 n_g + 40) u sum_g |s_g xs_g| sum_k |w_k x_k| (NaN in one and not the other aborts too).
// Then it becomes a model (tw_q8file_to_model, as ./generate loads it) that runs one token through
// the int8 forward pass: it must succeed (the reader promised a consistent file).
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include <math.h>
#include <string.h>
#include "fuzz_file.h"
#include "quant/q8_0.h"
#include "quant/q8file.h"
#include "simd/q8.h"
#include "nn/model.h"
#include "quant/q8model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(const tw_q8file *m) {
    const int gs = m->cfg.group_size;
    for (int i = 0; i < m->n_tensors; i++) {
        const tw_q8file_tensor *t = &m->tensors[i];
        float *row = malloc((size_t)t->cols * sizeof(float)), *x = malloc((size_t)t->cols * sizeof(float));
        int8_t *xq = malloc((size_t)t->cols);
        float *xs = malloc((size_t)(t->cols / gs) * sizeof(float));
        if (!row || !x || !xq || !xs) abort();
        for (int r = 0; r < t->rows; r++) {
            tw_dequant_groups(row, t->q + (long)r * t->cols, t->s + (long)r * (t->cols / gs), t->cols / gs, gs);
            // The reader bounds every scale (tw_q8file_check_values): no weight may be +-inf, and
            // no group's (float)dot * scale, dot up to 127 * 127 * gs, may overflow.
            for (int k = 0; k < t->cols; k++) if (!isfinite(row[k])) abort();
            for (int g = 0; g < t->cols / gs; g++)
                if (!isfinite(t->s[(long)r * (t->cols / gs) + g] * (127.0f * 127.0f * (float)gs))) abort();
        }
        for (int k = 0; k < t->cols; k++) x[k] = row[k] + 0.5f;
        tw_q8_quantize_x_naive(xq, xs, x, t->cols / gs, gs);
        float y1, y2;
        tw_q8_matvec_naive(&y1, t->q, t->s, xq, xs, 1, t->cols, gs);
        tw_q8_matvec(tw_q8_ops_for("auto"), &y2, t->q, t->s, xq, xs, 1, t->cols, gs);
        double A = 0;
        for (int g = 0; g < t->cols / gs; g++) {
            double a = 0;
            for (int k = g * gs; k < (g + 1) * gs; k++) a += fabs((double)t->q[k] * xq[k]);
            A += fabs((double)t->s[g] * xs[g]) * a;
        }
        if (isnan(y1) != isnan(y2)) abort();
        if (isfinite(y1) && fabs((double)y1 - y2) > (2.0 * (t->cols / gs) + 40) * 5.9604644775390625e-8 * A) abort();
        free(row); free(x); free(xq); free(xs);
    }
}

static void run_model(const tw_q8file *q) {
    tw_model m;
    char err[256] = "";
    if (tw_q8file_to_model(&m, q, err, sizeof err) != TW_OK) {
        if (err[0] == '\0') abort();   // a failure must say why (out of memory is allowed)
        return;
    }
    tw_model_state s;
    if (tw_model_state_init(&s, &m, 1, 0) == TW_OK) {
        const int token = 0;
        if (!m.copies || tw_model_forward(&s, &m, &token, 1, 0) != TW_OK) abort();
        tw_model_state_free(&s);
    }
    tw_model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write_file(data, size);
    tw_q8file m;
    char err[512] = "";
    tw_status st = tw_q8file_read(&m, path, err, sizeof err);
    if (st == TW_OK) {
        exercise(&m);
        run_model(&m);
        tw_q8file_free(&m);
    } else if (err[0] == '\0' || strchr(err, '\n')) {
        abort();
    }
    return 0;
}
