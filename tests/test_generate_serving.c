// test_generate_serving.c: ./generate's serving flags on stories260K, run as a user runs them:
// batched decoding (--prompts FILE) and speculative decoding (--draft FILE, --draft-layers N,
// --draft-k K).
//   - --prompts with one prompt prints what -i prints, byte for byte, greedy and sampled (sequence
//     i samples with seed + i); with three prompts each completion is that prompt's greedy text
//     alone (tolerance 0: the text; docs/serving.md says why the batched sums may differ from
//     one-at-a-time decoding at a SIMD level, and this checks the text does not); the same with
//     --packed, whose sums are another order (decode/batch_panels.h): the same text.
//   - An int8 model's prompts decoded together print each prompt's greedy text alone; --packed,
//     which has no int8 panels, is refused with one line.
//   - Bad prompts files and flag mixes: one line, exit 1 or 2, nothing on stdout.
//   - OMP_NUM_THREADS=2 on a build without OpenMP is named on stderr instead of ignored.
//   - Greedy output is the documented greedy story byte for byte, with drafts of 1, 3 and 5 of
//     its 5 layers and k from 1 to 8 (tolerance 0: the text; the target's passes run the
//     decode's own arithmetic, docs/serving.md).
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
#include "simd/simd.h"

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
    snprintf(other, sizeof other, "out/test_serving_%ld_v32.bin", (long)getpid());
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

static void scratch(char *out, size_t len, const char *tag) {
    mkdir("out", 0777);
    snprintf(out, len, "out/test_serving_%ld_%s", (long)getpid(), tag);
}

static void write_text(const char *path, const char *text, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, n, f), n);
    fclose(f);
}

START_TEST(one_prompt_prints_what_dash_i_prints)
{
    char path[128], cmd[512];
    scratch(path, sizeof path, "one.txt");
    write_text(path, "Once upon a time\n", 17);
    static const char *modes[] = { "-t 0 -n 256", "-t 1 -s 5 -n 200", "-t 0.8 -p 0.9 -s 11 -n 100" };
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, GEN "%s -i \"Once upon a time\"", modes[i]);
        run_result a = tt_run(cmd);
        snprintf(cmd, sizeof cmd, GEN "%s --prompts %s", modes[i], path);
        run_result b = tt_run(cmd);
        ck_assert_msg(a.rc == 0 && b.rc == 0, "%s: exit %d: %s", cmd, b.rc, b.err);
        ck_assert_msg(strcmp(a.out, b.out) == 0, "%s: '%s' differs from -i's '%s'", cmd, b.out, a.out);
        ck_assert_msg(strstr(b.err, "kv cache: paged") != NULL, "%s", b.err);
        tt_run_free(&a);
        tt_run_free(&b);
    }
    remove(path);
}
END_TEST

START_TEST(three_prompts_print_each_prompts_own_greedy_text_in_order)
{
    static const char *prompts[] = { "Lily", "The cat sat", "Once upon a time" };
    char path[128], cmd[512], want[8192] = "";
    scratch(path, sizeof path, "three.txt");
    write_text(path, "Lily\r\nThe cat sat\nOnce upon a time", 34);   // CRLF and no final newline too
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, GEN "-t 0 -n 96 -i \"%s\"", prompts[i]);
        run_result a = tt_run(cmd);
        ck_assert_int_eq(a.rc, 0);
        strncat(want, a.out, sizeof want - strlen(want) - 1);
        tt_run_free(&a);
    }
    // The decode's sums, then the packed panels (another order of the same sums, the same text).
    static const char *kernels[] = { "", " --packed" };
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, GEN "-t 0 -n 96 --prompts %s%s", path, kernels[k]);
        run_result b = tt_run(cmd);
        ck_assert_msg(b.rc == 0, "%s", b.err);
        ck_assert_msg(strcmp(b.out, want) == 0, "batched%s:\n%s\nalone:\n%s", kernels[k], b.out, want);
        ck_assert_msg(strstr(b.err, k ? "batch: 3 prompts decoded together on packed panels"
                                      : "batch: 3 prompts decoded together:") != NULL, "%s", b.err);
        tt_run_free(&b);
    }
    remove(path);
}
END_TEST

// An int8 model (./quantize): --prompts once crashed (the batch never selected the int8 kernels,
// which decoding alone does when its state is made); now each completion is that prompt's greedy
// text alone (tolerance 0: the text; the batch runs the int8 weights row by row, as alone), and
// --packed, which has no int8 panels, is refused with one line.
START_TEST(an_int8_model_decodes_its_prompts_together_as_alone)
{
    static const char *prompts[] = { "Lily", "The cat sat", "Once upon a time" };
    char q8[128], path[128], cmd[512], want[8192] = "";
    scratch(q8, sizeof q8, "q8.bin");
    scratch(path, sizeof path, "q8_prompts.txt");
    snprintf(cmd, sizeof cmd, "./quantize " MODEL " %s", q8);
    run_result q = tt_run(cmd);
    ck_assert_msg(q.rc == 0, "%s: %s", cmd, q.err);
    tt_run_free(&q);
    write_text(path, "Lily\nThe cat sat\nOnce upon a time\n", 34);
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "./generate %s -z " TOK " -t 0 -n 64 -i \"%s\"", q8, prompts[i]);
        run_result a = tt_run(cmd);
        ck_assert_msg(a.rc == 0, "%s: %s", cmd, a.err);
        strncat(want, a.out, sizeof want - strlen(want) - 1);
        tt_run_free(&a);
    }
    snprintf(cmd, sizeof cmd, "./generate %s -z " TOK " -t 0 -n 64 --prompts %s", q8, path);
    run_result b = tt_run(cmd);
    ck_assert_msg(b.rc == 0, "%s: exit %d: %s", cmd, b.rc, b.err);
    ck_assert_msg(strcmp(b.out, want) == 0, "batched:\n%s\nalone:\n%s", b.out, want);
    tt_run_free(&b);
    snprintf(cmd, sizeof cmd, "./generate %s -z " TOK " -t 0 -n 64 --prompts %s --packed", q8, path);
    run_result c = tt_run(cmd);
    ck_assert_int_eq(c.rc, 1);
    ck_assert_str_eq(c.out, "");
    ck_assert_msg(strstr(c.err, "--packed: the model's matrices are int8") != NULL, "%s", c.err);
    tt_run_free(&c);
    remove(q8);
    remove(path);
}
END_TEST

START_TEST(bad_prompts_files_give_one_line)
{
    char empty[128], zero[128], longp[128], cmd[512];
    scratch(empty, sizeof empty, "empty.txt");
    scratch(zero, sizeof zero, "zero.txt");
    scratch(longp, sizeof longp, "long.txt");
    write_text(empty, "", 0);
    write_text(zero, "Lily\0Tom\n", 9);
    char big[700];
    for (int i = 0; i < 200; i++) memcpy(big + 3 * i, "\xe4\xb8\xad", 3);   // 3 byte tokens each
    big[600] = '\n';
    write_text(longp, big, 601);
    struct { char args[256]; int rc; const char *needle; } bad[10];
    int n = 0;
    snprintf(bad[n].args, 256, "--prompts %s", empty); bad[n].rc = 1; bad[n++].needle = "the file is empty";
    snprintf(bad[n].args, 256, "--prompts %s", zero); bad[n].rc = 1; bad[n++].needle = "has a zero byte";
    snprintf(bad[n].args, 256, "--prompts %s", longp); bad[n].rc = 1; bad[n++].needle = "line 1 is 602 tokens";
    snprintf(bad[n].args, 256, "--prompts data/models/no-such-prompts.txt"); bad[n].rc = 1; bad[n++].needle = "no-such-prompts.txt";
    snprintf(bad[n].args, 256, "--prompts data"); bad[n].rc = 1; bad[n++].needle = "is a directory";
    snprintf(bad[n].args, 256, "--prompts %s -i Lily", empty); bad[n].rc = 2; bad[n++].needle = "pass one of them";
    snprintf(bad[n].args, 256, "--prompts %s --draft-layers 2", empty); bad[n].rc = 2; bad[n++].needle = "drop --draft";
    snprintf(bad[n].args, 256, "--prompts %s --no-cache", empty); bad[n].rc = 2; bad[n++].needle = "drop --no-cache";
    snprintf(bad[n].args, 256, "--prompts"); bad[n].rc = 2; bad[n++].needle = "needs a value";
    snprintf(bad[n].args, 256, "--packed -i Lily"); bad[n].rc = 2; bad[n++].needle = "add --prompts";
    for (int i = 0; i < n; i++) {
        snprintf(cmd, sizeof cmd, GEN "-t 0 -n 16 %.255s", bad[i].args);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == bad[i].rc, "%s: exit %d, want %d (%s)", cmd, r.rc, bad[i].rc, r.err);
        ck_assert_msg(tt_count_lines(r.err) == 1, "%s: stderr should be one line: '%s'", cmd, r.err);
        ck_assert_msg(strstr(r.err, bad[i].needle) != NULL, "%s: '%s' should say '%s'", cmd, r.err, bad[i].needle);
        ck_assert_str_eq(r.out, "");
        tt_run_free(&r);
    }
    remove(empty);
    remove(zero);
    remove(longp);
}
END_TEST

START_TEST(threads_asked_for_without_openmp_are_named)
{
    run_result r = tt_run("OMP_NUM_THREADS=2 " GEN "-t 0 -n 8");
    ck_assert_int_eq(r.rc, 0);
    const int note = strstr(r.err, "OMP_NUM_THREADS=2 has no effect") != NULL;
    ck_assert_msg(note == !tw_threads_built_in(), "built with OpenMP: %d, note printed: %d (%s)",
                  tw_threads_built_in(), note, r.err);
    tt_run_free(&r);
    r = tt_run("OMP_NUM_THREADS=1 " GEN "-t 0 -n 8");
    ck_assert_ptr_null(strstr(r.err, "has no effect"));
    tt_run_free(&r);
}
END_TEST

Suite *suite_generate_serving(void) {
    Suite *s = suite_create("generate_serving");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, one_prompt_prints_what_dash_i_prints);
    tcase_add_test(tc, threads_asked_for_without_openmp_are_named);
    tcase_add_test(tc, three_prompts_print_each_prompts_own_greedy_text_in_order);
    tcase_add_test(tc, bad_prompts_files_give_one_line);
    tcase_add_test(tc, an_int8_model_decodes_its_prompts_together_as_alone);
    tcase_add_test(tc, greedy_drafts_print_the_documented_story);
    tcase_add_test(tc, the_prompt_is_printed_first);
    tcase_add_test(tc, bad_draft_flags_and_files_give_one_line);
    suite_add_tcase(s, tc);
    return s;
}
