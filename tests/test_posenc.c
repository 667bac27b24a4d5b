// test_posenc.c: the 2017 sinusoidal table against a float64 torch implementation (even and odd
// C, position offsets up to 1000), its bound |pe| <= 1, and learned position addition.
// Goldens: data/golden/core/sin_*, learned_*.
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"

static const int SIZES[] = { 1, 3, 7, 64, 65 };
static const int POS0[] = { 0, 5, 100, 1000, 3 };   // as SIN_POS0 in gen_core.py

// Tolerance atol 1e-6: both sides compute the angle and sin/cos in double and round once, so they
// agree to about half a float ulp (<= 6e-8 for |pe| <= 1); the angle at position 1064 is still
// exact to ~1e-13 in double.
START_TEST(sinusoidal_matches_torch)
{
    const int T = SIZES[(_i + 2) % 5], C = SIZES[_i];
    char rel[32];
    snprintf(rel, sizeof rel, "core/sin_%d", _i);
    tw_npy want = tt_load(rel, (long)T * C);
    float *pe = tt_zeros((long)T * C);
    tw_posenc_sinusoidal(pe, T, C, POS0[_i]);
    ck_assert_allclose(pe, (const float *)want.data, (long)T * C, 1e-6, 0.0);
    tw_npy_free(&want); free(pe);
}
END_TEST

// Property: every entry is a sine or cosine, so |pe| <= 1, even at large positions; and position
// p's row from a table started at pos0 equals row p - pos0 + k of a table started at pos0 - k
// (bit for bit: the same double computation). Exact comparisons.
START_TEST(sinusoidal_is_bounded_and_offsets_are_consistent)
{
    const int T = 64, C = SIZES[_i], pos0 = 100000;
    float *a = tt_zeros((long)T * C), *b = tt_zeros((long)(T + 10) * C);
    tw_posenc_sinusoidal(a, T, C, pos0);
    tw_posenc_sinusoidal(b, T + 10, C, pos0 - 10);
    for (long j = 0; j < (long)T * C; j++) ck_assert(fabsf(a[j]) <= 1.0f);
    ck_assert_allclose(a, b + 10 * C, (long)T * C, 0.0, 0.0);
    free(a); free(b);
}
END_TEST

// Tolerance 0: one float32 addition per element, correctly rounded both here and in torch.
START_TEST(learned_add_adds_table_rows_from_pos0)
{
    enum { T = 5, C = 7, P = 16 };
    tw_npy x = tt_load("core/learned_x", T * C), table = tt_load("core/learned_table", P * C),
           want = tt_load("core/learned_out", T * C);
    float got[T * C];
    for (int j = 0; j < T * C; j++) got[j] = ((const float *)x.data)[j];
    tw_posenc_learned_add(got, table.data, T, C, 9);
    ck_assert_allclose(got, (const float *)want.data, T * C, 0.0, 0.0);
    tw_npy_free(&x); tw_npy_free(&table); tw_npy_free(&want);
}
END_TEST

Suite *suite_posenc(void) {
    Suite *s = suite_create("posenc");
    TCase *tc = tcase_create("posenc");
    tcase_add_loop_test(tc, sinusoidal_matches_torch, 0, 5);
    tcase_add_loop_test(tc, sinusoidal_is_bounded_and_offsets_are_consistent, 0, 5);
    tcase_add_test(tc, learned_add_adds_table_rows_from_pos0);
    suite_add_tcase(s, tc);
    return s;
}
