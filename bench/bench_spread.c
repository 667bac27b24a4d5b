// bench_spread.c: see bench_spread.h.
#include "bench_spread.h"
#include "bench_clock.h"   // median

void min_max(const double *v, int n, double *lo, double *hi) {
    *lo = *hi = v[0];
    for (int i = 1; i < n; i++) {
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
}

spread paired_ratio(const double *num, const double *den, int n) {
    double r[BENCH_MAX_REPEATS] = { 0 };   // (n): the per-repeat ratios, sorted by median()
    spread out;
    if (n > BENCH_MAX_REPEATS) n = BENCH_MAX_REPEATS;
    for (int k = 0; k < n; k++) r[k] = num[k] / den[k];
    min_max(r, n, &out.lo, &out.hi);
    out.median = median(r, n);
    return out;
}
