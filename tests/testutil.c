// testutil.c: see testutil.h.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

long tw_worst_mismatch(const float *got, const float *want, long n, double atol, double rtol) {
    long worst = -1;
    double worst_excess = 0.0;
    for (long i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        if (isinf(w) || isinf(g)) {
            if (g != w) return i;
            continue;
        }
        double excess = fabs(g - w) - (atol + rtol * fabs(w));
        if (isnan(excess)) return i;
        if (excess > worst_excess) { worst_excess = excess; worst = i; }
    }
    return worst;
}

tw_npy tt_load(const char *rel, long expect_count) {
    char path[512], err[256] = "";
    snprintf(path, sizeof path, "data/golden/%s.npy", rel);
    tw_npy a;
    tw_status st = tw_npy_read(&a, path, err, sizeof err);
    ck_assert_msg(st == TW_OK, "cannot load golden %s: %s (%s); regenerate with "
                  "/usr/bin/python3 tests/golden/<script>.py", path, tw_status_str(st), err);
    ck_assert_msg(expect_count < 0 || a.count == expect_count,
                  "golden %s has %ld elements, the test expects %ld", path, a.count, expect_count);
    return a;
}

float *tt_zeros(long n) {
    float *p = calloc((size_t)(n > 0 ? n : 1), sizeof(float));
    ck_assert_msg(p != NULL, "out of memory allocating %ld floats", n);
    return p;
}

float *tt_rand(long n, float lo, float hi, uint64_t seed) {
    float *p = tt_zeros(n);
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_rng_fill_uniform(&r, p, n, lo, hi);
    return p;
}

unsigned char *tt_read_file(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    ck_assert_msg(n >= 0, "cannot measure %s", path);
    unsigned char *b = malloc((size_t)n + 1);
    ck_assert_msg(b != NULL, "out of memory reading %s (%ld bytes)", path, n);
    ck_assert_int_eq((long)fread(b, 1, (size_t)n, f), n);
    fclose(f);
    b[n] = '\0';
    if (len) *len = n;
    return b;
}

tw_json *tt_json_parse(const char *text) {
    tw_json *root;
    tw_json_error e;
    ck_assert_msg(tw_json_parse(&root, text, strlen(text), &e) == TW_OK, "bad test JSON: %s", e.msg);
    return root;
}

tw_json *tt_json_read_file(const char *path) {
    char err[256];
    tw_json *root;
    ck_assert_msg(tw_json_read_file(&root, path, err, sizeof err) == TW_OK, "%s", err);
    return root;
}

void tt_randomize_strong(tw_model *m, uint64_t seed, float embed_std) {
    tw_model_randomize(m, seed);
    tw_rng r;
    tw_rng_init(&r, seed ^ 0x5eed);
    for (int i = 0; i < m->n_params; i++) {
        tw_param *p = &m->params[i];
        if (p->kind == TW_PARAM_WEIGHT)
            tw_rng_fill_normal(&r, p->data, p->count, 1.0f / sqrtf((float)p->shape[1]));
        else if (p->kind == TW_PARAM_EMBED)
            tw_rng_fill_normal(&r, p->data, p->count, embed_std);
    }
}
