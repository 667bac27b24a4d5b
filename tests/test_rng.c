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

Suite *suite_rng(void) {
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("rng");
    tcase_add_test(tc, same_seed_gives_same_stream);
    tcase_add_test(tc, uniform_is_in_unit_interval_with_mean_one_half);
    tcase_add_test(tc, normal_has_zero_mean_and_unit_variance);
    suite_add_tcase(s, tc);
    return s;
}
