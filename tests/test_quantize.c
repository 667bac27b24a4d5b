// test_quantize.c: ./quantize (tools/quantize.c) as a user runs it. On stories260K it picks group
// size 4 by itself and says so, refuses --group 64 (FFN width 172) with one line, writes a
// version-2 file whose every weight is within half a quantization step of the fp32 weight
// (tolerance s/2 (1 + 1e-6): the rounding bound, plus float rounding of q * s), and rejects
// every corrupt version-0 checkpoint of the corpus with one line naming the file, exit 1 and no
// output file. --budget measures what int8 costs on a token file and prints it (the bounds of
// test_q8model.c's budget test), and refuses a bad token file before writing anything.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "quant/q8_0.h"
#include "quant/q8file.h"
#include "formats/llama2c.h"
#include "tokenize/tokenizer.h"
#include "train/tokens.h"

#define MODEL "data/models/stories260K.bin"

START_TEST(quantize_picks_a_group_that_fits_and_every_weight_is_within_half_a_step)
{
    char out[256], cmd[512];
    snprintf(out, sizeof out, "/tmp/tw_test_quantize_%ld.bin", (long)getpid());
    snprintf(cmd, sizeof cmd, "./quantize " MODEL " %s", out);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s: exit %d, stderr %s", cmd, r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "group size 4: the default 64 does not divide"));
    ck_assert_ptr_nonnull(strstr(r.out, "layers.4.feed_forward.w2"));
    ck_assert_int_eq(tt_count_lines(r.out), 1 + 1 + 36 + 3);   // choice, table head, 36 tensors, 3 summary
    tt_run_free(&r);

    tw_q8file q;
    tw_model m;
    char err[512];
    ck_assert_int_eq(tw_q8file_read(&q, out, err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_llama2c_load(&m, MODEL, err, sizeof err), TW_OK);
    ck_assert_int_eq(q.cfg.group_size, 4);
    ck_assert_int_eq(q.cfg.shared_classifier, 1);
    ck_assert_int_eq(q.n_tensors, 36);
    const int gs = 4, C = m.cfg.block.attn.d_model;
    ck_assert_mem_eq(q.rms_final, m.final_w, (size_t)C * sizeof(float));
    ck_assert_mem_eq(q.rms_ffn + 2 * C, m.layers[2].norm2_w, (size_t)C * sizeof(float));
    struct { const char *name; const float *w; } pairs[] = {
        { "tok_embeddings", m.tok_emb },
        { "layers.0.attention.wq", m.layers[0].attn.wq.f32 },
        { "layers.3.attention.wv", m.layers[3].attn.wv.f32 },
        { "layers.4.feed_forward.w2", m.layers[4].ffn_down.f32 },
        { "layers.1.feed_forward.w3", m.layers[1].ffn_up.f32 },
    };
    for (int p = 0; p < 5; p++) {
        const tw_q8file_tensor *t = tw_q8file_find(&q, pairs[p].name);
        ck_assert_ptr_nonnull(t);
        for (long i = 0; i < (long)t->rows * t->cols; i++) {
            float s = t->s[i / gs], back = (float)t->q[i] * s;
            ck_assert_msg(fabsf(back - pairs[p].w[i]) <= 0.5f * s * (1 + 1e-6f),
                          "%s[%ld]: %g vs %g (s %g)", pairs[p].name, i, (double)back, (double)pairs[p].w[i], (double)s);
        }
    }
    tw_q8file_free(&q);
    tw_model_free(&m);
    remove(out);
}
END_TEST

START_TEST(quantize_refuses_a_group_that_does_not_divide_and_bad_flags)
{
    static const struct { const char *args; int rc; const char *word; } cases[] = {
        { MODEL " /tmp/tw_q_never.bin --group 64", 2, "does not divide hidden_dim 172" },
        { MODEL " /tmp/tw_q_never.bin --group 0", 2, "--group" },
        { MODEL " /tmp/tw_q_never.bin --group x", 2, "--group" },
        { MODEL " /tmp/tw_q_never.bin --group", 2, "--group" },
        { MODEL, 2, "OUT.bin" },
        { MODEL " /tmp/tw_q_never.bin --bogus", 2, "--bogus" },
        { "data/models/no_such_model.bin /tmp/tw_q_never.bin", 1, "no_such_model.bin" },
        { MODEL " /tmp/tw_q_never.bin --budget", 2, "--budget" },
        { MODEL " /tmp/tw_q_never.bin --budget-tokens 64", 2, "--budget" },
        { MODEL " /tmp/tw_q_never.bin --budget data/corrupt/tokens/valid_six.bin --budget-tokens 1", 2, "--budget-tokens" },
        { MODEL " /tmp/tw_q_never.bin --budget data/models/no_such_tokens.bin", 1, "no_such_tokens.bin" },
        { MODEL " /tmp/tw_q_never.bin --budget data/corrupt/tokens/odd_length.bin", 1, "odd_length.bin" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "./quantize %s", cases[i].args);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == cases[i].rc, "%s: exit %d, want %d", cmd, r.rc, cases[i].rc);
        ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, cases[i].word),
                      "%s: stderr must be one line naming '%s', got: %s", cmd, cases[i].word, r.err);
        ck_assert_msg(!tt_exists("/tmp/tw_q_never.bin"), "%s left an output file", cmd);
        tt_run_free(&r);
    }
}
END_TEST

// Every corrupt version-0 checkpoint of data/corrupt/MANIFEST.tsv: exit 1, one line naming it.
START_TEST(quantize_rejects_every_corrupt_checkpoint_with_one_line)
{
    FILE *f = fopen("data/corrupt/MANIFEST.tsv", "r");
    ck_assert_msg(f != NULL, "cannot read data/corrupt/MANIFEST.tsv: run `make corpus`");
    char line[512], out[128];
    snprintf(out, sizeof out, "/tmp/tw_test_quantize_bad_%ld.bin", (long)getpid());
    int checked = 0;
    while (fgets(line, sizeof line, f)) {
        char reader[16], file[200], status[16];
        if (line[0] == '#' || sscanf(line, "%15[^\t]\t%199[^\t]\t%15[^\t]", reader, file, status) != 3) continue;
        if (strcmp(reader, "llama2c") != 0 || strcmp(status, "OK") == 0) continue;
        char cmd[600];
        snprintf(cmd, sizeof cmd, "./quantize data/corrupt/%s %s", file, out);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 1, "%s: exit %d (stderr %s)", cmd, r.rc, r.err);
        ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, file), "%s: stderr %s", cmd, r.err);
        ck_assert_msg(!tt_exists(out), "%s left an output file", cmd);
        tt_run_free(&r);
        checked++;
    }
    fclose(f);
    ck_assert_int_gt(checked, 20);
}
END_TEST

// --budget on a held-out text of about 600 tokens (two windows of stories260K's 512): the report
// names the file, the tokens and the kernels, and its numbers hold the bounds of test_q8model.c's
// budget test (perplexity within 1 %, KL below 0.002 nats, a logit error in (0, 1), at least 64 of
// 256 greedy tokens agreeing), for the same reasons stated there.
START_TEST(quantize_budget_reports_what_int8_costs_on_a_token_file)
{
    const char *story =
        "Tom had a small red boat. Every morning he took it to the pond and watched it float on the "
        "water. One day the wind pushed the boat far away, and Tom ran around the pond to catch it. "
        "When he got it back, he smiled and hugged his mom. The next day his sister Mia wanted to play "
        "with the boat too. Tom was sad at first, but then he let her hold the string. They laughed "
        "together as the boat went round and round.";
    tw_tokenizer tok;
    char err[512], toks[256], out[256], cmd[768];
    ck_assert_int_eq(tw_tokenizer_load(&tok, "data/models/tok512.bin", 512, err, sizeof err), TW_OK);
    int text[1024], n = 0;
    while (n < 600) {   // the story again and again, BOS first each time, as a token file holds stories
        int T = 0;
        ck_assert_int_eq(tw_tokenizer_encode(&tok, text + n, &T, 1024 - n, story, 1, 0), TW_OK);
        n += T;
    }
    snprintf(toks, sizeof toks, "/tmp/tw_test_budget_%ld.tok", (long)getpid());
    snprintf(out, sizeof out, "/tmp/tw_test_budget_%ld.bin", (long)getpid());
    ck_assert_int_eq(tw_tokens_write(toks, text, n, err, sizeof err), TW_OK);
    snprintf(cmd, sizeof cmd, "./quantize " MODEL " %s --budget %s --budget-tokens 600", out, toks);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s: exit %d, stderr %s", cmd, r.rc, r.err);
    const char *at = strstr(r.out, "error budget on ");
    ck_assert_msg(at && strstr(at, toks) && strstr(at, "600 tokens in windows of 512"), "%s", r.out);
    double max_err = -1, kl = -1, ppl32 = 0, ppl8 = 0;
    int agree = -1, steps = 0;
    ck_assert(sscanf(strstr(at, "largest |logit error|"), "largest |logit error| %lf", &max_err) == 1);
    ck_assert(sscanf(strstr(at, "mean KL(fp32 || int8)"), "mean KL(fp32 || int8) %lf", &kl) == 1);
    ck_assert(sscanf(strstr(at, "perplexity fp32 -> int8"), "perplexity fp32 -> int8 %lf -> %lf", &ppl32, &ppl8) == 2);
    ck_assert(sscanf(strstr(at, "greedy tokens that agree"), "greedy tokens that agree %d of %d", &agree, &steps) == 2);
    ck_assert_msg(max_err > 0 && max_err < 1.0 && kl >= 0 && kl < 0.002 && fabs(ppl8 / ppl32 - 1) < 0.01 &&
                  ppl32 > 1 && steps == 256 && agree >= 64 && agree <= steps, "%s", r.out);
    ck_assert(tt_exists(out));
    // The size line says why int8 is half of fp32, not a quarter (groups of 4 here: stories260K's
    // dim 64 and hidden 172 take no larger power of two).
    ck_assert_msg(strstr(r.out, "of the fp32 size, not 25%: each group of 4 one-byte values carries a 4-byte "
                              "float scale, (4 + 4) / (4 x 4) = 50.0%"), "%s", r.out);
    tt_run_free(&r);
    remove(out);
    // With -z: which tokens the perplexity is over (600 in windows of 512: 511 + 87 predicted)
    // and bits per byte, recomputed here from the printed perplexities over the bytes those very
    // tokens decode to. Tolerance 1e-4 bits: the printed bpb is rounded to 4 decimals, and the
    // printed perplexities' rounding (5e-5 on about 5) moves log2 by under 2e-5.
    char cmd_z[900];
    snprintf(cmd_z, sizeof cmd_z, "%s -z data/models/tok512.bin", cmd);
    run_result rz = tt_run(cmd_z);
    ck_assert_msg(rz.rc == 0, "%s: exit %d, stderr %s", cmd_z, rz.rc, rz.err);
    ck_assert_msg(strstr(rz.out, "(perplexity over the 598 predicted tokens: the file's first 600"), "%s", rz.out);
    const char *bl = strstr(rz.out, "bits per byte fp32 -> int8");
    double b32 = 0, b8 = 0;
    long printed_bytes = 0;
    ck_assert_msg(bl && sscanf(bl, "bits per byte fp32 -> int8 %lf -> %lf (%ld bytes", &b32, &b8, &printed_bytes) == 3,
                  "%s", rz.out);
    const long bytes = tw_tokenizer_decoded_bytes(&tok, text, 1, 512) + tw_tokenizer_decoded_bytes(&tok, text, 513, 600);
    ck_assert_int_eq(printed_bytes, bytes);
    ck_assert_msg(fabs(b32 - log2(ppl32) * 598 / (double)bytes) < 1e-4 && fabs(b8 - log2(ppl8) * 598 / (double)bytes) < 1e-4,
                  "bpb %f %f, want %f %f", b32, b8, log2(ppl32) * 598 / (double)bytes, log2(ppl8) * 598 / (double)bytes);
    tt_run_free(&rz);
    remove(out);
    rz = tt_run("./quantize " MODEL " /tmp/tw_never_written.bin -z data/models/tok512.bin");
    ck_assert_msg(rz.rc == 2 && strstr(rz.err, "-z needs --budget"), "exit %d: %s", rz.rc, rz.err);
    tt_run_free(&rz);
    // a token file of another vocabulary: one line naming the file, exit 1, nothing written
    text[5] = 700;
    ck_assert_int_eq(tw_tokens_write(toks, text, 10, err, sizeof err), TW_OK);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 1 && tt_count_lines(r.err) == 1 && strstr(r.err, toks) &&
                  strstr(r.err, "token 5 is id 700, outside this model's vocabulary of 512"), "%s", r.err);
    ck_assert(!tt_exists(out));
    tt_run_free(&r);
    remove(toks);
    tw_tokenizer_free(&tok);
}
END_TEST

// Reads a whole binary file (NULL if unreadable); *n its length. Caller frees.
static unsigned char *slurp_bytes(const char *path, long *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)*n + 1);
    if (b && fread(b, 1, (size_t)*n, f) != (size_t)*n) { free(b); b = NULL; }
    fclose(f);
    return b;
}

// ./quantize IN IN (or OUT a symbolic link to IN, or --budget's token file as OUT) would replace
// the input: refused with exit 2 and one line, the input byte-identical afterwards. A copy of
// stories260K is the victim, never the real file.
START_TEST(quantize_refuses_an_output_that_is_an_input)
{
    char in[128], link_path[128], cmd[600];
    snprintf(in, sizeof in, "/tmp/tw_test_quantize_same_%ld.bin", (long)getpid());
    snprintf(link_path, sizeof link_path, "/tmp/tw_test_quantize_link_%ld.bin", (long)getpid());
    long n = 0, m = 0;
    unsigned char *want = slurp_bytes(MODEL, &n);
    ck_assert_ptr_nonnull(want);
    FILE *f = fopen(in, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(want, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    ck_assert_int_eq(symlink(in, link_path), 0);
    const char *outs[3] = { in, link_path, NULL };
    char budget_case[300];
    snprintf(budget_case, sizeof budget_case, "%s --budget %s", in, in);
    for (int k = 0; k < 3; k++) {
        if (outs[k]) snprintf(cmd, sizeof cmd, "./quantize %s %s", in, outs[k]);
        else snprintf(cmd, sizeof cmd, "./quantize " MODEL " %s", budget_case);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 2, "%s: exit %d (stderr %s)", cmd, r.rc, r.err);
        ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, "the same file as the"), "%s: stderr %s", cmd, r.err);
        tt_run_free(&r);
        unsigned char *got = slurp_bytes(in, &m);
        ck_assert_msg(got && m == n && memcmp(got, want, (size_t)n) == 0, "%s changed the input", cmd);
        free(got);
    }
    free(want);
    remove(link_path);
    remove(in);
}
END_TEST

// Files of the toolkit's own that are not fp32 llama2.c checkpoints used to be read as a header
// whose dim is their magic ("header field dim = 1634415666 exceeds the limit"): ./quantize names
// a version-2 file, a TWMODEL checkpoint, a TWSTATE training state and a TWMX model with experts, and ./generate a version-2
// file with one byte of its magic damaged. Exit 1, one line, no output.
START_TEST(quantize_and_generate_name_the_kind_of_a_wrong_file)
{
    static const struct { const char *cmd; const char *word; } cases[] = {
        { "./quantize data/corrupt/q8file/valid_shared.bin %s", "already quantized" },
        { "./quantize data/golden/train/gpt2/init.bin %s", "TWMODEL checkpoint" },
        { "./quantize data/corrupt/twstate/negative_step.bin %s", "TWSTATE training state" },
        { "./quantize data/golden/train_moe/llama_e4k2s1/init.bin %s", "TWMX model with experts" },
        // (no %s: ./generate writes no file; tt_run captures its stdout)
        { "./generate data/corrupt/q8file/bad_magic.bin -z data/models/tok512.bin -n 2 -t 0", "damaged llama2.c version-2" },
    };
    char out[128], cmd[600];
    snprintf(out, sizeof out, "/tmp/tw_test_quantize_kind_%ld.bin", (long)getpid());
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(cmd, sizeof cmd, cases[i].cmd, out);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 1, "%s: exit %d (stderr %s)", cmd, r.rc, r.err);
        ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, cases[i].word) && !strstr(r.err, "exceeds"),
                      "%s: stderr %s", cmd, r.err);
        tt_run_free(&r);
        if (i < 4) ck_assert_msg(!tt_exists(out), "%s wrote its output", cmd);
        remove(out);
    }
}
END_TEST

Suite *suite_quantize(void) {
    Suite *s = suite_create("quantize");
    TCase *tc = tcase_create("tool");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, quantize_picks_a_group_that_fits_and_every_weight_is_within_half_a_step);
    tcase_add_test(tc, quantize_refuses_a_group_that_does_not_divide_and_bad_flags);
    tcase_add_test(tc, quantize_rejects_every_corrupt_checkpoint_with_one_line);
    tcase_add_test(tc, quantize_budget_reports_what_int8_costs_on_a_token_file);
    tcase_add_test(tc, quantize_refuses_an_output_that_is_an_input);
    tcase_add_test(tc, quantize_and_generate_name_the_kind_of_a_wrong_file);
    suite_add_tcase(s, tc);
    return s;
}
