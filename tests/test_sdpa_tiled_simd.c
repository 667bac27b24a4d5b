// test_sdpa_tiled_simd.c: the SIMD levels of the tiled attention against the naive tiled loops,
// at every level this machine has (the cases and their tolerances: tests/sdpa_tiled_cases.h,
// which the AArch64 self-test under qemu runs too); and a call whose scratch would not fit is
// declined by every level, nothing touched, so tw_sdpa_tiled_forward runs the naive loop; and ten
// --attn flash training steps at every SIMD level against PyTorch (the RoPE golden cases of
// tests/golden/gen_train.py), as test_attn_flash.c checks them at the naive level.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "sdpa_tiled_cases.h"
#include "train/step.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/tokens.h"

START_TEST(every_level_matches_the_naive_tiled_loop)
{
    char levels[256], msg[512];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    int ran = 0;
    for (char *save = NULL, *lv = strtok_r(levels, " ", &save); lv; lv = strtok_r(NULL, " ", &save)) {
        if (strcmp(lv, "naive") == 0) continue;
        for (int i = 0; i < (int)N_ST_CASES; i++) {
            msg[0] = '\0';
            ck_assert_msg(st_run(lv, i, msg, sizeof msg) == 0, "%s, case %d: %s", lv, i, msg);
        }
        ran++;
    }
    if (getenv("TW_VERBOSE")) printf("sdpa_tiled_simd: %d SIMD level(s) checked (%s)\n", ran, tw_simd_available());
}
END_TEST

START_TEST(too_large_a_tile_declines_and_touches_nothing)
{
    // D = 128 at blocks of 64 (Qwen3's heads): 8192 floats of scratch, more than the kernels keep
    // on the stack: every level declines.
    const int T = 5, D = 128;
    const tw_simd_tiling a = { T, T, D, D, D, T, 1, 0, 64 };
    float *q = tt_rand((long)T * D, -1, 1, 7), *out = tt_zeros((long)T * D), *st = tt_zeros(2L * T);
    char levels[256];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *save = NULL, *lv = strtok_r(levels, " ", &save); lv; lv = strtok_r(NULL, " ", &save)) {
        ck_assert_str_eq(tw_simd_init(lv), lv);
        ck_assert_int_eq(tw_simd_sdpa_tiled_forward(out, st, st + T, q, q, q, NULL, &a), 0);
        ck_assert_int_eq(tw_simd_sdpa_tiled_backward(out, out, out, q, q, st, st + T, q, q, q, NULL, &a), 0);
        for (long i = 0; i < (long)T * D; i++) ck_assert(out[i] == 0.0f);
    }
    tw_simd_init("naive");
    free(q); free(out); free(st);
}
END_TEST

enum { H_B, H_T, H_STEPS, H_LR, H_WARMUP, H_MIN_LR, H_WD, H_BETA1, H_BETA2, H_EPS, H_CLIP, N_H };

// Ten steps of golden case `name` with tiled attention at the current level; fails on the first
// loss, gradient norm or weight beyond test_attn_flash.c's tolerances (and for its reasons):
// losses and norms rel 1e-5, weights 3e-4 abs + 1e-4 rel.
static void ten_flash_steps(const char *name, const char *level) {
    char path[256], err[512] = "";
    tw_model m;
    if (strcmp(name, "stories260K") == 0) snprintf(path, sizeof path, "data/models/stories260K.bin");
    else snprintf(path, sizeof path, "data/golden/train/%s/init.bin", name);
    ck_assert_msg(tw_model_load_file(&m, path, err, sizeof err) == TW_OK, "%s", err);
    m.cfg.block.attn.tiled = 1;
    int *tokens;
    long n;
    snprintf(path, sizeof path, "data/golden/train/%s/tokens.bin", name);
    ck_assert_msg(tw_tokens_read(&tokens, &n, path, err, sizeof err) == TW_OK, "%s", err);
    snprintf(path, sizeof path, "train/%s/hparams", name);
    tw_npy h = tt_load(path, N_H);
    const float *hp = h.data;
    const tw_train_config c = { (int)hp[H_B], (int)hp[H_T], (int)hp[H_STEPS], (int)hp[H_WARMUP],
                                hp[H_LR], hp[H_MIN_LR], hp[H_WD], hp[H_BETA1], hp[H_BETA2],
                                hp[H_EPS], hp[H_CLIP] };
    tw_npy_free(&h);
    tw_trainer t;
    tw_batcher b;
    ck_assert_int_eq(tw_trainer_init(&t, &m, c.T), TW_OK);
    ck_assert_int_eq(tw_batcher_init(&b, tokens, n, c.B, c.T, 0, 0), TW_OK);
    int *in = malloc((size_t)c.B * c.T * sizeof *in), *tg = malloc((size_t)c.B * c.T * sizeof *tg);
    ck_assert(in && tg && c.steps <= 16);
    tw_train_stats st[16];
    ck_assert_str_eq(tw_simd_init(level), level);
    for (int s = 0; s < c.steps; s++) {
        tw_batcher_fill(in, tg, &b, s);
        ck_assert_int_eq(tw_train_step(&st[s], &t, &m, in, tg, &c), TW_OK);
    }
    tw_simd_init("naive");
    snprintf(path, sizeof path, "train/%s/losses", name);
    tw_npy L = tt_load(path, c.steps);
    snprintf(path, sizeof path, "train/%s/gnorms", name);
    tw_npy G = tt_load(path, c.steps);
    const float *wl = L.data, *wg = G.data;
    for (int s = 0; s < c.steps; s++) {
        ck_assert_msg(fabs(st[s].loss - wl[s]) <= 1e-5 * fabs(wl[s]), "%s at %s step %d: loss %.7g, PyTorch %.7g",
                      name, level, s + 1, (double)st[s].loss, (double)wl[s]);
        ck_assert_msg(fabs(st[s].gnorm - wg[s]) <= 1e-5 * fabs(wg[s]), "%s at %s step %d: gnorm %.7g, PyTorch %.7g",
                      name, level, s + 1, (double)st[s].gnorm, (double)wg[s]);
    }
    double worst = 0.0;
    for (int i = 0; i < m.n_params; i++) {
        const tw_param *p = &m.params[i];
        snprintf(path, sizeof path, "train/%s/final/%s", name, p->name);
        tw_npy W = tt_load(path, p->count);
        const float *w = W.data;
        for (long j = 0; j < p->count; j++) {
            const double d = fabs((double)p->data[j] - w[j]);
            worst = d > worst ? d : worst;
            ck_assert_msg(d <= 3e-4 + 1e-4 * fabs(w[j]), "%s at %s: %s[%ld] is %.7g, PyTorch %.7g", name,
                          level, p->name, j, (double)p->data[j], (double)w[j]);
        }
        tw_npy_free(&W);
    }
    if (getenv("TW_VERBOSE")) printf("flash %s at %s: largest weight difference %.3g\n", name, level, worst);
    tw_npy_free(&L); tw_npy_free(&G);
    free(in); free(tg); free(tokens);
    tw_batcher_free(&b);
    tw_trainer_free(&t);
    tw_model_free(&m);
}

START_TEST(ten_flash_steps_at_every_level_match_pytorch)
{
    // llama (D 6: narrower than any register) and stories260K (D 8, GQA): the heads the tiled
    // kernels take; qwen3's D 8 with QK-norm adds no new attention shape.
    static const char *const cases[] = { "llama", "stories260K" };
    char levels[256];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *save = NULL, *lv = strtok_r(levels, " ", &save); lv; lv = strtok_r(NULL, " ", &save)) {
        if (strcmp(lv, "naive") == 0) continue;
        for (int i = 0; i < 2; i++) ten_flash_steps(cases[i], lv);
    }
}
END_TEST

Suite *suite_sdpa_tiled_simd(void) {
    Suite *s = suite_create("sdpa_tiled_simd");
    TCase *tc = tcase_create("levels");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_level_matches_the_naive_tiled_loop);
    tcase_add_test(tc, too_large_a_tile_declines_and_touches_nothing);
    tcase_add_test(tc, ten_flash_steps_at_every_level_match_pytorch);
    suite_add_tcase(s, tc);
    return s;
}
