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
#include "model_test_common.h"

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

START_TEST(a_hidden_key_adds_exactly_nothing_at_every_level)
{
    // Causal, T = S = 16 in one block: row 0 sees key 0 only, whose value row is 0, so its output
    // is exactly 0 (the naive loop never visits the hidden keys). The kernels score all 16 keys of
    // the block, the 15 hidden ones at -inf, and rely on their exp giving exactly 0 there: an exp
    // of -inf that gave the smallest subnormal instead (1.4e-45) would add about 1e-15 of each of
    // the other values (1e30 .. 2e30) to row 0.
    const int T = 16, D = 8;
    const tw_simd_tiling a = { T, T, D, D, D, T, 1, 0, 64 };
    float *q = tt_rand((long)T * D, -1, 1, 11), *k = tt_rand((long)T * D, -1, 1, 12);
    float *v = tt_rand((long)T * D, 1e30f, 2e30f, 13), *out = tt_zeros((long)T * D);
    float *st = tt_zeros(2L * T);
    for (int d = 0; d < D; d++) v[d] = 0.0f;
    char levels[256];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    int ran = 0;
    for (char *save = NULL, *lv = strtok_r(levels, " ", &save); lv; lv = strtok_r(NULL, " ", &save)) {
        if (strcmp(lv, "naive") == 0) continue;
        ck_assert_str_eq(tw_simd_init(lv), lv);
        ck_assert_int_eq(tw_simd_sdpa_tiled_forward(out, st, st + T, q, k, v, NULL, &a), 1);
        for (int d = 0; d < D; d++)
            ck_assert_msg(out[d] == 0.0f, "%s: row 0 out[%d] = %g, want exactly 0", lv, d, (double)out[d]);
        ran++;
    }
    tw_simd_init("naive");
    ck_assert_int_gt(ran, 0);
    free(q); free(k); free(v); free(out); free(st);
}
END_TEST

START_TEST(ten_flash_steps_at_every_level_match_pytorch)
{
    // llama (D 6: narrower than any register) and stories260K (D 8, GQA): the heads the tiled
    // kernels take; qwen3's D 8 with QK-norm adds no new attention shape.
    static const char *const cases[] = { "llama", "stories260K" };
    char levels[256];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *save = NULL, *lv = strtok_r(levels, " ", &save); lv; lv = strtok_r(NULL, " ", &save)) {
        if (strcmp(lv, "naive") == 0) continue;
        // Fails on the first loss, gradient norm or weight beyond test_attn_flash.c's tolerances.
        for (int i = 0; i < 2; i++) mt_ten_flash_steps_match_pytorch(cases[i], lv);
    }
}
END_TEST

Suite *suite_sdpa_tiled_simd(void) {
    Suite *s = suite_create("sdpa_tiled_simd");
    TCase *tc = tcase_create("levels");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_level_matches_the_naive_tiled_loop);
    tcase_add_test(tc, too_large_a_tile_declines_and_touches_nothing);
    tcase_add_test(tc, a_hidden_key_adds_exactly_nothing_at_every_level);
    tcase_add_test(tc, ten_flash_steps_at_every_level_match_pytorch);
    suite_add_tcase(s, tc);
    return s;
}
