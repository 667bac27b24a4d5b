// cpuinfo.h: one line naming the CPU (vendor, model name, family/model or Arm part), for the
// benchmarks' headers, so every figure they print says which CPU it was measured on.
#ifndef BENCH_CPUINFO_H
#define BENCH_CPUINFO_H
#include <stddef.h>
// Fills buf with e.g. "GenuineIntel, Intel(R) Xeon(R) Processor, family 6 model 207, 2 logical
// CPUs" (Linux /proc/cpuinfo; "unknown CPU" where it cannot be read).
void bench_cpu_describe(char *buf, size_t n);
#endif
