// bench_spread.h: a figure over the repeats of a benchmark as its median and range, and the ratio
// of two figures measured side by side in each repeat (tools/bench_generate.c, tools/bench_train.c).
// On a shared or virtual machine the speed of the host moves from one minute to the next, so a
// ratio means something only when both of its terms come from the same repeat.
#ifndef BENCH_SPREAD_H
#define BENCH_SPREAD_H

enum { BENCH_MAX_REPEATS = 64 };   // the most repeats paired_ratio takes

// The median of some values and their range.
typedef struct {
    double median, lo, hi;
} spread;

// The smallest and the largest of v[0..n-1] (n >= 1).
void min_max(const double *v, int n, double *lo, double *hi);

// The per-repeat ratios num[k] / den[k] (1 <= n <= BENCH_MAX_REPEATS; each pair measured in the
// same repeat, so a slow second of the machine cancels): their median and range.
spread paired_ratio(const double *num, const double *den, int n);

#endif
