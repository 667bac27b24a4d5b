// test_lessons.c: smoke tests of the numbered lessons. For every lessons/NN_topic.c it runs the
// built ./lessonN (make test builds them first) and checks that
//   - it exits 0 and writes every file its header promises ("// Writes:" lines; "// Pictures:"
//     PNGs too when gnuplot is installed) into the folder given with --out, and nothing else;
//   - a second run writes byte-identical .npy files (lessons are deterministic; a lesson that
//     writes no .npy is not run twice, since the comparison would have nothing to compare);
//   - --help exits 0 and prints a usage line; an unknown flag exits 2 with one line on stderr.
// A lesson that costs seconds of CPU says "// Extra runs: ci" in its header: make test then runs
// it once (every self-check, every promised file), and its determinism and --seed runs are left
// to make test-lessons-full (TW_LESSON_EXTRA_RUNS=all), which CI's extras run; this keeps make
// test within its 30 s on 2 cores.
// Files a lesson "// Needs:" (lesson 11's model) must exist; `make model` makes them.
// The lessons' numbers come from lib/ functions that have their own PyTorch-checked tests; what
// this file checks is that the programs run, keep their promises and fail cleanly on bad flags.
// Uses POSIX opendir, mkdtemp, stat, chmod, fork and execvp (through tests/testrun.h: no shell),
// available on Linux and macOS.
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"

#define MAX_LESSONS 40
#define MAX_FILES   128

typedef struct {
    int  number;
    char source[256];
    int  n_writes, n_pictures, n_needs;
    int  extra_runs_in_ci;   // "// Extra runs: ci": determinism and --seed runs only when asked for
    char writes[MAX_FILES][96], pictures[MAX_FILES][96], needs[8][256];
} lesson_spec;

static lesson_spec LESSONS[MAX_LESSONS];
static int n_lessons;

// Appends the space-separated words after "tag" on this line to list.
static void take_words(const char *after, char *list, int *n, int max, size_t width) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", after);
    for (char *w = strtok(buf, " \t\r\n"); w && *n < max; w = strtok(NULL, " \t\r\n")) {
        snprintf(list + (size_t)(*n) * width, width, "%s", w);
        (*n)++;
    }
}

static void read_spec(lesson_spec *s) {
    FILE *f = fopen(s->source, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *p;
        if ((p = strstr(line, "// Writes:")))
            take_words(p + 10, s->writes[0], &s->n_writes, MAX_FILES, sizeof s->writes[0]);
        else if ((p = strstr(line, "// Pictures:")))
            take_words(p + 12, s->pictures[0], &s->n_pictures, MAX_FILES, sizeof s->pictures[0]);
        else if ((p = strstr(line, "// Needs:")))
            take_words(p + 9, s->needs[0], &s->n_needs, 8, sizeof s->needs[0]);
        else if (strstr(line, "// Extra runs: ci"))
            s->extra_runs_in_ci = 1;
    }
    fclose(f);
}

static int by_number(const void *a, const void *b) {
    return ((const lesson_spec *)a)->number - ((const lesson_spec *)b)->number;
}

// Finds lessons/NN_*.c (run from the top of the checkout, as make test does).
static void scan_lessons(void) {
    DIR *d = opendir("lessons");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && n_lessons < MAX_LESSONS) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        if (len < 6 || n[0] < '0' || n[0] > '9' || n[1] < '0' || n[1] > '9' || n[2] != '_' ||
            strcmp(n + len - 2, ".c") != 0)
            continue;
        lesson_spec *s = &LESSONS[n_lessons];
        memset(s, 0, sizeof *s);
        s->number = (n[0] - '0') * 10 + (n[1] - '0');
        int w = snprintf(s->source, sizeof s->source, "lessons/%s", n);
        if (w < 0 || (size_t)w >= sizeof s->source) continue;   // no lesson has such a name
        n_lessons++;
        read_spec(s);
    }
    closedir(d);
    qsort(LESSONS, (size_t)n_lessons, sizeof LESSONS[0], by_number);
}

// ---- helpers ----

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

// The whole file in a malloc'd buffer (NUL-terminated), or NULL.
static char *slurp(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    if (b) b[n] = '\0';
    if (len) *len = n;
    return b;
}

static int have_gnuplot(void) {
    return tw_gnuplot_available();   // looks on PATH without a shell
}

static void require_binary(const lesson_spec *s, char *bin, size_t len) {
    snprintf(bin, len, "./lesson%d", s->number);
    ck_assert_msg(file_size(bin) > 0, "%s is missing: run `make lessons` (it is built from %s)",
                  bin, s->source);
}

static int declared(const lesson_spec *s, const char *name) {
    for (int i = 0; i < s->n_writes; i++) if (strcmp(s->writes[i], name) == 0) return 1;
    for (int i = 0; i < s->n_pictures; i++) if (strcmp(s->pictures[i], name) == 0) return 1;
    return 0;
}

// Whether the lesson's "// Writes:" list names a .npy file (what the determinism check compares).
// Whether lesson s's determinism and --seed runs happen in this run of the suite: always, unless its
// header defers them to CI ("// Extra runs: ci") and TW_LESSON_EXTRA_RUNS is not "all".
static int extra_runs_here(const lesson_spec *s) {
    const char *e = getenv("TW_LESSON_EXTRA_RUNS");
    return !s->extra_runs_in_ci || (e && strcmp(e, "all") == 0);
}

static int writes_npy(const lesson_spec *s) {
    for (int i = 0; i < s->n_writes; i++) {
        size_t L = strlen(s->writes[i]);
        if (L >= 4 && strcmp(s->writes[i] + L - 4, ".npy") == 0) return 1;
    }
    return 0;
}

// 1 if the lesson's --help offers --seed, 0 if not, -1 if that could not be found out.
static int help_offers_seed(const char *bin) {
    char tmpl[] = "/tmp/tw-lesson-XXXXXX", path[256];
    char *dir = mkdtemp(tmpl);
    if (!dir) return -1;
    snprintf(path, sizeof path, "%s/help.txt", dir);
    char *argv[] = { (char *)bin, "--help", NULL };
    tt_call(argv, NULL, path, path);
    char *text = slurp(path, NULL);
    int offers = text && strstr(text, "--seed") != NULL;
    free(text);
    tt_remove_tree(dir);
    return offers;
}

static int offers_seed(const char *bin) {
    int offers = help_offers_seed(bin);
    ck_assert_msg(offers >= 0, "cannot make a temporary folder in /tmp");
    return offers;
}

// Every lesson's runs start together, in the background, before the first test, and are kept in
// RUNS/lessonN until the suite ends; each test then waits for its own lesson's. A lesson's runs
// are independent, and the slowest (lesson 14 trains for seconds) would otherwise start only when
// the lessons before it were done and leave a core idle at the end. RUNS is made, and the runs
// started, once in the runner's own process (an unchecked fixture), before the tests fork: one
// child of the runner starts them all (fork + execvp, no shell) and waits for them, and the
// fixture's teardown waits for that child, so the runs' CPU time counts as the runner's (time
// make test sees it).
// Up to three runs of lesson N, each writing its exit status to RUNS/lessonN/NAME.rc when it ends
// (written under another name and renamed, so a test never reads half of it):
//   run1  with pictures, and a fake `make` first on its PATH, which only records in make_called
//         that it was called: a lesson, or a gnuplot script it draws, must never start a build
//         or a benchmark (a backquoted `make bench` in viz/bench_gflops.gp once made lesson 12
//         take 55 s);
//   run2  the same without pictures, for determinism: only if the lesson writes a .npy, which is
//         what that check compares;
//   seed  --seed 987, if --help offers --seed (compared with run1 by
//         lesson_seed_changes_the_output_or_is_not_offered).
static char RUNS[64];
enum { STARTED_RUN1 = 1, STARTED_RUN2 = 2, STARTED_SEED = 4 };
static int STARTED[MAX_LESSONS];   // which runs start_runs started, per lesson (LESSONS order)
static pid_t RUNS_PARENT = -1;     // the child that started them all and waits for them

// One run the fixture starts: lesson bin, writing into DIR/NAME, its status to DIR/NAME.rc.
typedef struct { char bin[64], dir[128]; const char *name; } lesson_run;
static lesson_run RUN_LIST[MAX_LESSONS * 3];
static int n_runs;

// Prepares lesson s's folder (its fakebin/make) and adds its runs to RUN_LIST; returns which runs
// they are (STARTED_*), 0 if none.
static int start_runs(const lesson_spec *s) {
    char bin[64], dir[128], path[256];
    snprintf(bin, sizeof bin, "./lesson%d", s->number);
    if (file_size(bin) <= 0) return 0;   // the test says it is missing
    snprintf(dir, sizeof dir, "%s/lesson%d", RUNS, s->number);
    snprintf(path, sizeof path, "%s/fakebin", dir);
    if (tt_mkdir_p(path) != 0) return 0;   // the test then finds no run1.rc and says so
    // The fake make is a script run by execvp (its #! line), never by sh -c.
    snprintf(path, sizeof path, "%s/fakebin/make", dir);
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fprintf(f, "#!/bin/sh\necho \"make $*\" >> '%s/make_called'\n", dir);
    if (fclose(f) != 0 || chmod(path, 0755) != 0) return 0;
    int started = STARTED_RUN1;
    const char *names[3] = { "run1", "run2", "seed" };
    if (writes_npy(s) && extra_runs_here(s)) started |= STARTED_RUN2;
    if (help_offers_seed(bin) == 1 && extra_runs_here(s)) started |= STARTED_SEED;
    for (int k = 0; k < 3; k++) {
        if (!(started & (1 << k))) continue;
        lesson_run *r = &RUN_LIST[n_runs++];
        snprintf(r->bin, sizeof r->bin, "%s", bin);
        snprintf(r->dir, sizeof r->dir, "%s", dir);
        r->name = names[k];
    }
    return started;
}

// Writes DIR/NAME.rc ("%d\n") under another name first, then renames it.
static void record_status(const lesson_run *r, int rc) {
    char tmp[256], path[256];
    snprintf(tmp, sizeof tmp, "%s/%s.rc.tmp", r->dir, r->name);
    snprintf(path, sizeof path, "%s/%s.rc", r->dir, r->name);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "%d\n", rc);
    if (fclose(f) == 0) rename(tmp, path);
}

// In the child the fixture forks: starts every run of RUN_LIST, records each one's status as it
// ends (128 + the signal's number for a run a signal ended, as a shell's $? would say), then exits.
static void start_and_wait_all(void) {
    static pid_t pids[MAX_LESSONS * 3];
    int left = 0;
    for (int i = 0; i < n_runs; i++) {
        const lesson_run *r = &RUN_LIST[i];
        char out[256], so[256], se[256], path_env[8192];
        snprintf(out, sizeof out, "%s/%s", r->dir, r->name);
        char *plain[] = { (char *)r->bin, "--no-plot", "--out", out, NULL };
        char *seed[] = { (char *)r->bin, "--no-plot", "--seed", "987", "--out", out, NULL };
        char *run1[] = { (char *)r->bin, "--out", out, NULL };
        if (strcmp(r->name, "run1") == 0) {
            snprintf(so, sizeof so, "%s/stdout1.txt", r->dir);
            snprintf(se, sizeof se, "%s/stderr1.txt", r->dir);
            const char *old = getenv("PATH");
            snprintf(path_env, sizeof path_env, "PATH=%s/fakebin:%s", r->dir, old ? old : "/usr/bin:/bin");
            char *env[] = { path_env, NULL };
            pids[i] = tt_spawn(run1, env, so, se);
        } else {
            pids[i] = tt_spawn(strcmp(r->name, "seed") == 0 ? seed : plain, NULL, NULL, NULL);
        }
        if (pids[i] < 0) record_status(r, 127);
        else left++;
    }
    while (left > 0) {
        int st;
        pid_t p = wait(&st);
        if (p < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < n_runs; i++)
            if (pids[i] == p) {
                record_status(&RUN_LIST[i], WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
                left--;
            }
    }
    _exit(0);
}

static void make_runs_folder(void) {
    snprintf(RUNS, sizeof RUNS, "%s", "/tmp/tw-lessons-XXXXXX");
    if (!mkdtemp(RUNS)) { RUNS[0] = '\0'; return; }   // each test then says it cannot write there
    n_runs = 0;
    for (int i = 0; i < n_lessons; i++) STARTED[i] = start_runs(&LESSONS[i]);
    fflush(stdout);
    fflush(stderr);
    RUNS_PARENT = fork();
    if (RUNS_PARENT == 0) start_and_wait_all();
    if (RUNS_PARENT < 0) memset(STARTED, 0, sizeof STARTED);
}

// The exit status a run recorded in DIR/NAME.rc ("%d\n"), or -1 if there is none.
static int recorded_status(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.rc", dir, name);
    char *text = slurp(path, NULL);
    int rc = text && text[0] >= '0' && text[0] <= '9' ? atoi(text) : -1;
    free(text);
    return rc;
}

// Waits for DIR/NAME.rc, checking every 50 ms for up to `seconds`; returns the run's exit status,
// or -1 if it has not ended by then (or was never started).
#define RUN_WAIT_SECONDS 380   // below the test case's timeout, so a hung run fails with a message
static int wait_for_run(const char *dir, const char *name, int seconds) {
    const struct timespec nap = { 0, 50 * 1000 * 1000 };
    for (int i = 0; i < seconds * 20; i++) {
        int rc = recorded_status(dir, name);
        if (rc >= 0) return rc;
        nanosleep(&nap, NULL);
    }
    return recorded_status(dir, name);
}

// After the last test: the runs folder goes, once the child that started the runs has ended. Each
// test has waited for its own lesson's runs, so it ends at once unless a run hung (its test then
// failed); after 5 s that child is stopped, and a hung lesson is left to the user, as before.
static void remove_runs_folder(void) {
    if (!RUNS[0]) return;
    if (RUNS_PARENT > 0) {
        const struct timespec nap = { 0, 50 * 1000 * 1000 };
        int ended = 0;
        for (int i = 0; i < 100 && !ended; i++)
            if (!(ended = waitpid(RUNS_PARENT, NULL, WNOHANG) != 0)) nanosleep(&nap, NULL);
        if (!ended) {
            fprintf(stderr, "test_lessons: a lesson run had not ended; leaving it running\n");
            kill(RUNS_PARENT, SIGKILL);
            waitpid(RUNS_PARENT, NULL, 0);
        }
    }
    if (tt_remove_tree(RUNS) != 0) fprintf(stderr, "test_lessons: could not remove %s\n", RUNS);
}

// ---- tests ----

START_TEST(lesson_runs_and_writes_the_files_it_promises)
{
    const lesson_spec *s = &LESSONS[_i];
    char bin[64], dir[128], path[1024];
    require_binary(s, bin, sizeof bin);
    ck_assert_msg(s->n_writes > 0, "%s has no \"// Writes:\" line naming the files it writes",
                  s->source);
    for (int i = 0; i < s->n_needs; i++)
        ck_assert_msg(file_size(s->needs[i]) > 0, "%s needs %s: run `make model` first",
                      bin, s->needs[i]);

    snprintf(dir, sizeof dir, "%s/lesson%d", RUNS, s->number);
    ck_assert_msg(RUNS[0], "cannot make a temporary folder in /tmp for the lessons' runs");
    // The runs were started by the fixture (start_runs, above), all lessons at once.
    int rc = wait_for_run(dir, "run1", RUN_WAIT_SECONDS);
    ck_assert_msg(rc >= 0, "%s did not finish within %d s (or could not be started in %s)", bin,
                  RUN_WAIT_SECONDS, dir);
    snprintf(path, sizeof path, "%s/make_called", dir);
    char *made = slurp(path, NULL);
    if (made && strchr(made, '\n')) *strchr(made, '\n') = '\0';
    ck_assert_msg(made == NULL, "%s (or a gnuplot script it draws) ran `%s`: a lesson must never "
                  "start a build or a benchmark", bin, made ? made : "");
    snprintf(path, sizeof path, "%s/stderr1.txt", dir);
    char *err = slurp(path, NULL);
    ck_assert_msg(rc == 0, "%s exited with %d; its stderr: %s", bin, rc, err ? err : "(none)");
    free(err);

    for (int i = 0; i < s->n_writes; i++) {
        snprintf(path, sizeof path, "%s/run1/%s", dir, s->writes[i]);
        ck_assert_msg(file_size(path) > 0, "%s promised %s but did not write it (or it is empty)",
                      bin, s->writes[i]);
    }
    if (have_gnuplot()) {
        for (int i = 0; i < s->n_pictures; i++) {
            snprintf(path, sizeof path, "%s/run1/%s", dir, s->pictures[i]);
            ck_assert_msg(file_size(path) > 0, "%s promised the picture %s but did not draw it "
                          "(gnuplot is installed)", bin, s->pictures[i]);
        }
    }
    // Nothing undeclared: the header comment is the list of what the lesson writes.
    snprintf(path, sizeof path, "%s/run1", dir);
    DIR *d = opendir(path);
    ck_assert_msg(d != NULL, "cannot list %s", path);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        ck_assert_msg(declared(s, e->d_name), "%s wrote %s, which its \"// Writes:\" or "
                      "\"// Pictures:\" lines do not list", bin, e->d_name);
    }
    closedir(d);

    // Deterministic: the second run (without pictures) gives the same bytes in every .npy.
    if (!writes_npy(s) || !extra_runs_here(s)) return;   // deferred: make test-lessons-full
    ck_assert_msg(wait_for_run(dir, "run2", RUN_WAIT_SECONDS) == 0, "%s failed on its second run", bin);
    for (int i = 0; i < s->n_writes; i++) {
        size_t L = strlen(s->writes[i]);
        if (L < 4 || strcmp(s->writes[i] + L - 4, ".npy") != 0) continue;
        char p1[1024], p2[1024];
        long n1 = 0, n2 = 0;
        snprintf(p1, sizeof p1, "%s/run1/%s", dir, s->writes[i]);
        snprintf(p2, sizeof p2, "%s/run2/%s", dir, s->writes[i]);
        char *a = slurp(p1, &n1), *b = slurp(p2, &n2);
        int same = a && b && n1 == n2 && memcmp(a, b, (size_t)n1) == 0;
        free(a);
        free(b);
        ck_assert_msg(same, "%s wrote a different %s on its second run: lessons must be "
                      "deterministic", bin, s->writes[i]);
    }
}
END_TEST

START_TEST(lesson_help_exits_0_and_describes_the_lesson)
{
    const lesson_spec *s = &LESSONS[_i];
    char bin[64], tmpl[] = "/tmp/tw-lesson-XXXXXX", path[1024];
    require_binary(s, bin, sizeof bin);
    char *dir = mkdtemp(tmpl);
    ck_assert_msg(dir != NULL, "cannot make a temporary folder in /tmp");
    snprintf(path, sizeof path, "%s/help.txt", dir);
    char *argv[] = { bin, "--help", NULL };
    int rc = tt_call(argv, NULL, path, path);
    char *text = slurp(path, NULL);
    tt_remove_tree(dir);
    ck_assert_msg(rc == 0, "%s --help exited with %d", bin, rc);
    ck_assert_msg(text && strstr(text, "Usage:") && strlen(text) > 200,
                  "%s --help printed no usage or no description: %s", bin, text ? text : "");
    free(text);
}
END_TEST

START_TEST(lesson_rejects_an_unknown_flag_with_exit_2_and_one_line)
{
    const lesson_spec *s = &LESSONS[_i];
    char bin[64], tmpl[] = "/tmp/tw-lesson-XXXXXX", out[1024], path[1024];
    require_binary(s, bin, sizeof bin);
    char *dir = mkdtemp(tmpl);
    ck_assert_msg(dir != NULL, "cannot make a temporary folder in /tmp");
    snprintf(path, sizeof path, "%s/err.txt", dir);
    snprintf(out, sizeof out, "%s/o", dir);
    char *argv[] = { bin, "--out", out, "--no-such-flag", NULL };
    int rc = tt_call(argv, NULL, NULL, path);
    char *text = slurp(path, NULL);
    long made = file_size(out);
    tt_remove_tree(dir);
    ck_assert_msg(rc == 2, "%s --no-such-flag exited with %d, want 2", bin, rc);
    ck_assert_msg(text && strstr(text, "--no-such-flag") && strchr(text, '\n') &&
                  strchr(text, '\n')[1] == '\0',
                  "%s --no-such-flag should print one line naming the flag, printed: %s",
                  bin, text ? text : "");
    ck_assert_msg(made < 0, "%s created its output folder before rejecting a bad flag", bin);
    free(text);
}
END_TEST

START_TEST(lesson_rejects_a_bad_seed_value_with_exit_2)
{
    const lesson_spec *s = &LESSONS[_i];
    char bin[64];
    require_binary(s, bin, sizeof bin);
    char *argv[] = { bin, "--seed", "banana", NULL };
    int rc = tt_call(argv, NULL, NULL, NULL);
    ck_assert_msg(rc == 2, "%s --seed banana exited with %d, want 2", bin, rc);
}
END_TEST

// A --seed that --help offers must change what the lesson computes: some file it writes differs
// from the default run's. A lesson with no random inputs must not offer it, and rejects it.
// The two runs compared are run1 (the default seed) and seed (--seed 987), which the fixture
// started; the files compared are the "// Writes:" ones, which do not depend on the pictures.
START_TEST(lesson_seed_changes_the_output_or_is_not_offered)
{
    const lesson_spec *s = &LESSONS[_i];
    char bin[64], dir[128];
    require_binary(s, bin, sizeof bin);
    if (!offers_seed(bin)) {
        char out[64];
        snprintf(out, sizeof out, "/tmp/tw-no-such-dir-%d", s->number);
        char *argv[] = { bin, "--seed", "5", "--no-plot", "--out", out, NULL };
        ck_assert_msg(tt_call(argv, NULL, NULL, NULL) == 2, "%s does not offer --seed in --help but accepts it", bin);
        return;
    }
    if (!extra_runs_here(s)) return;   // it offers --seed; the run with it: make test-lessons-full
    snprintf(dir, sizeof dir, "%s/lesson%d", RUNS, s->number);
    ck_assert_msg(STARTED[_i] & STARTED_SEED, "the --seed 987 run of %s was not started in %s", bin,
                  RUNS[0] ? RUNS : "/tmp");
    int rc1 = wait_for_run(dir, "run1", RUN_WAIT_SECONDS), rc2 = wait_for_run(dir, "seed", RUN_WAIT_SECONDS);
    ck_assert_msg(rc1 == 0 && rc2 == 0, "%s failed (or did not finish within %d s) with its default "
                  "seed (%d) or with --seed 987 (%d)", bin, RUN_WAIT_SECONDS, rc1, rc2);
    int differs = 0;
    for (int i = 0; i < s->n_writes && !differs; i++) {
        char p1[1024], p2[1024];
        long n1 = 0, n2 = 0;
        snprintf(p1, sizeof p1, "%s/run1/%s", dir, s->writes[i]);
        snprintf(p2, sizeof p2, "%s/seed/%s", dir, s->writes[i]);
        char *a = slurp(p1, &n1), *b = slurp(p2, &n2);
        differs = a && b && (n1 != n2 || memcmp(a, b, (size_t)n1) != 0);
        free(a);
        free(b);
    }
    ck_assert_msg(differs, "%s offers --seed, but --seed 987 writes the same files as the default "
                  "seed: the option does nothing", bin);
}
END_TEST

// gnuplot runs a backquoted command while it reads a line, even inside a string in a branch it
// never takes; system() runs one when evaluated. No viz script may contain a backquote outside a
// comment line, nor a system() call that mentions make or a benchmark.
START_TEST(viz_scripts_never_start_a_build)
{
    DIR *d = opendir("viz");
    ck_assert_msg(d != NULL, "viz/ not found: run the tests from the top of the checkout");
    struct dirent *e;
    int scripts = 0;
    while ((e = readdir(d))) {
        size_t L = strlen(e->d_name);
        if (L < 4 || strcmp(e->d_name + L - 3, ".gp") != 0) continue;
        char path[512], line[1024];
        snprintf(path, sizeof path, "viz/%s", e->d_name);
        FILE *f = fopen(path, "r");
        ck_assert_msg(f != NULL, "cannot read %s", path);
        scripts++;
        for (int ln = 1; fgets(line, sizeof line, f); ln++) {
            const char *p = line;
            while (*p == ' ' || *p == '\t') p++;
            if (*p == '#') continue;
            ck_assert_msg(strchr(p, '`') == NULL, "%s:%d has a backquote, which gnuplot runs as "
                          "a shell command when it reads the line: %s", path, ln, line);
            const char *sys = strstr(p, "system(");
            ck_assert_msg(!(sys && (strstr(sys, "make") || strstr(sys, "bench"))),
                          "%s:%d calls system() on a build or benchmark: %s", path, ln, line);
        }
        fclose(f);
    }
    closedir(d);
    ck_assert_msg(scripts > 0, "no viz/*.gp found");
}
END_TEST

Suite *suite_lessons(void) {
    Suite *s = suite_create("lessons");
    scan_lessons();
    TCase *tc = tcase_create("lessons");
    tcase_add_unchecked_fixture(tc, make_runs_folder, remove_runs_folder);
    // Generous: lesson 14 trains three small models (about 7 s of CPU per run at the best SIMD
    // level, 19 s at the naive one, and its two runs share the cores); the others take about a
    // second or less.
    tcase_set_timeout(tc, 400);
    tcase_add_loop_test(tc, lesson_runs_and_writes_the_files_it_promises, 0, n_lessons);
    tcase_add_loop_test(tc, lesson_help_exits_0_and_describes_the_lesson, 0, n_lessons);
    tcase_add_loop_test(tc, lesson_rejects_an_unknown_flag_with_exit_2_and_one_line, 0, n_lessons);
    tcase_add_loop_test(tc, lesson_rejects_a_bad_seed_value_with_exit_2, 0, n_lessons);
    tcase_add_loop_test(tc, lesson_seed_changes_the_output_or_is_not_offered, 0, n_lessons);
    tcase_add_test(tc, viz_scripts_never_start_a_build);
    suite_add_tcase(s, tc);
    return s;
}
