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
#include "model_test_common.h"
#include "train/checkpoint.h"
#include "inspect/check_finite.h"
#include "train/tokens.h"
#include "tokenize/tokenizer.h"
#include "formats/same_file.h"
#include <sys/stat.h>

#define GOLD "data/golden/train/"

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
    tt_tmp_path(out, sizeof out, "train_cli", threads == 1 ? "det1.bin" : "det2.bin");
    snprintf(cmd, sizeof cmd, "./train --init " GOLD "llama/init.bin --tokens " GOLD "llama/tokens.bin "
             "--no-shuffle --batch 3 --seq 12 --steps 10 --lr 5e-3 --warmup 0 --min-lr 5e-3 "
             "--weight-decay 0.1 --beta1 0.9 --beta2 0.99 --eps 1e-8 --clip 1 "
             "--curve none --threads %d --out %s", threads, out);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    tw_npy want = tt_load("train/llama/losses", 10);
    char why[4096], label[32];
    snprintf(label, sizeof label, "--threads %d", threads);
    // Printed with 6 significant digits: the print's own rounding is 5e-6 relative, and the
    // library run agrees with PyTorch to 2.5e-7 (test_train.c): relative 1e-5.
    ck_assert_msg(tt_losses_printed(r.out, want.data, 10, 1e-5, why, sizeof why), "%s: %s", label, why);
    tw_npy_free(&want);
    tt_run_free(&r);
    // The weights --out wrote, against PyTorch's after the last step: absolute 1e-4 + relative
    // 1e-4, test_train.c's tolerance and reasoning (AdamW moves a weight by ~lr = 5e-3 per step
    // whatever its gradient's size; measured there at most 1.8e-5 for this kind of model).
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, out, err, sizeof err) == TW_OK, "%s", err);
    mt_weights_match_golden(&m, "train", "llama", label, 10, 1e-4);
    tw_model_free(&m);
    remove(out);
}
END_TEST

START_TEST(stopped_and_resumed_run_writes_the_same_bytes)
{
    char a[512], b[512], st[512], cmd[4096];
    tt_tmp_path(a, sizeof a, "train_cli", "straight.bin");
    tt_tmp_path(b, sizeof b, "train_cli", "resumed.bin");
    tt_tmp_path(st, sizeof st, "train_cli", "state.bin");
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
    // Three steps (30 validation tokens: too few to measure), after the set-up lines.
    double steps[8];
    ck_assert_int_eq(tt_parse_losses(steps, 8, r.out), 3);
    ck_assert_msg(strstr(r.out, "\nval loss") == NULL && r.err[0] == '\0', "%s%s", r.out, r.err);
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

// Without --curve the loss curve goes beside --out (OUT.loss.dat): a second run with another
// --out keeps the first run's curve instead of overwriting one shared out/train/loss.dat.
START_TEST(the_default_curve_goes_beside_out_and_a_second_run_keeps_the_first)
{
    char a[512], b[512], ca[600], cb[600], cmd[4096];
    tt_tmp_path(a, sizeof a, "train_cli", "curve_a.bin");
    tt_tmp_path(b, sizeof b, "train_cli", "curve_b.bin");
    snprintf(ca, sizeof ca, "%s.loss.dat", a);
    snprintf(cb, sizeof cb, "%s.loss.dat", b);
    // PATH empty of gnuplot: the curve's picture is skipped (it is not what this test is about,
    // and starting gnuplot twice would cost more than the two runs).
    const char *common = "PATH=/nonexistent ./train --tokens " GOLD "qwen3/tokens.bin --style qwen3 "
                         "--vocab 65 --seq 12 --batch 3 --steps 2 --lr 1e-2 --seed 9";
    snprintf(cmd, sizeof cmd, "%s --out %s", common, a);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    tt_run_free(&r);
    struct stat sa, sb;
    ck_assert_msg(stat(ca, &sa) == 0 && sa.st_size > 0, "no curve at %s", ca);
    snprintf(cmd, sizeof cmd, "%s --seed 10 --out %s", common, b);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    tt_run_free(&r);
    ck_assert_msg(stat(cb, &sb) == 0 && sb.st_size > 0, "no curve at %s", cb);
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", ca, cb);   // seeds 9 and 10: two different curves
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 1, "the second run's curve has the first run's bytes (or cmp failed)");
    tt_run_free(&r);
    remove(a); remove(b); remove(ca); remove(cb);
}
END_TEST

START_TEST(a_non_finite_loss_stops_naming_the_tensor_and_writes_nothing)
{
    char out[512], cmd[2048];
    tt_tmp_path(out, sizeof out, "train_cli", "nan.bin");
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

// With --save-every 1 and a learning rate that grows until the weights overflow (warm-up to 1e4
// over 8 steps), the run must stop at the first step whose weights give a non-finite loss on the
// next batch, keep the checkpoint before it, and say which step that is. The kept file must load
// (every weight finite: tw_model_load_file checks) and run in ./generate --check-finite, which
// stops with exit 1 at the first NaN/Inf of any forward pass: before the fix the kept file was
// the one whose weights produced the NaN. The step where it diverges depends on the kernels'
// rounding, so it is read from the message, not hard-coded.
START_TEST(the_nan_stop_keeps_the_last_checkpoint_whose_forward_pass_is_finite)
{
    char out[512], cmd[2048], err[512] = "";
    tt_tmp_path(out, sizeof out, "train_cli", "kept.bin");
    snprintf(cmd, sizeof cmd, "./train --init data/models/stories260K.bin --tokens " GOLD "stories260K/tokens.bin "
             "--batch 2 --seq 8 --steps 8 --lr 1e4 --min-lr 1e4 --warmup 8 --clip 0 --save-every 1 "
             "--curve none --out %s", out);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 1, "rc %d: %s", r.rc, r.err);
    ck_assert_msg(tt_count_lines(r.err) == 1, "stderr is not one line: %s", r.err);
    long stop = -1, kept = -1;
    const char *k = strstr(r.err, "checkpoint of step ");
    ck_assert_msg(sscanf(r.err, "train: step %ld:", &stop) == 1 && k && sscanf(k, "checkpoint of step %ld", &kept) == 1,
                  "%s", r.err);
    ck_assert_msg(kept >= 1 && stop == kept + 1 && strstr(r.err, "stopped") != NULL, "%s", r.err);
    tt_run_free(&r);
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, out, err, sizeof err) == TW_OK, "%s", err);
    ck_assert(tw_first_nonfinite(m.memory, m.n_floats) < 0);
    tw_model_free(&m);
    snprintf(cmd, sizeof cmd, "./generate %s -z data/models/tok512.bin -n 8 -s 1 --check-finite", out);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "the kept checkpoint does not run finite: %s", r.err);
    tt_run_free(&r);
    remove(out);
}
END_TEST

// A learning rate near FLT_MAX: the one step's update overflows. Nothing may be written (before,
// an all-inf checkpoint was, because the last update was never checked).
START_TEST(an_overflowing_last_update_writes_nothing)
{
    char out[512], st[512], cmd[2048];
    tt_tmp_path(out, sizeof out, "train_cli", "inf.bin");
    tt_tmp_path(st, sizeof st, "train_cli", "inf.state");
    snprintf(cmd, sizeof cmd, "./train --init " GOLD "gpt2/init.bin --tokens " GOLD "gpt2/tokens.bin --batch 2 "
             "--seq 8 --steps 1 --lr 3e38 --min-lr 3e38 --clip 0 --curve none --out %s --state %s", out, st);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 1 && tt_count_lines(r.err) == 1 && strstr(r.err, "nothing written"), "rc %d: %s", r.rc, r.err);
    ck_assert(!tt_exists(out) && !tt_exists(st));
    tt_run_free(&r);
}
END_TEST

// An unusable output found before training, not after --out was written.
START_TEST(a_bad_output_is_found_before_anything_is_written)
{
    char out[512], dir[512], cmd[2048];
    tt_tmp_path(out, sizeof out, "train_cli", "half.bin");
    tt_tmp_path(dir, sizeof dir, "train_cli", "state_dir");
    ck_assert(mkdir(dir, 0700) == 0);
    snprintf(cmd, sizeof cmd, "./train --tokens " GOLD "gpt2/tokens.bin --vocab 65 --batch 2 --seq 8 --steps 1 "
             "--curve none --out %s --state %s", out, dir);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 1 && tt_count_lines(r.err) == 1 && strstr(r.err, "directory"), "rc %d: %s", r.rc, r.err);
    ck_assert_msg(!tt_exists(out), "--out was written before the --state error");
    ck_assert_msg(r.out[0] == '\0', "set-up lines before the error: %s", r.out);
    tt_run_free(&r);
    rmdir(dir);
}
END_TEST

// Copies the file at from to a new file at to, byte for byte; 0 on success.
static int copy_file(const char *to, const char *from) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int ok = in != NULL && out != NULL;
    char buf[4096];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) {
        ok = ok && !ferror(in);
        fclose(in);
    }
    if (out) ok = (fclose(out) == 0) && ok;
    return ok ? 0 : -1;
}

// The floor: a FIFO (given, or found as floor.txt beside --tokens) is refused at once, never
// waited on (timeout 20: exit 124 if it hangs); a teacher_nll of inf, nan or below 0 is refused.
START_TEST(a_bad_floor_file_gets_one_line)
{
    char dir[512], f_path[600], floor_txt[600], tokens[600], cmd[4096];
    tt_tmp_path(dir, sizeof dir, "train_cli", "floor");
    ck_assert(tt_mkdir_p(dir) == 0);
    snprintf(f_path, sizeof f_path, "%s/f", dir);
    snprintf(floor_txt, sizeof floor_txt, "%s/floor.txt", dir);
    snprintf(tokens, sizeof tokens, "%s/t.bin", dir);
    ck_assert(copy_file(tokens, GOLD "gpt2/tokens.bin") == 0);   // the tokens beside floor.txt
    // What each case puts in place: a FIFO as --floor, a FIFO found as floor.txt, then bad texts.
    const char *texts[] = { NULL, NULL, "teacher_nll inf\n", "teacher_nll nan\n", "teacher_nll -0.5\n" };
    const char *words[] = { "FIFO", "FIFO", "inf", "nan", "-0.5" };
    for (int i = 0; i < 5; i++) {
        remove(f_path);
        remove(floor_txt);
        if (i < 2) {
            ck_assert(mkfifo(i == 0 ? f_path : floor_txt, 0600) == 0);
        } else {
            FILE *f = fopen(f_path, "w");
            ck_assert(f != NULL && fputs(texts[i], f) >= 0 && fclose(f) == 0);
        }
        snprintf(cmd, sizeof cmd, "timeout 20 ./train --tokens %s --vocab 65 --batch 2 --seq 8 --steps 1 "
                 "--curve none%s%s", tokens, i == 1 ? "" : " --floor ", i == 1 ? "" : f_path);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 1 && tt_count_lines(r.err) == 1 && strstr(r.err, words[i]) && strstr(r.err, "floor"),
                      "case %d (%s): rc %d: %s", i, words[i], r.rc, r.err);
        tt_run_free(&r);
    }
    ck_assert(tt_remove_tree(dir) == 0);
}
END_TEST

// tw_same_file: existing files by device and inode, outputs not yet written by folder and name.
START_TEST(same_file_compares_inodes_and_unwritten_paths)
{
    char dir[512], a[600], b[600], dot_a[700], link_a[600], missing[600], missing2[700];
    tt_tmp_path(dir, sizeof dir, "train_cli", "same");
    ck_assert(mkdir(dir, 0700) == 0);
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    snprintf(dot_a, sizeof dot_a, "%s/./a", dir);
    snprintf(link_a, sizeof link_a, "%s/hard_a", dir);
    snprintf(missing, sizeof missing, "%s/new.bin", dir);
    snprintf(missing2, sizeof missing2, "%s/../%s/new.bin", dir, strrchr(dir, '/') + 1);
    FILE *f = fopen(a, "w"); ck_assert(f); fputs("x", f); fclose(f);
    f = fopen(b, "w"); ck_assert(f); fputs("x", f); fclose(f);
    ck_assert(link(a, link_a) == 0);
    ck_assert(tw_same_file(a, dot_a) && tw_same_file(a, link_a) && tw_same_file(a, a));
    ck_assert(!tw_same_file(a, b) && !tw_same_file(a, missing) && !tw_same_file(a, "") && !tw_same_file(NULL, a));
    ck_assert(tw_same_file(missing, missing2));   // neither exists: same folder, same name
    ck_assert(!tw_same_file(missing, b));
    remove(a); remove(b); remove(link_a); rmdir(dir);
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
    // Sizes: bounded by the llama2.c loader's limits at once, the parameter count checked in
    // 64 bits before anything is allocated, the memory a run needs against the machine's.
    { "--tokens " GOLD "gpt2/tokens.bin --style gpt2 --vocab 65 --batch 2 --seq 16 --dim 2000000000", 2, "--dim" },
    { "--tokens " GOLD "gpt2/tokens.bin --style gpt2 --vocab 65 --batch 2 --seq 16 --layers 2000000000", 2, "--layers" },
    { "--tokens " GOLD "gpt2/tokens.bin --style gpt2 --vocab 65 --seq 8 --dim 65536 --layers 1024", 2, "2^40" },
    { "--tokens " GOLD "gpt2/tokens.bin --style gpt2 --vocab 65 --batch 2 --seq 1000000", 2, "more than this machine" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --steps 2000000000", 2, "--steps" },
    // Float flags: finite as a float and in a meaningful range; --val-frac -1 is not "not given".
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --lr 1e39", 2, "--lr" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --lr 0", 2, "--lr" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --lr 1e-50", 2, "--lr" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --eps 1e39", 2, "--eps" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --eps 1e30", 2, "--eps" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --min-lr -1", 2, "--min-lr" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --weight-decay 1e30", 2, "--weight-decay" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --beta2 0.999999999", 2, "--beta2" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --clip 1e39", 2, "--clip" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --val-frac -1", 2, "--val-frac" },
    // Paths: a flag as a value, an empty path, an output that is an input or another output,
    // an output that is a folder or inside a file.
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --out --no-shuffle", 2, "needs a value" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --curve ''", 2, "--curve" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --out ''", 2, "--out" },
    { "--tokens '' --vocab 65", 2, "--tokens" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --out " GOLD "gpt2/tokens.bin", 2, "same file as --tokens" },
    { "--tokens " GOLD "gpt2/tokens.bin --init " GOLD "gpt2/init.bin --out data/golden/train/../train/gpt2/init.bin", 2,
      "same file as --init" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --out nowhere/x.bin --state nowhere/x.bin", 2,
      "same file as --state" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --out nowhere/c.dat.png --curve nowhere/c.dat", 2,
      "same file as --curve's picture" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --val " GOLD "llama/tokens.bin --state " GOLD "llama/tokens.bin", 2,
      "same file as --val" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --state data/golden", 1, "directory" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --out README.md/x.bin", 1, "not a folder" },
    // Data too short for what was asked: a batch would repeat rows; validation would be skipped.
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --batch 20 --seq 16", 1, "too few for one batch" },
    { "--tokens " GOLD "gpt2/tokens.bin --vocab 65 --batch 2 --seq 8 --val data/corrupt/tokens/valid_six.bin", 1,
      "too few for one validation batch" },
    // The toolkit's other files given as --init are named.
    { "--tokens " GOLD "gpt2/tokens.bin --init data/corrupt/q8file/valid_shared.bin", 1, "int8 (version-2)" },
    { "--tokens " GOLD "gpt2/tokens.bin --init data/corrupt/twstate/valid_tiny.bin", 1, "--resume" },
    { "--tokens " GOLD "gpt2/tokens.bin --resume data/corrupt/twstate/negative_second_moment.bin", 1, "second moment" },
};

START_TEST(bad_data_and_flags_get_one_line)
{
    const bad_case *c = &BAD[_i];
    char cmd[1024];
    // The case's flags last, so that a case may give its own --curve or --steps.
    snprintf(cmd, sizeof cmd, "./train --steps 2 --curve none %s", c->args);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == c->rc, "%s: rc %d, want %d: %s", cmd, r.rc, c->rc, r.err);
    ck_assert_msg(tt_count_lines(r.err) == 1, "%s: stderr is not one line: %s", cmd, r.err);
    ck_assert_msg(strncmp(r.err, "train: ", 7) == 0 && strstr(r.err, c->word) != NULL, "%s: %s", cmd, r.err);
    tt_run_free(&r);
}
END_TEST

// With a tokenizer, ./train says which tokens its validation loss is a mean over and prints bits
// per byte beside the perplexity: loss x tokens / (bytes x ln 2), the bytes those very tokens
// decode to. Recomputed here from the printed loss; tolerance 2e-4 bits: both printed figures are
// rounded to 4 decimals (the loss's rounding of 5e-5 nats becomes at most 5e-5 x 96 / (bytes x
// ln 2) < 1e-4 bits for these 96 tokens, plus the bpb's own 5e-5).
START_TEST(validation_prints_what_it_measures_and_bits_per_byte)
{
    const char *cmd = "./train --tokens " GOLD "stories260K/tokens.bin --val " GOLD "stories260K/tokens.bin "
                      "-z data/models/tok512.bin --dim 32 --layers 1 --heads 2 --kv-heads 2 --hidden 64 "
                      "--seq 16 --batch 2 --steps 2 --eval-batches 3 --curve none --sample-every 0";
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "val loss = mean over 96 predicted tokens, the first 6 windows of 16"), "%s", r.out);
    const char *v = strstr(r.out, "\nval loss ");
    ck_assert_msg(v != NULL, "%s", r.out);
    double loss, ppl, bpb;
    ck_assert_int_eq(sscanf(v, "\nval loss %lf ppl %lf bpb %lf", &loss, &ppl, &bpb), 3);
    int *val = NULL;
    long n = 0;
    char err[256];
    ck_assert_msg(tw_tokens_read(&val, &n, GOLD "stories260K/tokens.bin", err, sizeof err) == TW_OK, "%s", err);
    tw_tokenizer tok;
    ck_assert_msg(tw_tokenizer_load(&tok, "data/models/tok512.bin", 512, err, sizeof err) == TW_OK, "%s", err);
    const long bytes = tw_tokenizer_decoded_bytes(&tok, val, 1, 97);   // targets of 6 windows of 16
    ck_assert_msg(bytes > 96, "%ld bytes", bytes);
    const double want = loss * 96.0 / ((double)bytes * log(2.0));
    ck_assert_msg(fabs(bpb - want) < 2e-4, "bpb %.6f, want %.6f (%ld bytes)", bpb, want, bytes);
    tw_tokenizer_free(&tok);
    free(val);
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
    tcase_add_test(tc, the_nan_stop_keeps_the_last_checkpoint_whose_forward_pass_is_finite);
    tcase_add_test(tc, an_overflowing_last_update_writes_nothing);
    tcase_add_test(tc, a_bad_output_is_found_before_anything_is_written);
    tcase_add_test(tc, a_bad_floor_file_gets_one_line);
    tcase_add_test(tc, same_file_compares_inodes_and_unwritten_paths);
    tcase_add_test(tc, validation_prints_what_it_measures_and_bits_per_byte);
    tcase_add_test(tc, the_default_curve_goes_beside_out_and_a_second_run_keeps_the_first);
    tcase_add_loop_test(tc, bad_data_and_flags_get_one_line, 0, (int)(sizeof BAD / sizeof BAD[0]));
    suite_add_tcase(s, tc);
    return s;
}
