// test_corrupt.c: every reader of the toolkit, and every program, against hostile input.
//
// 1. Each file listed in data/corrupt/MANIFEST.tsv (written by tests/corrupt/make_corpus.py) is
//    given to its reader: tw_npy_read, the config reader (tw_json_read_file, then
//    tw_hf_config_from_json and tw_params_count, or for MoE configs tw_hf_moe_from_json and
//    tw_hf_moe_count), tw_llama2c_load, tw_tokenizer_load, tw_bbpe_load_hf (tokenizer.json),
//    tw_bbpe_load_gpt2 (encoder.json + vocab.bpe) or
//    tw_q8file_read (llama2.c's version-2 files). The
//    status must be the one the manifest documents, and a failure must come with a message that
//    contains the manifest's word (and the file's path, for the readers that promise it). One
//    valid control file per reader must load, so a test that "fails" everything cannot pass.
// 2. The programs (./params, ./generate, ./npydiff, ./tokenize and every ./lessonN; `make test` builds them)
//    run on the corrupt files (./generate on the version-0, version-2 and tokenizer ones) and on
//    bad flags: each must exit non-zero (1 for bad data, 2 for
//    bad usage), not crash, and print exactly one line on stderr naming the file or the flag.
// 3. Paths that are not regular files: the manifest's "@" rows (a directory, a FIFO, /dev/null,
//    /dev/zero), made at run time (see special_path), go through the same readers and programs;
//    each must be refused at once (a FIFO must not block) with one line saying what it is.
// Runs from the top of the checkout (make test does). Uses POSIX mkdtemp, mkfifo, symlink and stat;
// programs run through tests/testrun.h (no shell).
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/json.h"
#include "formats/hf_config.h"
#include "formats/hf_moe.h"
#include "formats/llama2c.h"
#include "tokenize/tokenizer.h"
#include "tokenize/bbpe.h"
#include "quant/q8file.h"
#include "train/checkpoint.h"
#include "train/moe_file.h"
#include "train/tokens.h"
#include "formats/lora_file.h"
#include "train/pairs.h"

#define CORRUPT_DIR "data/corrupt"
#define MAX_CASES   1024

typedef struct {
    char reader[16];   // npy, json, llama2c, tokenizer
    char path[192];    // data/corrupt/<kind>/<name>
    char status[8];    // OK, FORMAT, SHAPE, ARG, IO, NOMEM
    char word[64];     // the message must contain it ("-": any non-empty message)
    int  vocab;        // tokenizer: the vocabulary size to load with
    int  special;      // 1 for the "@" rows: not a regular file (path made by special_path)
    char name[160];    // the manifest's name for it (the "@" name for special rows)
} corrupt_case;

static corrupt_case CASES[MAX_CASES];
static int n_cases;

// The folder that holds the "@" paths of this process: @directory is the folder itself, @fifo a
// FIFO inside it. Made on first use, removed at exit (in each forked test and in CK_FORK=no runs).
static char special_dir[64];

static void remove_special_dir(void) {
    char fifo[96];
    snprintf(fifo, sizeof fifo, "%s/fifo", special_dir);
    unlink(fifo);
    rmdir(special_dir);
}

// Resolves a manifest name starting with "@" to a path on this machine: "@directory", "@fifo",
// or "@/absolute/path" (a device such as /dev/null). Fails the test if they cannot be made.
static void special_path(char *out, size_t len, const char *name) {
    if (!special_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(special_dir, sizeof special_dir, "%s/tw_special_XXXXXX", tmp && *tmp ? tmp : "/tmp");
        ck_assert_msg(mkdtemp(special_dir) != NULL, "mkdtemp %s failed", special_dir);
        char fifo[96];
        snprintf(fifo, sizeof fifo, "%s/fifo", special_dir);
        ck_assert_msg(mkfifo(fifo, 0600) == 0, "mkfifo %s failed", fifo);
        atexit(remove_special_dir);
    }
    if (strcmp(name, "@directory") == 0) snprintf(out, len, "%s", special_dir);
    else if (strcmp(name, "@fifo") == 0) snprintf(out, len, "%s/fifo", special_dir);
    else if (name[1] == '/') snprintf(out, len, "%s", name + 1);
    else ck_abort_msg("MANIFEST.tsv: unknown special path %s", name);
}

static void load_manifest(void) {
    if (n_cases) return;
    FILE *f = fopen(CORRUPT_DIR "/MANIFEST.tsv", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f) && n_cases < MAX_CASES) {
        if (line[0] == '#' || line[0] == '\n') continue;
        corrupt_case *c = &CASES[n_cases];
        char file[160], vocab[16];
        if (sscanf(line, "%15[^\t]\t%159[^\t]\t%7[^\t]\t%63[^\t]\t%15[^\t\n]", c->reader, file,
                   c->status, c->word, vocab) != 5)
            continue;
        if (file[0] == '@') special_path(c->path, sizeof c->path, file);
        else snprintf(c->path, sizeof c->path, CORRUPT_DIR "/%s", file);
        c->special = file[0] == '@';
        snprintf(c->name, sizeof c->name, "%s", file);
        c->vocab = atoi(vocab);
        n_cases++;
    }
    fclose(f);
}

static const char *status_name(tw_status s) {
    switch (s) {
    case TW_OK:         return "OK";
    case TW_ERR_NOMEM:  return "NOMEM";
    case TW_ERR_IO:     return "IO";
    case TW_ERR_FORMAT: return "FORMAT";
    case TW_ERR_SHAPE:  return "SHAPE";
    case TW_ERR_ARG:    return "ARG";
    }
    return "?";
}

// Case-insensitive substring test (strcasestr is not in C11 or POSIX).
static int contains_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return n == 0;
}

// Runs the case's reader. msg receives its error message; *names_path says whether the reader
// promises to put the path in it (npy's message is only the problem, the caller adds the path).
static tw_status run_reader(const corrupt_case *c, char *msg, size_t len, int *names_path) {
    msg[0] = '\0';
    *names_path = 1;
    if (strcmp(c->reader, "npy") == 0) {
        tw_npy a;
        *names_path = 0;
        tw_status st = tw_npy_read(&a, c->path, msg, len);
        if (st == TW_OK) tw_npy_free(&a);
        return st;
    }
    if (strcmp(c->reader, "json") == 0) {
        tw_json *root;
        tw_status st = tw_json_read_file(&root, c->path, msg, len);
        if (st != TW_OK) return st;
        *names_path = 0;   // the config checks work on a tree; ./params adds the path
        if (tw_hf_moe_is_moe(root)) {   // mixtral, qwen3_moe, deepseek_v3 (formats/hf_moe.h)
            tw_hf_moe_config mc;
            st = tw_hf_moe_from_json(&mc, root, msg, len);
            tw_json_free(root);
            tw_moe_param_counts mp;
            if (st == TW_OK && (st = tw_hf_moe_count(&mp, &mc)) != TW_OK)
                snprintf(msg, len, "tw_hf_moe_count: the count overflows");
            return st;
        }
        tw_hf_config cfg;
        st = tw_hf_config_from_json(&cfg, root, msg, len);
        tw_json_free(root);
        if (st != TW_OK) return st;
        tw_param_counts pc;
        st = tw_params_count(&pc, &cfg);
        if (st != TW_OK) snprintf(msg, len, "tw_params_count: the count overflows");
        return st;
    }
    if (strcmp(c->reader, "llama2c") == 0) {
        tw_model m;
        tw_status st = tw_llama2c_load(&m, c->path, msg, len);
        if (st == TW_OK) tw_model_free(&m);
        return st;
    }
    if (strcmp(c->reader, "tokenizer") == 0) {
        tw_tokenizer t;
        tw_status st = tw_tokenizer_load(&t, c->path, c->vocab, msg, len);
        if (st == TW_OK) tw_tokenizer_free(&t);
        return st;
    }
    if (strcmp(c->reader, "hfjson") == 0) {
        tw_bbpe t;
        tw_status st = tw_bbpe_load_hf(&t, c->path, msg, len);
        if (st == TW_OK) tw_bbpe_free(&t);
        return st;
    }
    if (strcmp(c->reader, "gpt2") == 0) {   // vocab.bpe beside encoder.json
        char bpe[256];
        const char *slash = strrchr(c->path, '/');
        int dir = slash ? (int)(slash - c->path + 1) : 0;
        snprintf(bpe, sizeof bpe, "%.*svocab.bpe", dir, c->path);
        tw_bbpe t;
        tw_status st = tw_bbpe_load_gpt2(&t, c->path, bpe, msg, len);
        if (st == TW_OK) tw_bbpe_free(&t);
        return st;
    }
    if (strcmp(c->reader, "q8file") == 0) {
        tw_q8file m;
        tw_status st = tw_q8file_read(&m, c->path, msg, len);
        if (st == TW_OK) tw_q8file_free(&m);
        return st;
    }
    if (strcmp(c->reader, "twmodel") == 0) {
        tw_model m;
        tw_status st = tw_checkpoint_load(&m, c->path, msg, len);
        if (st == TW_OK) tw_model_free(&m);
        return st;
    }
    if (strcmp(c->reader, "twstate") == 0) {
        tw_model m;
        tw_train_progress pr;
        float *am, *av;
        tw_status st = tw_train_state_load(&pr, &m, &am, &av, c->path, msg, len);
        if (st == TW_OK) { tw_model_free(&m); free(am); free(av); }
        return st;
    }
    if (strcmp(c->reader, "tokens") == 0) {
        int *t;
        long n;
        tw_status st = tw_tokens_read(&t, &n, c->path, msg, len);
        if (st == TW_OK) free(t);
        return st;
    }
    if (strcmp(c->reader, "lora") == 0) {   // adapters for stories260K (make_corpus.py's make_lora)
        tw_model m;
        char e[512] = "";
        ck_assert_msg(tw_model_load_file(&m, "data/models/stories260K.bin", e, sizeof e) == TW_OK, "%s", e);
        tw_lora_set s;
        tw_status st = tw_lora_file_load(&s, c->path, &m.cfg, msg, len);
        if (st == TW_OK) tw_lora_set_free(&s);
        tw_model_free(&m);
        return st;
    }
    if (strcmp(c->reader, "twmx") == 0) {   // models with experts (train/moe_file.h)
        tw_model m;
        tw_status st = tw_moe_file_load(&m, c->path, msg, len);
        if (st == TW_OK) tw_model_free(&m);
        return st;
    }
    if (strcmp(c->reader, "pairs") == 0) {   // for a model of the manifest's vocabulary and context 32
        tw_pairs p;
        tw_status st = tw_pairs_read(&p, c->path, c->vocab, 32, msg, len);
        if (st == TW_OK) tw_pairs_free(&p);
        return st;
    }
    ck_abort_msg("MANIFEST.tsv: unknown reader '%s' for %s", c->reader, c->path);
    return TW_ERR_ARG;
}

START_TEST(manifest_lists_a_control_and_corrupt_files_for_every_reader)
{
    load_manifest();
    ck_assert_msg(n_cases > 0, "cannot read " CORRUPT_DIR "/MANIFEST.tsv: run `make corpus`");
    static const char *const readers[] = { "npy", "json", "llama2c", "tokenizer", "q8file",
                                           "twmodel", "twstate", "tokens", "lora", "hfjson", "gpt2",
                                           "twmx", "pairs" };
    for (int r = 0; r < (int)(sizeof readers / sizeof readers[0]); r++) {
        int ok = 0, bad = 0, special = 0;
        for (int i = 0; i < n_cases; i++) {
            if (strcmp(CASES[i].reader, readers[r]) != 0) continue;
            if (strcmp(CASES[i].status, "OK") == 0) ok++;
            else bad++;
            special += CASES[i].special;
        }
        ck_assert_msg(ok >= 1 && bad >= 10, "%s: %d valid and %d corrupt files in the manifest",
                      readers[r], ok, bad);
        // A directory, a FIFO and two devices (/dev/null, /dev/zero).
        ck_assert_msg(special >= 4, "%s: %d special paths in the manifest, expected 4", readers[r],
                      special);
    }
}
END_TEST

START_TEST(every_reader_answers_every_corrupt_file_as_documented)
{
    load_manifest();
    ck_assert_msg(n_cases > 0, "cannot read " CORRUPT_DIR "/MANIFEST.tsv: run `make corpus`");
    int failures = 0;
    char first[600] = "";
    for (int i = 0; i < n_cases; i++) {
        const corrupt_case *c = &CASES[i];
        char msg[512];
        int names_path;
        tw_status st = run_reader(c, msg, sizeof msg, &names_path);
        char why[600] = "";
        if (strcmp(status_name(st), c->status) != 0)
            snprintf(why, sizeof why, "%s: %s returned %s, expected %s (message: %s)", c->path,
                     c->reader, status_name(st), c->status, msg);
        else if (st != TW_OK && msg[0] == '\0')
            snprintf(why, sizeof why, "%s: %s failed with %s but gave no message", c->path, c->reader,
                     c->status);
        else if (st != TW_OK && strcmp(c->word, "-") != 0 && !contains_nocase(msg, c->word))
            snprintf(why, sizeof why, "%s: message '%s' does not mention '%s'", c->path, msg, c->word);
        else if (st != TW_OK && names_path && !strstr(msg, c->path))
            snprintf(why, sizeof why, "%s: message '%s' does not name the file", c->path, msg);
        else if (st != TW_OK && strchr(msg, '\n'))
            snprintf(why, sizeof why, "%s: message '%s' is more than one line", c->path, msg);
        else if (c->special && !strstr(msg, "pass "))
            snprintf(why, sizeof why, "%s (%s): message '%s' does not say what to pass instead",
                     c->path, c->name, msg);
        if (why[0]) {
            if (!failures) snprintf(first, sizeof first, "%s", why);
            fprintf(stderr, "test_corrupt: %s\n", why);
            failures++;
        }
    }
    ck_assert_msg(failures == 0, "%d of %d corrupt-corpus files misread; first: %s", failures,
                  n_cases, first);
}
END_TEST

// ---- running the programs ----

// Copies the file from to the new file to (0 on success, -1 if not).
static int copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[8192];
    size_t n;
    int ok = in != NULL && out != NULL;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    ok = ok && !ferror(in);
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok ? 0 : -1;
}

// Checks one failing run; returns 0 and describes the problem in why if it misbehaved.
static int check_failure(const run_result *r, const char *cmd, int want_exit, const char *name,
                         char *why, size_t len) {
    if (r->rc != want_exit)
        snprintf(why, len, "`%.300s` exited %d, expected %d (stderr: %s)", cmd, r->rc, want_exit,
                 r->err);
    else if (tt_count_lines(r->err) != 1)
        snprintf(why, len, "`%.300s` printed %d lines on stderr, expected exactly 1: %s", cmd,
                 tt_count_lines(r->err), r->err);
    else if (name && !strstr(r->err, name))
        snprintf(why, len, "`%.300s`: stderr '%s' does not name '%s'", cmd, r->err, name);
    else
        return 1;
    return 0;
}

// For a special path, the one line must also say what the path is (the manifest's word).
static void check_special_word(const run_result *r, const corrupt_case *c, const char *cmd,
                               char *why, size_t len) {
    if (!why[0] && c->special && !contains_nocase(r->err, c->word))
        snprintf(why, len, "`%.300s`: stderr '%s' does not say '%s'", cmd, r->err, c->word);
}

// A program must have been built if its source is in the tree (make test builds every one).
static int program_expected(const char *binary, const char *source) {
    if (!tt_exists(source)) return 0;
    ck_assert_msg(tt_exists(binary), "%s is not built (run `make test`, which builds it)", binary);
    return 1;
}

#define MODEL "data/models/stories260K.bin"
#define TOKENIZER "data/models/tok512.bin"

START_TEST(programs_reject_every_corrupt_file_with_one_line)
{
    load_manifest();
    ck_assert_msg(n_cases > 0, "cannot read " CORRUPT_DIR "/MANIFEST.tsv: run `make corpus`");
    int has_params = program_expected("./params", "tools/params.c");
    int has_generate = program_expected("./generate", "tools/generate.c");
    int has_npydiff = program_expected("./npydiff", "tools/npydiff.c");
    int has_train = program_expected("./train", "tools/train.c");
    int has_tokenize = program_expected("./tokenize", "tools/tokenize.c");
    if (has_generate)
        ck_assert_msg(tt_exists(MODEL) && tt_exists(TOKENIZER), "%s missing: run `make model`", MODEL);
    int checked = 0, failures = 0;
    char first[1400] = "";
    for (int i = 0; i < n_cases; i++) {
        const corrupt_case *c = &CASES[i];
        if (strcmp(c->status, "OK") == 0) continue;
        char cmd[1024] = "", why[1400] = "";
        if ((strcmp(c->reader, "hfjson") == 0 || strcmp(c->reader, "gpt2") == 0) && has_tokenize) {
            snprintf(cmd, sizeof cmd, "./tokenize -z %s --ids \"the in\"", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "json") == 0 && has_params) {
            snprintf(cmd, sizeof cmd, "./params %s", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "llama2c") == 0 && has_generate) {
            snprintf(cmd, sizeof cmd, "./generate %s -z " TOKENIZER " -n 4 -t 0", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "q8file") == 0 && has_generate &&
                   !strstr(c->path, "version0_file")) {
            // ./generate tells the versions apart by the magic: every hostile version-2 file (and
            // one whose magic is wrong, which it then reads as a bad version-0 file) must stop it
            // with one line naming the file. (version0_file.bin is a good version-0 checkpoint.)
            snprintf(cmd, sizeof cmd, "./generate %s -z " TOKENIZER " -n 4 -t 0", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "tokenizer") == 0 && has_generate && c->vocab == 512) {
            snprintf(cmd, sizeof cmd, "./generate " MODEL " -z %s -n 4 -t 0", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "twmodel") == 0 && has_generate &&
                   strstr(c->path, "llama2c_file") == NULL) {   // ./generate reads llama2.c files too
            snprintf(cmd, sizeof cmd, "./generate %s -z " TOKENIZER " -n 4 -t 0", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "twstate") == 0 && has_train) {
            snprintf(cmd, sizeof cmd, "./train --resume %s --tokens " CORRUPT_DIR "/tokens/valid_six.bin "
                     "--batch 2 --seq 2 --steps 9 --curve none", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "tokens") == 0 && has_train) {
            snprintf(cmd, sizeof cmd, "./train --tokens %s --vocab 4 --dim 2 --heads 1 --kv-heads 1 "
                     "--hidden 2 --seq 2 --steps 1 --curve none", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "pairs") == 0 && has_train) {   // the tiny llama: vocabulary 65, context 32
            snprintf(cmd, sizeof cmd, "./train --init data/golden/train/llama/init.bin --dpo %s --steps 1", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "lora") == 0 && has_generate) {
            snprintf(cmd, sizeof cmd, "./generate " MODEL " -z " TOKENIZER " -n 4 -t 0 --lora %s", c->path);
            run_result r = tt_run(cmd);
            check_failure(&r, cmd, 1, c->path, why, sizeof why);
            check_special_word(&r, c, cmd, why, sizeof why);
            tt_run_free(&r);
        } else if (strcmp(c->reader, "npy") == 0 && has_npydiff) {
            // npydiff reports an unreadable tensor as a FAIL row of its table (stdout) and one line
            // on stderr naming the file, and exits 1: it keeps going through the other tensors.
            // A special path is made as a/x.npy itself (copying a FIFO would block the test).
            char d[] = "/tmp/tw_corrupt_npy_XXXXXX", a[64], b[64], x[80], y[80];
            ck_assert_ptr_nonnull(mkdtemp(d));
            snprintf(a, sizeof a, "%s/a", d);
            snprintf(b, sizeof b, "%s/b", d);
            snprintf(x, sizeof x, "%s/x.npy", a);
            snprintf(y, sizeof y, "%s/x.npy", b);
            ck_assert(mkdir(a, 0777) == 0 && mkdir(b, 0777) == 0);
            int made;
            if (!c->special) made = copy_file(c->path, x);
            else if (strcmp(c->name, "@directory") == 0) made = mkdir(x, 0777);
            else if (strcmp(c->name, "@fifo") == 0) made = mkfifo(x, 0666);
            else made = symlink(c->path, x);
            ck_assert_msg(made == 0 && copy_file(CORRUPT_DIR "/npy/valid_f32.npy", y) == 0,
                          "cannot set up %s for %s", d, c->path);
            snprintf(cmd, sizeof cmd, "./npydiff %s %s", a, b);
            run_result r = tt_run(cmd);
            ck_assert_int_eq(tt_remove_tree(d), 0);
            if (r.rc != 1 || !strstr(r.out, "a/x.npy") || !strstr(r.out, "FAIL"))
                snprintf(why, sizeof why, "npydiff on %s: exit %d, stdout: %.600s", c->path,
                         r.rc, r.out);
            else if (c->special && !contains_nocase(r.err, c->word))
                snprintf(why, sizeof why, "npydiff on %s: stderr does not say '%s': %.600s",
                         c->name, c->word, r.err);
            else if (tt_count_lines(r.err) != 1 || !strstr(r.err, "a/x.npy"))
                snprintf(why, sizeof why, "npydiff on %s: stderr must be one line naming a/x.npy, "
                         "got: %.600s", c->path, r.err);
            tt_run_free(&r);
        } else {
            continue;
        }
        checked++;
        if (why[0]) {
            if (!failures) snprintf(first, sizeof first, "%s", why);
            fprintf(stderr, "test_corrupt: %s\n", why);
            failures++;
        }
    }
    ck_assert_msg(failures == 0, "%d of %d program runs on corrupt files misbehaved; first: %s",
                  failures, checked, first);
    if (has_params || has_generate) ck_assert_int_gt(checked, 50);
}
END_TEST

START_TEST(programs_accept_the_valid_controls)
{
    // The corrupt-file test above is only meaningful if the same programs succeed on good files.
    if (program_expected("./tokenize", "tools/tokenize.c")) {
        // the synthetic vocabularies: 256 bytes, merges "Ġ t", "h e", "Ġt he", "i n"; "<|end|>"
        // is an added token of the tokenizer.json, plain text for GPT-2's encoder
        run_result r = tt_run("./tokenize -z " CORRUPT_DIR "/hfjson/valid_qwen_style.json --ids \" the in<|end|>\"");
        ck_assert_msg(r.rc == 0 && strcmp(r.out, "258 32 259 260\n") == 0,
                      "./tokenize on valid_qwen_style.json: exit %d, stdout %s, stderr %s", r.rc, r.out, r.err);
        tt_run_free(&r);
        r = tt_run("./tokenize -z " CORRUPT_DIR "/gpt2/valid/encoder.json --ids \" the in\"");
        ck_assert_msg(r.rc == 0 && strcmp(r.out, "258 32 259\n") == 0,
                      "./tokenize on gpt2/valid/encoder.json: exit %d, stdout %s, stderr %s", r.rc, r.out, r.err);
        tt_run_free(&r);
        // --chat: <|im_start|>=261 "user" \n "the" <|im_end|>=262 \n <|im_start|> "assistant" \n,
        // the letters as their byte ids ("he" is merge 257); --decode gives the bytes back.
        r = tt_run("./tokenize -z " CORRUPT_DIR "/hfjson/valid_qwen_style.json --chat --ids the");
        ck_assert_msg(r.rc == 0 && strcmp(r.out, "261 117 115 101 114 10 116 257 262 10 261 97 115 115 105 115 116 97 110 116 10\n") == 0,
                      "./tokenize --chat: exit %d, stdout %s, stderr %s", r.rc, r.out, r.err);
        tt_run_free(&r);
        r = tt_run("./tokenize -z " CORRUPT_DIR "/hfjson/valid_qwen_style.json --decode 258 32 259 260");
        ck_assert_msg(r.rc == 0 && strcmp(r.out, " the in<|end|>") == 0,
                      "./tokenize --decode: exit %d, stdout %s, stderr %s", r.rc, r.out, r.err);
        tt_run_free(&r);
        r = tt_run("./tokenize -z " CORRUPT_DIR "/gpt2/valid/encoder.json --chat the");   // no template
        ck_assert_msg(r.rc == 2 && tt_count_lines(r.err) == 1, "./tokenize --chat on GPT-2: exit %d, stderr %s", r.rc, r.err);
        tt_run_free(&r);
        r = tt_run("./tokenize -z " CORRUPT_DIR "/gpt2/valid/encoder.json --decode 258 99999");   // not an id
        ck_assert_msg(r.rc == 2 && tt_count_lines(r.err) == 1 && strstr(r.err, "99999"),
                      "./tokenize --decode 99999: exit %d, stderr %s", r.rc, r.err);
        tt_run_free(&r);
    }
    if (program_expected("./params", "tools/params.c")) {
        run_result r = tt_run("./params " CORRUPT_DIR "/json/valid_llama.json");
        ck_assert_msg(r.rc == 0 && strstr(r.out, "total "),
                      "./params valid_llama.json: exit %d, stderr %s", r.rc, r.err);
        tt_run_free(&r);
    }
    if (program_expected("./generate", "tools/generate.c")) {
        run_result r = tt_run("./generate " MODEL " -z " CORRUPT_DIR "/tokenizer/valid_synthetic_vocab512.bin -n 8 -t 0 -i \"Once upon a time\"");
        ck_assert_msg(r.rc == 0, "./generate with the synthetic valid tokenizer: exit %d, stderr %s",
                      r.rc, r.err);
        tt_run_free(&r);
        r = tt_run("./generate " MODEL " -z " TOKENIZER " -n 8 -t 0 --lora " CORRUPT_DIR "/lora/valid_r2_wq_wv_w3.lora");
        ck_assert_msg(r.rc == 0, "./generate --lora valid_r2_wq_wv_w3.lora: exit %d, stderr %s", r.rc, r.err);
        tt_run_free(&r);
    }
    if (program_expected("./npydiff", "tools/npydiff.c")) {
        run_result r = tt_run("./npydiff " CORRUPT_DIR "/npy " CORRUPT_DIR "/npy");
        ck_assert_msg(r.rc == 1 && strstr(r.out, "valid_f32") &&
                      strstr(r.out, "PASS"),
                      "./npydiff on the corpus folder: exit %d (its corrupt files must FAIL, valid PASS)",
                      r.rc);
        tt_run_free(&r);
    }
}
END_TEST

START_TEST(generate_check_finite_names_the_tensor_that_overflows)
{
    // huge_weights_overflow.bin holds only finite weights (the loader accepts it), but 3.4e38 in
    // layer 0's Wq overflows q to inf. Without the check mode ./generate prints tokens from
    // non-finite logits and exits 0; with --check-finite (or TW_CHECK_FINITE=1) it must stop
    // with exit 1 and name the first non-finite tensor.
    if (!program_expected("./generate", "tools/generate.c")) return;
    const char *base = "./generate " CORRUPT_DIR "/llama2c/huge_weights_overflow.bin -z "
                       CORRUPT_DIR "/tokenizer/valid_tok16.bin -n 6 -t 0 -i abc";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s", base);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "`%s` exited %d: %s", cmd, r.rc, r.err);
    tt_run_free(&r);
    const char *variants[2] = { "%s --check-finite", "TW_CHECK_FINITE=1 %s" };
    for (int v = 0; v < 2; v++) {
        snprintf(cmd, sizeof cmd, variants[v], base);
        r = tt_run(cmd);
        ck_assert_msg(r.rc == 1, "`%s` exited %d, expected 1", cmd, r.rc);
        // nan, as the naive reference computes it (an in-order float sum meets +inf and -inf);
        // the packed AVX-512 matmul used to say +inf here, and since issue 16 a non-finite
        // output of it is redone in the reference's order, so every level names the same value.
        ck_assert_msg(strstr(r.err, "generate: --check-finite: positions 0..4: L0.q[0] is nan"),
                      "`%s`: stderr does not name L0.q: %s", cmd, r.err);
        tt_run_free(&r);
    }
}
END_TEST

// Bad flags: command, expected exit code, what stderr must name. "P" stands for the program's
// valid input and "LONG" for a 68 KB prompt (one word: 4000 times "Once upon a time "), both
// filled in below.
typedef struct {
    const char *program, *source, *args;
    int         exit_code;
    const char *names;
} flag_case;

static const flag_case FLAG_CASES[] = {
    { "./params", "tools/params.c", "--bogus P", 2, "--bogus" },
    { "./params", "tools/params.c", "P --context", 2, "--context" },
    { "./params", "tools/params.c", "--context abc P", 2, "--context" },
    { "./params", "tools/params.c", "--context 0 P", 2, "--context" },
    { "./params", "tools/params.c", "--context -5 P", 2, "--context" },
    { "./params", "tools/params.c", "--context 99999999999999999999999 P", 2, "--context" },
    { "./params", "tools/params.c", "", 2, "CONFIG" },
    { "./params", "tools/params.c", "P P", 2, "CONFIG" },
    { "./params", "tools/params.c", "data/corrupt/no_such_file.json", 1, "no_such_file.json" },
    { "./params", "tools/params.c", "data/corrupt", 1, "data/corrupt" },
    { "./generate", "tools/generate.c", "", 2, "model" },
    { "./generate", "tools/generate.c", "P --bogus", 2, "--bogus" },
    { "./generate", "tools/generate.c", "P -t abc", 2, "-t" },
    { "./generate", "tools/generate.c", "P -t nan", 2, "-t" },
    { "./generate", "tools/generate.c", "P -p 0.5x", 2, "-p" },
    { "./generate", "tools/generate.c", "P -s 1.5", 2, "-s" },
    { "./generate", "tools/generate.c", "P -s 99999999999999999999999", 2, "-s" },
    { "./generate", "tools/generate.c", "P -n -1", 2, "-n" },
    { "./generate", "tools/generate.c", "P -n ''", 2, "-n" },
    { "./generate", "tools/generate.c", "P -z", 2, "-z" },
    { "./generate", "tools/generate.c", "P -m chat", 2, "-m" },
    { "./generate", "tools/generate.c", "P P", 2, "unexpected" },
    // A 68 KB prompt: refused at once (encoding it first took minutes).
    { "./generate", "tools/generate.c",
      "P -n 4 -i LONG", 1, "-i" },
    { "./generate", "tools/generate.c", "data/corrupt/no_such_model.bin", 1, "no_such_model.bin" },
    { "./generate", "tools/generate.c", "P -z data/corrupt/no_such_tok.bin", 1, "no_such_tok.bin" },
    { "./generate", "tools/generate.c", "data/corrupt -z " TOKENIZER, 1, "data/corrupt" },
    { "./npydiff", "tools/npydiff.c", "", 2, "two folders" },
    { "./npydiff", "tools/npydiff.c", "P", 2, "two folders" },
    { "./npydiff", "tools/npydiff.c", "P P P", 2, "unexpected" },
    { "./npydiff", "tools/npydiff.c", "P P --atol", 2, "--atol" },
    { "./npydiff", "tools/npydiff.c", "P P --rtol -1", 2, "--rtol" },
    { "./npydiff", "tools/npydiff.c", "P P --atol nan", 2, "--atol" },
    { "./npydiff", "tools/npydiff.c", "P P --bogus", 2, "--bogus" },
    { "./npydiff", "tools/npydiff.c", "P data/corrupt/no_such_dir", 1, "no_such_dir" },
};
#define N_FLAG_CASES ((int)(sizeof FLAG_CASES / sizeof FLAG_CASES[0]))

static const char *valid_input(const char *program) {
    if (strcmp(program, "./params") == 0) return CORRUPT_DIR "/json/valid_llama.json";
    if (strcmp(program, "./generate") == 0) return MODEL " -z " TOKENIZER;
    return CORRUPT_DIR "/npy";
}

// Replaces each standalone "P" in args with the program's valid input, and "LONG" with the long
// prompt in single quotes (one word for tt_run's splitter).
static void expand_args(char *out, size_t len, const char *program, const char *args) {
    size_t k = 0;
    out[0] = '\0';
    for (const char *p = args; *p && k + 1 < len; p++) {
        if (*p == 'P' && (p == args || p[-1] == ' ') && (p[1] == ' ' || p[1] == '\0'))
            k += (size_t)snprintf(out + k, len - k, "%s", valid_input(program));
        else if (strncmp(p, "LONG", 4) == 0 && (p == args || p[-1] == ' ') && (p[4] == ' ' || p[4] == '\0')) {
            k += (size_t)snprintf(out + k, len - k, "'");
            for (int i = 0; i < 4000 && k < len; i++)
                k += (size_t)snprintf(out + k, len - k, "Once upon a time ");
            if (k < len) k += (size_t)snprintf(out + k, len - k, "'");
            p += 3;
        } else
            out[k++] = *p;
        if (k >= len) k = len - 1;
        out[k] = '\0';
    }
}

START_TEST(programs_reject_bad_flags_with_one_line_naming_the_flag)
{
    const flag_case *fc = &FLAG_CASES[_i];
    if (!program_expected(fc->program, fc->source)) return;   // the program is not in this tree
    static char args[72000], cmd[72200];   // LONG is 68,002 bytes
    char why[1400];
    expand_args(args, sizeof args, fc->program, fc->args);
    snprintf(cmd, sizeof cmd, "%s %s", fc->program, args);
    run_result r = tt_run(cmd);
    int ok = check_failure(&r, cmd, fc->exit_code, fc->names, why, sizeof why);
    tt_run_free(&r);
    ck_assert_msg(ok, "%s", why);
}
END_TEST

// Every lesson (lessons/NN_topic.c -> ./lessonN) with bad common options.
static const struct { const char *args; int exit_code; const char *names; } LESSON_FLAGS[] = {
    { "--seed abc", 2, "--seed" },
    { "--seed -1", 2, "--seed" },
    { "--seed 99999999999999999999", 2, "--seed" },
    { "--seed", 2, "--seed" },
    { "--out ''", 2, "--out" },
    { "--bogus", 2, "--bogus" },
    { "--out /dev/null/x --no-plot", 1, "/dev/null" },
};
#define N_LESSON_FLAGS ((int)(sizeof LESSON_FLAGS / sizeof LESSON_FLAGS[0]))

START_TEST(lessons_reject_bad_options_with_one_line)
{
    DIR *d = opendir("lessons");
    ck_assert_msg(d != NULL, "no lessons/ folder: run from the top of the checkout");
    struct dirent *e;
    int n = 0, failures = 0;
    char first[1400] = "";
    while ((e = readdir(d))) {
        const char *nm = e->d_name;
        size_t len = strlen(nm);
        if (len < 6 || !isdigit((unsigned char)nm[0]) || !isdigit((unsigned char)nm[1]) ||
            nm[2] != '_' || strcmp(nm + len - 2, ".c") != 0)
            continue;
        char bin[32], cmd[256], why[1400] = "";
        snprintf(bin, sizeof bin, "./lesson%d", (nm[0] - '0') * 10 + (nm[1] - '0'));
        ck_assert_msg(tt_exists(bin), "%s is not built (make test builds every lesson)", bin);
        for (int k = 0; k < N_LESSON_FLAGS; k++) {
            snprintf(cmd, sizeof cmd, "%s %s", bin, LESSON_FLAGS[k].args);
            run_result r = tt_run(cmd);
            why[0] = '\0';
            check_failure(&r, cmd, LESSON_FLAGS[k].exit_code, LESSON_FLAGS[k].names, why, sizeof why);
            tt_run_free(&r);
            if (why[0]) {
                if (!failures) snprintf(first, sizeof first, "%s", why);
                fprintf(stderr, "test_corrupt: %s\n", why);
                failures++;
            }
        }
        n++;
    }
    closedir(d);
    ck_assert_msg(n > 0, "no lessons/NN_*.c found");
    ck_assert_msg(failures == 0, "%d lesson runs with bad options misbehaved; first: %s", failures, first);
}
END_TEST

Suite *suite_corrupt(void) {
    Suite *s = suite_create("corrupt");
    TCase *tc = tcase_create("readers");
    tcase_add_test(tc, manifest_lists_a_control_and_corrupt_files_for_every_reader);
    tcase_add_test(tc, every_reader_answers_every_corrupt_file_as_documented);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("programs");
    tcase_set_timeout(tp, 120);   // ~260 short program runs; far longer under valgrind/ASan
    tcase_add_test(tp, programs_reject_every_corrupt_file_with_one_line);
    tcase_add_test(tp, programs_accept_the_valid_controls);
    tcase_add_test(tp, generate_check_finite_names_the_tensor_that_overflows);
    tcase_add_loop_test(tp, programs_reject_bad_flags_with_one_line_naming_the_flag, 0, N_FLAG_CASES);
    tcase_add_test(tp, lessons_reject_bad_options_with_one_line);
    suite_add_tcase(s, tp);
    return s;
}
