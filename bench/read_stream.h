// read_stream.h: the read stream the decode roofline of tools/bench_generate.c is measured with.
#ifndef BENCH_READ_STREAM_H
#define BENCH_READ_STREAM_H
// The sum of a[0..n-1], read once in ascending order.   a: (n)
float bench_read_stream(const float *a, long n);
#endif
