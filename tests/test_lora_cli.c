// test_lora_cli.c: ./train --lora and ./generate --lora as a user runs them: ten steps of the
// stories260K case of tests/golden/gen_lora.py through the flags (the printed losses and the
// adapters file written against PyTorch's), the --init file untouched, the merged checkpoint and
// the unmerged adapters generating the same greedy text, and bad flags and files answered with
// one line and a non-zero exit.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/lora_file.h"

#define GOLD "data/golden/lora/train/stories260K/"
#define BASE "data/models/stories260K.bin"

static int one_line(const char *s) {
    const char *nl = strchr(s, '\n');
    return s[0] != '\0' && nl != NULL && nl[1] == '\0';
}

START_TEST(train_lora_matches_pytorch_and_generate_runs_it)
{
    char ad[512], merged[512], cmd[2048], err[512] = "";
    tt_tmp_path(ad, sizeof ad, "lora_cli", "a.lora");
    tt_tmp_path(merged, sizeof merged, "lora_cli", "merged.bin");
    long base_len = 0;
    unsigned char *base_before = tt_read_file(BASE, &base_len);
    snprintf(cmd, sizeof cmd, "./train --init " BASE " --tokens data/golden/train/stories260K/tokens.bin "
             "--lora-init " GOLD "init.lora --no-shuffle --batch 2 --seq 24 --steps 10 --lr 1e-2 "
             "--warmup 0 --min-lr 1e-3 --weight-decay 0.1 --beta1 0.9 --beta2 0.95 --eps 1e-8 --clip 1 "
             "--curve none --out %s --merged %s", ad, merged);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "4480 trainable parameters, 1.72 %"));
    // The printed losses: 6 significant digits against PyTorch's (relative 1e-5, as test_train_cli.c).
    tw_npy want = tt_load("lora/train/stories260K/losses", 10);
    char why[4096];
    // 6 printed digits: relative 1e-5 (as tests/test_train_cli.c).
    ck_assert_msg(tt_losses_printed(r.out, want.data, 10, 1e-5, why, sizeof why), "%s", why);
    tw_npy_free(&want);
    tt_run_free(&r);
    // The adapters file: PyTorch's final adapters within test_lora.c's tolerance (1e-4 + 1e-4 rel).
    tw_model_config c;
    tw_lora_set got, gold;
    {
        tw_model m;
        ck_assert_int_eq(tw_model_load_file(&m, BASE, err, sizeof err), TW_OK);
        c = m.cfg;
        ck_assert_msg(tw_lora_file_load(&got, ad, &c, err, sizeof err) == TW_OK, "%s", err);
        ck_assert_msg(tw_lora_file_load(&gold, GOLD "final.lora", &c, err, sizeof err) == TW_OK, "%s", err);
        ck_assert_allclose(got.memory, gold.memory, got.n_floats, 1e-4, 1e-4);
        tw_model_free(&m);
    }
    tw_lora_set_free(&got);
    tw_lora_set_free(&gold);
    // The frozen base file, byte for byte.
    long len = 0;
    unsigned char *base_after = tt_read_file(BASE, &len);
    ck_assert(len == base_len && memcmp(base_before, base_after, (size_t)len) == 0);
    free(base_before);
    free(base_after);
    // Unmerged (--lora) and merged (--merged) generate the same greedy text on the naive kernels.
    snprintf(cmd, sizeof cmd, "./generate " BASE " -z data/models/tok512.bin -t 0 -n 48 -i 'Once upon' "
             "--simd naive --lora %s", ad);
    run_result u = tt_run(cmd);
    ck_assert_msg(u.rc == 0, "rc %d: %s", u.rc, u.err);
    snprintf(cmd, sizeof cmd, "./generate %s -z data/models/tok512.bin -t 0 -n 48 -i 'Once upon' --simd naive", merged);
    run_result mr = tt_run(cmd);
    ck_assert_msg(mr.rc == 0, "rc %d: %s", mr.rc, mr.err);
    ck_assert_str_eq(u.out, mr.out);
    // ... and not the base's text (else the comparison above proves nothing about the adapters).
    run_result b = tt_run("./generate " BASE " -z data/models/tok512.bin -t 0 -n 48 -i 'Once upon' --simd naive");
    ck_assert_int_eq(b.rc, 0);
    ck_assert_str_ne(b.out, u.out);
    tt_run_free(&u);
    tt_run_free(&mr);
    tt_run_free(&b);
    remove(ad);
    remove(merged);
}
END_TEST

// Bad flags and files: one line on stderr, the exit code, and a word the line must hold.
static const struct { const char *cmd; int rc; const char *says; } BAD[] = {
    { "./train --tokens data/golden/train/llama/tokens.bin --lora 4", 2, "--init" },
    { "./train --init " BASE " --tokens data/golden/train/llama/tokens.bin --lora 4 --lora-targets wq,xx", 2, "'xx'" },
    { "./train --init " BASE " --tokens data/golden/train/llama/tokens.bin --lora 4 --lora-targets wq,wq", 2, "twice" },
    { "./train --init " BASE " --tokens data/golden/train/llama/tokens.bin --lora 65", 2, "--lora" },
    { "./train --init " BASE " --tokens data/golden/train/llama/tokens.bin --lora 4 --state x", 2, "--state" },
    { "./train --init " BASE " --tokens data/golden/train/llama/tokens.bin --lora-alpha 4", 2, "--lora" },
    { "./train --init " BASE " --tokens data/golden/train/llama/tokens.bin --lora-init data/golden/lora/train/llama/init.lora", 1, "another model" },
    { "./train --init data/golden/train/gpt2/init.bin --tokens data/golden/train/gpt2/tokens.bin --seq 8 --lora 2 --lora-targets w3", 2, "w3" },
    { "./generate " BASE " -z data/models/tok512.bin --lora data/golden/lora/train/gpt2/init.lora", 1, "--lora" },
    { "./generate " BASE " -z data/models/tok512.bin --lora data/models/tok512.bin", 1, "not a LoRA adapters file" },
};

START_TEST(bad_lora_flags_and_files_get_one_line)
{
    run_result r = tt_run(BAD[_i].cmd);
    ck_assert_msg(r.rc == BAD[_i].rc, "%s: rc %d (want %d): %s", BAD[_i].cmd, r.rc, BAD[_i].rc, r.err);
    ck_assert_msg(one_line(r.err), "%s: not one line: '%s'", BAD[_i].cmd, r.err);
    ck_assert_msg(strstr(r.err, BAD[_i].says) != NULL, "%s: '%s' lacks '%s'", BAD[_i].cmd, r.err, BAD[_i].says);
    tt_run_free(&r);
}
END_TEST

Suite *suite_lora_cli(void) {
    Suite *s = suite_create("lora_cli");
    TCase *tc = tcase_create("lora_cli");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, train_lora_matches_pytorch_and_generate_runs_it);
    tcase_add_loop_test(tc, bad_lora_flags_and_files_get_one_line, 0, (int)(sizeof BAD / sizeof BAD[0]));
    suite_add_tcase(s, tc);
    return s;
}
