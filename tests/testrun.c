// testrun.c: see testrun.h.
#define _POSIX_C_SOURCE 200809L   // mkdtemp, strdup, rmdir, WEXITSTATUS
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

run_result tt_run(const char *cmd) {
    // A private folder for the captured streams, so parallel runs never share files; stdin is
    // /dev/null so a program that waits for input cannot hang the suite.
    const char *tmp = getenv("TMPDIR");
    char dir[256], o[300], e[300], full[8192];
    snprintf(dir, sizeof dir, "%s/tw_run_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        run_result failed = { -1, calloc(1, 1), strdup("tt_run: mkdtemp failed\n") };
        return failed;
    }
    snprintf(o, sizeof o, "%s/out", dir);
    snprintf(e, sizeof e, "%s/err", dir);
    snprintf(full, sizeof full, "( %s ) > %s 2> %s < /dev/null", cmd, o, e);
    int status = system(full);
    run_result r = { (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1,
                     tt_slurp(o), tt_slurp(e) };
    remove(o);
    remove(e);
    rmdir(dir);
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
