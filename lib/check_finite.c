// check_finite.c: the optional NaN/Inf check mode (see check_finite.h).
#include <math.h>
#include <stdio.h>
#include "check_finite.h"

long tw_first_nonfinite(const float *x, long n) {
    for (long i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;   // isfinite is false for NaN and both infinities
    return -1;
}

int tw_first_nonfinite_tensor(const tw_named_tensor *tensors, int n, long *elem) {
    for (int t = 0; t < n; t++) {
        long i = tw_first_nonfinite(tensors[t].data, tensors[t].count);
        if (i >= 0) {
            if (elem) *elem = i;
            return t;
        }
    }
    if (elem) *elem = -1;
    return -1;
}

tw_status tw_check_finite(const tw_named_tensor *tensors, int n, const char *where,
                          char *err, size_t err_len) {
    long i;
    int t = tw_first_nonfinite_tensor(tensors, n, &i);
    if (t < 0) return TW_OK;
    if (err && err_len) {
        float v = tensors[t].data[i];
        const char *what = isnan(v) ? "nan" : (v > 0 ? "+inf" : "-inf");
        snprintf(err, err_len, "%s%s%s[%ld] is %s (first non-finite tensor of %d checked)",
                 where ? where : "", where ? ": " : "", tensors[t].name ? tensors[t].name : "?",
                 i, what, n);
    }
    return TW_ERR_ARG;
}
