// golden_case.c: see golden_case.h.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"

static void *load_copy(const char *dir, const char *name, long expect_count, tw_npy_dtype dtype) {
    char rel[256];
    snprintf(rel, sizeof rel, "%s/%s", dir, name);
    tw_npy a = tt_load(rel, expect_count);
    ck_assert_msg(a.dtype == dtype, "golden %s: expected %s data", rel,
                  dtype == TW_NPY_F32 ? "float32" : "int32");
    size_t bytes = (size_t)(a.count > 0 ? a.count : 1) * 4;
    void *p = malloc(bytes);
    ck_assert_msg(p != NULL, "out of memory loading %s", rel);
    memcpy(p, a.data, (size_t)a.count * 4);
    tw_npy_free(&a);
    return p;
}

float *gc_load(const char *dir, const char *name, long expect_count) {
    return load_copy(dir, name, expect_count, TW_NPY_F32);
}

int *gc_load_i32(const char *dir, const char *name, long expect_count) {
    return load_copy(dir, name, expect_count, TW_NPY_I32);
}

double gc_max_abs_err(const float *got, const float *want, long n) {
    double worst = 0.0;
    for (long i = 0; i < n; i++) {
        if (isinf(want[i]) && got[i] == want[i]) continue;
        double e = fabs((double)got[i] - (double)want[i]);
        if (!(e <= worst)) worst = e;   // NaN propagates as the worst
    }
    return worst;
}
