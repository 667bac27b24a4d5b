// gnuplot.c: see gnuplot.h. POSIX fork/execvp/pipe/waitpid, available on Linux and macOS.
#define _POSIX_C_SOURCE 200809L   // fork, execvp, pipe, sigaction, fcntl, waitpid
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "inspect/gnuplot.h"

int tw_gnuplot_quote(char *out, size_t len, const char *s) {
    size_t n = 0;
    if (len == 0) return 0;
    out[0] = '\0';
    if (len < 3) return 0;
    out[n++] = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\n' || *p == '\r') { out[0] = '\0'; return 0; }
        size_t need = *p == '\'' ? 2 : 1;
        if (n + need + 2 > len) { out[0] = '\0'; return 0; }   // room for the closing ' and NUL
        out[n++] = *p;
        if (*p == '\'') out[n++] = '\'';
    }
    out[n++] = '\'';
    out[n] = '\0';
    return 1;
}

int tw_gnuplot_available(void) {
    const char *path = getenv("PATH");
    if (path == NULL || *path == '\0') path = "/usr/bin:/bin";
    for (const char *p = path;; ) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char file[4096];
        // An empty PATH entry means the current folder, as for execvp.
        if (n + sizeof "/gnuplot" <= sizeof file) {
            if (n == 0) snprintf(file, sizeof file, "./gnuplot");
            else snprintf(file, sizeof file, "%.*s/gnuplot", (int)n, p);
            struct stat sb;
            if (stat(file, &sb) == 0 && S_ISREG(sb.st_mode) && access(file, X_OK) == 0) return 1;
        }
        if (end == NULL) return 0;
        p = end + 1;
    }
}

// Appends "NAME = 'VALUE'\n" to s (cap bytes); 0 if the value cannot be quoted or s is full.
static int add_assignment(char *s, size_t cap, const char *name, const char *value) {
    char q[8192];
    if (!tw_gnuplot_quote(q, sizeof q, value)) return 0;
    size_t used = strlen(s);
    int w = snprintf(s + used, cap - used, "%s = %s\n", name, q);
    return w > 0 && (size_t)w < cap - used;
}

// Writes all of buf to fd (retrying short writes and EINTR); 0 on failure (e.g. EPIPE).
static int write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        buf += w;
        n -= (size_t)w;
    }
    return 1;
}

tw_gnuplot_result tw_gnuplot_run(const char *script, const char *datafile, const char *outfile,
                                 const char *extra, int show_output) {
    char text[3 * 8192 + 1024] = "";
    if ((datafile && !add_assignment(text, sizeof text, "datafile", datafile)) ||
        (outfile && !add_assignment(text, sizeof text, "outfile", outfile)))
        return TW_GNUPLOT_BAD_NAME;
    if (extra) {
        if (strchr(extra, '\n') || strchr(extra, '\r')) return TW_GNUPLOT_BAD_NAME;
        size_t used = strlen(text);
        int w = snprintf(text + used, sizeof text - used, "%s\n", extra);
        if (w < 0 || (size_t)w >= sizeof text - used) return TW_GNUPLOT_BAD_NAME;
    }
    char q[8192];
    size_t used = strlen(text);
    if (!tw_gnuplot_quote(q, sizeof q, script)) return TW_GNUPLOT_BAD_NAME;
    int w = snprintf(text + used, sizeof text - used, "load %s\n", q);
    if (w < 0 || (size_t)w >= sizeof text - used) return TW_GNUPLOT_BAD_NAME;

    // to: we write the script, gnuplot reads it. err: closed on a successful exec (O_CLOEXEC), or
    // carries execvp's errno back, so "not installed" is told apart from "gnuplot failed".
    int to[2], err[2];
    if (pipe(to) != 0) return TW_GNUPLOT_FAILED;
    if (pipe(err) != 0) { close(to[0]); close(to[1]); return TW_GNUPLOT_FAILED; }
    (void)fcntl(err[1], F_SETFD, FD_CLOEXEC);
    (void)fcntl(to[1], F_SETFD, FD_CLOEXEC);
    if (show_output) fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(to[0]); close(to[1]); close(err[0]); close(err[1]);
        return TW_GNUPLOT_FAILED;
    }
    if (pid == 0) {   // the child: only async-signal-safe calls until execvp
        close(err[0]);
        dup2(to[0], 0);
        close(to[0]);
        if (show_output) dup2(1, 2);
        else {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0) { dup2(null, 1); dup2(null, 2); close(null); }
        }
        char *const argv[] = { "gnuplot", NULL };
        execvp("gnuplot", argv);
        int e = errno;
        (void)!write(err[1], &e, sizeof e);
        _exit(127);
    }
    close(to[0]);
    close(err[1]);
    int exec_errno = 0;
    ssize_t got;
    do got = read(err[0], &exec_errno, sizeof exec_errno); while (got < 0 && errno == EINTR);
    close(err[0]);
    int ok = 1;
    if (got == (ssize_t)sizeof exec_errno) ok = 0;   // execvp failed: no gnuplot
    else {
        // gnuplot may stop reading early (an error in the script): a write then fails with EPIPE
        // instead of killing us with SIGPIPE.
        struct sigaction ign, old;
        memset(&ign, 0, sizeof ign);
        ign.sa_handler = SIG_IGN;
        sigemptyset(&ign.sa_mask);
        int restore = sigaction(SIGPIPE, &ign, &old) == 0;
        (void)write_all(to[1], text, strlen(text));
        if (restore) sigaction(SIGPIPE, &old, NULL);
    }
    close(to[1]);
    int status = 0;
    pid_t r;
    do r = waitpid(pid, &status, 0); while (r < 0 && errno == EINTR);
    if (!ok) return TW_GNUPLOT_MISSING;
    if (r != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return TW_GNUPLOT_FAILED;
    return TW_GNUPLOT_DRAWN;
}
