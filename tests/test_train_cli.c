// test_train_cli.c: ./train as a user runs it (make test builds it): the deterministic mode's
// printed losses against PyTorch's (data/golden/train/, tests/golden/gen_train.py), a run
// stopped with --stop-after and resumed ending with byte-identical weights, the stop on a
// non-finite loss, and bad data and flags answered with one line. No timing is checked.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "train/checkpoint.h"

#define GOLD "data/golden/train/"

static void tmp_path(char *out, size_t len, const char *tag) {
    const char *dir = getenv("TMPDIR");
    snprintf(out, len, "%s/tw_test_train_cli_%ld_%s", dir && *dir ? dir : "/tmp", (long)getpid(), tag);
}

// The losses of the `step N/M loss X` lines of out, in order; returns how many.
static int parse_losses(double *loss, int max, const char *out) {
    int n = 0;
    for (const char *p = out; (p = strstr(p, "step ")) != NULL && n < max; p++) {
        int s, m;
        double x;
        if ((p == out || p[-1] == '\n') && sscanf(p, "step %d/%d loss %lf", &s, &m, &x) == 3 && s == n + 1)
            loss[n++] = x;
    }
    return n;
}

// Loop index 0: --threads 1; 1: --threads 2 (the batch of 3 split into parts of 1 and 2 rows, on
// two OpenMP threads in a `make OMP=1` build, one after the other otherwise). Both are held to
// PyTorch's losses and final weights with the tolerances below, hence to each other within twice
// them; the split changes only how the per-sequence gradients are grouped before they are added
// (one extra float32 rounding per element), which test_train.c measures far inside them.
START_TEST(deterministic_mode_prints_pytorch_losses_to_6_digits)
{
    // The llama case of the goldens, driven through the exact flags. Its init is a
    // llama2.c checkpoint, so this is also fine-tuning from --init.
    const int threads = 1 + _i;
    char out[512], cmd[2048], err[512] = "";
    tmp_path(out, sizeof out, threads == 1 ? "det1.bin" : "det2.bin");
    snprintf(cmd, sizeof cmd, "./train --init " GOLD "llama/init.bin --tokens " GOLD "llama/tokens.bin "
             "--no-shuffle --batch 3 --seq 12 --steps 10 --lr 5e-3 --warmup 0 --min-lr 5e-3 "
             "--weight-decay 0.1 --beta1 0.9 --beta2 0.99 --eps 1e-8 --clip 1 "
             "--curve none --threads %d --out %s", threads, out);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    double got[10];
    ck_assert_int_eq(parse_losses(got, 10, r.out), 10);
    tw_npy want = tt_load("train/llama/losses", 10);
    const float *w = want.data;
    // Printed with 6 significant digits: the print's own rounding is 5e-6 relative, and the
    // library run agrees with PyTorch to 2.5e-7 (test_train.c): relative 1e-5.
    for (int s = 0; s < 10; s++)
        ck_assert_msg(fabs(got[s] - w[s]) <= 1e-5 * fabs(w[s]), "--threads %d step %d: printed %.7g, PyTorch %.7g",
                      threads, s + 1, got[s], (double)w[s]);
    tw_npy_free(&want);
    tt_run_free(&r);
    // The weights --out wrote, against PyTorch's after the last step: absolute 1e-4 + relative
    // 1e-4, test_train.c's tolerance and reasoning (AdamW moves a weight by ~lr = 5e-3 per step
    // whatever its gradient's size; measured there at most 1.8e-5 for this kind of model).
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, out, err, sizeof err) == TW_OK, "%s", err);
    for (int i = 0; i < m.n_params; i++) {
        const tw_param *p = &m.params[i];
        char rel[256];
        snprintf(rel, sizeof rel, "train/llama/final/%s", p->name);
        tw_npy W = tt_load(rel, p->count);
        const float *fw = W.data;
        for (long j = 0; j < p->count; j++)
            ck_assert_msg(fabs((double)p->data[j] - fw[j]) <= 1e-4 + 1e-4 * fabs(fw[j]),
                          "--threads %d: %s[%ld] is %.7g, PyTorch %.7g", threads, p->name, j,
                          (double)p->data[j], (double)fw[j]);
        tw_npy_free(&W);
    }
    tw_model_free(&m);
    remove(out);
}
END_TEST

START_TEST(stopped_and_resumed_run_writes_the_same_bytes)
{
    char a[512], b[512], st[512], cmd[4096];
    tmp_path(a, sizeof a, "straight.bin");
    tmp_path(b, sizeof b, "resumed.bin");
    tmp_path(st, sizeof st, "state.bin");
    // Shuffled batches and a from-scratch qwen3 model (written in the TWMODEL format).
    const char *common = "./train --tokens " GOLD "qwen3/tokens.bin --style qwen3 --vocab 65 --seq 12 "
                         "--batch 3 --steps 8 --lr 1e-2 --min-lr 1e-3 --warmup 2 --seed 9 "
                         "--curve none";
    snprintf(cmd, sizeof cmd, "%s --out %s", common, a);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "%s --stop-after 3 --state %s --out %s", common, st, b);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_int_eq(tt_count_lines(r.out), 3);   // three steps (30 validation tokens: too few to measure)
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "%s --resume %s --out %s", common, st, b);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "step 4/8") != NULL && strstr(r.out, "step 1/8") == NULL, "%s", r.out);
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "the resumed run's weights differ from the uninterrupted run's");
    tt_run_free(&r);
    remove(a); remove(b); remove(st);
}
END_TEST

START_TEST(a_non_finite_loss_stops_naming_the_tensor_and_writes_nothing)
{
    char out[512], cmd[2048];
    tmp_path(out, sizeof out, "nan.bin");
    // A learning rate of 1e30 makes the first update overflow: step 2's forward pass meets Inf.
    snprintf(cmd, sizeof cmd, "./train --init " GOLD "gpt2/init.bin --tokens " GOLD "gpt2/tokens.bin "
             "--batch 2 --seq 8 --steps 5 --lr 1e30 --min-lr 1e30 --clip 0 --out %s --curve none", out);
    run_result r = tt_run(cmd);
    ck_assert_int_eq(r.rc, 1);
    // The set-up lines, then exactly one line for the stop, the last.
    const char *stop = strstr(r.err, "train: step ");
    ck_assert_msg(stop != NULL && strstr(stop + 1, "train: ") == NULL && tt_count_lines(stop) == 1, "%s", r.err);
    ck_assert_msg(strstr(r.err, "step 2:") != NULL && strstr(r.err, "is ") != NULL &&
                  strstr(r.err, "stopped") != NULL, "%s", r.err);
    ck_assert_msg(strstr(r.err, "embed") || strstr(r.err, "L0.") || strstr(r.err, "L1.") ||
                  strstr(r.err, "final") || strstr(r.err, "logits"), "no tensor named: %s", r.err);
    ck_assert(!tt_exists(out));
    tt_run_free(&r);
}
END_TEST

typedef struct { const char *args; int rc; const char *word; } bad_case;
static const bad_case BAD[] = {
    { "--tokens " GOLD "gpt2/tokens.bin --seq 400 --style llama --vocab 65", 1, "--seq 400" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --seq 12 --batch 2 --val-frac 0.99", 1, "too few" },
    { "--init " GOLD "gpt2/init.bin --tokens " GOLD "gpt2/tokens.bin --seq 8 -z data/models/tok512.bin", 1, "-z" },
    { "--tokens " GOLD "stories260K/tokens.bin --vocab 65", 1, "outside the model's vocabulary" },
    { "--tokens data/models/tok512.bin --vocab 512", 1, "odd number of bytes" },
    { "--tokens " GOLD "llama/losses.npy", 1, "" },
    { "--tokens data/golden", 1, "data/golden" },
    { "--init data/golden/train/gpt2/tokens.bin --tokens " GOLD "gpt2/tokens.bin", 1, "--init" },
    { "--resume " GOLD "gpt2/init.bin --tokens " GOLD "gpt2/tokens.bin", 1, "magic" },
    { "--tokens " GOLD "gpt2/tokens.bin --lr abc", 2, "--lr" },
    { "--tokens " GOLD "gpt2/tokens.bin --batch 0", 2, "--batch" },
    { "--tokens " GOLD "gpt2/tokens.bin --style bert", 2, "--style" },
    { "--tokens " GOLD "gpt2/tokens.bin --frobnicate 1", 2, "--frobnicate" },
    { "--text README.md", 2, "-z" },
    { "", 2, "--tokens" },
    { "--tokens " GOLD "llama/tokens.bin --threads 65", 2, "--threads" },
    { "--tokens " GOLD "llama/tokens.bin --threads 1.5", 2, "--threads" },
};

START_TEST(bad_data_and_flags_get_one_line)
{
    const bad_case *c = &BAD[_i];
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "./train %s --steps 2 --curve none", c->args);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == c->rc, "%s: rc %d, want %d: %s", cmd, r.rc, c->rc, r.err);
    ck_assert_msg(tt_count_lines(r.err) == 1, "%s: stderr is not one line: %s", cmd, r.err);
    ck_assert_msg(strncmp(r.err, "train: ", 7) == 0 && strstr(r.err, c->word) != NULL, "%s: %s", cmd, r.err);
    tt_run_free(&r);
}
END_TEST

Suite *suite_train_cli(void) {
    Suite *s = suite_create("train_cli");
    TCase *tc = tcase_create("train");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, deterministic_mode_prints_pytorch_losses_to_6_digits, 0, 2);
    tcase_add_test(tc, stopped_and_resumed_run_writes_the_same_bytes);
    tcase_add_test(tc, a_non_finite_loss_stops_naming_the_tensor_and_writes_nothing);
    tcase_add_loop_test(tc, bad_data_and_flags_get_one_line, 0, (int)(sizeof BAD / sizeof BAD[0]));
    suite_add_tcase(s, tc);
    return s;
}
