// test_rope_config.c: --rope-config FILE on ./generate and ./train, the "rope_scaling" field of a
// Hugging Face config.json (formats/hf_rope_scaling.h, tw_hf_rope_scaling_read_file) applied to
// the model (nn/long_context.h, tw_model_config_apply_rope_scaling):
//   - a file's scaling, betas included, lands in the model configuration, and max_seq becomes
//     ceil(factor x the trained context); exact (integers and the floats copied as read);
//   - ./generate with a YaRN x2 config prints exactly what --rope-scaling yarn --rope-factor 2
//     prints, past the model's 512 positions (the same scaling: bit-identical text);
//   - a bad file (broken JSON, an unsupported rope_type, a factor below 1, no file) and the two
//     ways given at once are one line on stderr naming the flag, exit 1 or 2, for both tools.
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "nn/long_context.h"
#include "formats/hf_rope_scaling.h"

#define GEN "./generate data/models/stories260K.bin -z data/models/tok512.bin "

// Writes text into a new file under /tmp named for this test and the process; returns the path.
static const char *config_file(char *path, size_t n, const char *name, const char *text) {
    snprintf(path, n, "/tmp/tw-rope-config-%ld-%s.json", (long)getpid(), name);
    ck_assert_int_eq(tt_write_text(path, text), 0);
    return path;
}

START_TEST(a_config_scaling_lands_in_the_model_betas_included)
{
    char path[256], err[512];
    config_file(path, sizeof path, "betas",
                "{\"max_position_embeddings\": 64, \"rope_scaling\": {\"rope_type\": \"yarn\", "
                "\"factor\": 3.0, \"beta_fast\": 16, \"beta_slow\": 2}}");
    tw_rope_scaling sc;
    ck_assert_int_eq(tw_hf_rope_scaling_read_file(&sc, path, err, sizeof err), TW_OK);
    unlink(path);
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "llama"), TW_OK);
    c.max_seq = 50;
    ck_assert_int_eq(tw_model_config_apply_rope_scaling(&c, &sc, 1 << 20), TW_OK);
    const tw_rope_scaling *got = &c.block.attn.rope_scaling;
    ck_assert_int_eq(got->kind, TW_ROPE_SCALING_YARN);
    ck_assert(got->factor == 3.0f && got->beta_fast == 16.0f && got->beta_slow == 2.0f);
    ck_assert_int_eq(got->original_max_pos, 64);   // from max_position_embeddings, as transformers
    ck_assert_int_eq(c.max_seq, 192);               // ceil(3 x 64)
    // A linear file without original_max_position_embeddings: the model's own context is L.
    config_file(path, sizeof path, "linear", "{\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.5}}");
    ck_assert_int_eq(tw_hf_rope_scaling_read_file(&sc, path, err, sizeof err), TW_OK);
    unlink(path);
    c.max_seq = 50;
    ck_assert_int_eq(tw_model_config_apply_rope_scaling(&c, &sc, 1 << 20), TW_OK);
    ck_assert_int_eq(c.block.attn.rope_scaling.original_max_pos, 50);
    ck_assert_int_eq(c.max_seq, 125);
    // Too long for the limit: refused, the configuration unchanged.
    c.max_seq = 50;
    ck_assert_int_eq(tw_model_config_apply_rope_scaling(&c, &sc, 100), TW_ERR_ARG);
    ck_assert_int_eq(c.max_seq, 50);
}
END_TEST

START_TEST(generate_with_a_config_prints_what_the_flags_print)
{
    char path[256];
    config_file(path, sizeof path, "yarn2",
                "{\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 2.0, "
                "\"original_max_position_embeddings\": 512}}");
    char cmd[512];
    snprintf(cmd, sizeof cmd, GEN "-t 0 -n 600 --rope-config %s", path);
    run_result a = tt_run(cmd);
    run_result b = tt_run(GEN "-t 0 -n 600 --rope-scaling yarn --rope-factor 2");
    unlink(path);
    ck_assert_msg(a.rc == 0, "%s", a.err);
    ck_assert_int_eq(b.rc, 0);
    ck_assert_int_gt((int)strlen(a.out), 500);
    ck_assert_str_eq(a.out, b.out);
    tt_run_free(&a);
    tt_run_free(&b);
}
END_TEST

START_TEST(a_bad_config_is_one_line)
{
    static const struct { const char *name, *text, *says; } bad[] = {
        { "broken", "{\"rope_scaling\": {\"rope_type\": \"yarn\"", "byte" },
        { "dynamic", "{\"rope_scaling\": {\"rope_type\": \"dynamic\", \"factor\": 2}}", "dynamic" },
        { "small", "{\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 0.5}}", "factor" },
    };
    char path[256], cmd[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        config_file(path, sizeof path, bad[i].name, bad[i].text);
        for (int tool = 0; tool < 2; tool++) {
            snprintf(cmd, sizeof cmd, "%s--rope-config %s", tool ? "./train " : GEN, path);
            run_result r = tt_run(cmd);
            ck_assert_msg(r.rc == 1 && tt_count_lines(r.err) == 1 && strstr(r.err, "--rope-config") &&
                          strstr(r.err, path) && strstr(r.err, bad[i].says),
                          "%s: rc %d, stderr '%s'", cmd, r.rc, r.err);
            tt_run_free(&r);
        }
        unlink(path);
    }
    static const char *const missing[] = { GEN "--rope-config /nonexistent/c.json",
                                           "./train --rope-config /nonexistent/c.json" };
    for (int i = 0; i < 2; i++) {
        run_result r = tt_run(missing[i]);
        ck_assert_msg(r.rc == 1 && tt_count_lines(r.err) == 1 && strstr(r.err, "/nonexistent/c.json"),
                      "%s: rc %d, stderr '%s'", missing[i], r.rc, r.err);
        tt_run_free(&r);
    }
    config_file(path, sizeof path, "both", "{\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2}}");
    for (int tool = 0; tool < 2; tool++) {
        snprintf(cmd, sizeof cmd, "%s--rope-config %s --rope-scaling ntk", tool ? "./train " : GEN, path);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc >= 1 && r.rc <= 2 && tt_count_lines(r.err) == 1 && strstr(r.err, "keep one"),
                      "%s: rc %d, stderr '%s'", cmd, r.rc, r.err);
        tt_run_free(&r);
    }
    unlink(path);
}
END_TEST

Suite *suite_rope_config(void) {
    Suite *s = suite_create("rope_config");
    TCase *tc = tcase_create("rope_config");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_config_scaling_lands_in_the_model_betas_included);
    tcase_add_test(tc, generate_with_a_config_prints_what_the_flags_print);
    tcase_add_test(tc, a_bad_config_is_one_line);
    suite_add_tcase(s, tc);
    return s;
}
