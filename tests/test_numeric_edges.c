// test_numeric_edges.c: the numeric edge cases a transformer meets in practice, each with a test:
// softmax of +-1e30 and of a fully masked row, RMSNorm/LayerNorm of an all-zero row, attention
// over a single token, RoPE at position 0 and at the last position of a long context, and the
// optional NaN/Inf check mode (lib/inspect/check_finite.h) that names the first non-finite tensor.
// The expected values are exact limits (0, 1, 1/n, the input itself) or float64 references
// computed here, so each test states why its tolerance is what it is.
#define _POSIX_C_SOURCE 200809L   // mkdtemp
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "testrun.h"
#include "inspect/check_finite.h"
#include "formats/llama2c.h"
#include "inspect/dump.h"

static int all_finite(const float *x, long n) { return tw_first_nonfinite(x, n) < 0; }

// ---- softmax ----

START_TEST(softmax_of_plus_minus_1e30_is_one_hot_without_nan)
{
    // exp(x - max) with max = 1e30: the other entries are exp(-1e30) and exp(-2e30), which
    // underflow to exactly 0, and the max's own term is exactly exp(0) = 1. So the result is
    // exact: atol 0.
    const float x[6] = { 1e30f, -1e30f, 0.0f,     -1e30f, 1e30f, 1e30f };
    const float want[6] = { 1.0f, 0.0f, 0.0f,     0.0f, 0.5f, 0.5f };
    float y[6];
    tw_softmax_rows(y, x, 2, 3, 1.0f);
    ck_assert_msg(all_finite(y, 6), "softmax of +-1e30 produced a NaN/Inf");
    ck_assert_allclose(y, want, 6, 0.0, 0.0);
}
END_TEST

START_TEST(softmax_of_equal_huge_logits_is_uniform)
{
    // All entries -1e30 (or +1e30): x - max = 0 for each, so each gets 1/3 up to the rounding of
    // 1/3 to float (half an ulp, ~3e-8): atol 1e-7.
    const float x[6] = { -1e30f, -1e30f, -1e30f, 1e30f, 1e30f, 1e30f };
    const float third = 1.0f / 3.0f, want[6] = { third, third, third, third, third, third };
    float y[6];
    tw_softmax_rows(y, x, 2, 3, 1.0f);
    ck_assert_allclose(y, want, 6, 1e-7, 0.0);
}
END_TEST

START_TEST(softmax_of_a_fully_masked_row_is_zero_not_nan)
{
    // softmax.h documents this: a row of -inf (every key hidden) becomes zeros, so attention over
    // it contributes nothing. The row after it must be untouched by the special case.
    const float x[6] = { -INFINITY, -INFINITY, -INFINITY, 0.0f, 0.0f, logf(2.0f) };
    float y[6];
    tw_softmax_rows(y, x, 2, 3, 1.0f);
    const float want[6] = { 0, 0, 0, 0.25f, 0.25f, 0.5f };
    // Row 2 is exp(0), exp(0), exp(ln 2) = 1, 1, 2 over 4: float rounding of expf(logf(2)) ~1e-7.
    ck_assert_allclose(y, want, 6, 1e-7, 1e-6);
}
END_TEST

START_TEST(softmax_at_tiny_temperature_stays_finite)
{
    // (x - max) / 1e-30 is -1e30 for the smaller entry: it must go to 0, never to NaN
    // (dividing before subtracting the max would give inf - inf).
    const float x[2] = { 1.0f, 2.0f }, want[2] = { 0.0f, 1.0f };
    float y[2];
    tw_softmax_rows(y, x, 1, 2, 1e-30f);
    ck_assert_allclose(y, want, 2, 0.0, 0.0);
}
END_TEST

START_TEST(softmax_with_a_nan_input_is_flagged_by_the_check_mode)
{
    // A NaN logit makes its row NaN (documented); the check mode must find it, in the right row.
    float x[6] = { 0.0f, 1.0f, 2.0f, 0.0f, NAN, 2.0f }, y[6];
    tw_softmax_rows(y, x, 2, 3, 1.0f);
    ck_assert_int_eq(tw_first_nonfinite(y, 3), -1);
    ck_assert_int_eq(tw_first_nonfinite(y, 6), 3);
}
END_TEST

// ---- norms ----

START_TEST(rmsnorm_of_an_all_zero_row_is_zero)
{
    // 0 / sqrt(0 + eps) = 0 exactly; the reported rms is sqrt(eps) (float rounding: rtol 1e-6).
    enum { C = 7 };
    float x[2 * C] = { 0 }, out[2 * C], rms[2];
    float w[C] = { 1, 2, 3, 4, 5, 6, 7 };
    for (int c = 0; c < C; c++) x[C + c] = (float)(c + 1);   // a normal row beside it
    const float eps = 1e-5f;
    tw_rmsnorm_forward(out, rms, x, w, 2, C, eps);
    const float zeros[C] = { 0 };
    ck_assert_allclose(out, zeros, C, 0.0, 0.0);
    const float want_rms = sqrtf(eps);
    ck_assert_allclose(rms, &want_rms, 1, 0.0, 1e-6);
    ck_assert_msg(all_finite(out, 2 * C), "RMSNorm produced a NaN/Inf");
}
END_TEST

START_TEST(layernorm_of_an_all_zero_row_is_beta)
{
    // mean 0, variance 0: (0 - 0) * 1/sqrt(eps) * gamma + beta = beta exactly; rstd = 1/sqrt(eps)
    // (float rounding: rtol 1e-6). A constant non-zero row gives the same (x - mean = 0).
    enum { C = 5 };
    float x[2 * C], out[2 * C], mean[2], rstd[2];
    const float gamma[C] = { 1, -2, 3, -4, 5 }, beta[C] = { 0.5f, -0.5f, 0.25f, 0, 1 };
    for (int c = 0; c < C; c++) { x[c] = 0.0f; x[C + c] = 3.0f; }
    const float eps = 1e-5f;
    tw_layernorm_forward(out, mean, rstd, x, gamma, beta, 2, C, eps);
    ck_assert_allclose(out, beta, C, 0.0, 0.0);
    ck_assert_allclose(out + C, beta, C, 0.0, 0.0);
    const float want_rstd = 1.0f / sqrtf(eps);
    ck_assert_allclose(rstd, &want_rstd, 1, 0.0, 1e-6);
    ck_assert_float_eq(mean[0], 0.0f);
}
END_TEST

// ---- attention ----

START_TEST(attention_over_one_token_returns_its_value)
{
    // With one key, softmax of a single score is exactly 1 whatever the score (even 1e30 or
    // -1e30), so the output is v itself: atol 0. Causal or not, any offset.
    enum { D = 6 };
    const float big = 1e15f;   // q.k = 6e30 / sqrt(6): huge but finite
    float q[D], k[D], v[D], out[D], scores[1], weights[1];
    for (int d = 0; d < D; d++) { q[d] = big; k[d] = (d % 2 ? -1.0f : 1.0f) * big; v[d] = (float)d - 2.5f; }
    for (int causal = 0; causal < 2; causal++) {
        tw_sdpa_forward(out, scores, weights, q, k, v, NULL, 1, 1, D, causal, 0);
        ck_assert_float_eq(weights[0], 1.0f);
        ck_assert_allclose(out, v, D, 0.0, 0.0);
    }
}
END_TEST

START_TEST(attention_with_its_only_key_masked_outputs_zero)
{
    // An additive -inf mask on the only key: the row is fully masked, its weights are 0
    // (softmax.h), and the output is the empty average 0, not NaN.
    enum { D = 4 };
    float q[D] = { 1, 2, 3, 4 }, k[D] = { 1, 0, 0, 1 }, v[D] = { 9, 9, 9, 9 };
    float mask[1] = { -INFINITY }, out[D], w[1];
    tw_sdpa_forward(out, NULL, w, q, k, v, mask, 1, 1, D, 1, 0);
    const float zeros[D] = { 0 };
    ck_assert_float_eq(w[0], 0.0f);
    ck_assert_allclose(out, zeros, D, 0.0, 0.0);
}
END_TEST

START_TEST(multi_head_attention_over_one_token_is_wo_times_repeated_wv_x)
{
    // T = 1 self-attention: every head's weight is 1, so z = v repeated over the H/G query heads
    // of each kv head, and out = Wo z + bo, whatever Wq, Wk, RoPE and the position are.
    // Reference in double; float sums of 8 products each: atol 1e-6, rtol 1e-5.
    enum { C = 8, H = 4, G = 2, D = 2 };
    float *wq = tt_rand(H * D * C, -1, 1, 1), *wk = tt_rand(G * D * C, -1, 1, 2);
    float *wv = tt_rand(G * D * C, -1, 1, 3), *wo = tt_rand(C * H * D, -1, 1, 4);
    float *bo = tt_rand(C, -1, 1, 5), *x = tt_rand(C, -2, 2, 6);
    tw_mha_config cfg = { C, H, G, D, 1, TW_ROPE_ADJACENT, 10000.0f, 0, 1e-6f, 0, { 0 } };
    tw_mha_weights w = { tw_weight_fp32(wq), NULL, tw_weight_fp32(wk), NULL, tw_weight_fp32(wv), NULL,
                         tw_weight_fp32(wo), bo, NULL, NULL };
    float want[C];
    double v[G * D];
    for (int r = 0; r < G * D; r++) {
        v[r] = 0.0;
        for (int c = 0; c < C; c++) v[r] += (double)wv[r * C + c] * x[c];
    }
    for (int o = 0; o < C; o++) {
        double acc = bo[o];
        for (int h = 0; h < H; h++)
            for (int d = 0; d < D; d++)
                acc += (double)wo[o * H * D + h * D + d] * v[(h / (H / G)) * D + d];
        want[o] = (float)acc;
    }
    const int positions[3] = { 0, 1, 4095 };
    for (int p = 0; p < 3; p++) {
        tw_mha_acts s;
        tw_kv_cache cache;
        float out[C];
        ck_assert_int_eq(tw_mha_acts_init(&s, &cfg, 1, positions[p] + 1), TW_OK);
        ck_assert_int_eq(tw_kv_cache_init(&cache, positions[p] + 1, G, D), TW_OK);
        memset(cache.k, 0, (size_t)(positions[p] + 1) * G * D * sizeof(float));
        memset(cache.v, 0, (size_t)(positions[p] + 1) * G * D * sizeof(float));
        // Without a cache: one token, rotated at position positions[p].
        tw_mha_forward(out, &s, NULL, x, NULL, NULL, &cfg, &w, 1, 0, positions[p]);
        ck_assert_allclose(out, want, C, 1e-6, 1e-5);
        if (positions[p] == 0) {   // with a cache, the first token of a sequence
            tw_mha_forward(out, &s, &cache, x, NULL, NULL, &cfg, &w, 1, 0, 0);
            ck_assert_allclose(out, want, C, 1e-6, 1e-5);
        }
        tw_kv_cache_free(&cache);
        tw_mha_acts_free(&s);
    }
    free(wq); free(wk); free(wv); free(wo); free(bo); free(x);
}
END_TEST

// ---- RoPE ----

START_TEST(rope_at_position_zero_is_the_identity)
{
    // Angle 0: cos = 1, sin = 0 exactly, so a*1 - b*0 = a: atol 0, both pairings.
    enum { T = 1, H = 3, D = 8 };
    float *x = tt_rand(T * H * D, -3, 3, 11), y[T * H * D];
    for (int kind = TW_ROPE_ADJACENT; kind <= TW_ROPE_HALVES; kind++) {
        memcpy(y, x, sizeof y);
        tw_rope_forward(y, (tw_rope_kind)kind, T, H, D, 0, 10000.0f);
        ck_assert_allclose(y, x, T * H * D, 0.0, 0.0);
    }
    free(x);
}
END_TEST

START_TEST(rope_at_the_last_position_matches_float64)
{
    // Position seq_len - 1 for a 4096-token context (and 32767 for Qwen-sized ones), where the
    // angle reaches thousands of radians. The reference computes angle, cos, sin and the rotation
    // in double. lib/nn/rope.c computes the angle in double too, so the only float error is cos/sin
    // rounded to float and one rotation: about 2 ulp of |x|: atol 1e-6 (|x| <= 2), rtol 1e-5.
    // Also: each pair keeps its length (a rotation), checked in double with rtol 1e-6.
    enum { H = 2, D = 16 };
    const int positions[2] = { 4095, 32767 };
    const float thetas[2] = { 10000.0f, 1e6f };
    for (int p = 0; p < 2; p++) {
        for (int kind = TW_ROPE_ADJACENT; kind <= TW_ROPE_HALVES; kind++) {
            float *x = tt_rand(H * D, -2, 2, 20 + (uint64_t)p), y[H * D], want[H * D];
            memcpy(y, x, sizeof y);
            tw_rope_forward(y, (tw_rope_kind)kind, 1, H, D, positions[p], thetas[p]);
            for (int h = 0; h < H; h++) {
                for (int i = 0; i < D / 2; i++) {
                    int a = h * D + (kind == TW_ROPE_ADJACENT ? 2 * i : i);
                    int b = h * D + (kind == TW_ROPE_ADJACENT ? 2 * i + 1 : i + D / 2);
                    double ang = positions[p] * pow((double)thetas[p], -2.0 * i / D);
                    want[a] = (float)(x[a] * cos(ang) - x[b] * sin(ang));
                    want[b] = (float)(x[a] * sin(ang) + x[b] * cos(ang));
                    double n0 = hypot(x[a], x[b]), n1 = hypot(y[a], y[b]);
                    ck_assert_msg(fabs(n1 - n0) <= 1e-6 * n0 + 1e-7, "pair %d changed length %g -> %g",
                                  i, n0, n1);
                }
            }
            ck_assert_allclose(y, want, H * D, 1e-6, 1e-5);
            free(x);
        }
    }
}
END_TEST

// ---- the check mode ----

START_TEST(first_nonfinite_finds_nan_and_both_infinities_only)
{
    // Extreme finite values are finite: FLT_MAX, the smallest subnormal, -0.
    float x[6] = { FLT_MAX, -FLT_MAX, 1e-45f, -0.0f, 0.0f, 1.0f };
    ck_assert_int_eq(tw_first_nonfinite(x, 6), -1);
    ck_assert_int_eq(tw_first_nonfinite(x, 0), -1);
    const float bad[3] = { NAN, INFINITY, -INFINITY };
    for (int b = 0; b < 3; b++) {
        x[4] = bad[b];
        ck_assert_int_eq(tw_first_nonfinite(x, 6), 4);
        x[4] = 0.0f;
    }
}
END_TEST

START_TEST(check_finite_names_the_first_bad_tensor)
{
    float a[3] = { 1, 2, 3 }, b[4] = { 0, 0, INFINITY, NAN }, c[2] = { NAN, 0 };
    tw_named_tensor ts[3] = { { "embed", a, 3 }, { "L0.attn_out", b, 4 }, { "logits", c, 2 } };
    long elem = 0;
    ck_assert_int_eq(tw_first_nonfinite_tensor(ts, 3, &elem), 1);
    ck_assert_int_eq(elem, 2);
    char err[160];
    ck_assert_int_eq(tw_check_finite(ts, 3, "position 7", err, sizeof err), TW_ERR_ARG);
    ck_assert_str_eq(err, "position 7: L0.attn_out[2] is +inf (first non-finite tensor of 3 checked)");
    ck_assert_int_eq(tw_check_finite(ts, 1, NULL, err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_first_nonfinite_tensor(ts, 1, &elem), -1);
    ck_assert_int_eq(elem, -1);
    ck_assert_int_eq(tw_check_finite(ts + 2, 1, NULL, err, sizeof err), TW_ERR_ARG);
    ck_assert_str_eq(err, "logits[0] is nan (first non-finite tensor of 1 checked)");
}
END_TEST

START_TEST(a_nan_input_reaches_the_output_and_the_check_mode_reports_where_it_entered)
{
    // A NaN in x propagates through RMSNorm and attention silently (IEEE arithmetic); checking
    // the tensors in computation order names the input as the first bad one.
    enum { C = 4 };
    float x[C] = { 1, NAN, 3, 4 }, normed[C], out[C], w[1];
    tw_rmsnorm_forward(normed, NULL, x, NULL, 1, C, 1e-5f);
    tw_sdpa_forward(out, NULL, w, normed, normed, normed, NULL, 1, 1, C, 1, 0);
    ck_assert_msg(!all_finite(out, C), "expected the NaN to propagate");
    tw_named_tensor ts[3] = { { "x", x, C }, { "normed", normed, C }, { "attn", out, C } };
    char err[160];
    ck_assert_int_eq(tw_check_finite(ts, 3, NULL, err, sizeof err), TW_ERR_ARG);
    ck_assert_str_eq(err, "x[1] is nan (first non-finite tensor of 3 checked)");
    ck_assert_int_eq(tw_check_finite(ts + 1, 2, NULL, err, sizeof err), TW_ERR_ARG);
    ck_assert_msg(strncmp(err, "normed[", 7) == 0, "got %s", err);
}
END_TEST

START_TEST(llama2c_check_mode_names_the_layer_where_a_nan_weight_strikes)
{
    // The tiny valid checkpoint of the corrupt corpus: clean, every intermediate is finite. Then
    // one NaN is planted in layer 1's Wo: layer 0 and layer 1's attention up to z stay finite,
    // and the first tensor holding a NaN must be L1.attn_out. (The loader itself refuses NaN
    // weights in a file; this simulates one arising at run time.)
    tw_model m;
    char err[512] = "";
    ck_assert_msg(tw_llama2c_load(&m, "data/corrupt/llama2c/valid_tiny.bin", err, sizeof err) == TW_OK,
                  "%s (run make corpus)", err);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, 3, m.cfg.max_seq), TW_OK);
    const int tokens[3] = { 1, 5, 7 };
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, 3, 0), TW_OK);
    ck_assert_int_eq(tw_model_check_finite(&s, &m, 3, 1, NULL, err, sizeof err), TW_OK);
    ((float *)m.layers[1].attn.wo.f32)[0] = NAN;   // row 0 of Wo: output unit 0 of every position
    ck_assert_int_eq(tw_model_forward_next(&s, &m, tokens, 1, 3), TW_OK);   // decode at pos 3
    ck_assert_int_eq(tw_model_check_finite(&s, &m, 1, 0, "position 3", err, sizeof err),
                     TW_ERR_ARG);
    ck_assert_str_eq(err, "position 3: L1.attn_out[0] is nan (first non-finite tensor of 37 checked)");
    tw_model_state_free(&s);
    tw_model_free(&m);
}
END_TEST

// The check mode and the dump read the same table (block.h, model.h), so a NaN planted in any
// checked tensor is reported under the name of the file the dump writes for that tensor. Each
// tensor is its own buffer, so the planted one is the first non-finite tensor the check meets.
START_TEST(check_mode_names_each_tensor_as_the_dump_names_its_file)
{
    tw_model m;
    char err[512] = "", dir_tmpl[] = "/tmp/tw-finite-XXXXXX", dir[64], path[256], want[64];
    ck_assert_msg(tw_llama2c_load(&m, "data/corrupt/llama2c/valid_tiny.bin", err, sizeof err) == TW_OK,
                  "%s (run make corpus)", err);
    const int tokens[3] = { 1, 5, 7 }, T = 3;
    ck_assert_ptr_nonnull(mkdtemp(dir_tmpl));
    snprintf(dir, sizeof dir, "%s/dump", dir_tmpl);
    ck_assert_msg(tw_model_dump(dir, &m, tokens, T, NULL, 0, err, sizeof err) == TW_OK, "%s", err);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    int planted = 0;
    for (int l = -1; l < m.cfg.n_layer; l++) {
        const int n = l < 0 ? tw_model_n_tensors : tw_block_n_tensors;
        for (int i = 0; i < n; i++) {
            const tw_tensor_info *t = l < 0 ? &tw_model_tensors[i] : &tw_block_tensors[i];
            if (t->flags & (TW_TENSOR_MASKED | TW_TENSOR_WORK | TW_TENSOR_STATS)) continue;
            if (l < 0 ? !tw_model_has(&m.cfg, t) : !tw_block_has(&m.cfg.block, t->has)) continue;
            float *x = l < 0 ? tw_model_tensor(&s, t) : tw_block_tensor(&s.layers[l], t);
            const float keep = x[0];
            x[0] = NAN;
            ck_assert_int_eq(tw_model_check_finite(&s, &m, T, 1, NULL, err, sizeof err), TW_ERR_ARG);
            x[0] = keep;
            if (l < 0) snprintf(want, sizeof want, "%s[0] is nan", t->name);
            else snprintf(want, sizeof want, "L%d.%s[0] is nan", l, t->name);
            ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "planted in %s, reported: %s", want, err);
            // the name before "[0]" is a file of the dump
            snprintf(path, sizeof path, "%s/%.*s.npy", dir, (int)(strlen(want) - strlen("[0] is nan")), want);
            FILE *f = fopen(path, "rb");
            ck_assert_msg(f != NULL, "the check names %s, but the dump wrote no %s", want, path);
            fclose(f);
            planted++;
        }
    }
    // embed, final_norm, logits, and 17 per layer (every dumped tensor but the masked scores)
    ck_assert_int_eq(planted, 3 + 17 * m.cfg.n_layer);
    ck_assert_int_eq(tw_model_check_finite(&s, &m, T, 1, NULL, err, sizeof err), TW_OK);
    tw_model_state_free(&s);
    tw_model_free(&m);
    ck_assert_int_eq(tt_remove_tree(dir_tmpl), 0);
}
END_TEST

Suite *suite_numeric_edges(void) {
    Suite *s = suite_create("numeric_edges");
    TCase *tc = tcase_create("softmax");
    tcase_add_test(tc, softmax_of_plus_minus_1e30_is_one_hot_without_nan);
    tcase_add_test(tc, softmax_of_equal_huge_logits_is_uniform);
    tcase_add_test(tc, softmax_of_a_fully_masked_row_is_zero_not_nan);
    tcase_add_test(tc, softmax_at_tiny_temperature_stays_finite);
    tcase_add_test(tc, softmax_with_a_nan_input_is_flagged_by_the_check_mode);
    suite_add_tcase(s, tc);
    tc = tcase_create("norms");
    tcase_add_test(tc, rmsnorm_of_an_all_zero_row_is_zero);
    tcase_add_test(tc, layernorm_of_an_all_zero_row_is_beta);
    suite_add_tcase(s, tc);
    tc = tcase_create("attention");
    tcase_add_test(tc, attention_over_one_token_returns_its_value);
    tcase_add_test(tc, attention_with_its_only_key_masked_outputs_zero);
    tcase_add_test(tc, multi_head_attention_over_one_token_is_wo_times_repeated_wv_x);
    suite_add_tcase(s, tc);
    tc = tcase_create("rope");
    tcase_add_test(tc, rope_at_position_zero_is_the_identity);
    tcase_add_test(tc, rope_at_the_last_position_matches_float64);
    suite_add_tcase(s, tc);
    tc = tcase_create("check_finite");
    tcase_add_test(tc, first_nonfinite_finds_nan_and_both_infinities_only);
    tcase_add_test(tc, check_finite_names_the_first_bad_tensor);
    tcase_add_test(tc, a_nan_input_reaches_the_output_and_the_check_mode_reports_where_it_entered);
    tcase_add_test(tc, llama2c_check_mode_names_the_layer_where_a_nan_weight_strikes);
    tcase_add_test(tc, check_mode_names_each_tensor_as_the_dump_names_its_file);
    suite_add_tcase(s, tc);
    return s;
}
