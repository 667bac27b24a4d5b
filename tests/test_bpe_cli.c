// test_bpe_cli.c: ./bpe-train on bad input, as a user runs it (make test builds it first).
// Every failure must exit non-zero (1 bad data, 2 bad usage), print exactly one line on stderr
// naming the file or the flag, and leave the output path as it was (no file, no .tmp twin, and an
// existing file untouched). Invalid UTF-8 is not a failure: it trains through the byte fallback.
// Uses POSIX mkdtemp and mkdir; ./bpe-train runs through tests/testrun.h (no shell).
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testrun.h"
#include "tokenize/tokenizer.h"

static char DIR_[64];

static void make_dir(void) {
    snprintf(DIR_, sizeof DIR_, "/tmp/tw_bpecli_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(DIR_));
}

static void remove_dir(void) {
    ck_assert_int_eq(tt_remove_tree(DIR_), 0);
}

static const char *path_in(const char *name) {
    static char buf[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", DIR_, name);
    return buf[k];
}

static void write_bytes(const char *path, const char *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

// Runs ./bpe-train with args; checks the exit code, that stderr is one line containing `word`,
// and that the output path still holds `keep` (or does not exist if keep is NULL).
static void expect_failure(const char *args, int rc, const char *word, const char *out, const char *keep) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "./bpe-train %s", args);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == rc, "'%s' exited %d, want %d (stderr: %s)", cmd, r.rc, rc, r.err);
    ck_assert_msg(tt_count_lines(r.err) == 1, "'%s' printed %d lines on stderr: %s", cmd, tt_count_lines(r.err), r.err);
    ck_assert_msg(strstr(r.err, word) != NULL, "'%s': stderr lacks '%s': %s", cmd, word, r.err);
    if (out) {
        char tmp[256];
        snprintf(tmp, sizeof tmp, "%s.tmp", out);
        ck_assert_msg(!tt_exists(tmp), "'%s' left %s behind", cmd, tmp);
        if (keep == NULL) ck_assert_msg(!tt_exists(out), "'%s' wrote %s", cmd, out);
        else {
            char *now = tt_slurp(out);
            ck_assert_msg(strcmp(now, keep) == 0, "'%s' changed %s", cmd, out);
            free(now);
        }
    }
    tt_run_free(&r);
}

START_TEST(bad_text_files_fail_with_one_line)
{
    make_dir();
    char out[160];
    snprintf(out, sizeof out, "%s", path_in("tok.bin"));
    char args[512];
    snprintf(args, sizeof args, "%s --vocab 300 -o %s", path_in("missing.txt"), out);
    expect_failure(args, 1, "missing.txt", out, NULL);
    write_bytes(path_in("empty.txt"), "", 0);
    snprintf(args, sizeof args, "%s --vocab 300 -o %s", path_in("empty.txt"), out);
    expect_failure(args, 1, "empty", out, NULL);
    snprintf(args, sizeof args, "%s --vocab 300 -o %s", DIR_, out);
    expect_failure(args, 1, "directory", out, NULL);
    write_bytes(path_in("nul.txt"), "ab\0cd", 5);
    snprintf(args, sizeof args, "%s --vocab 300 -o %s", path_in("nul.txt"), out);
    expect_failure(args, 1, "NUL", out, NULL);
    remove_dir();
}
END_TEST

START_TEST(impossible_vocabulary_sizes_fail_and_keep_the_old_file)
{
    make_dir();
    char out[160];
    snprintf(out, sizeof out, "%s", path_in("tok.bin"));
    write_bytes(out, "keep", 4);   // an earlier result must survive a failed run
    const char *text = "the cat sat on the mat and the cat ate the rat that sat on the hat\n";
    write_bytes(path_in("t.txt"), text, strlen(text));
    char args[512];
    // base: 259 + " " + 15 distinct letters/newline > 270
    snprintf(args, sizeof args, "%s --vocab 270 -o %s --held-out 0", path_in("t.txt"), out);
    expect_failure(args, 1, "smaller than", out, "keep");
    snprintf(args, sizeof args, "%s --vocab 5000 -o %s --held-out 0", path_in("t.txt"), out);
    expect_failure(args, 1, "at most", out, "keep");
    remove_dir();
}
END_TEST

START_TEST(bad_flags_exit_2_naming_the_flag)
{
    make_dir();
    char out[160];
    snprintf(out, sizeof out, "%s", path_in("tok.bin"));
    write_bytes(path_in("t.txt"), "abc abc abc", 11);
    char args[512];
    snprintf(args, sizeof args, "%s --vocab many -o %s", path_in("t.txt"), out);
    expect_failure(args, 2, "--vocab", out, NULL);
    snprintf(args, sizeof args, "%s -o %s", path_in("t.txt"), out);
    expect_failure(args, 2, "--vocab", out, NULL);
    snprintf(args, sizeof args, "%s --vocab 300", path_in("t.txt"));
    expect_failure(args, 2, "-o", NULL, NULL);
    snprintf(args, sizeof args, "%s --vocab 300 -o %s --held-out 1.5", path_in("t.txt"), out);
    expect_failure(args, 2, "--held-out", out, NULL);
    snprintf(args, sizeof args, "%s --vocab 300 -o %s --frobnicate", path_in("t.txt"), out);
    expect_failure(args, 2, "--frobnicate", out, NULL);
    // An output folder that does not exist: bad data (exit 1), naming the path.
    snprintf(args, sizeof args, "%s --vocab 264 -o %s/no/such/dir/tok.bin --held-out 0", path_in("t.txt"), DIR_);
    expect_failure(args, 1, "no/such/dir", NULL, NULL);
    remove_dir();
}
END_TEST

START_TEST(invalid_utf8_trains_through_the_byte_fallback)
{
    make_dir();
    // Stray continuation bytes, a truncated 3-byte sequence, overlong '/', 0xFF, repeated so that
    // pairs exist; the valid letters around them still merge.
    const char unit[] = "ab\x80\x80 ab\xe4\xb8 ab\xc0\xaf ab\xff cd\xed\xa0\x80 ab ";
    char text[4096];
    size_t n = 0;
    for (int i = 0; i < 40; i++) { memcpy(text + n, unit, sizeof unit - 1); n += sizeof unit - 1; }
    write_bytes(path_in("bad.txt"), text, n);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "./bpe-train %s --vocab 266 -o %s", path_in("bad.txt"), path_in("tok.bin"));
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "exit %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "bytes/token"));
    tw_tokenizer t;
    char err[256];
    ck_assert_msg(tw_tokenizer_load(&t, path_in("tok.bin"), 266, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_ge(tw_tokenizer_lookup(&t, " ab"), 259);   // a learned piece
    tw_tokenizer_free(&t);
    tt_run_free(&r);
    remove_dir();
}
END_TEST

// A FIFO as the text or as --compare is refused at once (it used to wait for a writer forever),
// /dev/zero too (it used to be read until memory ran out); a bad --compare (garbage, a folder)
// fails before -o is written; -o naming the text or the --compare file (by name, through ./, a
// hard link) is refused with exit 2 and both files stay as they were.
START_TEST(non_files_and_outputs_that_are_inputs_write_nothing)
{
    make_dir();
    char out[160], args[1024];
    snprintf(out, sizeof out, "%s", path_in("tok.bin"));
    const char *text = "the cat sat on the mat and the cat ate the rat that sat on the hat\n";
    write_bytes(path_in("t.txt"), text, strlen(text));
    ck_assert_int_eq(mkfifo(path_in("fifo"), 0600), 0);
    snprintf(args, sizeof args, "%s --vocab 264 -o %s", path_in("fifo"), out);
    expect_failure(args, 1, "FIFO", out, NULL);
    snprintf(args, sizeof args, "/dev/zero --vocab 264 -o %s", out);
    expect_failure(args, 1, "character device", out, NULL);
    // A sparse file past the 256 MiB bound: refused from its size, before any byte is read.
    FILE *big = fopen(path_in("big.txt"), "wb");
    ck_assert_ptr_nonnull(big);
    ck_assert_int_eq(ftruncate(fileno(big), (off_t)257 << 20), 0);
    fclose(big);
    snprintf(args, sizeof args, "%s --vocab 264 -o %s", path_in("big.txt"), out);
    expect_failure(args, 1, "256 MiB", out, NULL);
    snprintf(args, sizeof args, "%s --vocab 264 -o %s --compare %s", path_in("t.txt"), out, path_in("fifo"));
    expect_failure(args, 1, "FIFO", out, NULL);
    snprintf(args, sizeof args, "%s --vocab 264 -o %s --compare %s", path_in("t.txt"), out, DIR_);
    expect_failure(args, 1, "directory", out, NULL);
    write_bytes(path_in("garbage.bin"), "\x10\0\0\0\0\0\0\0\xff\xff\0\0zz", 14);
    snprintf(args, sizeof args, "%s --vocab 264 -o %s --compare %s", path_in("t.txt"), out, path_in("garbage.bin"));
    expect_failure(args, 1, "--compare", out, NULL);
    write_bytes(out, "keep", 4);
    expect_failure(args, 1, "--compare", out, "keep");

    // -o is an input: the text by the same name, through "./"-style paths and a hard link, and
    // the --compare file.
    snprintf(args, sizeof args, "%s --vocab 264 -o %s", path_in("t.txt"), path_in("t.txt"));
    expect_failure(args, 2, "training text", path_in("t.txt"), text);
    snprintf(args, sizeof args, "%s --vocab 264 -o %s/./t.txt", path_in("t.txt"), DIR_);
    expect_failure(args, 2, "training text", path_in("t.txt"), text);
    ck_assert_int_eq(link(path_in("t.txt"), path_in("hard.txt")), 0);
    snprintf(args, sizeof args, "%s --vocab 264 -o %s", path_in("hard.txt"), path_in("t.txt"));
    expect_failure(args, 2, "training text", path_in("t.txt"), text);
    snprintf(args, sizeof args, "%s --vocab 264 -o %s --compare %s", path_in("t.txt"), out, out);
    expect_failure(args, 2, "--compare file", out, "keep");
    remove_dir();
}
END_TEST

Suite *suite_bpe_cli(void) {
    Suite *s = suite_create("bpe_cli");
    TCase *tc = tcase_create("bpe-train");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bad_text_files_fail_with_one_line);
    tcase_add_test(tc, impossible_vocabulary_sizes_fail_and_keep_the_old_file);
    tcase_add_test(tc, bad_flags_exit_2_naming_the_flag);
    tcase_add_test(tc, invalid_utf8_trains_through_the_byte_fallback);
    tcase_add_test(tc, non_files_and_outputs_that_are_inputs_write_nothing);
    suite_add_tcase(s, tc);
    return s;
}
