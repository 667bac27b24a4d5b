// test_quant.c: the naive quantization of lib/quant/q8_0.c against facts worked out by hand and
// against double-precision references: absmax scaling, ties to even, the rounding-error bound
// s/2, int4's range, non-finite input, refused group sizes, and the int8 matvec against the
// product of the dequantized values. Each test states its tolerance.
#include <math.h>
#include <stdlib.h>
#include "testutil.h"
#include "quant/q8_0.h"

// One row by hand: max |x| = 1.27, so s = 1.27 / 127 = 0.01 and q = round(x / 0.01).
// Tolerance: 0 on q; s equal to the float division 1.27f / 127.0f exactly.
START_TEST(absmax_scaling_of_one_row_by_hand)
{
    const float x[4] = { 0.5f, -1.27f, 0.01f, 1.0f };
    int8_t q[4];
    float s;
    tw_quant_groups(q, &s, x, 1, 4, TW_Q8_MAX);
    ck_assert_float_eq(s, 1.27f / 127.0f);
    ck_assert_int_eq(q[0], 50);
    ck_assert_int_eq(q[1], -127);
    ck_assert_int_eq(q[2], 1);
    ck_assert_int_eq(q[3], 100);
}
END_TEST

// With s = 1 exactly (max 127), x = k + 1/2 rounds to the even neighbour (torch.round's rule).
START_TEST(ties_round_to_even)
{
    const float x[6] = { 127.0f, 2.5f, -2.5f, 3.5f, 0.5f, -1.5f };
    const int8_t want[6] = { 127, 2, -2, 4, 0, -2 };
    int8_t q[6];
    float s;
    tw_quant_groups(q, &s, x, 1, 6, TW_Q8_MAX);
    ck_assert_float_eq(s, 1.0f);
    ck_assert_mem_eq(q, want, sizeof want);
}
END_TEST

// Every dequantized value is within s/2 of the original (plus the float error of q * s and of
// x / s, at most 2u relative: tolerance s/2 * (1 + 1e-6) + 2u |x|), and no q leaves [-qmax, qmax].
START_TEST(rounding_error_is_at_most_half_a_step_for_int8_and_int4)
{
    static const int gss[] = { 1, 4, 32, 64, 96 };
    const int qmaxes[2] = { TW_Q8_MAX, TW_Q4_MAX };
    const int rows = 5, cols = 192;
    float *w = tt_rand((long)rows * cols, -2, 2, 91), *back = tt_zeros((long)rows * cols);
    int8_t *q = malloc((size_t)rows * cols);
    float *s = tt_zeros((long)rows * cols);
    w[17] = 40.0f;   // an outlier
    for (int b = 0; b < 2; b++)
        for (int gi = 0; gi < 5; gi++) {
            int gs = gss[gi];
            tw_status st = b == 0 ? tw_q8_quantize(q, s, w, rows, cols, gs)
                                  : tw_q4_quantize(q, s, w, rows, cols, gs);
            ck_assert_int_eq(st, TW_OK);
            tw_dequant_groups(back, q, s, (long)rows * cols / gs, gs);
            for (long i = 0; i < (long)rows * cols; i++) {
                float sg = s[i / gs];
                ck_assert_int_le(abs(q[i]), qmaxes[b]);
                double tol = 0.5 * sg * (1 + 1e-6) + 2 * 5.96e-8 * fabs(w[i]);
                ck_assert_msg(fabs((double)back[i] - w[i]) <= tol, "qmax %d gs %d [%ld]: %g vs %g",
                              qmaxes[b], gs, i, (double)back[i], (double)w[i]);
            }
            // the group holding the largest |w| uses the full range
            int m = 0;
            for (int i = 0; i < gs; i++) if (abs(q[i]) > m) m = abs(q[i]);
            ck_assert_int_eq(m, qmaxes[b]);
        }
    free(w); free(back); free(q); free(s);
}
END_TEST

// Zeros get s = 0 and q = 0; NaN gives s = NaN, Inf gives s = Inf, both with q = 0, so a
// product that uses them is NaN (as in fp32); the weight quantizer refuses them instead.
START_TEST(zero_nan_and_inf_groups)
{
    float x[12] = { 0, 0, 0, 0, 1, NAN, 2, 3, -INFINITY, 1, 2, 3 };
    int8_t q[12];
    float s[3];
    tw_quant_groups(q, s, x, 3, 4, TW_Q8_MAX);
    ck_assert_float_eq(s[0], 0.0f);
    ck_assert(isnan(s[1]));
    ck_assert(isinf(s[2]));
    for (int i = 0; i < 12; i++) ck_assert_int_eq(q[i], 0);
    ck_assert_int_eq(tw_q8_quantize(q, s, x, 3, 4, 4), TW_ERR_ARG);
    ck_assert_int_eq(tw_q4_quantize(q, s, x + 8, 1, 4, 4), TW_ERR_ARG);
    // a matvec over the NaN group gives NaN
    int8_t W[12] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    float Ws[3] = { 1, 1, 1 }, y;
    tw_q8_matvec_naive(&y, W, Ws, q, s, 1, 12, 4);
    ck_assert(isnan(y));
}
END_TEST

// Group sizes that cannot work are refused, never truncated: 0, negative, too large, or not a
// divisor of the row width (stories260K's FFN width 172 with 64).
START_TEST(bad_group_sizes_are_refused)
{
    ck_assert_int_eq(tw_quant_check_group(64, 0), TW_ERR_ARG);
    ck_assert_int_eq(tw_quant_check_group(64, -32), TW_ERR_ARG);
    ck_assert_int_eq(tw_quant_check_group(1 << 20, TW_QUANT_MAX_GROUP * 2), TW_ERR_ARG);
    ck_assert_int_eq(tw_quant_check_group(172, 64), TW_ERR_SHAPE);
    ck_assert_int_eq(tw_quant_check_group(172, 4), TW_OK);
    float w[172] = { 0 };
    int8_t q[172];
    float s[172];
    ck_assert_int_eq(tw_q8_quantize(q, s, w, 1, 172, 64), TW_ERR_SHAPE);
    const int w260k[2] = { 64, 172 }, w15m[2] = { 288, 768 };
    ck_assert_int_eq(tw_quant_fit_group(w260k, 2, 64), 4);
    ck_assert_int_eq(tw_quant_fit_group(w15m, 2, 64), 32);
    ck_assert_int_eq(tw_quant_fit_group(w15m, 2, 1), 1);
    ck_assert_int_eq(tw_quant_fit_group(w15m, 2, 96), 96);   // 288 = 3 * 96, 768 = 8 * 96
}
END_TEST

// The naive int8 matvec against a double-precision product of the dequantized operands:
// sum_k (Wq_k Ws_g)(xq_k xs_g). Tolerance (n_g + 2) u sum_g |Ws_g xs_g| sum_k |w_k x_k|: the
// integer part is exact; each term is rounded twice and the float sum of n_g terms adds at most
// (n_g - 1) u of the absolute sum (Higham eq. 3.5).
START_TEST(naive_matvec_equals_the_dequantized_product)
{
    const int N = 7, K = 160, gs = 32, ng = K / gs;
    float *Wf = tt_rand((long)N * K, -1, 1, 93), *x = tt_rand(K, -3, 3, 94), y[7];
    int8_t W[7 * 160], xq[160];
    float Ws[7 * 5], xs[5];
    ck_assert_int_eq(tw_q8_quantize(W, Ws, Wf, N, K, gs), TW_OK);
    tw_q8_quantize_x_naive(xq, xs, x, ng, gs);
    tw_q8_matvec_naive(y, W, Ws, xq, xs, N, K, gs);
    for (int i = 0; i < N; i++) {
        double want = 0, A = 0;
        for (int g = 0; g < ng; g++) {
            double sc = (double)Ws[i * ng + g] * xs[g], a = 0;
            for (int k = g * gs; k < (g + 1) * gs; k++) {
                want += (double)W[i * K + k] * xq[k] * sc;
                a += fabs((double)W[i * K + k] * xq[k]);
            }
            A += fabs(sc) * a;
        }
        ck_assert_msg(fabs(y[i] - want) <= (ng + 2) * 5.9604644775390625e-8 * A,
                      "row %d: %.9g vs %.9g", i, (double)y[i], want);
    }
    free(Wf); free(x);
}
END_TEST

Suite *suite_quant(void) {
    Suite *s = suite_create("quant");
    TCase *tc = tcase_create("naive");
    tcase_add_test(tc, absmax_scaling_of_one_row_by_hand);
    tcase_add_test(tc, ties_round_to_even);
    tcase_add_test(tc, rounding_error_is_at_most_half_a_step_for_int8_and_int4);
    tcase_add_test(tc, zero_nan_and_inf_groups);
    tcase_add_test(tc, bad_group_sizes_are_refused);
    tcase_add_test(tc, naive_matvec_equals_the_dequantized_product);
    suite_add_tcase(s, tc);
    return s;
}
