// autovec.h: the compiler-vectorised rung (bench/autovec.c), for the benchmarks only.
#ifndef BENCH_AUTOVEC_H
#define BENCH_AUTOVEC_H
void bench_matvec_autovec(float *y, const float *W, const float *x, int N, int K);
void bench_matmul_autovec(float *C, const float *A, const float *B, int M, int N, int K);
#endif
