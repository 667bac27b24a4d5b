// matvec_4row.h: y = W x walking four rows of W side by side (each load of x feeds four FMAs),
// the benchmark's comparison rung for the decode matvec the library runs (lib/simd/matvec_avx2.c,
// matvec_avx512.c: rows in memory order; see docs/kernels.md for why the library dropped this
// one). Same contract as simd.h's tw_matvec_fn; defined only when built for x86-64.
#ifndef TW_BENCH_MATVEC_4ROW_H
#define TW_BENCH_MATVEC_4ROW_H
void bench_matvec_4row_avx2(float *y, const float *W, const float *x, int N, int K);
void bench_matvec_4row_avx512(float *y, const float *W, const float *x, int N, int K);
#endif
