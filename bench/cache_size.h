// cache_size.h: the size of this CPU's caches, for the benchmarks' "fits in L1 / L2 / L3" labels.
#ifndef BENCH_CACHE_SIZE_H
#define BENCH_CACHE_SIZE_H
// The bytes of the cache of that level seen by one core (1: the L1 data cache, 2, 3: unified),
// or 0 if it cannot be told. Linux's sysfs first; where a virtual machine leaves sysfs without
// cache entries, the C library's answer from the CPUID instruction (glibc's sysconf), if it has one.
long bench_cache_bytes(int level);
#endif
