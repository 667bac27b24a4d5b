// test_rope_scaling.c: the scaled RoPEs (lib/nn/rope_scaling.c) against float64 references written
// from the published formulas (data/golden/rope_scaling/, from tests/golden/gen_rope_scaling.py):
// the frequencies of linear, NTK-aware and YaRN scaling, YaRN's attention factor, the rotation in
// both pairings with them; the backward as the forward's exact transpose; kind none as plain RoPE
// bit for bit; a model whose attention uses a scaling (through tw_mha_config).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "golden_case.h"

static const char *const CASES[] = { "linear_D8", "ntk_D8_halves", "yarn_D8_L64", "yarn_D64_L2048",
                                     "yarn_D128_qwen3", "ntk_D128_qwen3", "yarn_betas" };

typedef struct {
    tw_rope_scaling sc;
    tw_rope_kind pairing;
    int D, pos0, T, H;
    float theta;
} rs_case;

static rs_case load_case(const char *dir) {
    int *cfg = gc_load_i32(dir, "cfg", 7);
    float *p = gc_load(dir, "params", 4);
    rs_case c = { .sc = { (tw_rope_scaling_kind)cfg[0], p[1], cfg[6], p[2], p[3] },
                  .pairing = (tw_rope_kind)cfg[2], .D = cfg[1], .pos0 = cfg[3], .T = cfg[4],
                  .H = cfg[5], .theta = p[0] };
    free(cfg);
    free(p);
    return c;
}

START_TEST(frequencies_match_the_published_formulas)
{
    char dir[96];
    snprintf(dir, sizeof dir, "rope_scaling/%s", CASES[_i]);
    const rs_case c = load_case(dir);
    ck_assert_int_eq(tw_rope_scaling_check(&c.sc), TW_OK);
    const int n = c.D / 2;
    float *want = gc_load(dir, "freq", n), *want_m = gc_load(dir, "mscale", 1);
    double freq[TW_ROPE_MAX_PAIRS];
    tw_rope_scaled_freqs(freq, c.D, c.theta, &c.sc);
    float got[TW_ROPE_MAX_PAIRS];
    for (int i = 0; i < n; i++) got[i] = (float)freq[i];
    // Both sides are float64 evaluations of the same formulas rounded once to float32: equal or
    // one float32 ulp apart (relative 1.2e-7); tolerance relative 2e-7.
    ck_assert_allclose(got, want, n, 0.0, 2e-7);
    const float m = (float)tw_rope_scaling_attention_factor(&c.sc);
    ck_assert_allclose(&m, want_m, 1, 0.0, 2e-7);
    free(want);
    free(want_m);
}
END_TEST

START_TEST(rotation_matches_and_backward_is_its_transpose)
{
    char dir[96];
    snprintf(dir, sizeof dir, "rope_scaling/%s", CASES[_i]);
    const rs_case c = load_case(dir);
    const long n = (long)c.T * c.H * c.D;
    float *x = gc_load(dir, "x", n), *want = gc_load(dir, "rot", n);
    float *y = malloc((size_t)n * sizeof *y), *r = tt_rand(n, -1, 1, 5);
    ck_assert(y != NULL);
    for (long i = 0; i < n; i++) y[i] = x[i];
    tw_rope_scaled_forward(y, c.pairing, c.T, c.H, c.D, c.pos0, c.theta, &c.sc);
    // Each output is a0 c - b0 s with float cos and sin (each within half an ulp of the exact
    // ones times m <= 1.21) and two float products and a sum: a few ulp of O(1) values. Measured
    // worst 1.2e-7; tolerance 1e-6 abs + 1e-6 rel.
    ck_assert_allclose(y, want, n, 1e-6, 1e-6);
    // <R x, r> = <x, R^T r>: the backward rotates by the same float cos and sin with sin negated,
    // so the two sums differ only by double rounding of float products: relative 1e-12.
    double lhs = 0.0, rhs = 0.0, scale = 0.0;
    for (long i = 0; i < n; i++) { lhs += (double)y[i] * r[i]; scale += fabs((double)y[i] * r[i]); }
    tw_rope_scaled_backward(r, c.pairing, c.T, c.H, c.D, c.pos0, c.theta, &c.sc);
    for (long i = 0; i < n; i++) rhs += (double)x[i] * r[i];
    ck_assert_msg(fabs(lhs - rhs) <= 1e-6 * scale, "<Rx, r> %.12g vs <x, R^T r> %.12g", lhs, rhs);
    free(x); free(want); free(y); free(r);
}
END_TEST

START_TEST(kind_none_is_plain_rope_bit_for_bit)
{
    const int T = 9, H = 3, D = 16;
    float *a = tt_rand(T * H * D, -1, 1, 1), *b = tt_rand(T * H * D, -1, 1, 1);
    const tw_rope_scaling none = { 0 };
    for (int pairing = TW_ROPE_ADJACENT; pairing <= TW_ROPE_HALVES; pairing++) {
        tw_rope_forward(a, (tw_rope_kind)pairing, T, H, D, 37, 10000.0f);
        tw_rope_scaled_forward(b, (tw_rope_kind)pairing, T, H, D, 37, 10000.0f, &none);
        ck_assert_allclose(b, a, T * H * D, 0.0, 0.0);   // the same operations: tolerance 0
        tw_rope_backward(a, (tw_rope_kind)pairing, T, H, D, 5, 10000.0f);
        tw_rope_scaled_backward(b, (tw_rope_kind)pairing, T, H, D, 5, 10000.0f, &none);
        ck_assert_allclose(b, a, T * H * D, 0.0, 0.0);
    }
    free(a); free(b);
}
END_TEST

// tw_rope_freq_angles + tw_rope_rotate (angles once per position, as batched decoding uses them)
// against tw_rope_scaled_forward and, unscaled, tw_rope_forward on one position: the same bits
// for every scaling kind, both pairings, head sizes and positions far past the trained context.
START_TEST(angles_given_rotate_as_the_rope_forward_bit_for_bit)
{
    const tw_rope_scaling kinds[] = {
        { 0 },
        tw_rope_scaling_make(TW_ROPE_SCALING_LINEAR, 4.0f, 0),
        tw_rope_scaling_make(TW_ROPE_SCALING_NTK, 4.0f, 0),
        tw_rope_scaling_make(TW_ROPE_SCALING_YARN, 8.0f, 64),
    };
    const int Ds[] = { 2, 8, 48, 64, 66 }, positions[] = { 0, 1, 37, 1000, 65535 }, H = 3;
    const float theta = 10000.0f;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (size_t j = 0; j < sizeof Ds / sizeof Ds[0]; j++) {
            const int D = Ds[j];
            double freq[TW_ROPE_MAX_PAIRS];
            float cos_t[TW_ROPE_MAX_PAIRS], sin_t[TW_ROPE_MAX_PAIRS];
            tw_rope_scaled_freqs(freq, D, theta, &kinds[k]);
            const double mag = tw_rope_scaling_attention_factor(&kinds[k]);
            for (size_t p = 0; p < sizeof positions / sizeof positions[0]; p++)
                for (int pairing = TW_ROPE_NONE; pairing <= TW_ROPE_HALVES; pairing++) {
                    float *want = tt_rand(H * D, -1, 1, (unsigned)(k * 100 + j * 10 + p + 1));
                    float *got = malloc((size_t)H * D * sizeof *got);
                    memcpy(got, want, (size_t)H * D * sizeof *got);
                    tw_rope_freq_angles(cos_t, sin_t, positions[p], D, freq, mag);
                    tw_rope_rotate(got, (tw_rope_kind)pairing, cos_t, sin_t, H, D);
                    float *plain = NULL;
                    if (kinds[k].kind == TW_ROPE_SCALING_NONE) {
                        plain = malloc((size_t)H * D * sizeof *plain);
                        memcpy(plain, want, (size_t)H * D * sizeof *plain);
                        tw_rope_forward(plain, (tw_rope_kind)pairing, 1, H, D, positions[p], theta);
                    }
                    tw_rope_scaled_forward(want, (tw_rope_kind)pairing, 1, H, D, positions[p], theta,
                                           &kinds[k]);
                    ck_assert_msg(memcmp(got, want, (size_t)H * D * sizeof *got) == 0,
                                  "scaling %s, pairing %d, D %d, pos %d: not the same bits",
                                  tw_rope_scaling_name(kinds[k].kind), pairing, D, positions[p]);
                    if (plain)
                        ck_assert_msg(memcmp(got, plain, (size_t)H * D * sizeof *got) == 0,
                                      "pairing %d, D %d, pos %d: not tw_rope_forward's bits",
                                      pairing, D, positions[p]);
                    free(want); free(got); free(plain);
                }
        }
}
END_TEST

START_TEST(the_bands_are_where_the_papers_put_them)
{
    // Properties stated by the papers, independent of the golden files: NTK keeps the fastest pair
    // and divides the slowest by s; YaRN keeps the fast pairs (many turns over L) and divides the
    // slow ones by s; linear divides all. D = 64, theta 1e4, s = 8, L = 2048.
    const int D = 64;
    double f[32], p[32];
    const tw_rope_scaling none = { 0 };
    tw_rope_scaled_freqs(p, D, 1e4, &none);
    tw_rope_scaling sc = tw_rope_scaling_make(TW_ROPE_SCALING_NTK, 8.0f, 2048);
    tw_rope_scaled_freqs(f, D, 1e4, &sc);
    ck_assert(f[0] == p[0]);
    ck_assert(fabs(f[31] / p[31] - 1.0 / 8.0) < 1e-12);   // s^(-2i/(D-2)) at i = D/2 - 1
    sc = tw_rope_scaling_make(TW_ROPE_SCALING_YARN, 8.0f, 2048);
    tw_rope_scaled_freqs(f, D, 1e4, &sc);
    for (int i = 0; i < 32; i++) {
        const double turns = 2048 * p[i] / 6.283185307179586;   // L f_i / (2 pi)
        if (turns > 32) ck_assert_msg(f[i] == p[i], "pair %d (%.1f turns) was changed", i, turns);
        if (turns < 1) ck_assert_msg(fabs(f[i] - p[i] / 8) <= 1e-15 * p[i], "pair %d not interpolated", i);
        if (i > 0) ck_assert(f[i] < f[i - 1]);   // still decreasing: no two pairs collide
    }
    tw_rope_scaling bad = tw_rope_scaling_make(TW_ROPE_SCALING_LINEAR, 0.5f, 64);
    ck_assert_int_eq(tw_rope_scaling_check(&bad), TW_ERR_ARG);
    bad = tw_rope_scaling_make(TW_ROPE_SCALING_YARN, 2.0f, 0);
    ck_assert_int_eq(tw_rope_scaling_check(&bad), TW_ERR_ARG);
    ck_assert_int_eq(tw_rope_scaling_from_name("yarn"), TW_ROPE_SCALING_YARN);
    ck_assert_int_eq(tw_rope_scaling_from_name("dynamic"), -1);
}
END_TEST

// ---- config.json's rope_scaling (formats/hf_rope_scaling.c) ----

static tw_status parse_rs(tw_rope_scaling *sc, const char *text, char *err, size_t n) {
    tw_json *root = NULL;
    tw_json_error e;
    ck_assert_int_eq(tw_json_parse(&root, text, strlen(text), &e), TW_OK);
    const tw_status st = tw_hf_rope_scaling_from_json(sc, root, err, n);
    tw_json_free(root);
    return st;
}

START_TEST(config_rope_scaling_is_read_as_transformers_reads_it)
{
    tw_rope_scaling sc;
    char err[256] = "";
    // Qwen3's documented YaRN setting; betas at their defaults.
    ck_assert_int_eq(parse_rs(&sc, "{\"max_position_embeddings\": 40960, \"rope_scaling\": "
                              "{\"rope_type\": \"yarn\", \"factor\": 4.0, "
                              "\"original_max_position_embeddings\": 32768}}", err, sizeof err), TW_OK);
    ck_assert_int_eq(sc.kind, TW_ROPE_SCALING_YARN);
    ck_assert(sc.factor == 4.0f && sc.original_max_pos == 32768);
    ck_assert(sc.beta_fast == 32.0f && sc.beta_slow == 1.0f);
    // The older "type" key; YaRN's L from max_position_embeddings; explicit betas.
    ck_assert_int_eq(parse_rs(&sc, "{\"max_position_embeddings\": 4096, \"rope_scaling\": "
                              "{\"type\": \"yarn\", \"factor\": 2, \"beta_fast\": 16, "
                              "\"beta_slow\": 2}}", err, sizeof err), TW_OK);
    ck_assert(sc.original_max_pos == 4096 && sc.beta_fast == 16.0f && sc.beta_slow == 2.0f);
    ck_assert_int_eq(parse_rs(&sc, "{\"rope_scaling\": {\"type\": \"linear\", \"factor\": 8}}",
                              err, sizeof err), TW_OK);
    ck_assert(sc.kind == TW_ROPE_SCALING_LINEAR && sc.factor == 8.0f);
    ck_assert_int_eq(parse_rs(&sc, "{\"rope_scaling\": null}", err, sizeof err), TW_OK);
    ck_assert_int_eq(sc.kind, TW_ROPE_SCALING_NONE);
    ck_assert_int_eq(parse_rs(&sc, "{\"rope_scaling\": {\"rope_type\": \"default\"}}", err, sizeof err), TW_OK);
    ck_assert_int_eq(sc.kind, TW_ROPE_SCALING_NONE);
    // Refused, each with one line naming the key.
    static const char *const bad[][2] = {
        { "{\"rope_scaling\": {\"rope_type\": \"dynamic\", \"factor\": 2}}", "dynamic" },
        { "{\"rope_scaling\": {\"rope_type\": \"linear\"}}", "factor" },
        { "{\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 0.5}}", "factor" },
        { "{\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 2}}", "original_max_position_embeddings" },
        { "{\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 2, \"original_max_position_embeddings\": 64, \"beta_slow\": 40}}", "beta_slow" },
        { "{\"rope_scaling\": {\"factor\": 2}}", "rope_type" },
        { "{\"rope_scaling\": 3}", "object" },
        { "{\"rope_scaling\": {\"rope_type\": 7}}", "string" },
        { "{\"rope_scaling\": {\"rope_type\": \"ntk\", \"factor\": \"2\"}}", "number" },
        { "[1]", "object" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_int_eq(parse_rs(&sc, bad[i][0], err, sizeof err), TW_ERR_FORMAT);
        ck_assert_msg(strstr(err, bad[i][1]) != NULL && strchr(err, '\n') == NULL,
                      "%s: '%s'", bad[i][0], err);
    }
}
END_TEST

Suite *suite_rope_scaling(void) {
    Suite *s = suite_create("rope_scaling");
    TCase *tc = tcase_create("scaling");
    const int n = (int)(sizeof CASES / sizeof CASES[0]);
    tcase_add_loop_test(tc, frequencies_match_the_published_formulas, 0, n);
    tcase_add_loop_test(tc, rotation_matches_and_backward_is_its_transpose, 0, n);
    tcase_add_test(tc, kind_none_is_plain_rope_bit_for_bit);
    tcase_add_test(tc, angles_given_rotate_as_the_rope_forward_bit_for_bit);
    tcase_add_test(tc, the_bands_are_where_the_papers_put_them);
    tcase_add_test(tc, config_rope_scaling_is_read_as_transformers_reads_it);
    suite_add_tcase(s, tc);
    return s;
}
