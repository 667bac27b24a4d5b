// test_linear.c: tw_linear_forward against torch.nn.functional.linear (float64, rounded to
// float32) at sizes drawn from 1, 3, 7, 64, 65, with and without bias, and the documented
// accumulation order. Goldens: tests/golden/gen_core.py -> data/golden/core/linear_*.
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

static const int SIZES[] = { 1, 3, 7, 64, 65 };

// Case i uses (T, C_in, C_out) = SIZES[i], SIZES[i+1], SIZES[i+2] (cyclically), as gen_core.py.
static void linear_shape(int i, int *T, int *C_in, int *C_out) {
    *T = SIZES[i]; *C_in = SIZES[(i + 1) % 5]; *C_out = SIZES[(i + 2) % 5];
}

static tw_npy load(int i, const char *what, long n) {
    char rel[64];
    snprintf(rel, sizeof rel, "core/linear_%d_%s", i, what);
    return tt_load(rel, n);
}

// Tolerance: a float dot product of n terms accumulated in order has error at most
// gamma_n * sum|x_c w_c| with gamma_n ~ n * 2^-24 (Higham, Accuracy and Stability, 3.1); the bias
// add is one more rounding (n+1 terms), and the golden itself is rounded once (2^-24 |want|).
// This bound is rigorous, so it is the tightest tolerance that cannot fail spuriously.
static void check_against_golden(int i, int with_bias) {
    int T, C_in, C_out;
    linear_shape(i, &T, &C_in, &C_out);
    tw_npy x = load(i, "x", (long)T * C_in), W = load(i, "W", (long)C_out * C_in),
           b = load(i, "b", C_out), want = load(i, with_bias ? "y_bias" : "y_nobias", (long)T * C_out);
    const float *xf = x.data, *Wf = W.data, *bf = b.data, *wf = want.data;
    float *y = tt_zeros((long)T * C_out);
    tw_linear_forward(y, xf, Wf, with_bias ? bf : NULL, T, C_in, C_out);
    const double u = 1.0 / 16777216.0;   // 2^-24, the unit roundoff of float32
    for (int t = 0; t < T; t++)
        for (int o = 0; o < C_out; o++) {
            double mag = with_bias ? fabs(bf[o]) : 0.0;
            for (int c = 0; c < C_in; c++) mag += fabs((double)xf[t * C_in + c] * Wf[o * C_in + c]);
            double want_to = wf[t * C_out + o], got = y[t * C_out + o];
            double tol = (C_in + 1) * u * mag + u * fabs(want_to);
            ck_assert_msg(fabs(got - want_to) <= tol,
                          "case %d (T=%d C_in=%d C_out=%d) y[%d][%d] = %.9g, torch %.9g, bound %.3g",
                          i, T, C_in, C_out, t, o, got, want_to, tol);
        }
    free(y);
    tw_npy_free(&x); tw_npy_free(&W); tw_npy_free(&b); tw_npy_free(&want);
}

START_TEST(linear_with_bias_matches_torch) { check_against_golden(_i, 1); }
END_TEST

START_TEST(linear_without_bias_matches_torch) { check_against_golden(_i, 0); }
END_TEST

// linear.h promises float accumulation in index order starting from 0, bias added last: SIMD
// kernels are compared with exactly this, so it is checked bit for bit (tolerance 0).
START_TEST(linear_accumulates_in_float_in_index_order)
{
    int T, C_in, C_out;
    linear_shape(_i, &T, &C_in, &C_out);
    float *x = tt_rand((long)T * C_in, -1, 1, 10 + _i), *W = tt_rand((long)C_out * C_in, -1, 1, 20 + _i);
    float *b = tt_rand(C_out, -1, 1, 30 + _i), *y = tt_zeros((long)T * C_out);
    tw_linear_forward(y, x, W, b, T, C_in, C_out);
    for (int t = 0; t < T; t++)
        for (int o = 0; o < C_out; o++) {
            float sum = 0.0f;
            for (int c = 0; c < C_in; c++) sum += x[t * C_in + c] * W[o * C_in + c];
            ck_assert_msg(y[t * C_out + o] == sum + b[o], "y[%d][%d] differs from the in-order float sum", t, o);
        }
    free(x); free(W); free(b); free(y);
}
END_TEST

// tw_linear_forward runs eight rows side by side at the naive level; tw_linear_naive is the plain
// loop. Same sums in the same order, so the same bits (tolerance 0), with and without bias, at
// row counts below, at and above a multiple of eight (C_out = 7, 64, 65, 1, 3).
START_TEST(linear_forward_is_bit_for_bit_the_naive_loop)
{
    int T, C_in, C_out;
    linear_shape(_i, &T, &C_in, &C_out);
    float *x = tt_rand((long)T * C_in, -1, 1, 40 + _i), *W = tt_rand((long)C_out * C_in, -1, 1, 50 + _i);
    float *b = tt_rand(C_out, -1, 1, 60 + _i);
    float *y = tt_zeros((long)T * C_out), *want = tt_zeros((long)T * C_out);
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        tw_linear_forward(y, x, W, with_bias ? b : NULL, T, C_in, C_out);
        tw_linear_naive(want, x, W, with_bias ? b : NULL, T, C_in, C_out);
        for (long k = 0; k < (long)T * C_out; k++)
            ck_assert_msg(y[k] == want[k], "T=%d C_in=%d C_out=%d bias %d: y[%ld] = %.9g, the naive "
                          "loop gives %.9g", T, C_in, C_out, with_bias, k, (double)y[k], (double)want[k]);
    }
    free(x); free(W); free(b); free(y); free(want);
}
END_TEST

// The backward accumulates dx over o and dW, db over t, each element on its own, onto what the
// buffers hold (linear.h). Checked bit for bit (tolerance 0) against those loops written out,
// at C_in = 3, 7, 64, 65, 1 (below, at and above a multiple of four), with a zero row in dy
// (skipped rows must change nothing) and buffers that start nonzero.
START_TEST(linear_backward_is_bit_for_bit_the_loops_in_linear_h)
{
    int T, C_in, C_out;
    linear_shape(_i, &T, &C_in, &C_out);
    const long nx = (long)T * C_in, nW = (long)C_out * C_in, ny = (long)T * C_out;
    float *x = tt_rand(nx, -1, 1, 70 + _i), *W = tt_rand(nW, -1, 1, 80 + _i), *dy = tt_rand(ny, -1, 1, 90 + _i);
    for (int o = 0; o < C_out; o++) dy[o] = 0.0f;                 // row t = 0 of dy is zero
    float *dx = tt_rand(nx, -1, 1, 100 + _i), *dW = tt_rand(nW, -1, 1, 110 + _i), *db = tt_rand(C_out, -1, 1, 120 + _i);
    float *ex = malloc((size_t)nx * sizeof *ex), *eW = malloc((size_t)nW * sizeof *eW), *eb = malloc((size_t)C_out * sizeof *eb);
    ck_assert(ex && eW && eb);
    memcpy(ex, dx, (size_t)nx * sizeof *ex); memcpy(eW, dW, (size_t)nW * sizeof *eW); memcpy(eb, db, (size_t)C_out * sizeof *eb);
    tw_linear_backward(dx, dW, db, dy, x, W, T, C_in, C_out);
    for (int t = 0; t < T; t++)
        for (int o = 0; o < C_out; o++) {
            const float g = dy[t * C_out + o];
            if (g == 0.0f) continue;
            for (int c = 0; c < C_in; c++) ex[t * C_in + c] += g * W[o * C_in + c];
            for (int c = 0; c < C_in; c++) eW[o * C_in + c] += g * x[t * C_in + c];
            eb[o] += g;
        }
    for (long k = 0; k < nx; k++) ck_assert_msg(dx[k] == ex[k], "T=%d C_in=%d C_out=%d: dx[%ld] = %.9g, the loop gives %.9g", T, C_in, C_out, k, (double)dx[k], (double)ex[k]);
    for (long k = 0; k < nW; k++) ck_assert_msg(dW[k] == eW[k], "T=%d C_in=%d C_out=%d: dW[%ld] = %.9g, the loop gives %.9g", T, C_in, C_out, k, (double)dW[k], (double)eW[k]);
    for (int k = 0; k < C_out; k++) ck_assert_msg(db[k] == eb[k], "T=%d C_in=%d C_out=%d: db[%d] = %.9g, the loop gives %.9g", T, C_in, C_out, k, (double)db[k], (double)eb[k]);
    free(x); free(W); free(dy); free(dx); free(dW); free(db); free(ex); free(eW); free(eb);
}
END_TEST

START_TEST(linear_counts_flops_and_params_without_int_overflow)
{
    // Llama-2-7B's FFN up-projection over 4096 tokens: 3.7e11 flops, far beyond INT_MAX.
    ck_assert(tw_linear_flops(4096, 4096, 11008) == 2LL * 4096 * 4096 * 11008);
    ck_assert(tw_linear_params(768, 3072, 1) == 768LL * 3072 + 3072);
    ck_assert(tw_linear_params(768, 3072, 0) == 768LL * 3072);
}
END_TEST

Suite *suite_linear(void) {
    Suite *s = suite_create("linear");
    TCase *tc = tcase_create("linear");
    tcase_add_loop_test(tc, linear_with_bias_matches_torch, 0, 5);
    tcase_add_loop_test(tc, linear_without_bias_matches_torch, 0, 5);
    tcase_add_loop_test(tc, linear_accumulates_in_float_in_index_order, 0, 5);
    tcase_add_loop_test(tc, linear_forward_is_bit_for_bit_the_naive_loop, 0, 5);
    tcase_add_loop_test(tc, linear_backward_is_bit_for_bit_the_loops_in_linear_h, 0, 5);
    tcase_add_test(tc, linear_counts_flops_and_params_without_int_overflow);
    suite_add_tcase(s, tc);
    return s;
}
