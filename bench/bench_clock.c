// bench_clock.c: see bench_clock.h.
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include "bench_clock.h"
#include <stdlib.h>
#include <time.h>

static double seconds_of(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double now_seconds(void) { return seconds_of(CLOCK_MONOTONIC); }

double cpu_seconds(void) { return seconds_of(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
