// test_ffn.c: the feed-forward network (lib/nn/ffn.c), classic and SwiGLU, against float64 PyTorch
// goldens (data/golden/model/ffn/, from tests/golden/gen_model.py).
#include <stdlib.h>
#include "golden_case.h"

// Case directories; each cfg.npy holds T, C, F, act (tw_act), bias, swiglu. Covered: ReLU with
// biases, exact (erf) GELU with biases at T = 1 and F = 65, tanh GELU without biases, SwiGLU.
static const char *const FFN_CASES[] = {
    "relu_bias", "gelu_bias_F65", "gelu_tanh", "swiglu", "swiglu_T7",
};

START_TEST(ffn_matches_torch_float64)
{
    char dir[96];
    snprintf(dir, sizeof dir, "model/ffn/%s", FFN_CASES[_i]);
    int *c = gc_load_i32(dir, "cfg", 6);
    const int T = c[0], C = c[1], F = c[2], bias = c[4], swiglu = c[5];
    const tw_act act = (tw_act)c[3];
    const long TC = (long)T * C, TF = (long)T * F;
    float *x = gc_load(dir, "x", TC), *want = gc_load(dir, "out", TC);
    float *out = tt_zeros(TC), *h1 = tt_zeros(TF), *h2 = tt_zeros(TF), *h3 = tt_zeros(TF);
    // Tolerance 2e-6 abs + 2e-5 rel: two float32 matrix products (C, F <= 65 terms) around one
    // activation, inputs of std 2, so intermediate magnitudes reach ~5 and each product adds a few
    // float32 roundings of them; the float activations (erff, tanhf, expf) are within a few ulp.
    // This is the one-op tolerance doubled for the two products (measured worst: 4e-6 abs on the
    // largest outputs, well inside 2e-6 + 2e-5 * |want| there).
    if (swiglu) {
        float *wg = gc_load(dir, "ffn.gate", (long)F * C), *wu = gc_load(dir, "ffn.up", (long)F * C);
        float *wd = gc_load(dir, "ffn.down", (long)C * F);
        tw_swiglu_forward(out, h1, h2, h3, x, tw_weight_fp32(wg), tw_weight_fp32(wu),
                          tw_weight_fp32(wd), T, C, F);
        float *g = gc_load(dir, "gate", TF), *u = gc_load(dir, "up", TF), *a = gc_load(dir, "act", TF);
        ck_assert_allclose(h1, g, TF, 2e-6, 2e-5);
        ck_assert_allclose(h2, u, TF, 2e-6, 2e-5);
        ck_assert_allclose(h3, a, TF, 2e-6, 2e-5);
        free(wg); free(wu); free(wd); free(g); free(u); free(a);
    } else {
        float *w1 = gc_load(dir, "ffn.w1", (long)F * C), *w2 = gc_load(dir, "ffn.w2", (long)C * F);
        float *b1 = bias ? gc_load(dir, "ffn.b1", F) : NULL, *b2 = bias ? gc_load(dir, "ffn.b2", C) : NULL;
        tw_ffn_forward(out, h1, x, tw_weight_fp32(w1), b1, tw_weight_fp32(w2), b2, T, C, F, act);
        float *hid = gc_load(dir, "hidden", TF);
        ck_assert_allclose(h1, hid, TF, 2e-6, 2e-5);
        free(w1); free(w2); free(b1); free(b2); free(hid);
    }
    ck_assert_allclose(out, want, TC, 2e-6, 2e-5);
    free(c); free(x); free(want); free(out); free(h1); free(h2); free(h3);
}
END_TEST

START_TEST(ffn_acts_on_each_position_alone)
{
    // Position-wise: running the rows one at a time gives the same result as all together.
    const int T = 3, C = 5, F = 7;
    float *x = tt_rand(T * C, -2, 2, 1), *w1 = tt_rand(F * C, -1, 1, 2), *w2 = tt_rand(C * F, -1, 1, 3);
    float *w3 = tt_rand(F * C, -1, 1, 4);
    float *all = tt_zeros(T * C), *one = tt_zeros(T * C), *h = tt_zeros(3 * T * F);
    const tw_weight g = tw_weight_fp32(w1), u = tw_weight_fp32(w3), d = tw_weight_fp32(w2);
    tw_swiglu_forward(all, h, h + T * F, h + 2 * T * F, x, g, u, d, T, C, F);
    for (int t = 0; t < T; t++)
        tw_swiglu_forward(one + t * C, h, h + F, h + 2 * F, x + t * C, g, u, d, 1, C, F);
    ck_assert_allclose(one, all, (long)T * C, 0.0, 0.0);   // same arithmetic: tolerance 0
    free(x); free(w1); free(w2); free(w3); free(all); free(one); free(h);
}
END_TEST

Suite *suite_ffn(void) {
    Suite *s = suite_create("ffn");
    TCase *tc = tcase_create("ffn");
    tcase_add_loop_test(tc, ffn_matches_torch_float64, 0,
                        (int)(sizeof FFN_CASES / sizeof FFN_CASES[0]));
    tcase_add_test(tc, ffn_acts_on_each_position_alone);
    suite_add_tcase(s, tc);
    return s;
}
