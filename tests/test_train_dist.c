// test_train_dist.c: data-parallel ./train (lib/train/dist.h). Without MPI: --grad-accum K in one
// process against PyTorch (the rows of --batch 1 --grad-accum 3 are those of --batch 3, which
// data/golden/train/llama holds). With Open MPI installed (./train-mpi built by make test):
// `mpirun -np 2 ./train-mpi --batch 2` writes the same bytes as `./train --batch 2 --grad-accum 2`
// after 20 steps, with and without --zero 1. Without Open MPI those say so in one line and pass.
// 3 and 4 processes, resume and the NaN stop are in tests/train_mpi_more.sh (make test-train-mpi).
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

#define GOLD "data/golden/train/"
#define DET "--init " GOLD "llama/init.bin --tokens " GOLD "llama/tokens.bin --no-shuffle --seq 12 " \
            "--lr 5e-3 --warmup 0 --min-lr 5e-3 --weight-decay 0.1 --beta1 0.9 --beta2 0.99 --eps 1e-8 " \
            "--clip 1 --curve none"
// ASAN_OPTIONS=detect_leaks=0 for the processes mpirun starts: under `make asan`, LeakSanitizer
// reports Open MPI's own allocations, which it keeps until exit (about 120 KB in 3,000 blocks,
// all in its modules); ours are checked by the one-process runs, which keep leak detection.
#define MPIRUN "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 " \
               "mpirun -q --oversubscribe"

START_TEST(grad_accum_3_of_batch_1_is_pytorchs_batch_of_3)
{
    char out[512], cmd[2048], err[512] = "";
    tt_tmp_path(out, sizeof out, "train_dist", "accum3.bin");
    snprintf(cmd, sizeof cmd, "./train " DET " --steps 10 --batch 1 --grad-accum 3 --out %s", out);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_msg(strstr(r.out, "--grad-accum 3 = 3 rows a step") != NULL, "%s", r.out);
    tw_npy want = tt_load("train/llama/losses", 10);
    char why[4096];
    // As test_train_cli.c: 6 printed digits (5e-6 relative) over a run within 2.5e-7 of PyTorch.
    ck_assert_msg(tt_losses_printed(r.out, want.data, 10, 1e-5, why, sizeof why), "%s", why);
    tw_npy_free(&want);
    tt_run_free(&r);
    // The weights: absolute 1e-4 + relative 1e-4, test_train_cli.c's tolerance (AdamW moves a
    // weight by about lr = 5e-3 a step whatever its gradient; the micro-batches change only how
    // the rows' gradients are grouped before they are added, a float rounding per element).
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, out, err, sizeof err) == TW_OK, "%s", err);
    mt_weights_match_golden(&m, "train", "llama", "--grad-accum 3", 10, 1e-4);
    tw_model_free(&m);
    remove(out);
}
END_TEST

// One process, --grad-accum 3: the last micro-batch's part is added bucket by bucket as each
// layer finishes (--overlap 1, the default) or all at once after the backward pass (--overlap 0).
// Tolerance 0: the same additions of the same numbers, in another sequence of buckets.
START_TEST(overlapped_buckets_change_no_bit)
{
    char a[512], b[512], cmd[2048];
    tt_tmp_path(a, sizeof a, "train_dist", "ov1.bin");
    tt_tmp_path(b, sizeof b, "train_dist", "ov0.bin");
    for (int ov = 0; ov < 2; ov++) {
        snprintf(cmd, sizeof cmd, "./train " DET " --steps 6 --batch 1 --grad-accum 3 --overlap %d --out %s",
                 ov, ov ? a : b);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 0, "%s", r.err);
        tt_run_free(&r);
    }
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    run_result c = tt_run(cmd);
    ck_assert_msg(c.rc == 0, "--overlap 1 and --overlap 0 wrote different weights");
    tt_run_free(&c);
    remove(a);
    remove(b);
}
END_TEST

// The new flags' bad values: one line on stderr naming the flag, exit 2, nothing written.
static const char *const BAD_DIST[][2] = {
    { "--grad-accum 0", "--grad-accum" },
    { "--grad-accum 1.5", "--grad-accum" },
    { "--zero 2", "--zero" },
    { "--overlap 3", "--overlap" },
    { "--nan-at 1", "--nan-at" },
    { "--batch 65536 --grad-accum 2", "global batch" },
};
START_TEST(bad_dist_flags_get_one_line)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "./train " DET " --steps 2 --batch 1 %s", BAD_DIST[_i][0]);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 2, "%s: rc %d: %s", BAD_DIST[_i][0], r.rc, r.err);
    ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, BAD_DIST[_i][1]) != NULL, "%s: %s", BAD_DIST[_i][0], r.err);
    ck_assert_msg(strstr(r.out, "step 1/") == NULL, "%s", r.out);
    tt_run_free(&r);
}
END_TEST

static int have_mpi(void) {
    if (!tt_exists("./train-mpi")) return 0;
    run_result r = tt_run("mpirun --version");
    const int ok = r.rc == 0;
    tt_run_free(&r);
    return ok;
}

// _i = 0: --zero 0; 1: --zero 1. Tolerance 0: both sum the same two micro-batch gradients, each
// computed into a zeroed buffer, in the same order (lib/train/dist.h), and AdamW is elementwise.
START_TEST(two_processes_equal_grad_accum_2_bit_for_bit)
{
    if (!have_mpi()) {
        if (_i == 0) printf("test_train_dist: Open MPI is not installed (no mpirun or ./train-mpi): "
                            "the 2-process tests are skipped\n");
        return;
    }
    char one[512], two[512], cmd[2048];
    tt_tmp_path(one, sizeof one, "train_dist", _i ? "one_z.bin" : "one.bin");
    tt_tmp_path(two, sizeof two, "train_dist", _i ? "two_z.bin" : "two.bin");
    snprintf(cmd, sizeof cmd, "./train " DET " --steps 20 --batch 2 --grad-accum 2 --out %s", one);
    run_result a = tt_run(cmd);
    ck_assert_msg(a.rc == 0, "%s", a.err);
    snprintf(cmd, sizeof cmd, MPIRUN " -np 2 ./train-mpi " DET " --steps 20 --batch 2 --zero %d --out %s", _i, two);
    run_result b = tt_run(cmd);
    ck_assert_msg(b.rc == 0, "rc %d: %s", b.rc, b.err);
    ck_assert_msg(strstr(b.out, "data parallel: 2 processes x --batch 2 x --grad-accum 1 = 4 rows") != NULL &&
                  strstr(b.out, " mpi-wait ") != NULL, "%s", b.out);
    if (_i) ck_assert_msg(strstr(b.out, "(ZeRO-1: this process's shard)") != NULL, "%s", b.out);
    double la[20], lb[20];
    ck_assert_int_eq(tt_parse_losses(la, 20, a.out), 20);
    ck_assert_int_eq(tt_parse_losses(lb, 20, b.out), 20);
    for (int s = 0; s < 20; s++) ck_assert_msg(la[s] == lb[s], "step %d: %.7g != %.7g", s + 1, la[s], lb[s]);
    tt_run_free(&a);
    tt_run_free(&b);
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", one, two);
    run_result c = tt_run(cmd);
    ck_assert_msg(c.rc == 0, "--zero %d: the weights of 2 processes differ from --grad-accum 2's", _i);
    tt_run_free(&c);
    remove(one);
    remove(two);
}
END_TEST

Suite *suite_train_dist(void) {
    Suite *s = suite_create("train_dist");
    TCase *tc = tcase_create("dist");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, grad_accum_3_of_batch_1_is_pytorchs_batch_of_3);
    tcase_add_test(tc, overlapped_buckets_change_no_bit);
    tcase_add_loop_test(tc, bad_dist_flags_get_one_line, 0, (int)(sizeof BAD_DIST / sizeof BAD_DIST[0]));
    tcase_add_loop_test(tc, two_processes_equal_grad_accum_2_bit_for_bit, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
