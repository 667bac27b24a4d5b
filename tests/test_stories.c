// test_stories.c: make_stories (tools/make_stories.c, `make stories`) as make runs it: flags out
// of range answered with one line and exit 2 (a --tokens with no upper bound, a --seed of -1 that
// strtoull wraps to 2^64 - 1), a 1,000-token corpus split near --val-frac (it put 512 of 1,009
// tokens into validation), and the five files written as one set: a write that fails part-way
// leaves the old set whole and no staged file behind.
// Uses POSIX mkdtemp and mkdir; make_stories runs through tests/testrun.h (no shell).
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "testrun.h"

#define STORIES "./build/tools/make_stories data/models/stories260K.bin data/models/tok512.bin "

static const char *const SET[5] = { "train.bin", "val.bin", "train.txt", "val.txt", "floor.txt" };

// The whole file (binary) and its length in *n (-1 if unreadable). Caller frees.
static char *slurp_n(const char *path, long *n) {
    FILE *f = fopen(path, "rb");
    *n = -1;
    if (!f) return calloc(1, 1);
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc((size_t)(*n > 0 ? *n : 0) + 1, 1);
    if (b && *n > 0 && fread(b, 1, (size_t)*n, f) != (size_t)*n) *n = -2;
    fclose(f);
    return b;
}

static void remove_tree(const char *dir) {
    ck_assert_int_eq(tt_remove_tree(dir), 0);
}

START_TEST(flags_out_of_range_exit_2_with_one_line)
{
    static const struct { const char *args; const char *word; } cases[] = {
        { "--tokens 1000000000000000000", "--tokens 1000000000000000000: give 1000 .. 100000000" },
        { "--tokens 999", "--tokens 999" },
        { "--seed -1", "--seed -1" },
        { "--seed +5", "--seed +5" },
        { "--seed 0", "--seed" },
        { "--val-frac 0.7", "--val-frac" },
    };
    char dir[64] = "/tmp/tw_stories_XXXXXX", cmd[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(cmd, sizeof cmd, STORIES "%s/out %s", dir, cases[i].args);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 2, "%s: exit %d (%s)", cmd, r.rc, r.err);
        ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, cases[i].word), "%s: stderr %s", cmd, r.err);
        tt_run_free(&r);
    }
    remove_tree(dir);
}
END_TEST

// --tokens 1000: stories of up to 512 tokens cannot split 1,000 tokens near 10 %; more stories
// are sampled until the validation part is within a quarter of 10 % (7.5 .. 12.5 %), and the
// output says how many tokens were sampled and the fraction reached. Then a staged write that
// fails (val.txt's temporary file cannot be created: a folder holds its name) must leave the
// earlier set whole: the old code had already replaced train.bin and val.bin by then.
START_TEST(small_corpus_splits_near_val_frac_and_a_failed_write_keeps_the_old_set)
{
    char dir[64] = "/tmp/tw_stories_XXXXXX", cmd[512], path[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, STORIES "%s --tokens 1000", dir);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s: exit %d (%s)", cmd, r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "more than --tokens 1000"));
    ck_assert_ptr_nonnull(strstr(r.out, "% of the tokens; --val-frac 0.1)"));
    tt_run_free(&r);
    snprintf(path, sizeof path, "%s/floor.txt", dir);
    char *floor = tt_slurp(path);
    const char *v = strstr(floor, "val_tokens "), *t = strstr(floor, "train_tokens ");
    ck_assert(v && t);
    const double val = atof(v + 11), train = atof(t + 13), frac = val / (val + train);
    ck_assert_msg(frac >= 0.099 && frac <= 0.125, "val %g train %g: %.3f", val, train, frac);
    free(floor);

    // The set as it is now, then a run whose fourth file cannot be written.
    char *old[5];
    long old_n[5];
    for (int k = 0; k < 5; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, SET[k]);
        old[k] = slurp_n(path, &old_n[k]);
        ck_assert_int_gt(old_n[k], 0);
    }
    snprintf(path, sizeof path, "%s/val.txt.tmp", dir);       // blocks the old code's val.txt
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/val.txt.new.tmp", dir);   // blocks the staged val.txt.new
    ck_assert_int_eq(mkdir(path, 0700), 0);
    snprintf(cmd, sizeof cmd, STORIES "%s --tokens 1000 --seed 7", dir);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 1, "%s: exit %d (%s)", cmd, r.rc, r.err);
    ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, "nothing in"), "%s: stderr %s", cmd, r.err);
    tt_run_free(&r);
    for (int k = 0; k < 5; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, SET[k]);
        long now_n;
        char *now = slurp_n(path, &now_n);
        ck_assert_msg(now_n == old_n[k] && memcmp(now, old[k], (size_t)now_n) == 0,
                      "%s was replaced by a run that failed", path);
        free(now);
        free(old[k]);
        snprintf(path, sizeof path, "%s/%s.new", dir, SET[k]);
        ck_assert_msg(!tt_exists(path), "%s was left behind", path);
    }
    remove_tree(dir);
}
END_TEST

Suite *suite_stories(void) {
    Suite *s = suite_create("stories");
    TCase *tc = tcase_create("make_stories");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, flags_out_of_range_exit_2_with_one_line);
    tcase_add_test(tc, small_corpus_splits_near_val_frac_and_a_failed_write_keeps_the_old_set);
    suite_add_tcase(s, tc);
    return s;
}
