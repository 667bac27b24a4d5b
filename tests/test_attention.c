// test_attention.c: scaled dot-product attention for one head (lib/nn/sdpa.c) against float64
// PyTorch goldens (data/golden/model/sdpa/, from tests/golden/gen_model.py), plus properties:
// causality, the causal offset used by KV caches, rows of weights summing to 1, masked rows.
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"

// Case directories; their sizes and options are read from each case's cfg.npy
// (T, S, D, causal, offset, has_mask), written from SDPA_CASES in gen_model.py.
static const char *const SDPA_CASES[] = {
    "causal_T3", "single_T1", "padmask_T7", "cross_T3_S7", "offset_T3_S7", "bias_T2_S65",
};

START_TEST(sdpa_matches_torch_float64)
{
    char dir[96];
    snprintf(dir, sizeof dir, "model/sdpa/%s", SDPA_CASES[_i]);
    int *cfg = gc_load_i32(dir, "cfg", 6);
    const int T = cfg[0], S = cfg[1], D = cfg[2], causal = cfg[3], offset = cfg[4];
    float *q = gc_load(dir, "q", (long)T * D), *k = gc_load(dir, "k", (long)S * D);
    float *v = gc_load(dir, "v", (long)S * D);
    float *mask = cfg[5] ? gc_load(dir, "mask", (long)T * S) : NULL;
    float *want_out = gc_load(dir, "out", (long)T * D);
    float *want_scores = gc_load(dir, "scores", (long)T * S);
    float *want_weights = gc_load(dir, "weights", (long)T * S);
    float *out = tt_zeros((long)T * D), *scores = tt_zeros((long)T * S);
    float *weights = tt_zeros((long)T * S);

    tw_sdpa_forward(out, scores, weights, q, k, v, mask, T, S, D, causal, offset);
    // One float32 dot product of D <= 8 terms of O(1) values, a softmax and a D-term mix: each
    // result carries a few float32 roundings of O(1) quantities (~1e-7 each). Measured worst
    // error is 2.4e-7 abs; 2e-6 abs + 1e-5 rel is the single-op tolerance with a little room.
    // -inf scores (hidden keys) must match exactly (check_close treats infinities that way).
    ck_assert_allclose(scores, want_scores, (long)T * S, 2e-6, 1e-5);
    ck_assert_allclose(weights, want_weights, (long)T * S, 2e-6, 1e-5);
    ck_assert_allclose(out, want_out, (long)T * D, 2e-6, 1e-5);

    // The scores buffer is optional: without it the output must be identical (same operations).
    float *out2 = tt_zeros((long)T * D);
    tw_sdpa_forward(out2, NULL, weights, q, k, v, mask, T, S, D, causal, offset);
    ck_assert_allclose(out2, out, (long)T * D, 0.0, 0.0);

    free(cfg); free(q); free(k); free(v); free(mask); free(want_out); free(want_scores);
    free(want_weights); free(out); free(scores); free(weights); free(out2);
}
END_TEST

START_TEST(weights_rows_sum_to_one)
{
    const int T = 7, S = 7, D = 5;
    float *q = tt_rand(T * D, -2, 2, 1), *k = tt_rand(S * D, -2, 2, 2), *v = tt_rand(S * D, -2, 2, 3);
    float *out = tt_zeros(T * D), *w = tt_zeros(T * S);
    tw_sdpa_forward(out, NULL, w, q, k, v, NULL, T, S, D, 1, 0);
    for (int t = 0; t < T; t++) {
        double sum = 0;
        for (int s = 0; s < S; s++) sum += w[t * S + s];
        // S float32 weights each within 1 ulp-ish of exact: the sum is 1 within ~S * 6e-8.
        ck_assert_double_eq_tol(sum, 1.0, 1e-6);
        for (int s = t + 1; s < S; s++) ck_assert_float_eq(w[t * S + s], 0.0f);
    }
    free(q); free(k); free(v); free(out); free(w);
}
END_TEST

START_TEST(causal_output_at_t_ignores_later_inputs)
{
    const int T = 7, D = 6;
    float *q = tt_rand(T * D, -1, 1, 11), *k = tt_rand(T * D, -1, 1, 12), *v = tt_rand(T * D, -1, 1, 13);
    float *out = tt_zeros(T * D), *out2 = tt_zeros(T * D), *w = tt_zeros(T * T);
    tw_sdpa_forward(out, NULL, w, q, k, v, NULL, T, T, D, 1, 0);
    const int t = 3;   // change every input after position t
    for (int i = (t + 1) * D; i < T * D; i++) { q[i] += 5.0f; k[i] -= 3.0f; v[i] *= -2.0f; }
    tw_sdpa_forward(out2, NULL, w, q, k, v, NULL, T, T, D, 1, 0);
    // Hidden keys get weight exactly 0 and are skipped, so rows 0..t are bit-identical: tolerance 0.
    ck_assert_allclose(out2, out, (long)(t + 1) * D, 0.0, 0.0);
    // ...and the later rows did change (the perturbation was seen where it should be).
    ck_assert(gc_max_abs_err(out2 + (t + 1) * D, out + (t + 1) * D, (long)(T - t - 1) * D) > 1e-3);
    free(q); free(k); free(v); free(out); free(out2); free(w);
}
END_TEST

START_TEST(causal_offset_equals_the_last_rows_of_full_attention)
{
    // What a KV cache relies on: 3 new queries at positions 4..6 over keys 0..6 with offset 4 give
    // the last 3 rows of causal self-attention over all 7 positions.
    const int S = 7, T = 3, D = 4, pos0 = 4;
    float *q = tt_rand(S * D, -2, 2, 21), *k = tt_rand(S * D, -2, 2, 22), *v = tt_rand(S * D, -2, 2, 23);
    float *full = tt_zeros(S * D), *part = tt_zeros(T * D), *w = tt_zeros(S * S);
    tw_sdpa_forward(full, NULL, w, q, k, v, NULL, S, S, D, 1, 0);
    tw_sdpa_forward(part, NULL, w, q + pos0 * D, k, v, NULL, T, S, D, 1, pos0);
    // Same dot products, same softmax entries: identical (tolerance 0).
    ck_assert_allclose(part, full + pos0 * D, (long)T * D, 0.0, 0.0);
    free(q); free(k); free(v); free(full); free(part); free(w);
}
END_TEST

START_TEST(fully_masked_row_gives_zeros_not_nan)
{
    const int T = 2, S = 3, D = 2;
    float *q = tt_rand(T * D, -1, 1, 31), *k = tt_rand(S * D, -1, 1, 32), *v = tt_rand(S * D, -1, 1, 33);
    float mask[6] = { -INFINITY, -INFINITY, -INFINITY, 0, 0, -INFINITY };
    float out[4], w[6];
    tw_sdpa_forward(out, NULL, w, q, k, v, mask, T, S, D, 0, 0);
    ck_assert_float_eq(out[0], 0.0f);
    ck_assert_float_eq(out[1], 0.0f);
    ck_assert(isfinite(out[2]) && isfinite(out[3]));
    ck_assert_float_eq(w[5], 0.0f);
    free(q); free(k); free(v);
}
END_TEST

Suite *suite_attention(void) {
    Suite *s = suite_create("attention");
    TCase *tc = tcase_create("sdpa");
    tcase_add_loop_test(tc, sdpa_matches_torch_float64, 0,
                        (int)(sizeof SDPA_CASES / sizeof SDPA_CASES[0]));
    tcase_add_test(tc, weights_rows_sum_to_one);
    tcase_add_test(tc, causal_output_at_t_ignores_later_inputs);
    tcase_add_test(tc, causal_offset_equals_the_last_rows_of_full_attention);
    tcase_add_test(tc, fully_masked_row_gives_zeros_not_nan);
    suite_add_tcase(s, tc);
    return s;
}
