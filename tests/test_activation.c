// test_activation.c: ReLU, GELU (erf and tanh forms) and SiLU against torch.nn.functional in
// float64 on x in [-20, 20] (step 0.05) plus +-1e-6 .. +-1e4. Goldens: data/golden/core/act_*.
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

enum { N_ACT = 801 + 13 };   // as gen_activation in gen_core.py

static const struct { const char *golden; tw_act act; void (*fn)(float *, const float *, long);
                      float (*fn1)(float); double atol, rtol; } ACTS[] = {
    // ReLU is exact: it returns x or 0.
    { "core/act_relu", TW_ACT_RELU, tw_relu, tw_relu1, 0.0, 0.0 },
    // GELU/SiLU use float erff/tanhf/expf (a few ulp each) and a few float roundings: rtol 1e-5.
    // atol 1e-6 covers the negative tail, where 1 + erf(..) or 1 + tanh(..) cancels to ~1e-7 with
    // an absolute error of half a float ulp of 1 (6e-8) times 0.5|x| <= 10 near x = -20.
    { "core/act_gelu_erf", TW_ACT_GELU_ERF, tw_gelu_erf, tw_gelu_erf1, 1e-6, 1e-5 },
    { "core/act_gelu_tanh", TW_ACT_GELU_TANH, tw_gelu_tanh, tw_gelu_tanh1, 1e-6, 1e-5 },
    { "core/act_silu", TW_ACT_SILU, tw_silu, tw_silu1, 1e-6, 1e-5 },
};

START_TEST(activation_matches_torch)
{
    tw_npy x = tt_load("core/act_x", N_ACT), want = tt_load(ACTS[_i].golden, N_ACT);
    float *y = tt_zeros(N_ACT);
    ACTS[_i].fn(y, x.data, N_ACT);
    ck_assert_allclose(y, (const float *)want.data, N_ACT, ACTS[_i].atol, ACTS[_i].rtol);
    tw_npy_free(&x); tw_npy_free(&want); free(y);
}
END_TEST

// The scalar form, the array form in place (y aliases x) and tw_activation(act) are the same
// computation, so they must agree bit for bit (tolerance 0).
START_TEST(scalar_inplace_and_dispatched_forms_agree_exactly)
{
    tw_npy x = tt_load("core/act_x", N_ACT);
    const float *xf = x.data;
    float *a = tt_zeros(N_ACT), *b = tt_zeros(N_ACT);
    memcpy(b, xf, sizeof(float) * N_ACT);
    ACTS[_i].fn(b, b, N_ACT);
    tw_activation(a, xf, N_ACT, ACTS[_i].act);
    for (int j = 0; j < N_ACT; j++) {
        float s = ACTS[_i].fn1(xf[j]);
        ck_assert_msg(memcmp(&s, &b[j], 4) == 0 && memcmp(&s, &a[j], 4) == 0,
                      "%s at x=%g: scalar %g, in place %g, dispatched %g",
                      tw_act_name(ACTS[_i].act), (double)xf[j], (double)s, (double)b[j], (double)a[j]);
    }
    tw_npy_free(&x); free(a); free(b);
}
END_TEST

START_TEST(activation_names_match_the_config_spelling)
{
    ck_assert_str_eq(tw_act_name(TW_ACT_RELU), "relu");
    ck_assert_str_eq(tw_act_name(TW_ACT_GELU_ERF), "gelu");
    ck_assert_str_eq(tw_act_name(TW_ACT_GELU_TANH), "gelu_tanh");
    ck_assert_str_eq(tw_act_name(TW_ACT_SILU), "silu");
}
END_TEST

Suite *suite_activation(void) {
    Suite *s = suite_create("activation");
    TCase *tc = tcase_create("activation");
    tcase_add_loop_test(tc, activation_matches_torch, 0, 4);
    tcase_add_loop_test(tc, scalar_inplace_and_dispatched_forms_agree_exactly, 0, 4);
    tcase_add_test(tc, activation_names_match_the_config_spelling);
    suite_add_tcase(s, tc);
    return s;
}
