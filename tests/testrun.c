// testrun.c: see testrun.h.
#define _XOPEN_SOURCE 700   // mkdtemp, strdup, nftw, fork, execvp, waitpid
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testrun.h"

char *tt_slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return calloc(1, 1);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)(n > 0 ? n : 0) + 1, 1);
    if (s != NULL && n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = '\0';
    fclose(f);
    return s;
}

// ---- splitting a command line into words, and running an argument vector ----

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

int tt_split(const char *cmd, char ***words) {
    *words = NULL;
    size_t len = strlen(cmd), cap = len / 2 + 2;   // at most len/2 + 1 words, then the NULL
    char **w = calloc(cap, sizeof *w);
    char *buf = malloc(len + 1);                 // each word's text, copied out when it ends
    if (w == NULL || buf == NULL) { free(w); free(buf); return -1; }
    int n = 0;
    const char *p = cmd;
    for (;;) {
        while (is_space(*p)) p++;
        if (*p == '\0') break;
        size_t k = 0;
        while (*p != '\0' && !is_space(*p)) {
            if (*p == '\'' || *p == '"') {        // a quoted run: everything up to the same quote
                char q = *p++;
                while (*p != '\0' && *p != q) buf[k++] = *p++;
                if (*p != q) { buf[k] = '\0'; w[n] = NULL; tt_split_free(w); free(buf); return -1; }
                p++;
            } else {
                buf[k++] = *p++;
            }
        }
        buf[k] = '\0';
        if ((w[n] = strdup(buf)) == NULL) { tt_split_free(w); free(buf); return -1; }
        n++;
    }
    w[n] = NULL;
    free(buf);
    *words = w;
    return n;
}

void tt_split_free(char **words) {
    if (words == NULL) return;
    for (char **p = words; *p != NULL; p++) free(*p);
    free(words);
}

// NAME=value with NAME a C identifier: an environment setting, not the program.
static int is_assignment(const char *w) {
    if (!(w[0] == '_' || (w[0] >= 'A' && w[0] <= 'Z') || (w[0] >= 'a' && w[0] <= 'z'))) return 0;
    const char *p = w + 1;
    while (*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')) p++;
    return *p == '=';
}

extern char **environ;

// The parent's environment with each NAME=value of env put in (replacing NAME's old value);
// made before fork, so the child only assigns environ. The strings are not copied.
static char **merged_environ(char *const env[]) {
    size_t n = 0, m = 0;
    while (environ != NULL && environ[n] != NULL) n++;
    while (env != NULL && env[m] != NULL) m++;
    char **e = calloc(n + m + 1, sizeof *e);
    if (e == NULL) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strcspn(environ[i], "=");
        int replaced = 0;
        for (size_t j = 0; j < m && !replaced; j++)
            replaced = strncmp(env[j], environ[i], nl) == 0 && env[j][nl] == '=';
        if (!replaced) e[k++] = environ[i];
    }
    for (size_t j = 0; j < m; j++) e[k++] = env[j];
    e[k] = NULL;
    return e;
}

// In the child: fd onto target (open's flags), or exits 127 saying why.
static void redirect(int target, const char *path, int flags) {
    int fd = open(path, flags, 0666);
    if (fd < 0 || dup2(fd, target) < 0) {
        fprintf(stderr, "tt_spawn: cannot open %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    if (fd != target) close(fd);
}

// 1 if argv is a shell given a command line: sh, bash, dash, ksh or zsh (any folder) with an
// option word holding c (-c, -ec, ...) before its first operand.
static int shell_command_line(char *const argv[]) {
    const char *slash = strrchr(argv[0], '/'), *name = slash ? slash + 1 : argv[0];
    const char *shells[] = { "sh", "bash", "dash", "ksh", "zsh" };
    int shell = 0;
    for (size_t i = 0; i < sizeof shells / sizeof shells[0]; i++) shell |= strcmp(name, shells[i]) == 0;
    for (int i = 1; shell && argv[i] != NULL && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++)
        if (argv[i][1] != '-' && strchr(argv[i], 'c') != NULL) return 1;
    return 0;
}

pid_t tt_spawn(char *const argv[], char *const env[], const char *out, const char *err) {
    if (argv == NULL || argv[0] == NULL) return -1;
    if (shell_command_line(argv)) {
        fprintf(stderr, "tt_spawn: refusing to run %s %s: the suite runs no shell command line "
                "(run the program itself, or a script file)\n", argv[0], argv[1]);
        return -1;
    }
    char **e = NULL;
    if (env != NULL && env[0] != NULL && (e = merged_environ(env)) == NULL) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        const int wr = O_WRONLY | O_CREAT | O_TRUNC;
        redirect(STDIN_FILENO, "/dev/null", O_RDONLY);
        redirect(STDOUT_FILENO, out ? out : "/dev/null", wr);
        if (err != NULL && out != NULL && strcmp(err, out) == 0) {
            if (dup2(STDOUT_FILENO, STDERR_FILENO) < 0) _exit(127);
        } else {
            redirect(STDERR_FILENO, err ? err : "/dev/null", wr);
        }
        if (e != NULL) environ = e;
        execvp(argv[0], argv);
        fprintf(stderr, "tt_spawn: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    free(e);
    return pid;
}

int tt_wait(pid_t pid) {
    int status;
    if (pid < 0) return -1;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int tt_call(char *const argv[], char *const env[], const char *out, const char *err) {
    return tt_wait(tt_spawn(argv, env, out, err));
}

run_result tt_runv(char *const argv[], char *const env[]) {
    if (argv == NULL || argv[0] == NULL || shell_command_line(argv)) {
        run_result refused = { -1, calloc(1, 1), strdup("tt_run: refused: no program, or a shell given "
                                                     "a command line with -c (the suite runs no shell)\n") };
        return refused;
    }
    // A private folder for the captured streams, so parallel runs never share files; stdin is
    // /dev/null so a program that waits for input cannot hang the suite.
    const char *tmp = getenv("TMPDIR");
    char dir[256], o[300], e[300];
    snprintf(dir, sizeof dir, "%s/tw_run_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        run_result failed = { -1, calloc(1, 1), strdup("tt_run: mkdtemp failed\n") };
        return failed;
    }
    snprintf(o, sizeof o, "%s/out", dir);
    snprintf(e, sizeof e, "%s/err", dir);
    run_result r = { tt_call(argv, env, o, e), NULL, NULL };
    r.out = tt_slurp(o);
    r.err = tt_slurp(e);
    remove(o);
    remove(e);
    rmdir(dir);
    return r;
}

run_result tt_run(const char *cmd) {
    char **words = NULL;
    int n = tt_split(cmd, &words);
    if (n < 0) {
        char msg[600];
        snprintf(msg, sizeof msg, "tt_run: an unclosed quote (or out of memory) in: %.500s\n", cmd);
        run_result failed = { -1, calloc(1, 1), strdup(msg) };
        return failed;
    }
    int k = 0;
    while (k < n && is_assignment(words[k])) k++;
    // words[0..k) are NAME=value settings, words[k..n) the program and its arguments.
    char **env = calloc((size_t)k + 1, sizeof *env);
    run_result r;
    if (k == n || env == NULL) {
        run_result failed = { -1, calloc(1, 1), strdup("tt_run: no program to run\n") };
        r = failed;
    } else {
        for (int i = 0; i < k; i++) env[i] = words[i];
        r = tt_runv(words + k, env);
    }
    free(env);
    tt_split_free(words);
    return r;
}

void tt_run_free(run_result *r) {
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int tt_count_lines(const char *s) {
    int n = 0;
    const char *p = s;
    for (; *p; p++) n += *p == '\n';
    if (p > s && p[-1] != '\n') n++;   // an unterminated last line is a line too
    return n;
}

int tt_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

void tt_remove_dump(const char *dir) {
    char path[2048], line[512];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        while (fgets(line, sizeof line, f) != NULL) {
            line[strcspn(line, "\t\n")] = '\0';
            snprintf(path, sizeof path, "%s/%s.npy", dir, line);
            remove(path);
        }
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/tokens.txt", dir);
    remove(path);
    rmdir(dir);
}

void tt_tmp_path(char *out, size_t len, const char *suite, const char *tag) {
    const char *dir = getenv("TMPDIR");
    snprintf(out, len, "%s/tw_test_%s_%ld_%s", dir && *dir ? dir : "/tmp", suite, (long)getpid(), tag);
}

int tt_make_chat_model(char dir[512], char model[600], char tok[600], const char *tag, char *why,
                       size_t why_len) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, 512, "%s/tw_test_%s_XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    if (mkdtemp(dir) == NULL) {
        snprintf(why, why_len, "%s: cannot make the folder", dir);
        return -1;
    }
    snprintf(model, 600, "%s/m.bin", dir);
    snprintf(tok, 600, "%s/t.bin", dir);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "./add-tokens data/models/stories260K.bin data/models/tok512.bin "
             "--tokens '<|user|>,<|assistant|>,<|end|>' --out-model %s --out-tokenizer %s", model, tok);
    run_result r = tt_run(cmd);
    const int rc = r.rc;
    if (rc != 0) snprintf(why, why_len, "./add-tokens: rc %d: %s", rc, r.err ? r.err : "");
    tt_run_free(&r);
    return rc == 0 ? 0 : -1;
}

int tt_mkdir_p(const char *path) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; ; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        struct stat sb;
        if (mkdir(buf, 0777) != 0 && !(errno == EEXIST && stat(buf, &sb) == 0 && S_ISDIR(sb.st_mode)))
            return -1;
        if (c == '\0') return 0;
        *p = c;
        while (p[1] == '/') p++;
        if (p[1] == '\0') return 0;   // a trailing slash
    }
}

static int remove_one(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb; (void)type; (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int tt_remove_tree(const char *path) {
    struct stat sb;
    if (lstat(path, &sb) != 0) return errno == ENOENT ? 0 : -1;
    // Depth first, children before their folder; FTW_PHYS: a symbolic link is removed, never followed.
    return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

int tt_write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f == NULL) return -1;
    const int ok = fputs(text, f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

int tt_parse_losses(double *loss, int max, const char *out) {
    int n = 0;
    for (const char *p = out; (p = strstr(p, "step ")) != NULL && n < max; p++) {
        int s, m;
        double x;
        if ((p == out || p[-1] == '\n') && sscanf(p, "step %d/%d loss %lf", &s, &m, &x) == 3 && s == n + 1)
            loss[n++] = x;
    }
    return n;
}

int tt_losses_printed(const char *out, const float *want, int n, double rel, char *why, size_t why_len) {
    double got[4096];
    if (n < 1 || n > 4096) { snprintf(why, why_len, "tt_losses_printed: n = %d", n); return 0; }
    const int have = tt_parse_losses(got, 4096, out);
    if (have != n) { snprintf(why, why_len, "%d step lines printed, %d wanted: %s", have, n, out); return 0; }
    for (int i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= rel * fabs(want[i]))) {
            snprintf(why, why_len, "step %d: printed %.7g, want %.7g (relative tolerance %g)", i + 1, got[i],
                     (double)want[i], rel);
            return 0;
        }
    return 1;
}
