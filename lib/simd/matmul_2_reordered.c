// matmul_2_reordered.c: rung 2 of the matmul ladder, the loops reordered i-k-j, C = A B.
//   C: (M, N)   A: (M, K)   B: (K, N); C must not alias A or B.
// What changes from rung 1: k moves outside j, so the inner loop is
//     C[i][0..N) += A[i][k] * B[k][0..N)
// which reads B and writes C with unit stride. Every cache line fetched is used entirely, the
// hardware prefetcher sees a plain stream, and the compiler can vectorise the loop (clang at -O2
// and GCC at -O3 do, with SSE on x86-64 and without any ISA flag; GCC 12 at -O2 does not, since
// its cheap cost model refuses the run-time check that c and b do not overlap).
// What it does not fix: for large N a row of C and all of B no longer fit in cache, so B is
// streamed from memory once per row of A. Rung 3 (matmul_3_blocked.c) reuses B while it is cached.
// C[i][j] is still summed in order of k, so the result equals rung 1's bit for bit.
#include "simd.h"

void tw_matmul_reordered(float *C, const float *A, const float *B, int M, int N, int K) {
    for (int i = 0; i < M; i++) {
        float *c = C + (long)i * N;
        for (int j = 0; j < N; j++) c[j] = 0.0f;
        for (int k = 0; k < K; k++) {
            float a = A[(long)i * K + k];
            const float *b = B + (long)k * N;
            for (int j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
}
