// autovec.c: the compiler-vectorised rung, the yardstick every benchmark run prints beside our
// kernels. Plain loops, written to be read, built with `-O3 -ffast-math -march=native` in this
// object only (mk/simd.mk): that is how llama2.c's run.c builds its matmul (`-Ofast
// -march=native`), so "ours vs this" is "ours vs what a compiler makes of the obvious loop on
// this very CPU". -ffast-math lets the compiler reassociate the sums (several vector partial
// sums, then a horizontal add), which is what makes it fast and also why it is NOT used by the
// library: its rounding depends on the compiler and the CPU. Benchmarks only (bench/bench.c,
// tools/bench_generate.c); never linked into the model programs.
#include "autovec.h"

// y = W x, one row at a time.   y: (N)   W: (N, K)   x: (K)
void bench_matvec_autovec(float *y, const float *W, const float *x, int N, int K) {
    for (int i = 0; i < N; i++) {
        const float *w = W + (long)i * K;
        float sum = 0.0f;
        for (int k = 0; k < K; k++) sum += w[k] * x[k];
        y[i] = sum;
    }
}

// C = A B in i-k-j order (rung 2's loop), vectorised by the compiler along j.
//   C: (M, N)   A: (M, K)   B: (K, N)
void bench_matmul_autovec(float *C, const float *A, const float *B, int M, int N, int K) {
    for (int i = 0; i < M; i++) {
        float *c = C + (long)i * N;
        for (int j = 0; j < N; j++) c[j] = 0.0f;
        for (int k = 0; k < K; k++) {
            const float a = A[(long)i * K + k];
            const float *b = B + (long)k * N;
            for (int j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
}
