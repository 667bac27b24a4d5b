// test_no_shell.c: no file name reaches a shell. lib/inspect/gnuplot.c starts gnuplot with fork +
// execvp and writes the names into its script as gnuplot strings; ./train's --curve is the name a
// user types. A curve named c$(touch M)`touch M2`'q.dat must create neither M nor M2, whether
// gnuplot is installed or not: the assertion runs once with the real PATH (gnuplot draws the
// picture when it is there) and once with a stand-in "gnuplot" first on PATH that only keeps the
// script it was given, so the script's exact text is checked on every machine.
// Uses POSIX mkdtemp, getpid, chmod and symlink; programs run through tests/testrun.h (no shell).
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

// Runs ./train with that --curve (env: NULL or NAME=value settings for it); returns its result.
// The name is one element of the argument vector: no quoting anywhere.
static run_result train_with_curve(const char *dir, const char *curve, char *const env[]) {
    char out[128];
    snprintf(out, sizeof out, "%s/m.bin", dir);
    char *argv[] = { "./train", "--init", "data/golden/train/llama/init.bin",
                     "--tokens", "data/golden/train/llama/tokens.bin", "--batch", "2", "--seq", "8",
                     "--steps", "2", "--out", out, "--curve", (char *)curve, NULL };
    return tt_runv(argv, env);
}

START_TEST(train_curve_name_never_reaches_a_shell)
{
    char dir[64] = "/tmp/tw_noshell_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char curve[512], png[600], mark[64], mark2[64], fake[128], log[128];
    names(curve, sizeof curve, mark, mark2, sizeof mark, dir);
    snprintf(png, sizeof png, "%s.png", curve);

    // 1. The real PATH: gnuplot draws the picture if it is installed, and says so in one line
    //    either way; no MARK appears.
    run_result r = train_with_curve(dir, curve, NULL);
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
    char gp_log[256], path[8192];
    snprintf(gp_log, sizeof gp_log, "TW_GP_LOG=%s", log);
    snprintf(path, sizeof path, "PATH=%s:%s", dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    char *env[] = { path, gp_log, NULL };
    r = train_with_curve(dir, curve, env);
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
    char *no_path[] = { "PATH=/tw_no_such_folder", NULL };
    r = train_with_curve(dir, curve, no_path);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_msg(!tt_exists(mark) && !tt_exists(mark2), "a shell ran the curve's name: %s", r.err);
    ck_assert_msg(strstr(r.err, "(picture skipped: gnuplot is not installed; apt-get install gnuplot-nox")
                  != NULL, "%s", r.err);
    ck_assert(tt_exists(curve) && !tt_exists(png));
    tt_run_free(&r);
    ck_assert_int_eq(tt_remove_tree(dir), 0);
}
END_TEST

// ---- the suite's own way of running programs (tests/testrun.c): no shell there either ----

START_TEST(tt_split_groups_quotes_and_gives_no_other_character_a_meaning)
{
    char **w = NULL;
    const char *cmd = "  a  'b c'\"d\"e '' \"it's\" $(x) `y` *.c ~ a\\b >f 2>&1 | ; &&\t$HOME ";
    const char *want[] = { "a", "b cde", "", "it's", "$(x)", "`y`", "*.c", "~", "a\\b", ">f",
                           "2>&1", "|", ";", "&&", "$HOME" };
    const int n = (int)(sizeof want / sizeof want[0]);
    ck_assert_int_eq(tt_split(cmd, &w), n);
    for (int i = 0; i < n; i++) ck_assert_str_eq(w[i], want[i]);
    ck_assert_ptr_null(w[n]);
    tt_split_free(w);
    ck_assert_int_eq(tt_split(" \t\n", &w), 0);
    ck_assert_ptr_null(w[0]);
    tt_split_free(w);
    ck_assert_int_eq(tt_split("a 'b", &w), -1);      // an unclosed quote is refused
    ck_assert_ptr_null(w);
    ck_assert_int_eq(tt_split("a \"b'", &w), -1);
}
END_TEST

START_TEST(tt_run_starts_no_shell)
{
    // Every word a shell would act on reaches echo as it is; no MARK file appears (the names are
    // relative, so a shell would have made them in the folder the suite runs in).
    char cmd[512], want[512], m[6][64];
    for (int i = 0; i < 6; i++) snprintf(m[i], sizeof m[i], "tw_split_MARK%d_%ld", i, (long)getpid());
    snprintf(cmd, sizeof cmd, "echo $(touch %s) `touch %s` ; touch %s && touch %s | touch %s >%s",
             m[0], m[1], m[2], m[3], m[4], m[5]);
    snprintf(want, sizeof want, "$(touch %s) `touch %s` ; touch %s && touch %s | touch %s >%s\n",
             m[0], m[1], m[2], m[3], m[4], m[5]);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_str_eq(r.out, want);
    for (int i = 0; i < 6; i++) ck_assert_msg(!tt_exists(m[i]), "%s was created: a shell ran", m[i]);
    tt_run_free(&r);
    // Leading NAME=value words set the child's environment (quotes group as anywhere else).
    r = tt_run("TW_SPLIT_A='x $(y)' TW_SPLIT_B=2 env");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\nTW_SPLIT_A=x $(y)\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "\nTW_SPLIT_B=2\n"));
    ck_assert_ptr_null(getenv("TW_SPLIT_A"));          // the test's own environment is untouched
    tt_run_free(&r);
    r = tt_run("./tw-no-such-program --flag");
    ck_assert_int_eq(r.rc, 127);
    ck_assert_ptr_nonnull(strstr(r.err, "cannot run ./tw-no-such-program"));
    tt_run_free(&r);
    // A shell handed a command line is refused outright, whatever the line holds.
    snprintf(cmd, sizeof cmd, "sh -c 'touch %s'", m[0]);   // check_no_shell: example
    r = tt_run(cmd);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_ptr_nonnull(strstr(r.err, "refused"));
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "/bin/bash -e -xc 'touch %s'", m[0]);
    r = tt_run(cmd);
    ck_assert_int_eq(r.rc, -1);
    tt_run_free(&r);
    ck_assert(!tt_exists(m[0]));
    r = tt_run("echo 'unclosed");
    ck_assert_int_eq(r.rc, -1);
    ck_assert_ptr_nonnull(strstr(r.err, "unclosed quote"));
    tt_run_free(&r);
}
END_TEST

START_TEST(tt_mkdir_p_and_tt_remove_tree_need_no_shell)
{
    char dir[64] = "/tmp/tw_noshell_tree_XXXXXX", deep[256], path[300], keep[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(deep, sizeof deep, "%s/a/b//c/", dir);
    ck_assert_int_eq(tt_mkdir_p(deep), 0);
    ck_assert_int_eq(tt_mkdir_p(deep), 0);              // already there: still 0
    snprintf(path, sizeof path, "%s/a/b/c/f.txt", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(tt_mkdir_p(path), -1);             // a file is in the way
    // A link to a file outside: removed, and what it points to kept.
    snprintf(keep, sizeof keep, "%s.keep", dir);
    f = fopen(keep, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/a/link", dir);
    ck_assert_int_eq(symlink(keep, path), 0);
    ck_assert_int_eq(tt_remove_tree(dir), 0);
    ck_assert(!tt_exists(dir) && tt_exists(keep));
    ck_assert_int_eq(tt_remove_tree(dir), 0);           // nothing left to remove
    ck_assert_int_eq(tt_remove_tree(keep), 0);          // a plain file
    ck_assert(!tt_exists(keep));
}
END_TEST

// ---- tools/check_no_shell.sh, which make test runs on lib/, tools/, lessons/, bench/, fuzz/, tests/ ----

static void write_text(const char *path, const char *text) {
    ck_assert_msg(tt_write_text(path, text) == 0, "cannot write %s", path);
}

START_TEST(check_no_shell_passes_the_tree_and_names_every_shell)
{
    run_result r = tt_run("sh tools/check_no_shell.sh");
    ck_assert_msg(r.rc == 0, "tools/check_no_shell.sh failed on the tree:\n%s", r.err);
    ck_assert_msg(strstr(r.out, "lib tools lessons bench fuzz tests, none runs a shell"), "%s", r.out);
    tt_run_free(&r);

    char dir[64] = "/tmp/tw_noshell_check_XXXXXX", path[128], cmd[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/bad.c", dir);
    write_text(path,
        "int a(void) { return system(\"ls\"); }   // 1: system\n"
        "FILE *b = popen(cmd, \"r\");             // 2: popen\n"
        "x = c == '\"'; system (cmd);             // 3: a quote in a char literal, then system\n"
        "execl(\"/bin/sh\", \"sh\", \"-c\", cmd, (char *)NULL);\n"
        "execvp(\"bash\", argv);\n"
        "char *v[] = { \"sh\", \"-c\", cmd, NULL };\n"
        "tt_run(\"sh -c 'touch x'\");\n"   // check_no_shell: example
        "tt_run(\"/bin/dash -ec 'touch x'\");\n");   // check_no_shell: example
    snprintf(path, sizeof path, "%s/good.c", dir);
    write_text(path,
        "// system(\"x\") and popen( in a comment\n"
        "const char *s = \"system(\";   // in a string: a test looking for it\n"
        "char *u = \"http://x\"; tt_run(\"sh tools/check_layers.sh lib\");   // a script file\n"
        "mysystem(1); system_x(2); popen_count++; execvp(argv[0], argv);\n");
    snprintf(path, sizeof path, "%s/bad.py", dir);
    write_text(path, "import os\nos.system('ls')  # 2\n# os.system('no')\n"
                     "subprocess.run(c, shell=True)\nsubprocess.run(['ls'])\n");
    snprintf(cmd, sizeof cmd, "sh tools/check_no_shell.sh %s", dir);
    r = tt_run(cmd);
    ck_assert_int_eq(r.rc, 1);
    const char *want[] = { "bad.c:1:", "bad.c:2:", "bad.c:3:", "bad.c:4:", "bad.c:5:", "bad.c:6:",
                           "bad.c:7:", "bad.c:8:", "bad.py:2:", "bad.py:4:" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.err, want[i]) != NULL, "no finding %s in:\n%s", want[i], r.err);
    ck_assert_int_eq(tt_count_lines(r.err), (int)(sizeof want / sizeof want[0]));   // none in the good file
    tt_run_free(&r);
    ck_assert_int_eq(tt_remove_tree(dir), 0);
}
END_TEST

Suite *suite_no_shell(void) {
    Suite *s = suite_create("no_shell");
    TCase *tc = tcase_create("no_shell");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gnuplot_quote_doubles_single_quotes_and_refuses_newlines);
    tcase_add_test(tc, train_curve_name_never_reaches_a_shell);
    tcase_add_test(tc, tt_split_groups_quotes_and_gives_no_other_character_a_meaning);
    tcase_add_test(tc, tt_run_starts_no_shell);
    tcase_add_test(tc, tt_mkdir_p_and_tt_remove_tree_need_no_shell);
    tcase_add_test(tc, check_no_shell_passes_the_tree_and_names_every_shell);
    suite_add_tcase(s, tc);
    return s;
}
