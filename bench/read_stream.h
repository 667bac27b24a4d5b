// read_stream.h: the ways the benchmarks read a buffer once to measure read bandwidth, for the
// decode rooflines of bench/bench.c and tools/bench_generate.c. Every byte is loaded once; which
// way is fastest depends on the CPU, so a roofline takes the fastest of them (a ceiling: a decode
// cannot read its bytes faster than the fastest way we know to read as many):
//   BENCH_READ_DOT     the level's dot product of the buffer's two halves: two ascending streams,
//                      no software prefetch. Fastest on the Intel Xeon (Emerald Rapids): 28.5-29.0
//                      GB/s over 58.8 MiB, against 26.4-27.3 for the matvec below.
//   BENCH_READ_MATVEC  the level's matvec over the buffer as rows of BENCH_READ_K floats: one
//                      ascending stream with the kernels' software prefetch, as decode reads its
//                      weights. On the AMD EPYC (Zen 5) the dot alone read 33-36 GB/s while the fp32
//                      decode read its 58.8 MiB a token at 39-42 GB/s (126-129 % of that roofline).
#ifndef BENCH_READ_STREAM_H
#define BENCH_READ_STREAM_H
#include "simd/simd.h"

enum { BENCH_READ_DOT, BENCH_READ_MATVEC, BENCH_READ_WAYS };
enum { BENCH_READ_K = 1024 };   // floats per row of BENCH_READ_MATVEC's matrix

// "dot of two halves", "matvec, one stream"
const char *bench_read_way_name(int way);

// Reads the n floats at b once, the given way, with kernels k; returns a sum of what it read (for
// the caller to keep, so that no compiler drops the reads). y: (BENCH_READ_K) floats of scratch.
// BENCH_READ_MATVEC leaves out the last n % BENCH_READ_K floats (under 4 KiB), BENCH_READ_DOT the
// last one of an odd n: bench_read_floats says how many it read.
float bench_read_once(const tw_kernels *k, int way, const float *b, long n, float *y);
long bench_read_floats(int way, long n);
#endif
