// linear.c: the Linear layer, y = x W^T + b, as the plain triple loop.
// This is the reference implementation: each output is one dot product accumulated in float, in
// index order c = 0 .. C_in-1, starting from 0, with the bias added once at the end. Faster
// kernels (SIMD, blocked) are checked against exactly this loop.
#include <assert.h>
#include <stddef.h>
#include "nn/linear.h"
#include "simd/simd.h"

void tw_linear_naive(float *y, const float *x, const float *W, const float *b,
                     int T, int C_in, int C_out) {
    assert(y != x);
    for (int t = 0; t < T; t++) {
        const float *x_t = x + (size_t)t * C_in;     // (C_in)
        float *y_t = y + (size_t)t * C_out;          // (C_out)
        for (int o = 0; o < C_out; o++) {
            const float *w_o = W + (size_t)o * C_in; // row o of W: (C_in)
            float sum = 0.0f;
            for (int c = 0; c < C_in; c++) sum += x_t[c] * w_o[c];
            y_t[o] = b ? sum + b[o] : sum;
        }
    }
}

// The loop above, eight output rows at a time: each row still has its own sum, started at 0 and
// accumulated in index order c = 0 .. C_in-1, so every y is bit for bit what tw_linear_naive
// gives (tests/test_linear.c checks it). The eight sums are independent chains, so the CPU adds
// them side by side instead of waiting for each add to finish before the next (an add takes
// about four cycles and a core starts two per cycle: eight chains keep it busy).
static void linear_rows_side_by_side(float *y, const float *x, const float *W, const float *b,
                                     int T, int C_in, int C_out) {
    for (int t = 0; t < T; t++) {
        const float *x_t = x + (size_t)t * C_in;     // (C_in)
        float *y_t = y + (size_t)t * C_out;          // (C_out)
        int o = 0;
        for (; o + 8 <= C_out; o += 8) {
            const float *w0 = W + (size_t)o * C_in;  // rows o .. o+7 of W, each (C_in)
            const float *w1 = w0 + C_in, *w2 = w1 + C_in, *w3 = w2 + C_in, *w4 = w3 + C_in,
                        *w5 = w4 + C_in, *w6 = w5 + C_in, *w7 = w6 + C_in;
            float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f, s4 = 0.0f, s5 = 0.0f, s6 = 0.0f,
                  s7 = 0.0f;                          // one sum per row, in registers
            for (int c = 0; c < C_in; c++) {
                const float xc = x_t[c];
                s0 += xc * w0[c]; s1 += xc * w1[c]; s2 += xc * w2[c]; s3 += xc * w3[c];
                s4 += xc * w4[c]; s5 += xc * w5[c]; s6 += xc * w6[c]; s7 += xc * w7[c];
            }
            const float s[8] = { s0, s1, s2, s3, s4, s5, s6, s7 };
            for (int r = 0; r < 8; r++) y_t[o + r] = b ? s[r] + b[o + r] : s[r];
        }
        for (; o < C_out; o++) {
            const float *w_o = W + (size_t)o * C_in; // row o of W: (C_in)
            float sum = 0.0f;
            for (int c = 0; c < C_in; c++) sum += x_t[c] * w_o[c];
            y_t[o] = b ? sum + b[o] : sum;
        }
    }
}

// Routes to the SIMD kernels only if the program opted in with tw_simd_init (lib/simd/simd.h);
// at the default naive level the hook declines and the reference loop runs, eight rows side by
// side (the same bits as tw_linear_naive, sooner).
void tw_linear_forward(float *y, const float *x, const float *W, const float *b,
                       int T, int C_in, int C_out) {
    assert(y != x);
    if (tw_simd_linear(y, x, W, b, T, C_in, C_out)) return;
    linear_rows_side_by_side(y, x, W, b, T, C_in, C_out);
}

tw_weight tw_weight_fp32(const float *W) {
    tw_weight w = { .f32 = W };
    return w;
}

void tw_linear_forward_weight(float *y, const float *x, tw_weight W, const float *b,
                              int T, int C_in, int C_out) {
    if (W.q8 && W.work)   // the int8 copy (quant/linear_q8.c)
        tw_linear_forward_q8(y, W.work, x, W.f32, W.q8, b, T, C_in, C_out);
    else
        tw_linear_forward(y, x, W.f32, b, T, C_in, C_out);
    if (W.lora)
        tw_lora_forward(y, NULL, x, W.lora->A, W.lora->B, W.lora->scale, T, C_in, C_out, W.lora->r);
}

void tw_linear_forward_rows(float *y, const float *x, tw_weight W, const float *b,
                            int T, int C_in, int C_out) {
    if (!(W.q8 && W.work) && tw_simd_linear_rows(y, x, W.f32, b, T, C_in, C_out)) {
        if (W.lora)   // the adapter's term, row by row as tw_linear_forward_weight adds it
            tw_lora_forward(y, NULL, x, W.lora->A, W.lora->B, W.lora->scale, T, C_in, C_out, W.lora->r);
        return;
    }
    // int8, or the naive level: one row at a time, as decoding alone runs it.
    for (int t = 0; t < T; t++)
        tw_linear_forward_weight(y + (size_t)t * C_out, x + (size_t)t * C_in, W, b, 1, C_in, C_out);
}

void tw_linear_forward_many(int n, float *const y[], const float *x, const tw_weight W[],
                            const float *const b[], const int C_out[], int T, int C_in) {
    int fp32 = 1, q8 = 1;   // every matrix fp32; every one int8 with the same working memory
    for (int i = 0; i < n; i++) {   // (an attached LoRA adapter sends a matrix down the plain path)
        fp32 = fp32 && !(W[i].q8 && W[i].work) && !W[i].lora;
        q8 = q8 && W[i].q8 && W[i].work == W[0].work && !W[i].lora;
    }
    if (fp32 && T == 1 && n <= 8) {
        const float *Wf[8] = { 0 };
        for (int i = 0; i < n; i++) Wf[i] = W[i].f32;
        if (tw_simd_linear_one_row_many(n, y, x, Wf, b, C_out, C_in)) return;
    }
    if (q8 && n <= 8) {   // x quantized once, the n matvecs as one threaded list (quant/linear_q8.c)
        const tw_q8_matrix *Wq[8] = { 0 };
        for (int i = 0; i < n; i++) Wq[i] = W[i].q8;
        if (tw_linear_forward_q8_many(n, y, W[0].work, x, Wq, b, T, C_in)) return;
    }
    for (int i = 0; i < n; i++) tw_linear_forward_weight(y[i], x, W[i], b[i], T, C_in, C_out[i]);
}

// ---- the other copies of a model's weights ----

tw_status tw_linear_copies_select(tw_linear_copies *c) {
    const tw_q8_ops *ops = tw_q8_ops_for_simd_level(tw_simd.variant);
    return tw_q8_copies_select(c, ops ? ops : tw_q8_ops_for("naive"));
}

void tw_linear_copies_free(tw_linear_copies *c) { tw_q8_copies_free(c); }

long long tw_linear_flops(int T, int C_in, int C_out) {
    return 2LL * T * C_in * C_out;   // one multiply and one add per weight per row
}

long long tw_linear_params(int C_in, int C_out, int has_bias) {
    return (long long)C_in * C_out + (has_bias ? C_out : 0);
}

// ---- backward ----

// d[c] += g * v[c] for c < n, each element on its own (no sum across c), so the order of the
// elements does not matter and the compiler may do several at once: restrict promises d and v
// do not overlap, and the body unrolled by four lets gcc -O2 pack them into vector registers.
static void axpy(float *restrict d, float g, const float *restrict v, int n) {
    int c = 0;
    for (; c + 4 <= n; c += 4) {
        d[c]     += g * v[c];
        d[c + 1] += g * v[c + 1];
        d[c + 2] += g * v[c + 2];
        d[c + 3] += g * v[c + 3];
    }
    for (; c < n; c++) d[c] += g * v[c];
}

void tw_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        const float *W, int T, int C_in, int C_out) {
    assert(dx != dy && dW != W);
    // After tw_simd_init with a SIMD level, the two products run on the matmul kernels
    // (lib/simd/simd.h); at the naive level the hook declines and the loop below runs.
    if (tw_simd_linear_backward(dx, dW, db, dy, x, W, T, C_in, C_out)) return;
    for (int t = 0; t < T; t++) {
        const float *dy_t = dy + (size_t)t * C_out;  // (C_out)
        const float *x_t = x + (size_t)t * C_in;     // (C_in)
        float *dx_t = dx ? dx + (size_t)t * C_in : NULL;
        for (int o = 0; o < C_out; o++) {
            const float g = dy_t[o];
            if (g == 0.0f) continue;   // masked or ignored rows contribute nothing
            // y[t][o] = sum_c x[t][c] W[o][c]: each product feeds both factors' gradients.
            if (dx_t) axpy(dx_t, g, W + (size_t)o * C_in, C_in);
            if (dW) axpy(dW + (size_t)o * C_in, g, x_t, C_in);   // NULL: W is frozen
            if (db) db[o] += g;
        }
    }
}
