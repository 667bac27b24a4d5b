// test_norm.c: LayerNorm against torch.nn.functional.layer_norm and RMSNorm against the Llama
// formula x * rsqrt(mean(x^2) + eps) * w written in torch (torch 1.13 has no F.rms_norm), both in
// float64; row statistics; eps in {1e-6, 1e-5, 1e-2}; and the defining properties.
// Goldens: data/golden/core/norm_*.
//
// Tolerance for the golden comparisons: atol 1e-6, rtol 1e-5. lib/nn/norm.c computes in double and
// rounds each output once, the golden is rounded once too, so they differ by about 1 float ulp
// (6e-8 relative); 1e-5 relative is the project's standard one-op margin, still 100x tighter
// than any formula mistake (e.g. unbiased variance changes outputs by >= 1/(2C) ~ 0.8% at C=65).
#include <stdio.h>
#include <stdlib.h>
#include "testutil.h"

static const int SIZES[] = { 1, 3, 7, 64, 65 };
static const float EPS[] = { 1e-5f, 1e-6f, 1e-2f, 1e-5f, 1e-6f };   // as NORM_EPS in gen_core.py

static void norm_shape(int i, int *T, int *C) { *T = SIZES[(i + 1) % 5]; *C = SIZES[i]; }

static tw_npy load(int i, const char *what, long n) {
    char rel[64];
    snprintf(rel, sizeof rel, "core/norm_%d_%s", i, what);
    return tt_load(rel, n);
}

START_TEST(layernorm_matches_torch_with_and_without_bias)
{
    int T, C;
    norm_shape(_i, &T, &C);
    long n = (long)T * C;
    tw_npy x = load(_i, "x", n), g = load(_i, "gamma", C), b = load(_i, "beta", C),
           want = load(_i, "ln", n), want_nb = load(_i, "ln_nobias", n);
    float *out = tt_zeros(n);
    tw_layernorm_forward(out, NULL, NULL, x.data, g.data, b.data, T, C, EPS[_i]);
    ck_assert_allclose(out, (const float *)want.data, n, 1e-6, 1e-5);
    tw_layernorm_forward(out, NULL, NULL, x.data, g.data, NULL, T, C, EPS[_i]);
    ck_assert_allclose(out, (const float *)want_nb.data, n, 1e-6, 1e-5);
    free(out);
    tw_npy_free(&x); tw_npy_free(&g); tw_npy_free(&b); tw_npy_free(&want); tw_npy_free(&want_nb);
}
END_TEST

START_TEST(layernorm_reports_mean_and_rstd_and_may_run_in_place)
{
    int T, C;
    norm_shape(_i, &T, &C);
    long n = (long)T * C;
    tw_npy x = load(_i, "x", n), g = load(_i, "gamma", C), b = load(_i, "beta", C),
           want = load(_i, "ln", n), wm = load(_i, "ln_mean", T), wr = load(_i, "ln_rstd", T);
    float *buf = tt_zeros(n), *mean = tt_zeros(T), *rstd = tt_zeros(T);
    for (long j = 0; j < n; j++) buf[j] = ((const float *)x.data)[j];
    tw_layernorm_forward(buf, mean, rstd, buf, g.data, b.data, T, C, EPS[_i]);   // out aliases x
    ck_assert_allclose(buf, (const float *)want.data, n, 1e-6, 1e-5);
    // Statistics are computed in double and rounded once: 1 ulp apart from the golden, so rtol
    // 1e-6 (rstd reaches 1/sqrt(eps) = 1000 when C = 1, hence relative, not absolute).
    ck_assert_allclose(mean, (const float *)wm.data, T, 1e-7, 1e-6);
    ck_assert_allclose(rstd, (const float *)wr.data, T, 0.0, 1e-6);
    free(buf); free(mean); free(rstd);
    tw_npy_free(&x); tw_npy_free(&g); tw_npy_free(&b); tw_npy_free(&want); tw_npy_free(&wm); tw_npy_free(&wr);
}
END_TEST

START_TEST(rmsnorm_matches_torch_with_weight_and_unit_gain)
{
    int T, C;
    norm_shape(_i, &T, &C);
    long n = (long)T * C;
    tw_npy x = load(_i, "x", n), g = load(_i, "gamma", C), want = load(_i, "rms", n),
           want_unit = load(_i, "rms_unit", n), want_stat = load(_i, "rms_stat", T);
    float *out = tt_zeros(n), *rms = tt_zeros(T);
    tw_rmsnorm_forward(out, rms, x.data, g.data, T, C, EPS[_i]);
    ck_assert_allclose(out, (const float *)want.data, n, 1e-6, 1e-5);
    ck_assert_allclose(rms, (const float *)want_stat.data, T, 0.0, 1e-6);   // one rounding each side
    tw_rmsnorm_forward(out, NULL, x.data, NULL, T, C, EPS[_i]);
    ck_assert_allclose(out, (const float *)want_unit.data, n, 1e-6, 1e-5);
    free(out); free(rms);
    tw_npy_free(&x); tw_npy_free(&g); tw_npy_free(&want); tw_npy_free(&want_unit); tw_npy_free(&want_stat);
}
END_TEST

// Property: before the affine step LayerNorm rows have mean 0 and variance var/(var + eps).
// Inputs U(-3, 5) have variance ~5 for C >= 3, so with eps = 1e-6 the variance is 1 within 2e-7;
// float rounding of C outputs adds ~1e-7 per element. Tolerance 1e-5 on both moments.
// (C = 1 is excluded: a single value has variance 0 and normalises to 0, tested by the golden.)
START_TEST(layernorm_rows_have_mean_zero_and_unit_variance_before_affine)
{
    const int C = SIZES[_i + 1], T = 4;
    float *x = tt_rand((long)T * C, -3, 5, 70 + _i), *out = tt_zeros((long)T * C);
    float *ones = tt_zeros(C);
    for (int c = 0; c < C; c++) ones[c] = 1.0f;
    tw_layernorm_forward(out, NULL, NULL, x, ones, NULL, T, C, 1e-6f);
    for (int t = 0; t < T; t++) {
        double m = 0, v = 0;
        for (int c = 0; c < C; c++) m += out[t * C + c];
        m /= C;
        for (int c = 0; c < C; c++) v += (out[t * C + c] - m) * (out[t * C + c] - m);
        v /= C;
        ck_assert_double_eq_tol(m, 0.0, 1e-5);
        ck_assert_double_eq_tol(v, 1.0, 1e-5);
    }
    free(x); free(out); free(ones);
}
END_TEST

// Property: RMSNorm with unit gain gives rows of RMS sqrt(ms/(ms + eps)). Inputs have |x| >= 0.5
// (ms >= 0.25), so with eps = 1e-6 that is 1 within 2e-6; tolerance 1e-5.
START_TEST(rmsnorm_with_unit_gain_gives_unit_rms)
{
    const int C = SIZES[_i], T = 3;
    float *x = tt_rand((long)T * C, 0.5f, 4.0f, 90 + _i), *out = tt_zeros((long)T * C);
    for (int j = 0; j < T * C; j += 2) x[j] = -x[j];
    tw_rmsnorm_forward(out, NULL, x, NULL, T, C, 1e-6f);
    for (int t = 0; t < T; t++) {
        double ss = 0;
        for (int c = 0; c < C; c++) ss += (double)out[t * C + c] * out[t * C + c];
        ck_assert_double_eq_tol(sqrt(ss / C), 1.0, 1e-5);
    }
    free(x); free(out);
}
END_TEST

Suite *suite_norm(void) {
    Suite *s = suite_create("norm");
    TCase *tc = tcase_create("norm");
    tcase_add_loop_test(tc, layernorm_matches_torch_with_and_without_bias, 0, 5);
    tcase_add_loop_test(tc, layernorm_reports_mean_and_rstd_and_may_run_in_place, 0, 5);
    tcase_add_loop_test(tc, rmsnorm_matches_torch_with_weight_and_unit_gain, 0, 5);
    tcase_add_loop_test(tc, layernorm_rows_have_mean_zero_and_unit_variance_before_affine, 0, 4);
    tcase_add_loop_test(tc, rmsnorm_with_unit_gain_gives_unit_rms, 0, 5);
    suite_add_tcase(s, tc);
    return s;
}
