// test_rope.c: RoPE in both pairings against torch: ADJACENT vs Meta Llama's complex
// multiplication (view_as_complex), HALVES vs Hugging Face's rotate_half, bases 1e4 and 1e6,
// position offsets up to 4096, D from 2 to 66. Then the properties that make RoPE work.
// Goldens: data/golden/core/rope_*.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

static const int SIZES[] = { 1, 3, 7, 64, 65 };   // T of case i; the rest as in gen_core.py
static const int D_[] = { 2, 6, 8, 64, 66 }, H_[] = { 1, 2, 3, 1, 2 }, POS0[] = { 0, 7, 100, 4096, 1 };
static const float THETA[] = { 10000.0f, 1e6f, 10000.0f, 1e6f, 10000.0f };

// Tolerance atol 1e-6, rtol 1e-5: the angle, cos and sin are double and rounded to float (half an
// ulp each, 6e-8 relative), then a' = a c - b s costs two products and a sum in float; with
// |a|, |b| <= 2 the absolute error stays below 2 * 2 * 3 * 6e-8 ~ 7e-7.
static void check_pairing(int i, int halves) {
    const int T = SIZES[i], H = H_[i], D = D_[i];
    const long n = (long)T * H * D;
    char rel[64];
    snprintf(rel, sizeof rel, "core/rope_%d_x", i);
    tw_npy x = tt_load(rel, n);
    snprintf(rel, sizeof rel, "core/rope_%d_%s", i, halves ? "halves" : "adjacent");
    tw_npy want = tt_load(rel, n);
    float *got = tt_zeros(n);
    memcpy(got, x.data, sizeof(float) * (size_t)n);
    tw_rope_forward(got, halves ? TW_ROPE_HALVES : TW_ROPE_ADJACENT, T, H, D, POS0[i], THETA[i]);
    ck_assert_allclose(got, (const float *)want.data, n, 1e-6, 1e-5);
    tw_npy_free(&x); tw_npy_free(&want); free(got);
}

START_TEST(rope_adjacent_matches_llama_complex_multiplication) { check_pairing(_i, 0); }
END_TEST

START_TEST(rope_halves_matches_hf_rotate_half) { check_pairing(_i, 1); }
END_TEST

// The frequency is theta^(-2i/D) computed in double and rounded: within half a float ulp of the
// double formula (rtol 2^-24 plus nothing else). Pair 0 always turns at 1 radian per position.
START_TEST(rope_freq_is_theta_to_the_minus_2i_over_D)
{
    const int D = D_[_i];
    for (int i = 0; i < D / 2; i++) {
        double want = pow((double)THETA[_i], -2.0 * i / D);
        ck_assert_double_eq_tol(tw_rope_freq(i, D, THETA[_i]), want, want / 16777216.0);
    }
    ck_assert_float_eq(tw_rope_freq(0, D, THETA[_i]), 1.0f);
}
END_TEST

// Property: a rotation keeps the length of each rotated pair. Float rounding of c, s and the
// products changes a^2 + b^2 by a few 1e-7 relative; tolerance rtol 2e-6 (plus 1e-7 absolute for
// pairs that are nearly zero).
START_TEST(rope_preserves_the_norm_of_each_pair)
{
    const int T = 9, H = 2, D = 2 * SIZES[_i];
    const long n = (long)T * H * D;
    for (int halves = 0; halves < 2; halves++) {
        float *x = tt_rand(n, -2, 2, 300 + _i), *y = tt_zeros(n);
        memcpy(y, x, sizeof(float) * (size_t)n);
        tw_rope_forward(y, halves ? TW_ROPE_HALVES : TW_ROPE_ADJACENT, T, H, D, 1234, 10000.0f);
        for (long r = 0; r < (long)T * H; r++)
            for (int i = 0; i < D / 2; i++) {
                int a = halves ? i : 2 * i, b = halves ? i + D / 2 : 2 * i + 1;
                const float *xr = x + r * D, *yr = y + r * D;
                double before = (double)xr[a] * xr[a] + (double)xr[b] * xr[b];
                double after = (double)yr[a] * yr[a] + (double)yr[b] * yr[b];
                ck_assert_double_eq_tol(after, before, 1e-7 + 2e-6 * before);
            }
        free(x); free(y);
    }
}
END_TEST

static double dot(const float *a, const float *b, int n) {
    double s = 0;
    for (int j = 0; j < n; j++) s += (double)a[j] * b[j];
    return s;
}

// Property: after rotation, q(at m) . k(at n) depends only on m - n. Shift both positions by 1000
// and compare. Each rotated vector carries ~2e-7 relative error per element, so the dot product
// differs by at most ~1e-6 * |q| |k|; tolerance 2e-6 * |q| |k|.
START_TEST(rope_scores_depend_only_on_relative_position)
{
    const int D = 2 * SIZES[_i];
    for (int halves = 0; halves < 2; halves++) {
        tw_rope_kind kind = halves ? TW_ROPE_HALVES : TW_ROPE_ADJACENT;
        float *q = tt_rand(D, -1, 1, 400 + _i), *k = tt_rand(D, -1, 1, 500 + _i);
        float *q1 = tt_zeros(D), *k1 = tt_zeros(D), *q2 = tt_zeros(D), *k2 = tt_zeros(D);
        memcpy(q1, q, sizeof(float) * D); memcpy(q2, q, sizeof(float) * D);
        memcpy(k1, k, sizeof(float) * D); memcpy(k2, k, sizeof(float) * D);
        tw_rope_forward(q1, kind, 1, 1, D, 17, 10000.0f);          // q at 17, k at 5
        tw_rope_forward(k1, kind, 1, 1, D, 5, 10000.0f);
        tw_rope_forward(q2, kind, 1, 1, D, 1017, 10000.0f);        // both moved by 1000
        tw_rope_forward(k2, kind, 1, 1, D, 1005, 10000.0f);
        double scale = sqrt(dot(q, q, D) * dot(k, k, D));
        ck_assert_double_eq_tol(dot(q1, k1, D), dot(q2, k2, D), 2e-6 * scale);
        // And it does depend on the difference (unless D = 2 happens to alias): moving only k by 3
        // must change the score for any D >= 2 with generic inputs.
        memcpy(k2, k, sizeof(float) * D);
        tw_rope_forward(k2, kind, 1, 1, D, 8, 10000.0f);
        ck_assert(fabs(dot(q1, k1, D) - dot(q1, k2, D)) > 1e-4 * scale);
        free(q); free(k); free(q1); free(k1); free(q2); free(k2);
    }
}
END_TEST

// Property: HALVES on permuted dims equals ADJACENT, permuted. With P moving dim 2i to i and
// 2i+1 to i + D/2: halves(P x) == P adjacent(x). Same float operations on the same operands, so
// the comparison is exact (tolerance 0).
START_TEST(rope_pairings_agree_after_permuting_dims)
{
    const int T = 5, H = 3, D = 2 * SIZES[_i];
    const long n = (long)T * H * D;
    float *x = tt_rand(n, -2, 2, 600 + _i), *px = tt_zeros(n), *want = tt_zeros(n);
    for (long r = 0; r < (long)T * H; r++)
        for (int i = 0; i < D / 2; i++) {
            px[r * D + i] = x[r * D + 2 * i];
            px[r * D + i + D / 2] = x[r * D + 2 * i + 1];
        }
    tw_rope_adjacent_forward(x, T, H, D, 42, 1e6f);
    tw_rope_halves_forward(px, T, H, D, 42, 1e6f);
    for (long r = 0; r < (long)T * H; r++)
        for (int i = 0; i < D / 2; i++) {
            want[r * D + i] = x[r * D + 2 * i];
            want[r * D + i + D / 2] = x[r * D + 2 * i + 1];
        }
    ck_assert_allclose(px, want, n, 0.0, 0.0);
    free(x); free(px); free(want);
}
END_TEST

START_TEST(rope_none_leaves_x_unchanged)
{
    float *x = tt_rand(24, -1, 1, 7), *y = tt_zeros(24);
    memcpy(y, x, sizeof(float) * 24);
    tw_rope_forward(y, TW_ROPE_NONE, 3, 2, 4, 10, 10000.0f);
    ck_assert_allclose(y, x, 24, 0.0, 0.0);
    free(x); free(y);
}
END_TEST

Suite *suite_rope(void) {
    Suite *s = suite_create("rope");
    TCase *tc = tcase_create("rope");
    tcase_add_loop_test(tc, rope_adjacent_matches_llama_complex_multiplication, 0, 5);
    tcase_add_loop_test(tc, rope_halves_matches_hf_rotate_half, 0, 5);
    tcase_add_loop_test(tc, rope_freq_is_theta_to_the_minus_2i_over_D, 0, 5);
    tcase_add_loop_test(tc, rope_preserves_the_norm_of_each_pair, 0, 5);
    tcase_add_loop_test(tc, rope_scores_depend_only_on_relative_position, 0, 5);
    tcase_add_loop_test(tc, rope_pairings_agree_after_permuting_dims, 0, 5);
    tcase_add_test(tc, rope_none_leaves_x_unchanged);
    suite_add_tcase(s, tc);
    return s;
}
