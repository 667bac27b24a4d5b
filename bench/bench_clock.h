// bench_clock.h: the clocks and the median of the benchmark tools (tools/bench_generate.c,
// tools/bench_train.c), written once.
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

// Wall time in seconds from a fixed, unspecified start (CLOCK_MONOTONIC): only differences mean
// anything.
double now_seconds(void);

// CPU seconds of the whole process, all threads (CLOCK_PROCESS_CPUTIME_ID): beside the wall time
// it shows how much of the machine a run got (a shared machine's other load takes the rest).
double cpu_seconds(void);

// The median of v[0..n-1] (n >= 1; the mean of the two middle values when n is even).
// Sorts v in place.
double median(double *v, int n);

#endif
