// test_rng.c: the seeded generator is deterministic and matches its Python port
// (tests/golden/gen_core.py writes data/golden/core/rng_*.npy with the same algorithm).
#include <stdlib.h>
#include "testutil.h"

START_TEST(same_seed_gives_same_stream)
{
    tw_rng a, b;
    tw_rng_init(&a, 42);
    tw_rng_init(&b, 42);
    for (int i = 0; i < 1000; i++) ck_assert_uint_eq(tw_rng_next(&a), tw_rng_next(&b));
}
END_TEST

START_TEST(uniform_is_in_unit_interval_with_mean_one_half)
{
    tw_rng r;
    tw_rng_init(&r, 7);
    double sum = 0;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        float u = tw_rng_uniform(&r);
        ck_assert(u >= 0.0f && u < 1.0f);
        sum += u;
    }
    // The mean of n uniforms has standard deviation sqrt(1/12/n) = 0.0009; allow 5 sigma.
    ck_assert_double_eq_tol(sum / n, 0.5, 0.0046);
}
END_TEST

START_TEST(normal_has_zero_mean_and_unit_variance)
{
    tw_rng r;
    tw_rng_init(&r, 11);
    double s = 0, s2 = 0;
    const int n = 100000;
    for (int i = 0; i < n; i++) { double z = tw_rng_normal(&r); s += z; s2 += z * z; }
    // Standard errors: mean 1/sqrt(n) = 0.0032, variance sqrt(2/n) = 0.0045; allow 5 sigma.
    ck_assert_double_eq_tol(s / n, 0.0, 0.016);
    ck_assert_double_eq_tol(s2 / n - (s / n) * (s / n), 1.0, 0.023);
}
END_TEST

// ---- the C stream against the Python port in tests/golden/gen_core.py ----

// The 64-bit draws are integer arithmetic: bit for bit (golden words stored as (hi, lo) halves).
START_TEST(next_matches_python_port_bit_for_bit)
{
    tw_npy g = tt_load("core/rng_next_seed42", 128);
    const uint32_t *w = g.data;
    tw_rng r;
    tw_rng_init(&r, 42);
    for (int i = 0; i < 64; i++) {
        uint64_t want = ((uint64_t)w[2 * i] << 32) | w[2 * i + 1];
        ck_assert_uint_eq(tw_rng_next(&r), want);
    }
    tw_npy_free(&g);
}
END_TEST

// Uniforms are 24 bits times 2^-24 and fill_uniform is lo + (hi - lo) * u with every operation
// in float32 on both sides (numpy float32 scalars), so both are exact (tolerance 0).
START_TEST(uniform_and_fill_uniform_match_python_port_exactly)
{
    tw_npy u = tt_load("core/rng_uniform_seed7", 257), f = tt_load("core/rng_fill_uniform_seed3", 100);
    float got[257];
    tw_rng r;
    tw_rng_init(&r, 7);
    for (int i = 0; i < 257; i++) got[i] = tw_rng_uniform(&r);
    ck_assert_allclose(got, (const float *)u.data, 257, 0.0, 0.0);
    tw_rng_init(&r, 3);
    tw_rng_fill_uniform(&r, got, 100, -2.5f, 1.25f);
    ck_assert_allclose(got, (const float *)f.data, 100, 0.0, 0.0);
    tw_npy_free(&u); tw_npy_free(&f);
}
END_TEST

// Normals go through libm's log and cos in double, then round to float. Another libm may differ
// by an ulp in double, which can move the float result by at most one float ulp: rtol 2^-23.
START_TEST(normal_matches_python_port_to_one_float_ulp)
{
    tw_npy g = tt_load("core/rng_normal_seed11", 257);
    float got[257];
    tw_rng r;
    tw_rng_init(&r, 11);
    for (int i = 0; i < 257; i++) got[i] = tw_rng_normal(&r);
    ck_assert_allclose(got, (const float *)g.data, 257, 0.0, 1.0 / 8388608.0);
    tw_npy_free(&g);
}
END_TEST

Suite *suite_rng(void) {
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("rng");
    tcase_add_test(tc, same_seed_gives_same_stream);
    tcase_add_test(tc, uniform_is_in_unit_interval_with_mean_one_half);
    tcase_add_test(tc, normal_has_zero_mean_and_unit_variance);
    tcase_add_test(tc, next_matches_python_port_bit_for_bit);
    tcase_add_test(tc, uniform_and_fill_uniform_match_python_port_exactly);
    tcase_add_test(tc, normal_matches_python_port_to_one_float_ulp);
    suite_add_tcase(s, tc);
    return s;
}
