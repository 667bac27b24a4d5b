// test_generate_draft.c: ./generate's speculative decoding flags (--draft FILE, --draft-layers N,
// --draft-k K) on stories260K, run as a user runs them.
//   - Greedy output is the documented greedy story byte for byte, with drafts of 1, 3 and 5 of
//     its 5 layers and k from 1 to 8 (tolerance 0: the text). The target's pass over k + 1
//     positions sums its Linear layers in another order than one position at a time at a SIMD
//     level (docs/serving.md): this is the check that the greedy text is still the same.
//   - A draft equal to the model accepts every proposal, and prints k + 1 tokens per pass.
//   - The same prompt with one token per round (--draft-k 1) prints the prompt first.
//   - Bad flags and drafts: one line on stderr, exit 1 or 2, nothing on stdout.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/llama2c_write.h"

#define MODEL "data/models/stories260K.bin"
#define TOK   "data/models/tok512.bin"
#define GEN   "./generate " MODEL " -z " TOK " "

START_TEST(greedy_drafts_print_the_documented_story)
{
    char *want = tt_slurp("data/stories260K_greedy.txt");
    ck_assert_int_gt((int)strlen(want), 500);
    static const char *flags[] = { "--draft-layers 1 --draft-k 4", "--draft-layers 3 --draft-k 1",
                                   "--draft-layers 3 --draft-k 8", "--draft " MODEL " --draft-k 5" };
    for (int i = 0; i < 4; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, GEN "-t 0 -n 256 %s", flags[i]);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 0, "%s: exit %d: %s", cmd, r.rc, r.err);
        ck_assert_msg(strcmp(r.out, want) == 0, "%s: the text differs from plain greedy decoding", cmd);
        ck_assert_msg(strstr(r.err, "proposals kept") != NULL, "%s: %s", cmd, r.err);
        if (i == 3)   // the draft is the model itself: every proposal accepted, 6 tokens a pass
            ck_assert_msg(strstr(r.err, "acceptance rate 100.0 %") != NULL, "draft == model: %s", r.err);
        tt_run_free(&r);
    }
    free(want);
}
END_TEST

START_TEST(the_prompt_is_printed_first)
{
    run_result r = tt_run(GEN "-t 0 -n 40 -i \"Once upon a time\" --draft-layers 2 --draft-k 3");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_msg(strncmp(r.out, "Once upon a time, there was", 27) == 0, "got '%s'", r.out);
    tt_run_free(&r);
    r = tt_run(GEN "-t 0 -n 4 -i \"Once upon a time\" --draft-layers 2");   // nothing left to draft
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "Once upon a time\n");
    tt_run_free(&r);
}
END_TEST

// A llama2c checkpoint of another vocabulary (32 tokens) at path.
static void write_other_vocab_model(const char *path) {
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "llama"), TW_OK);
    c.vocab = 32;
    c.max_seq = 512;
    tw_model m;
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    tw_model_randomize(&m, 5);
    char err[256];
    ck_assert_msg(tw_llama2c_write(path, &m, err, sizeof err) == TW_OK, "%s", err);
    tw_model_free(&m);
}

START_TEST(bad_draft_flags_and_files_give_one_line)
{
    char other[128], cmd[512];
    mkdir("out", 0777);
    snprintf(other, sizeof other, "out/test_draft_%ld_v32.bin", (long)getpid());
    write_other_vocab_model(other);
    struct { const char *args; int rc; const char *needle; } bad[] = {
        { "--draft-layers 2 --draft-k 0", 2, "--draft-k: 0 is outside 1..64" },
        { "--draft-layers 2 --draft-k 65", 2, "--draft-k: 65 is outside 1..64" },
        { "--draft-layers 2 --draft-k four", 2, "is not an integer" },
        { "--draft-layers 0", 2, "--draft-layers: 0 is not a layer count" },
        { "--draft-layers 9", 1, "9 is more than the model's 5 layers" },
        { "--draft-layers 2 --draft " MODEL, 2, "pass one of them" },
        { "--draft-layers 2 --no-cache", 2, "--draft needs the KV cache" },
        { "--draft data/models/no-such-draft.bin", 1, "no-such-draft.bin" },
        { "--draft %O", 1, "its vocabulary has 32 tokens and the model's 512" },
        { "-n 600 --draft-layers 2", 0, "" },   // -n beyond seq_len is clamped, as without a draft
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[256];
        const char *o = strstr(bad[i].args, "%O");
        if (o) snprintf(args, sizeof args, "%.*s%s", (int)(o - bad[i].args), bad[i].args, other);
        else snprintf(args, sizeof args, "%s", bad[i].args);
        snprintf(cmd, sizeof cmd, GEN "-t 0 -n 16 %s", args);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == bad[i].rc, "%s: exit %d, want %d (%s)", cmd, r.rc, bad[i].rc, r.err);
        if (bad[i].rc != 0) {
            ck_assert_msg(tt_count_lines(r.err) == 1, "%s: stderr should be one line: '%s'", cmd, r.err);
            ck_assert_msg(strstr(r.err, bad[i].needle) != NULL, "%s: '%s' should say '%s'", cmd, r.err,
                          bad[i].needle);
            ck_assert_str_eq(r.out, "");
        }
        tt_run_free(&r);
    }
    remove(other);
}
END_TEST

Suite *suite_generate_draft(void) {
    Suite *s = suite_create("generate_draft");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, greedy_drafts_print_the_documented_story);
    tcase_add_test(tc, the_prompt_is_printed_first);
    tcase_add_test(tc, bad_draft_flags_and_files_give_one_line);
    suite_add_tcase(s, tc);
    return s;
}
