// test_attn_flash.c: the tiled attention (nn/sdpa_tiled.h) inside the model and the tools, chosen
// by tw_mha_config.tiled (./generate --attn flash, ./train --attn flash):
//   - ten training steps of the RoPE golden cases (llama, qwen3, stories260K) against PyTorch (data/golden/train/<case>/, from
//     tests/golden/gen_train.py), as tests/test_train.c checks the default attention: the same
//     losses, gradient norms and final weights within the same tolerances;
//   - the state of a tiled model holds no (H, T, S) table: its size is the materialised state's
//     minus the scores and the pattern, plus two (H, T) rows per layer;
//   - ./generate --attn flash prints the documented greedy story (with the KV cache) and the same
//     text as the default for a prompt without the cache; a bad --attn value is one line, exit 2;
//   - ./generate --rope-scaling yarn --rope-factor 4 runs 4x the model's seq_len; bad
//     --rope-scaling and --rope-factor values are one line, exit 2 (also ./train's).
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "testrun.h"
#include "model_test_common.h"

// The three RoPE models (GQA, QK-norm, both pairings): the tiled path does not depend on the rest
// of the model, and ./train's other styles add run time, not new attention (make test's budget).
// At the naive level (the runner picks none); tests/test_sdpa_tiled_simd.c runs them at the others.
// The tolerances, as tests/test_train.c's but for the final weights, are explained in
// tests/model_test_common.c.
static const char *const CASES[] = { "llama", "qwen3", "stories260K" };

START_TEST(ten_flash_steps_match_pytorch)
{
    mt_ten_flash_steps_match_pytorch(CASES[_i], NULL);
}
END_TEST

START_TEST(a_tiled_state_holds_no_score_table)
{
    char err[512] = "";
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, "data/models/stories260K.bin", err, sizeof err) == TW_OK, "%s", err);
    const int T = 256, L = m.cfg.n_layer, H = m.cfg.block.attn.n_head;
    tw_model_state full, tiled;
    ck_assert_int_eq(tw_model_state_init(&full, &m, T, 0), TW_OK);
    m.cfg.block.attn.tiled = 1;
    ck_assert_int_eq(tw_model_state_init(&tiled, &m, T, 0), TW_OK);
    // Exact counts: scores and pattern are (H, T, T) each per layer; row_max and row_logsum (H, T).
    const long table = (long)H * T * T, rows = (long)H * T;
    ck_assert_int_eq((long)full.n_floats - (long)tiled.n_floats, (long)L * (2 * table - 2 * rows));
    ck_assert_ptr_null(tiled.layers[0].attn.scores);
    ck_assert_ptr_null(tiled.layers[0].attn.pattern);
    ck_assert_ptr_nonnull(tiled.layers[0].attn.row_max);
    tw_model_state_free(&full);
    tw_model_state_free(&tiled);
    tw_model_free(&m);
}
END_TEST

#define GEN "./generate data/models/stories260K.bin -z data/models/tok512.bin "

START_TEST(generate_flash_prints_the_greedy_story)
{
    char *want = tt_slurp("data/stories260K_greedy.txt");
    ck_assert_int_gt((int)strlen(want), 500);
    run_result r = tt_run(GEN "-t 0 -n 256 --attn flash");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, want);
    tt_run_free(&r);
    // Without the cache every step recomputes the prefix (prefill-shaped calls, T > 1).
    run_result a = tt_run(GEN "-t 0 -n 48 --no-cache --attn flash -i \"Once upon a time\"");
    run_result b = tt_run(GEN "-t 0 -n 48 --no-cache -i \"Once upon a time\"");
    ck_assert_int_eq(a.rc, 0);
    ck_assert_int_eq(b.rc, 0);
    ck_assert_str_eq(a.out, b.out);
    tt_run_free(&a);
    tt_run_free(&b);
    free(want);
}
END_TEST

static int lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

START_TEST(a_bad_attn_value_is_one_line)
{
    run_result r = tt_run(GEN "--attn quick");
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--attn: 'quick' is not an attention kind"));
    ck_assert_int_eq(lines(r.err), 1);
    tt_run_free(&r);
    r = tt_run("./train --attn quick");
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--attn: 'quick' is not an attention kind"));
    ck_assert_int_eq(lines(r.err), 1);
    tt_run_free(&r);
}
END_TEST

START_TEST(generate_runs_past_seq_len_with_rope_scaling)
{
    // stories260K was trained at 512 positions; YaRN x4 lets -n reach 2048. Generation also ends
    // at the model's BOS token, so what is checked is the count it prints: with the scaling the
    // greedy run decodes past position 511 (measured: all 599), without it it cannot (345).
    run_result r = tt_run(GEN "-t 0 -n 600 --rope-scaling yarn --rope-factor 4");
    ck_assert_int_eq(r.rc, 0);
    const char *d = strstr(r.err, "decode: ");
    ck_assert_msg(d != NULL && atoi(d + 8) > 511 && atoi(d + 8) <= 599, "%s", r.err);
    tt_run_free(&r);
    r = tt_run(GEN "-t 0 -n 600");
    ck_assert_int_eq(r.rc, 0);
    d = strstr(r.err, "decode: ");
    ck_assert_msg(d != NULL && atoi(d + 8) <= 511, "%s", r.err);
    tt_run_free(&r);
    static const char *const bad[] = {
        GEN "--rope-scaling dynamic", GEN "--rope-factor 0.5", GEN "--rope-factor x",
        GEN "--rope-original 0", "./train --rope-scaling dynamic", "./train --rope-factor 0.9",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = tt_run(bad[i]);
        ck_assert_msg(r.rc == 2 && lines(r.err) == 1 && strstr(r.err, "--rope-") != NULL,
                      "%s: rc %d, stderr '%s'", bad[i], r.rc, r.err);
        tt_run_free(&r);
    }
}
END_TEST

Suite *suite_attn_flash(void) {
    Suite *s = suite_create("attn_flash");
    TCase *tc = tcase_create("flash");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, ten_flash_steps_match_pytorch, 0, (int)(sizeof CASES / sizeof CASES[0]));
    tcase_add_test(tc, a_tiled_state_holds_no_score_table);
    tcase_add_test(tc, generate_flash_prints_the_greedy_story);
    tcase_add_test(tc, a_bad_attn_value_is_one_line);
    tcase_add_test(tc, generate_runs_past_seq_len_with_rope_scaling);
    suite_add_tcase(s, tc);
    return s;
}
