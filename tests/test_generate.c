// test_generate.c: the ./generate and ./npydiff programs, run as a user runs them (make test
// builds both first): llama2.c-identical stdout, the dump with and without the KV cache compared
// by npydiff, reproducible sampling, and bad input (unknown flags, missing, truncated or
// inconsistent model and tokenizer files, a prompt longer than seq_len): one line on stderr,
// a non-zero exit, and no dump folder left behind.
#define _POSIX_C_SOURCE 200809L   // getpid, mkdir, rmdir, WEXITSTATUS
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/llama2c.h"
#include "formats/llama2c_write.h"

#define MODEL "data/models/stories260K.bin"
#define TOK   "data/models/tok512.bin"
#define GEN   "./generate " MODEL " -z " TOK " "

static void scratch_path(char *out, size_t len, const char *tag) {
    mkdir("out", 0777);   // may exist already
    snprintf(out, len, "out/test_generate_%ld_%s", (long)getpid(), tag);
}

START_TEST(greedy_run_prints_the_documented_story_with_and_without_cache)
{
    char *want = tt_slurp("data/stories260K_greedy.txt");
    ck_assert_int_gt((int)strlen(want), 500);
    for (int no_cache = 0; no_cache <= 1; no_cache++) {
        run_result r = tt_run(no_cache ? GEN "-t 0 -n 256 --no-cache" : GEN "-t 0 -n 256");
        ck_assert_int_eq(r.rc, 0);
        ck_assert_str_eq(r.out, want);
        ck_assert_ptr_nonnull(strstr(r.err, "achieved tok/s"));   // the speed goes to stderr
        tt_run_free(&r);
    }
    free(want);
}
END_TEST

START_TEST(the_prompt_is_printed_first_and_steps_count_it)
{
    // -n 4 runs positions 0..3: each prints the next prompt token (the first loses its space).
    run_result r = tt_run(GEN "-t 0 -n 4 -i \"Once upon a time\"");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "Once upon a time\n");
    tt_run_free(&r);
    r = tt_run(GEN "-t 0 -n 2 -i \"Once upon a time\"");
    ck_assert_str_eq(r.out, "Once upon\n");
    tt_run_free(&r);
    r = tt_run(GEN "-t 0 -n 40 -i \"Once upon a time\" --cache-info");
    ck_assert_int_eq(r.rc, 0);
    ck_assert_msg(strncmp(r.out, "Once upon a time, there was", 27) == 0, "got '%s'", r.out);
    // 5 layers x 2 x 40 positions x 4 kv heads x 8 x 4 bytes
    ck_assert_msg(strstr(r.err, "= 51200 bytes") != NULL, "cache info: %s", r.err);
    tt_run_free(&r);
}
END_TEST

START_TEST(sampling_is_reproducible_for_a_seed)
{
    run_result a = tt_run(GEN "-t 1.0 -p 0.9 -s 42 -n 64 -i \"Lily\"");
    run_result b = tt_run(GEN "-t 1.0 -p 0.9 -s 42 -n 64 -i \"Lily\"");
    run_result c = tt_run(GEN "-t 1.0 -p 0.9 -s 43 -n 64 -i \"Lily\"");
    ck_assert_int_eq(a.rc, 0);
    ck_assert_str_eq(a.out, b.out);
    ck_assert_str_ne(a.out, c.out);   // 60 sampled tokens: equal stories would be a broken RNG
    ck_assert_ptr_nonnull(strstr(a.err, "seed: 42"));
    tt_run_free(&a);
    tt_run_free(&b);
    tt_run_free(&c);
}
END_TEST

// The cache path (one token at a time) and the no-cache path (one pass) dump the same tensors:
// npydiff with its default tolerance (atol 1e-5, rtol 1e-4) passes all 94, and a dump of another
// prompt does not.
START_TEST(dumps_with_and_without_cache_agree_under_npydiff)
{
    char a[256], b[256], c[256], cmd[2048];
    scratch_path(a, sizeof a, "dumpA");
    scratch_path(b, sizeof b, "dumpB");
    scratch_path(c, sizeof c, "dumpC");
    snprintf(cmd, sizeof cmd, GEN "-t 0 -n 8 -i \"Lily saw a ball\" --dump %s", a);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, GEN "-t 0 -n 8 -i \"Lily saw a ball\" --dump %s --no-cache", b);
    r = tt_run(cmd);
    ck_assert_int_eq(r.rc, 0);
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "./npydiff %s %s", a, b);
    r = tt_run(cmd);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_msg(strstr(r.out, "\n94 passed, 0 failed\n") != NULL, "%s", r.out);
    tt_run_free(&r);

    snprintf(cmd, sizeof cmd, GEN "-t 0 -n 8 -i \"Lily saw a cat\" --dump %s", c);
    r = tt_run(cmd);
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "./npydiff %s %s", a, c);
    r = tt_run(cmd);
    ck_assert_int_eq(r.rc, 1);   // the last token differs: its rows differ from embed on
    ck_assert_ptr_nonnull(strstr(r.out, "embed "));
    ck_assert_ptr_nonnull(strstr(r.out, " failed\n"));
    tt_run_free(&r);

    char path[512];
    snprintf(path, sizeof path, "%s/tokens.txt", a);
    char *toks = tt_slurp(path);
    ck_assert_ptr_nonnull(strstr(toks, "\t1\t<s>\n"));
    free(toks);
    snprintf(path, sizeof path, "%s/L4.pattern.npy", a);
    ck_assert(tt_exists(path));
    tt_remove_dump(a);
    tt_remove_dump(b);
    tt_remove_dump(c);
}
END_TEST

// ---- bad input ----

// Writes a copy of src with the int32 at byte offset `at` replaced (at < 0: none) and `cut` bytes
// removed from the end.
static void write_variant(const char *dst, const char *src, long at, int32_t value, long cut) {
    FILE *f = fopen(src, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n);
    ck_assert_int_eq((long)fread(b, 1, (size_t)n, f), n);
    fclose(f);
    if (at >= 0) memcpy(b + at, &value, 4);
    f = fopen(dst, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(b, 1, (size_t)(n - cut), f);
    fclose(f);
    free(b);
}

static const struct {
    const char *args;     // after ./generate; %M = a broken model, %T = a broken tokenizer
    int         rc;
    const char *needle;   // what the one stderr line must say
    long        at;       // the broken file: int32 at this offset replaced ...
    int32_t     value;
    long        cut;      // ... and this many bytes cut from the end
    int         broken;   // 0 none, 1 model, 2 tokenizer
} BAD[] = {
    { MODEL " -z " TOK " --bogus", 2, "unknown flag '--bogus'", -1, 0, 0, 0 },
    { MODEL " -z " TOK " -x 1", 2, "unknown flag '-x'", -1, 0, 0, 0 },
    { MODEL " -z " TOK " -t", 2, "'-t' needs a value", -1, 0, 0, 0 },
    { MODEL " -z " TOK " -t warm", 2, "-t: 'warm' is not a number", -1, 0, 0, 0 },
    { MODEL " -z " TOK " -n -5", 2, "-n: -5 is negative", -1, 0, 0, 0 },
    { MODEL " -z " TOK " -m chat", 2, "mode 'chat' is not supported", -1, 0, 0, 0 },
    { "-t 0", 2, "no model given", -1, 0, 0, 0 },
    { "data/models/no-such-model.bin -z " TOK, 1, "no-such-model.bin: cannot open", -1, 0, 0, 0 },
    { "%M -z " TOK, 1, "truncated", -1, 0, 100, 1 },
    { "%M -z " TOK, 1, "n_heads = 0 must be positive", 12, 0, 0, 1 },
    { "%M -z " TOK, 1, "dim 64 is not divisible by n_heads 7", 12, 7, 0, 1 },
    { "%M -z " TOK, 1, "n_heads 8 is not divisible by n_kv_heads 3", 16, 3, 0, 1 },
    { "%M -z " TOK, 1, "implies", 8, 6, 0, 1 },                   // 6 layers: wrong size
    { MODEL " -z %T", 1, "run past the end of the file", -1, 0, 2, 2 },
    { MODEL " -z %T", 1, "outside 0..max_token_length", 8, 99, 0, 2 },
    { MODEL " -z data/models/no-such-tok.bin", 1, "no-such-tok.bin: cannot open", -1, 0, 0, 0 },
};

START_TEST(bad_input_gives_one_line_an_exit_code_and_no_dump)
{
    char broken[256], dump[256], args[1024], cmd[2048];
    scratch_path(broken, sizeof broken, "broken.bin");
    scratch_path(dump, sizeof dump, "baddump");
    if (BAD[_i].broken)
        write_variant(broken, BAD[_i].broken == 1 ? MODEL : TOK, BAD[_i].at, BAD[_i].value, BAD[_i].cut);
    // Substitute %M / %T with the broken file.
    const char *src = BAD[_i].args;
    size_t k = 0;
    for (; *src && k + 300 < sizeof args; src++) {
        if (src[0] == '%' && (src[1] == 'M' || src[1] == 'T')) {
            k += (size_t)snprintf(args + k, sizeof args - k, "%s", broken);
            src++;
        } else {
            args[k++] = *src;
        }
    }
    args[k] = '\0';
    snprintf(cmd, sizeof cmd, "./generate --dump %s %s", dump, args);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == BAD[_i].rc, "%s: exit %d, want %d (stderr: %s)", cmd, r.rc, BAD[_i].rc, r.err);
    ck_assert_msg(tt_count_lines(r.err) == 1, "%s: stderr should be one line: '%s'", cmd, r.err);
    ck_assert_msg(strstr(r.err, BAD[_i].needle) != NULL, "%s: stderr '%s' should say '%s'",
                  cmd, r.err, BAD[_i].needle);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(!tt_exists(dump), "%s: a dump folder was left behind", cmd);
    tt_run_free(&r);
    remove(broken);
}
END_TEST

START_TEST(prompt_longer_than_seq_len_is_refused_before_any_dump)
{
    // 200 copies of U+4E2D, which tok512 lacks: 3 byte tokens each, 600 + 2 > seq_len 512.
    char cmd[4096], dump[256];
    scratch_path(dump, sizeof dump, "longdump");
    size_t k = (size_t)snprintf(cmd, sizeof cmd, GEN "-n 0 --dump %s -i \"", dump);
    for (int i = 0; i < 200; i++) k += (size_t)snprintf(cmd + k, sizeof cmd - k, "\xe4\xb8\xad");
    snprintf(cmd + k, sizeof cmd - k, "\"");
    run_result r = tt_run(cmd);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_int_eq(tt_count_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "prompt is 602 tokens") && strstr(r.err, "seq_len of 512"), "%s", r.err);
    ck_assert(!tt_exists(dump));
    tt_run_free(&r);
}
END_TEST

// The one entry of folder dir besides . and .. ("" if none, "(more than one)" if several).
static const char *only_entry(const char *dir) {
    static char name[256];
    int n = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    name[0] = '\0';
    for (struct dirent *e; (e = readdir(d)) != NULL; ) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n++ == 0) snprintf(name, sizeof name, "%s", e->d_name);
        else snprintf(name, sizeof name, "(more than one)");
    }
    closedir(d);
    return name;
}

// Whether the folder holding path has an entry named path's last part followed by suffix, then
// anything (what the shell glob path<suffix>* matched).
static int has_entry_starting(const char *path, const char *suffix) {
    char parent[256], prefix[300];
    const char *slash = strrchr(path, '/');
    snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    snprintf(prefix, sizeof prefix, "%s%s", slash ? slash + 1 : path, suffix);
    DIR *d = opendir(parent);
    ck_assert_ptr_nonnull(d);
    int found = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && !found; )
        found = strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return found;
}

START_TEST(dump_into_a_non_empty_folder_is_refused_and_leaves_it_alone)
{
    char dump[256], keep[512], cmd[1024];
    scratch_path(dump, sizeof dump, "fulldump");
    mkdir(dump, 0777);
    snprintf(keep, sizeof keep, "%s/mine.txt", dump);
    FILE *f = fopen(keep, "w");
    ck_assert_ptr_nonnull(f);
    fputs("keep me\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, GEN "-t 0 -n 4 -i \"Lily\" --dump %s", dump);
    run_result r = tt_run(cmd);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_int_eq(tt_count_lines(r.err), 1);
    ck_assert_ptr_nonnull(strstr(r.err, "not empty"));
    char *kept = tt_slurp(keep);
    ck_assert_str_eq(kept, "keep me\n");
    free(kept);
    // Nothing else appeared in the folder, and no temporary folder was left beside it.
    ck_assert_str_eq(only_entry(dump), "mine.txt");
    ck_assert_msg(!has_entry_starting(dump, ".tmp-"), "a temporary folder was left beside %s", dump);
    remove(keep);
    rmdir(dump);
    tt_run_free(&r);
}
END_TEST

START_TEST(npydiff_rejects_bad_usage)
{
    run_result r = tt_run("./npydiff only-one-dir");
    ck_assert_int_eq(r.rc, 2);
    ck_assert_int_eq(tt_count_lines(r.err), 1);
    tt_run_free(&r);
    r = tt_run("./npydiff data/golden/stories data/golden/stories --tol 1");
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "unknown flag --tol"));
    tt_run_free(&r);
    r = tt_run("./npydiff data/golden/stories data/golden/stories");
    ck_assert_int_eq(r.rc, 0);   // a folder against itself: every tensor passes, exact
    tt_run_free(&r);
}
END_TEST

// -n beyond the model's seq_len is cut to seq_len; the run says the context is full instead of
// stopping mid-word without a word. The model is stories260K written back with seq_len 16.
START_TEST(a_run_cut_short_by_seq_len_says_the_context_is_full)
{
    char small[256], cmd[600], err[512];
    scratch_path(small, sizeof small, "seq16.bin");
    tw_model m;
    ck_assert_msg(tw_llama2c_load(&m, MODEL, err, sizeof err) == TW_OK, "%s", err);
    m.cfg.max_seq = 16;
    ck_assert_msg(tw_llama2c_write(small, &m, err, sizeof err) == TW_OK, "%s", err);
    tw_model_free(&m);
    snprintf(cmd, sizeof cmd, "./generate %s -z " TOK " -t 0 -n 40", small);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s: exit %d (%s)", cmd, r.rc, r.err);
    ck_assert_msg(strstr(r.err, "stopped after 16 positions: the model's context (seq_len 16) is full"),
                  "%s: stderr %s", cmd, r.err);
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "./generate %s -z " TOK " -t 0 -n 16", small);   // asked for no more
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0 && !strstr(r.err, "is full"), "%s: exit %d, stderr %s", cmd, r.rc, r.err);
    tt_run_free(&r);
    remove(small);
}
END_TEST

// Without -z the default tokenizer.bin (in the current folder, which a checkout lacks) is tried:
// the one line says -z is the flag to give.
START_TEST(a_missing_default_tokenizer_suggests_z)
{
    if (tt_exists("tokenizer.bin")) return;   // someone put one there: nothing to show
    run_result r = tt_run("./generate " MODEL " -n 2 -t 0");
    ck_assert_msg(r.rc == 1 && tt_count_lines(r.err) == 1 && strstr(r.err, "tokenizer.bin: cannot open") &&
                  strstr(r.err, "no -z given") && strstr(r.err, "-z data/models/tok512.bin"),
                  "exit %d, stderr %s", r.rc, r.err);
    tt_run_free(&r);
}
END_TEST

Suite *suite_generate(void) {
    Suite *s = suite_create("generate");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, greedy_run_prints_the_documented_story_with_and_without_cache);
    tcase_add_test(tc, the_prompt_is_printed_first_and_steps_count_it);
    tcase_add_test(tc, sampling_is_reproducible_for_a_seed);
    tcase_add_test(tc, dumps_with_and_without_cache_agree_under_npydiff);
    tcase_add_loop_test(tc, bad_input_gives_one_line_an_exit_code_and_no_dump, 0,
                        (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(tc, prompt_longer_than_seq_len_is_refused_before_any_dump);
    tcase_add_test(tc, dump_into_a_non_empty_folder_is_refused_and_leaves_it_alone);
    tcase_add_test(tc, npydiff_rejects_bad_usage);
    tcase_add_test(tc, a_run_cut_short_by_seq_len_says_the_context_is_full);
    tcase_add_test(tc, a_missing_default_tokenizer_suggests_z);
    suite_add_tcase(s, tc);
    return s;
}
