// lesson.c: the lesson helpers declared in lesson.h (options, narrative printing, tracked memory,
// files in out/lessonN/, gnuplot rendering, self-checks). Uses POSIX mkdir, rename and
// clock_gettime, which Linux and macOS both have.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include "lesson.h"

// ---- the current lesson ----

static struct {
    int          number;
    char         prog[64];      // "lesson3", for messages
    char         out_dir[1024];
    int          plot;
    int          sections;      // sections printed so far (numbers them)
    void       **allocs;        // tracked allocations
    size_t       n_allocs, cap_allocs;
    char       **written;       // names of files written, for the closing summary
    size_t       n_written, cap_written;
    int          checks, failures;
    int          gnuplot;       // -1 unknown, 0 absent, 1 present
} L = { .gnuplot = -1, .plot = 1 };

#define WRAP_COLUMNS 92

static void free_tracked(void) {
    for (size_t i = 0; i < L.n_allocs; i++) free(L.allocs[i]);
    free(L.allocs);
    L.allocs = NULL;
    L.n_allocs = L.cap_allocs = 0;
    for (size_t i = 0; i < L.n_written; i++) free(L.written[i]);
    free(L.written);
    L.written = NULL;
    L.n_written = L.cap_written = 0;
}

void lesson_die(const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: ", L.prog[0] ? L.prog : "lesson");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    free_tracked();
    exit(1);
}

// Grows a pointer array by one slot; returns 0 if out of memory.
static int push_ptr(void ***arr, size_t *n, size_t *cap, void *p) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        void **na = realloc(*arr, nc * sizeof *na);
        if (!na) return 0;
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = p;
    return 1;
}

// ---- memory ----

void *lesson_alloc_bytes(size_t bytes) {
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p || !push_ptr(&L.allocs, &L.n_allocs, &L.cap_allocs, p)) {
        free(p);
        lesson_die("out of memory (asked for %zu bytes)", bytes);
    }
    return p;
}

float *lesson_alloc(long n) {
    if (n < 0) lesson_die("lesson_alloc: negative size %ld", n);
    return lesson_alloc_bytes((size_t)n * sizeof(float));
}

float *lesson_randn(long n, float std, uint64_t seed) {
    float *x = lesson_alloc(n);
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_rng_fill_normal(&r, x, n, std);
    return x;
}

float *lesson_uniform(long n, float lo, float hi, uint64_t seed) {
    float *x = lesson_alloc(n);
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_rng_fill_uniform(&r, x, n, lo, hi);
    return x;
}

char *lesson_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = lesson_alloc_bytes(n);
    memcpy(d, s, n);
    return d;
}

const char *lesson_visible_piece(const char *piece) {
    size_t n = 0;
    for (const char *p = piece; *p; p++) n += *p == '\n' ? 2 : 1;
    char *out = lesson_alloc_bytes(n + 1), *o = out;
    for (const char *p = piece; *p; p++) {
        if (*p == ' ') *o++ = '_';
        else if (*p == '\n') { *o++ = '\\'; *o++ = 'n'; }
        else *o++ = *p;
    }
    *o = '\0';
    return out;
}

const char *lesson_token(const tw_tokenizer *tok, int id) {
    if (id < 0 || id >= tok->vocab_size) return lesson_visible_piece("?");
    return lesson_visible_piece(tok->vocab[id]);
}

void lesson_print_piece(const char *piece) {
    putchar('[');
    for (const char *p = piece; *p; p++) {
        if (*p == ' ') putchar('_');
        else if (*p == '\n') fputs("\\n", stdout);
        else putchar(*p);
    }
    putchar(']');
}

// ---- options ----

static void print_help(const lesson_info *info, const lesson_args *d, const lesson_opt *extra) {
    printf("lesson%d: %s\n\n", info->number, info->title);
    // the paragraph, wrapped like the narrative
    lesson_say("%s", info->teaches);
    printf("\nUsage: ./lesson%d [options]\n", info->number);
    printf("  --help          print this and exit\n");
    if (!d->no_seed)
        printf("  --seed N        seed of the random inputs and weights (default %llu)\n",
               (unsigned long long)d->seed);
    if (d->T > 0) printf("  -T N            sequence length (default %d)\n", d->T);
    printf("  --out DIR       folder for the files it writes (default out/lesson%d)\n", info->number);
    printf("  --no-plot       do not run gnuplot, only print the commands that would\n");
    for (const lesson_opt *o = extra; o && o->flag; o++) {
        char left[64];
        snprintf(left, sizeof left, "%s %s", o->flag, o->metavar ? o->metavar : "");
        printf("  %-15s %s\n", left, o->help);
    }
    if (d->no_seed) printf("\nExample: make lesson%d && ./lesson%d\n", info->number, info->number);
    else printf("\nExample: make lesson%d && ./lesson%d --seed 2\n", info->number, info->number);
}

static void usage_error(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "%s: ", L.prog);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (try ./%s --help)\n", L.prog);
    exit(2);
}

static long parse_long(const char *flag, const char *s, long lo, long hi) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        char range[64];
        snprintf(range, sizeof range, "an integer in [%ld, %ld]", lo, hi);
        fprintf(stderr, "%s: option %s: '%s' is not %s (try ./%s --help)\n",
                L.prog, flag, s, range, L.prog);
        exit(2);
    }
    return v;
}

static float parse_float(const char *flag, const char *s) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) usage_error("option %s: '%s' is not a finite number", flag, s);
    return (float)v;
}

static void make_dirs(const char *path) {
    char buf[1024];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) lesson_die("--out: folder name '%s' is empty or too long", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                lesson_die("cannot create folder '%s': %s", buf, strerror(errno));
            buf[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        lesson_die("'%s' exists but is not a folder; pass another with --out DIR", path);
}

lesson_args lesson_start(int argc, char **argv, const lesson_info *info, lesson_args defaults,
                         const lesson_opt *extra) {
    lesson_args a = defaults;
    L.number = info->number;
    snprintf(L.prog, sizeof L.prog, "lesson%d", info->number);
    static char default_out[64];
    snprintf(default_out, sizeof default_out, "out/lesson%d", info->number);
    if (!a.out_dir) a.out_dir = default_out;
    a.plot = 1;

    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        const lesson_opt *match = NULL;
        for (const lesson_opt *o = extra; o && o->flag; o++)
            if (strcmp(o->flag, f) == 0) match = o;

        if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            print_help(info, &defaults, extra);
            exit(0);
        } else if (strcmp(f, "--no-plot") == 0) {
            a.plot = 0;
            continue;
        } else if (match && match->kind == 'b') {
            *(int *)match->dest = 1;
            continue;
        }
        int known = match || (strcmp(f, "--seed") == 0 && !defaults.no_seed) || strcmp(f, "--out") == 0 ||
                    (strcmp(f, "-T") == 0 && defaults.T > 0);
        if (!known) usage_error("unknown option '%s'%s", f, "");
        if (!val) usage_error("option %s needs a value%s", f, "");
        i++;
        if (strcmp(f, "--seed") == 0) {
            a.seed = (uint64_t)parse_long(f, val, 0, 2147483647L);
        } else if (strcmp(f, "--out") == 0) {
            if (!*val) usage_error("option %s: the folder name is empty%s", f, "");
            a.out_dir = val;
        } else if (strcmp(f, "-T") == 0) {
            a.T = (int)parse_long(f, val, 1, 4096);
        } else if (match->kind == 'i') {
            *(int *)match->dest = (int)parse_long(f, val, -1000000000L, 1000000000L);
        } else if (match->kind == 'f') {
            *(float *)match->dest = parse_float(f, val);
        } else {
            *(const char **)match->dest = val;
        }
    }

    snprintf(L.out_dir, sizeof L.out_dir, "%s", a.out_dir);
    L.plot = a.plot;
    make_dirs(L.out_dir);

    char title[160];
    int n = snprintf(title, sizeof title, "Lesson %d: %s", info->number, info->title);
    printf("%s\n", title);
    for (int i = 0; i < n && i < (int)sizeof title; i++) putchar('=');
    printf("\n");
    return a;
}

// ---- printing ----

void lesson_section(const char *title) {
    char line[256];
    int n = snprintf(line, sizeof line, "%d. %s", ++L.sections, title);
    printf("\n%s\n", line);
    for (int i = 0; i < n && i < (int)sizeof line; i++) putchar('-');
    putchar('\n');
}

// Prints text word-wrapped at WRAP_COLUMNS after `indent` spaces. Lines that start with a space
// (tables, formulas) are printed as they are.
static void print_wrapped(const char *text, const char *indent) {
    const char *p = text;
    size_t ind = strlen(indent);
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > 0 && p[0] == ' ') {
            printf("%s%.*s\n", indent, (int)len, p);
        } else if (len == 0) {
            putchar('\n');
        } else {
            size_t col = 0;
            const char *w = p, *end = p + len;
            fputs(indent, stdout);
            col = ind;
            int first = 1;
            while (w < end) {
                while (w < end && *w == ' ') w++;
                const char *we = w;
                while (we < end && *we != ' ') we++;
                size_t wl = (size_t)(we - w);
                if (wl == 0) break;
                if (!first && col + 1 + wl > WRAP_COLUMNS) {
                    printf("\n%s", indent);
                    col = ind;
                    first = 1;
                }
                if (!first) { putchar(' '); col++; }
                printf("%.*s", (int)wl, w);
                col += wl;
                first = 0;
                w = we;
            }
            putchar('\n');
        }
        if (!eol) break;
        p = eol + 1;
    }
}

static void vsay(const char *indent, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    char *buf = malloc((size_t)n + 1);
    if (!buf) lesson_die("out of memory");
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    print_wrapped(buf, indent);
    free(buf);
}

void lesson_say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsay("", fmt, ap);
    va_end(ap);
}

void lesson_note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsay("  > ", fmt, ap);
    va_end(ap);
}

void lesson_print_matrix_n(const char *name, const float *x, int rows, int cols,
                           int max_rows, int max_cols) {
    tw_print_matrix(stdout, name, x, rows, cols, max_rows, max_cols);
}

void lesson_print_matrix(const char *name, const float *x, int rows, int cols) {
    tw_print_matrix(stdout, name, x, rows, cols, 8, 8);
}

void lesson_print_vector(const char *name, const float *x, int n) {
    tw_print_matrix(stdout, name, x, 1, n, 1, 12);
}

// First `head` indices, then from `*tail` on: at most max of n shown (as lib/inspect/print.c elides).
static int shown(int n, int max, int *tail) {
    if (n <= max) { *tail = n; return n; }
    *tail = n - max / 2;
    return (max + 1) / 2;
}

static void print_causal_row(const float *row, int t, int cols, int offset) {
    int tail, head = shown(cols, 8, &tail);
    for (int j = 0; j < cols; j++) {
        if (j == head && tail < cols) { printf(" %9s", "..."); j = tail; }
        if (j > t + offset) printf(" %9s", "-");
        else printf(" %9.4f", (double)row[j]);
    }
    putchar('\n');
}

void lesson_print_causal(const char *name, const float *x, int rows, int cols) {
    printf("%s (%d, %d); \"-\" = masked (a key after the query)\n", name, rows, cols);
    int tail, head = shown(rows, 8, &tail);
    for (int t = 0; t < rows; t++) {
        if (t == head && tail < rows) { printf(" %9s\n", "..."); t = tail; }
        print_causal_row(x + (size_t)t * cols, t, cols, cols - rows);
    }
}

// ---- files ----

const char *lesson_path(const char *name) {
    size_t n = strlen(L.out_dir) + 1 + strlen(name) + 1;
    char *p = lesson_alloc_bytes(n);
    snprintf(p, n, "%s/%s", L.out_dir, name);
    return p;
}

static void record_written(const char *name) {
    for (size_t i = 0; i < L.n_written; i++)
        if (strcmp(L.written[i], name) == 0) return;
    size_t n = strlen(name) + 1;
    char *copy = malloc(n);
    if (!copy) lesson_die("out of memory");
    memcpy(copy, name, n);
    if (!push_ptr((void ***)&L.written, &L.n_written, &L.cap_written, copy)) {
        free(copy);
        lesson_die("out of memory");
    }
}

static void check_write(tw_status st, const char *path) {
    if (st != TW_OK)
        lesson_die("cannot write %s: %s%s%s", path, tw_status_str(st),
                   st == TW_ERR_IO ? ": " : "", st == TW_ERR_IO ? strerror(errno) : "");
}

void lesson_write_npy(const char *name, const float *x, const long *shape, int ndim) {
    const char *path = lesson_path(name);
    check_write(tw_npy_write_f32(path, x, shape, ndim), path);
    record_written(name);
}

void lesson_write_npy_i32(const char *name, const int32_t *x, const long *shape, int ndim) {
    const char *path = lesson_path(name);
    check_write(tw_npy_write_i32(path, x, shape, ndim), path);
    record_written(name);
}

void lesson_write_npy2(const char *name, const float *x, long rows, long cols) {
    long shape[2] = { rows, cols };
    lesson_write_npy(name, x, shape, cols > 0 ? 2 : 1);
}

void lesson_write_matrix_dat(const char *name, const float *x, int rows, int cols,
                             const char *const *row_labels, const char *const *col_labels,
                             const char *comment) {
    const char *path = lesson_path(name);
    check_write(tw_write_labelled_matrix(path, x, rows, cols, row_labels, col_labels, comment), path);
    record_written(name);
}

// Opens path's temporary twin (tw_atomic_file, lib/formats/atomic_file.h); finish_tmp renames it into
// place, so a lesson that dies half way never leaves a half-written file.
static FILE *open_tmp(tw_atomic_file *af, const char *path) {
    if (tw_atomic_open(af, path, "w") != TW_OK) lesson_die("cannot write %s.tmp: %s", path, strerror(errno));
    return af->f;
}

static void finish_tmp(tw_atomic_file *af, const char *name) {
    if (tw_atomic_commit(af, 1) != TW_OK) lesson_die("cannot write %s: %s", af->path, strerror(errno));
    record_written(name);
}

// Writes each line of comment prefixed with "# ".
static void write_comment(FILE *f, const char *comment) {
    const char *p = comment;
    while (p && *p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        fprintf(f, "# %.*s\n", (int)len, p);
        if (!eol) break;
        p = eol + 1;
    }
}

void lesson_write_columns(const char *name, const float *x, int rows, int cols,
                          const char *const *col_names, const char *comment) {
    tw_atomic_file af;
    FILE *f = open_tmp(&af, lesson_path(name));
    write_comment(f, comment);
    fputs("#", f);
    for (int c = 0; c < cols; c++) {
        if (col_names) fprintf(f, " %s", col_names[c]);
        else fprintf(f, " c%d", c + 1);
    }
    fputc('\n', f);
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++)
            fprintf(f, c ? " %.9g" : "%.9g", (double)x[(size_t)r * cols + c]);
        fputc('\n', f);
    }
    finish_tmp(&af, name);
}

void lesson_write_text(const char *name, const char *text) {
    tw_atomic_file af;
    fputs(text, open_tmp(&af, lesson_path(name)));
    finish_tmp(&af, name);
}

// ---- pictures ----

static int have_gnuplot(void) {
    if (L.gnuplot < 0) L.gnuplot = tw_gnuplot_available();
    return L.gnuplot;
}

// gnuplot runs without a shell (lib/inspect/gnuplot.c: fork + execvp, the names written to its stdin
// as gnuplot strings), so a folder name holding $(...), quotes or backquotes is only a name. The
// command printed for the reader is the shell equivalent, for copying.
void lesson_plot_ex(const char *script, const char *datafile, const char *png, const char *extra) {
    char data_path[2048], png_path[2048], dq[4200], pq[4200];
    char cmd[sizeof dq + sizeof pq + 1024];   // the printed command: both names and the script
    snprintf(data_path, sizeof data_path, "%s/%s", L.out_dir, datafile);
    snprintf(png_path, sizeof png_path, "%s/%s", L.out_dir, png);
    if (!tw_gnuplot_quote(dq, sizeof dq, data_path) || !tw_gnuplot_quote(pq, sizeof pq, png_path)) {
        printf("  (picture %s skipped: the output folder name holds a newline, which a gnuplot "
               "script line cannot)\n", png);
        return;
    }
    snprintf(cmd, sizeof cmd, "gnuplot -e \"datafile=%s; outfile=%s%s%s\" viz/%s",
             dq, pq, extra ? "; " : "", extra ? extra : "", script);
    struct stat st;
    char script_path[1100];
    snprintf(script_path, sizeof script_path, "viz/%s", script);
    if (!L.plot || !have_gnuplot() || stat(script_path, &st) != 0) {
        const char *why = !L.plot ? "--no-plot given"
                        : !have_gnuplot() ? "gnuplot is not installed: apt-get install gnuplot-nox or brew install gnuplot"
                        : "viz/ not found here: run from the top of the checkout";
        printf("  picture: %s (%s); to draw it run:\n    %s\n", png, why, cmd);
        return;
    }
    // gnuplot's warnings join our output, in order (show_output 1: its stderr to our stdout).
    tw_gnuplot_result rc = tw_gnuplot_run(script_path, data_path, png_path, extra, 1);
    if (rc == TW_GNUPLOT_DRAWN) {
        printf("  picture: %s/%s   (drawn by: %s)\n", L.out_dir, png, cmd);
        record_written(png);
    } else {
        printf("  picture: %s could not be drawn (%s); the command was:\n    %s\n", png,
               rc == TW_GNUPLOT_MISSING ? "gnuplot could not be started" : "gnuplot failed", cmd);
    }
}

void lesson_plot(const char *script, const char *datafile, const char *png) {
    lesson_plot_ex(script, datafile, png, NULL);
}

// ---- self-checks ----

static int report_check(const char *name, int ok, const char *detail) {
    L.checks++;
    if (!ok) L.failures++;
    printf("  check: %-52s %s  %s\n", name, ok ? "ok    " : "FAILED", detail);
    return ok;
}

int lesson_expect_close(const char *name, const float *got, const float *want, long n, float tol) {
    double worst = 0.0;
    long at = -1;
    int ok = 1;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (isnan(d) && !(isinf(got[i]) && got[i] == want[i])) { ok = 0; at = i; worst = NAN; break; }
        if (isnan(d)) continue;   // equal infinities
        if (d > worst) { worst = d; at = i; }
    }
    if (ok && worst > tol) ok = 0;
    char detail[160];
    snprintf(detail, sizeof detail, "max |diff| %.3g (tolerance %.3g)", worst, (double)tol);
    if (!ok && at >= 0) {
        size_t len = strlen(detail);
        snprintf(detail + len, sizeof detail - len, " at [%ld]: got %.9g want %.9g", at,
                 (double)got[at], (double)want[at]);
    }
    return report_check(name, ok, detail);
}

int lesson_expect_near(const char *name, double got, double want, double tol) {
    double d = fabs(got - want);
    int ok = d <= tol;   // false for NaN
    char detail[160];
    snprintf(detail, sizeof detail, "got %.9g want %.9g (tolerance %.3g)", got, want, tol);
    return report_check(name, ok, detail);
}

int lesson_expect(const char *name, int ok) {
    return report_check(name, ok != 0, "");
}

// ---- timing ----

double lesson_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// ---- the real model ----

void lesson_load_model(tw_model *m, tw_tokenizer *tok, const char *model_path, const char *tok_path) {
    char err[512];
    if (tw_llama2c_load(m, model_path, err, sizeof err) != TW_OK)
        lesson_die("%s (run `make model` first)", err);
    if (tw_tokenizer_load(tok, tok_path, m->cfg.vocab, err, sizeof err) != TW_OK) {
        tw_model_free(m);
        lesson_die("%s (run `make model` first)", err);
    }
}

// ---- the end ----

int lesson_finish(void) {
    printf("\nFiles in %s/:", L.out_dir);
    size_t col = 14 + strlen(L.out_dir);
    for (size_t i = 0; i < L.n_written; i++) {
        size_t w = strlen(L.written[i]) + 1;
        if (col + w > WRAP_COLUMNS) { printf("\n   "); col = 3; }
        printf(" %s", L.written[i]);
        col += w;
    }
    printf("\n");
    if (L.failures)
        printf("%d of %d self-checks FAILED: something above is wrong.\n", L.failures, L.checks);
    else
        printf("All %d self-checks passed.\n", L.checks);
    int rc = L.failures ? 1 : 0;
    free_tracked();
    fflush(stdout);
    return rc;
}
