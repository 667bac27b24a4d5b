// test_no_shell.c: no file name reaches a shell. lib/inspect/gnuplot.c starts gnuplot with fork +
// execvp and writes the names into its script as gnuplot strings; ./train's --curve is the name a
// user types. A curve named c$(touch M)`touch M2`'q.dat must create neither M nor M2, whether
// gnuplot is installed or not: the assertion runs once with the real PATH (gnuplot draws the
// picture when it is there) and once with a stand-in "gnuplot" first on PATH that only keeps the
// script it was given, so the script's exact text is checked on every machine.
// Uses POSIX mkdtemp, getpid, chmod and system() (through tests/testrun.h).
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testrun.h"
#include "inspect/gnuplot.h"

START_TEST(gnuplot_quote_doubles_single_quotes_and_refuses_newlines)
{
    char q[64];
    ck_assert_int_eq(tw_gnuplot_quote(q, sizeof q, "out/a.dat"), 1);
    ck_assert_str_eq(q, "'out/a.dat'");
    // In gnuplot's single-quoted strings only ' is special (written twice); backslashes,
    // backquotes, $ and @ stay as they are.
    ck_assert_int_eq(tw_gnuplot_quote(q, sizeof q, "it's\\`x`$(y)@z"), 1);
    ck_assert_str_eq(q, "'it''s\\`x`$(y)@z'");
    ck_assert_int_eq(tw_gnuplot_quote(q, sizeof q, ""), 1);
    ck_assert_str_eq(q, "''");
    ck_assert_int_eq(tw_gnuplot_quote(q, sizeof q, "a\nb"), 0);
    ck_assert_str_eq(q, "");
    ck_assert_int_eq(tw_gnuplot_quote(q, sizeof q, "a\rb"), 0);
    ck_assert_int_eq(tw_gnuplot_quote(q, 5, "abc"), 0);    // 'abc' needs 6 bytes with its NUL
    ck_assert_str_eq(q, "");
    ck_assert_int_eq(tw_gnuplot_quote(q, 6, "abc"), 1);
    ck_assert_str_eq(q, "'abc'");
    ck_assert_int_eq(tw_gnuplot_run("viz/14_loss.gp", "a\nb", "x.png", NULL, 0), TW_GNUPLOT_BAD_NAME);
}
END_TEST

// The curve's name: $(...), backquotes and a single quote, each of which a shell would act on.
// MARK names are relative, so a shell would create them in the folder the test runs in.
static void names(char *curve, size_t len, char *mark, char *mark2, size_t mlen, const char *dir) {
    snprintf(mark, mlen, "tw_noshell_MARK_%ld", (long)getpid());
    snprintf(mark2, mlen, "tw_noshell_MARK2_%ld", (long)getpid());
    snprintf(curve, len, "%s/c$(touch %s)`touch %s`'q.dat", dir, mark, mark2);
}

// Runs ./train with that --curve (PATH_PREFIX before PATH when given); returns its result.
static run_result train_with_curve(const char *dir, const char *path_prefix, const char *env) {
    char cmd[4096];
    // In the test's own shell the name sits in single quotes, its ' written as '\''.
    snprintf(cmd, sizeof cmd,
             "%s%s%s%s ./train --init data/golden/train/llama/init.bin "
             "--tokens data/golden/train/llama/tokens.bin --batch 2 --seq 8 --steps 2 "
             "--out %s/m.bin --curve '%s/c$(touch tw_noshell_MARK_%ld)`touch tw_noshell_MARK2_%ld`'\\''q.dat'",
             path_prefix ? "PATH=" : "", path_prefix ? path_prefix : "", path_prefix ? ":$PATH" : "",
             env ? env : "", dir, dir, (long)getpid(), (long)getpid());
    return tt_run(cmd);
}

START_TEST(train_curve_name_never_reaches_a_shell)
{
    char dir[64] = "/tmp/tw_noshell_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char curve[512], png[600], mark[64], mark2[64], fake[128], log[128], cmd[1024];
    names(curve, sizeof curve, mark, mark2, sizeof mark, dir);
    snprintf(png, sizeof png, "%s.png", curve);

    // 1. The real PATH: gnuplot draws the picture if it is installed, and says so in one line
    //    either way; no MARK appears.
    run_result r = train_with_curve(dir, NULL, NULL);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_msg(!tt_exists(mark) && !tt_exists(mark2), "a shell ran the curve's name: %s", r.err);
    ck_assert_msg(tt_exists(curve), "no curve file %s: %s", curve, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "train: loss curve: "));
    if (tw_gnuplot_available()) ck_assert_msg(tt_exists(png), "gnuplot is installed but drew no %s: %s", png, r.err);
    else ck_assert_ptr_nonnull(strstr(r.err, "picture skipped: gnuplot is not installed"));
    tt_run_free(&r);
    remove(png);
    remove(curve);

    // 2. A stand-in gnuplot first on PATH keeps its arguments and its script: no arguments (the
    //    names travel only in the script) and the name as one gnuplot string, ' doubled.
    snprintf(fake, sizeof fake, "%s/gnuplot", dir);
    snprintf(log, sizeof log, "%s/script.log", dir);
    FILE *f = fopen(fake, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\necho \"args: $#\" > \"$TW_GP_LOG\"\ncat >> \"$TW_GP_LOG\"\n");
    fclose(f);
    ck_assert_int_eq(chmod(fake, 0755), 0);
    char env[256];
    snprintf(env, sizeof env, " TW_GP_LOG=%s", log);
    r = train_with_curve(dir, dir, env);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_msg(!tt_exists(mark) && !tt_exists(mark2), "a shell ran the curve's name: %s", r.err);
    char *script = tt_slurp(log);
    char want[1400];
    snprintf(want, sizeof want, "args: 0\ndatafile = '%s/c$(touch %s)`touch %s`''q.dat'\n"
             "outfile = '%s/c$(touch %s)`touch %s`''q.dat.png'\nload 'viz/14_loss.gp'\n",
             dir, mark, mark2, dir, mark, mark2);
    ck_assert_str_eq(script, want);
    free(script);
    tt_run_free(&r);

    // 3. No gnuplot anywhere on PATH: one line says the picture was skipped and how to install it.
    remove(log);
    remove(fake);
    remove(curve);
    r = train_with_curve(dir, NULL, " PATH=/tw_no_such_folder");
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_msg(!tt_exists(mark) && !tt_exists(mark2), "a shell ran the curve's name: %s", r.err);
    ck_assert_msg(strstr(r.err, "(picture skipped: gnuplot is not installed; apt-get install gnuplot-nox")
                  != NULL, "%s", r.err);
    ck_assert(tt_exists(curve) && !tt_exists(png));
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *suite_no_shell(void) {
    Suite *s = suite_create("no_shell");
    TCase *tc = tcase_create("no_shell");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gnuplot_quote_doubles_single_quotes_and_refuses_newlines);
    tcase_add_test(tc, train_curve_name_never_reaches_a_shell);
    suite_add_tcase(s, tc);
    return s;
}
