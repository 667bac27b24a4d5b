// npydiff.c: compares two folders of .npy tensors (two --dump folders of ./generate), tensor by
// tensor, to see where two runs part: with and without the KV cache, two kernels, two prompts.
//
//   ./npydiff DIR_A DIR_B [--atol A] [--rtol R]
//
// For every name present in both folders (in DIR_A's manifest.tsv order when it has one, else
// alphabetical): its shape, max |a - b|, max |a - b| / |b| (B is the reference), and PASS when
// every element satisfies |a - b| <= atol + rtol * |b| (equal infinities pass, NaN never does).
// The last line is "N passed, M failed". Exit 0 if all passed, 1 if any failed or shapes differ,
// 2 for bad usage. Defaults: atol 1e-5, rtol 1e-4 (float32 noise of a few reordered sums).
#define _POSIX_C_SOURCE 200809L   // opendir, readdir
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tw.h"

typedef struct { char **v; int n, cap; } name_list;

static int list_add(name_list *l, const char *s) {
    for (int i = 0; i < l->n; i++) if (strcmp(l->v[i], s) == 0) return 0;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (v == NULL) return -1;
        l->v = v;
        l->cap = cap;
    }
    size_t len = strlen(s) + 1;
    l->v[l->n] = malloc(len);
    if (l->v[l->n] == NULL) return -1;
    memcpy(l->v[l->n++], s, len);
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

// Names (without .npy) of the .npy files in dir, sorted; -1 if dir cannot be read.
static int list_npy(name_list *out, const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".npy") == 0) {
            char name[1024];
            snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name);
            if (list_add(out, name) != 0) { closedir(d); return -1; }
        }
    }
    closedir(d);
    qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_str);
    return 0;
}

static void list_free(name_list *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int list_has(const name_list *l, const char *s) {
    for (int i = 0; i < l->n; i++) if (strcmp(l->v[i], s) == 0) return 1;
    return 0;
}

// The comparison order: names from dir/manifest.tsv's first column that are in both, then the
// rest of the common names alphabetically.
static void order_names(name_list *out, const char *dir, const name_list *a, const name_list *b) {
    char path[4096], line[4096];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        while (fgets(line, sizeof line, f) != NULL) {
            line[strcspn(line, "\t\n")] = '\0';
            if (list_has(a, line) && list_has(b, line)) list_add(out, line);
        }
        fclose(f);
    }
    for (int i = 0; i < a->n; i++)
        if (list_has(b, a->v[i])) list_add(out, a->v[i]);
}

static double element(const tw_npy *x, long i) {
    return x->dtype == TW_NPY_F32 ? (double)((const float *)x->data)[i]
                                  : (double)((const int32_t *)x->data)[i];
}

static void shape_str(char *out, size_t len, const tw_npy *x) {
    size_t k = (size_t)snprintf(out, len, "[");
    for (int i = 0; i < x->ndim && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, "%s%ld", i ? ", " : "", x->shape[i]);
    if (k < len) snprintf(out + k, len - k, "]");
}

static int same_shape(const tw_npy *a, const tw_npy *b) {
    if (a->ndim != b->ndim || a->dtype != b->dtype) return 0;
    for (int i = 0; i < a->ndim; i++) if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

// Compares one tensor; returns 1 if it passes. Prints one table row.
static int compare_one(const char *name, const char *dir_a, const char *dir_b, double atol, double rtol) {
    char pa[4096], pb[4096], err[256] = "", sa[96], sb[96];
    snprintf(pa, sizeof pa, "%s/%s.npy", dir_a, name);
    snprintf(pb, sizeof pb, "%s/%s.npy", dir_b, name);
    tw_npy a, b;
    if (tw_npy_read(&a, pa, err, sizeof err) != TW_OK) {
        printf("%-18s %-16s cannot read %s: %s  FAIL\n", name, "?", pa, err);
        fprintf(stderr, "npydiff: %s: %s\n", pa, err);
        return 0;
    }
    if (tw_npy_read(&b, pb, err, sizeof err) != TW_OK) {
        printf("%-18s %-16s cannot read %s: %s  FAIL\n", name, "?", pb, err);
        fprintf(stderr, "npydiff: %s: %s\n", pb, err);
        tw_npy_free(&a);
        return 0;
    }
    shape_str(sa, sizeof sa, &a);
    shape_str(sb, sizeof sb, &b);
    if (!same_shape(&a, &b)) {
        printf("%-18s %-16s shape or dtype differs: %s vs %s  FAIL\n", name, sa, sa, sb);
        tw_npy_free(&a);
        tw_npy_free(&b);
        return 0;
    }
    double max_abs = 0.0, max_rel = 0.0;
    int ok = 1;
    for (long i = 0; i < a.count; i++) {
        double x = element(&a, i), y = element(&b, i);
        if (isinf(x) || isinf(y)) {   // masked scores: only the same infinity matches
            if (x != y) { ok = 0; max_abs = INFINITY; max_rel = INFINITY; }
            continue;
        }
        double d = fabs(x - y);
        if (isnan(d)) { ok = 0; max_abs = NAN; continue; }
        if (d > max_abs) max_abs = d;
        double rel = y != 0.0 ? d / fabs(y) : (d != 0.0 ? INFINITY : 0.0);
        if (rel > max_rel) max_rel = rel;
        if (d > atol + rtol * fabs(y)) ok = 0;
    }
    printf("%-18s %-16s %12.4g %12.4g  %s\n", name, sa, max_abs, max_rel, ok ? "PASS" : "FAIL");
    tw_npy_free(&a);
    tw_npy_free(&b);
    return ok;
}

static void die_usage(const char *msg, const char *arg) {
    fprintf(stderr, "npydiff: %s%s (usage: ./npydiff DIR_A DIR_B [--atol A] [--rtol R])\n", msg, arg);
    exit(2);
}

static double parse_tol(const char *flag, const char *s) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !(v >= 0.0)) {
        fprintf(stderr, "npydiff: %s: '%s' is not a non-negative number\n", flag, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    const char *dirs[2] = { NULL, NULL };
    double atol = 1e-5, rtol = 1e-4;
    int n_dirs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--atol") == 0 || strcmp(argv[i], "--rtol") == 0) {
            if (i + 1 >= argc) die_usage("flag needs a value: ", argv[i]);
            double v = parse_tol(argv[i], argv[i + 1]);
            if (argv[i][2] == 'a') atol = v; else rtol = v;
            i++;
        } else if (argv[i][0] == '-') {
            die_usage("unknown flag ", argv[i]);
        } else if (n_dirs < 2) {
            dirs[n_dirs++] = argv[i];
        } else {
            die_usage("unexpected argument ", argv[i]);
        }
    }
    if (n_dirs != 2) die_usage("needs two folders", "");

    name_list a = { 0 }, b = { 0 }, both = { 0 };
    for (int k = 0; k < 2; k++) {
        if (list_npy(k == 0 ? &a : &b, dirs[k]) != 0) {
            fprintf(stderr, "npydiff: %s: cannot read the folder: %s\n", dirs[k], strerror(errno));
            list_free(&a);
            list_free(&b);
            return 1;
        }
    }
    order_names(&both, dirs[0], &a, &b);
    printf("# %s vs %s (reference), pass: |a-b| <= %g + %g*|b|\n", dirs[0], dirs[1], atol, rtol);
    printf("%-18s %-16s %12s %12s  %s\n", "name", "shape", "max|a-b|", "max rel", "result");
    int passed = 0, failed = 0;
    for (int i = 0; i < both.n; i++) {
        if (compare_one(both.v[i], dirs[0], dirs[1], atol, rtol)) passed++;
        else failed++;
    }
    for (int i = 0; i < a.n; i++) if (!list_has(&b, a.v[i])) printf("# only in %s: %s\n", dirs[0], a.v[i]);
    for (int i = 0; i < b.n; i++) if (!list_has(&a, b.v[i])) printf("# only in %s: %s\n", dirs[1], b.v[i]);
    int rc = failed == 0 ? 0 : 1;
    if (both.n == 0) {
        printf("0 passed, 0 failed\n");
        fprintf(stderr, "npydiff: no tensor name is in both %s and %s\n", dirs[0], dirs[1]);
        rc = 1;
    } else {
        printf("%d passed, %d failed\n", passed, failed);
    }
    list_free(&a);
    list_free(&b);
    list_free(&both);
    return rc;
}
