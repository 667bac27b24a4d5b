// test_softmax.c: tw_softmax_rows against torch.softmax(x / temperature) in float64, extreme and
// masked rows, the documented results for fully masked and +inf rows, and rows summing to 1.
// Goldens: data/golden/core/softmax_*.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

static const int SIZES[] = { 1, 3, 7, 64, 65 };
static const float TEMPS[] = { 1.0f, 0.5f, 2.0f, 0.7f, 1.3f };   // as SOFTMAX_TEMPS in gen_core.py

// Tolerance atol 1e-6, rtol 1e-5: each weight is one expf (a few ulp) of an argument with one
// subtraction and one division (relative error 1e-7 of an argument <= ~20 in magnitude where the
// weight is not negligible, i.e. <= 2e-6 relative in the weight), then one division by a sum
// kept in double.
START_TEST(softmax_matches_torch_with_temperature)
{
    const int rows = SIZES[(_i + 1) % 5], cols = SIZES[_i];
    char rel[64];
    snprintf(rel, sizeof rel, "core/softmax_%d_x", _i);
    tw_npy x = tt_load(rel, (long)rows * cols);
    snprintf(rel, sizeof rel, "core/softmax_%d_y", _i);
    tw_npy want = tt_load(rel, (long)rows * cols);
    float *y = tt_zeros((long)rows * cols);
    tw_softmax_rows(y, x.data, rows, cols, TEMPS[_i]);
    ck_assert_allclose(y, (const float *)want.data, (long)rows * cols, 1e-6, 1e-5);
    tw_npy_free(&x); tw_npy_free(&want); free(y);
}
END_TEST

// Logits of +-1e4, differences of 1 and 10 at magnitude 1e4, and rows partly masked with -inf.
// Same tolerance as above: subtracting the max is exact here (Sterbenz), so nothing overflows.
START_TEST(softmax_handles_huge_logits_and_partial_masks)
{
    tw_npy x = tt_load("core/softmax_extreme_x", 25), w1 = tt_load("core/softmax_extreme_y_t1", 25),
           w3 = tt_load("core/softmax_extreme_y_t3", 25);
    float y[25];
    tw_softmax_rows(y, x.data, 5, 5, 1.0f);
    ck_assert_allclose(y, (const float *)w1.data, 25, 1e-6, 1e-5);
    tw_softmax_rows(y, x.data, 5, 5, 3.0f);
    ck_assert_allclose(y, (const float *)w3.data, 25, 1e-6, 1e-5);
    tw_npy_free(&x); tw_npy_free(&w1); tw_npy_free(&w3);
}
END_TEST

// Documented in softmax.h: an all -inf row (torch gives NaN) becomes zeros, and neighbouring rows
// are unaffected. Exact comparison: the contract says 0.0f.
START_TEST(fully_masked_row_gives_zeros)
{
    float x[6] = { -INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f, 0.0f }, y[6];
    tw_softmax_rows(y, x, 2, 3, 1.0f);
    for (int j = 0; j < 3; j++) ck_assert_float_eq(y[j], 0.0f);
    for (int j = 3; j < 6; j++) ck_assert_float_eq_tol(y[j], 1.0f / 3.0f, 1e-7f);
}
END_TEST

// Documented in softmax.c and docs/core.md: +inf entries share the mass equally (the limit of
// softmax as those logits grow together); everything else gets 0, and no NaN appears.
START_TEST(row_with_plus_inf_shares_mass_among_inf_entries)
{
    float x[5] = { INFINITY, 3.0f, -INFINITY, INFINITY, 1e30f }, y[5];
    tw_softmax_rows(y, x, 1, 5, 0.5f);
    const float want[5] = { 0.5f, 0.0f, 0.0f, 0.5f, 0.0f };
    ck_assert_allclose(y, want, 5, 0.0, 0.0);
    // A NaN logit has no meaningful result: the whole row is NaN, so the error is visible.
    float z[3] = { 1.0f, NAN, 2.0f };
    tw_softmax_rows(z, z, 1, 3, 1.0f);
    for (int j = 0; j < 3; j++) ck_assert(isnan(z[j]));
}
END_TEST

// Property: every row sums to 1. Summing cols float weights adds cols roundings of 2^-24 relative
// on top of each weight's own ~2e-6 relative error: tolerance 1e-5 covers cols <= 65.
START_TEST(softmax_rows_sum_to_one_and_may_run_in_place)
{
    const int rows = 5, cols = SIZES[_i];
    float *x = tt_rand((long)rows * cols, -30, 30, 200 + _i), *y = tt_zeros((long)rows * cols);
    tw_softmax_rows(y, x, rows, cols, 0.8f);
    tw_softmax_rows(x, x, rows, cols, 0.8f);                     // in place must give the same
    ck_assert_allclose(x, y, (long)rows * cols, 0.0, 0.0);
    for (int r = 0; r < rows; r++) {
        double sum = 0;
        for (int c = 0; c < cols; c++) {
            ck_assert(y[r * cols + c] >= 0.0f && y[r * cols + c] <= 1.0f);
            sum += y[r * cols + c];
        }
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    }
    free(x); free(y);
}
END_TEST

Suite *suite_softmax(void) {
    Suite *s = suite_create("softmax");
    TCase *tc = tcase_create("softmax");
    tcase_add_loop_test(tc, softmax_matches_torch_with_temperature, 0, 5);
    tcase_add_test(tc, softmax_handles_huge_logits_and_partial_masks);
    tcase_add_test(tc, fully_masked_row_gives_zeros);
    tcase_add_test(tc, row_with_plus_inf_shares_mass_among_inf_entries);
    tcase_add_loop_test(tc, softmax_rows_sum_to_one_and_may_run_in_place, 0, 5);
    suite_add_tcase(s, tc);
    return s;
}
