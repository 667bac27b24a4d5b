// test_sft.c: supervised fine-tuning's loss mask (lib/train/mask.c, ./train --mask) against
// PyTorch (tests/golden/gen_sft.py, data/golden/sft/<case>/): ten steps of full training where
// only the targets the mask counts enter the loss (the mean over the step's counted targets of
// all rows together), losses, rates, gradient norms and final weights; the same through ./train's
// flags; a mask that counts nothing skips its steps without a NaN; bad mask files get one line.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/loss.h"
#include "train/mask.h"
#include "train/step.h"
#include "train/tokens.h"

static const char *const CASES[] = { "llama", "gpt2" };
enum { H_B, H_T, H_STEPS, H_LR, H_WARMUP, H_MIN_LR, H_WD, H_BETA1, H_BETA2, H_EPS, H_CLIP, N_H };

START_TEST(ten_masked_steps_match_pytorch)
{
    const char *name = CASES[_i];
    char path[256], rel[256], err[512] = "";
    tw_model m;
    snprintf(path, sizeof path, "data/golden/train/%s/init.bin", name);
    ck_assert_msg(tw_model_load_file(&m, path, err, sizeof err) == TW_OK, "%s", err);
    int *tokens;
    long n;
    snprintf(path, sizeof path, "data/golden/train/%s/tokens.bin", name);
    ck_assert_msg(tw_tokens_read(&tokens, &n, path, err, sizeof err) == TW_OK, "%s", err);
    unsigned char *mask;
    snprintf(path, sizeof path, "data/golden/sft/%s/mask.bin", name);
    ck_assert_msg(tw_mask_read(&mask, path, n, err, sizeof err) == TW_OK, "%s", err);
    snprintf(rel, sizeof rel, "sft/%s/hparams", name);
    tw_npy h = tt_load(rel, N_H);
    const float *hp = h.data;
    const tw_train_config c = { (int)hp[H_B], (int)hp[H_T], (int)hp[H_STEPS], (int)hp[H_WARMUP], hp[H_LR],
                                hp[H_MIN_LR], hp[H_WD], hp[H_BETA1], hp[H_BETA2], hp[H_EPS], hp[H_CLIP] };
    tw_npy_free(&h);
    tw_trainer t;
    tw_batcher b;
    ck_assert_int_eq(tw_trainer_init(&t, &m, c.T), TW_OK);
    ck_assert_int_eq(tw_batcher_init(&b, tokens, n, c.B, c.T, 0, 0), TW_OK);
    int *in = malloc((size_t)c.B * c.T * sizeof *in), *tg = malloc((size_t)c.B * c.T * sizeof *tg);
    tw_train_stats st[10];
    long ignored = 0;
    for (int s = 0; s < 10; s++) {
        tw_batcher_fill(in, tg, &b, s);
        const long counted = tw_mask_apply(tg, mask, &b, s);
        ck_assert(counted > 0 && counted < (long)c.B * c.T);   // the mask does remove some targets
        ignored += (long)c.B * c.T - counted;
        ck_assert_int_eq(tw_train_step(&st[s], &t, &m, in, tg, &c), TW_OK);
    }
    ck_assert(ignored > 0);
    snprintf(rel, sizeof rel, "sft/%s/losses", name);
    tw_npy L = tt_load(rel, 10);
    snprintf(rel, sizeof rel, "sft/%s/gnorms", name);
    tw_npy G = tt_load(rel, 10);
    const float *wl = L.data, *wg = G.data;
    // The tolerances of tests/test_train.c, for the same reasons: relative 1e-5 on the loss and
    // the gradient norm; final weights absolute 1e-4 + relative 1e-4 (AdamW moves a weight by
    // ~lr per step whatever its gradient; lr is 5e-3 and 1e-2 here).
    for (int s = 0; s < 10; s++) {
        ck_assert_msg(fabs(st[s].loss - wl[s]) <= 1e-5 * fabs(wl[s]), "%s step %d: loss %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].loss, (double)wl[s]);
        ck_assert_msg(fabs(st[s].gnorm - wg[s]) <= 1e-5 * fabs(wg[s]), "%s step %d: gnorm %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].gnorm, (double)wg[s]);
    }
    for (int i = 0; i < m.n_params; i++) {
        const tw_param *p = &m.params[i];
        snprintf(rel, sizeof rel, "sft/%s/final/%s", name, p->name);
        tw_npy W = tt_load(rel, p->count);
        ck_assert_allclose(p->data, (const float *)W.data, p->count, 1e-4, 1e-4);
        tw_npy_free(&W);
    }
    tw_npy_free(&L);
    tw_npy_free(&G);
    free(in); free(tg); free(mask); free(tokens);
    tw_batcher_free(&b);
    tw_trainer_free(&t);
    tw_model_free(&m);
}
END_TEST

static void write_bytes(const char *path, const unsigned char *b, long n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq((long)fwrite(b, 1, (size_t)n, f), n);
    fclose(f);
}

#define TRAIN_LLAMA "./train --init data/golden/train/llama/init.bin --tokens data/golden/train/llama/tokens.bin " \
    "--no-shuffle --batch 3 --seq 12 --steps 10 --lr 5e-3 --warmup 0 --min-lr 5e-3 --weight-decay 0.1 " \
    "--beta1 0.9 --beta2 0.99 --eps 1e-8 --clip 1 --curve none"

START_TEST(train_mask_prints_pytorch_losses)
{
    run_result r = tt_run(TRAIN_LLAMA " --mask data/golden/sft/llama/mask.bin");
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    tw_npy want = tt_load("sft/llama/losses", 10);
    char why[4096];
    // 6 printed digits: relative 1e-5 (as tests/test_train_cli.c).
    ck_assert_msg(tt_losses_printed(r.out, want.data, 10, 1e-5, why, sizeof why), "%s", why);
    tw_npy_free(&want);
    tt_run_free(&r);
}
END_TEST

START_TEST(a_mask_that_counts_nothing_skips_every_step)
{
    char path[512], cmd[1024];
    tt_tmp_path(path, sizeof path, "sft", "zeros.bin");
    unsigned char zeros[300] = { 0 };
    write_bytes(path, zeros, 300);
    snprintf(cmd, sizeof cmd, TRAIN_LLAMA " --mask %s", path);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_int_eq(tt_count_lines(r.out) > 10, 1);
    int skipped = 0;
    for (const char *p = r.out; (p = strstr(p, "skipped: no target")) != NULL; p++) skipped++;
    ck_assert_int_eq(skipped, 10);
    ck_assert_ptr_null(strstr(r.out, "nan"));
    ck_assert_ptr_null(strstr(r.out, "/10 loss"));   // no step printed a loss
    tt_run_free(&r);
    remove(path);
}
END_TEST

START_TEST(bad_masks_get_one_line)
{
    char path[512], cmd[1024];
    tt_tmp_path(path, sizeof path, "sft", "bad.bin");
    unsigned char m[301] = { 0 };
    const struct { long n; int byte; const char *says; } bad[] = {
        { 299, 1, "300 tokens" }, { 301, 1, "300 tokens" }, { 300, 2, "byte 7 is 2" }, { 0, 0, "0 bytes" },
    };
    for (int i = 0; i < 4; i++) {
        memset(m, 1, sizeof m);
        m[7] = (unsigned char)bad[i].byte;
        write_bytes(path, m, bad[i].n);
        snprintf(cmd, sizeof cmd, TRAIN_LLAMA " --mask %s", path);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 1, "case %d: rc %d: %s", i, r.rc, r.err);
        ck_assert_msg(strstr(r.err, path) && strstr(r.err, bad[i].says) && tt_count_lines(r.err) == 1,
                      "case %d: '%s'", i, r.err);
        tt_run_free(&r);
    }
    run_result r = tt_run("./train --text README.md -z data/models/tok512.bin --mask data/golden/sft/llama/mask.bin");
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--mask"));
    tt_run_free(&r);
    remove(path);
}
END_TEST

Suite *suite_sft(void) {
    Suite *s = suite_create("sft");
    TCase *tc = tcase_create("sft");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, ten_masked_steps_match_pytorch, 0, 2);
    tcase_add_test(tc, train_mask_prints_pytorch_losses);
    tcase_add_test(tc, a_mask_that_counts_nothing_skips_every_step);
    tcase_add_test(tc, bad_masks_get_one_line);
    suite_add_tcase(s, tc);
    return s;
}
