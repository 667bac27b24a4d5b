// matmul_1_naive.c: rung 1 of the matmul ladder, the textbook triple loop, C = A B.
//   C: (M, N)   A: (M, K)   B: (K, N), all row-major; C must not alias A or B.
// Each C[i][j] is one dot product of row i of A with column j of B, summed in order of k.
// Why it is slow: the inner loop walks B down a column, a stride of N floats, so every
// multiply-add touches a new cache line (and for N >= 1024 a new page), and the compiler cannot
// vectorise a strided loop. Rung 2 (matmul_2_reordered.c) fixes the stride.
#include "simd.h"

void tw_matmul_naive(float *C, const float *A, const float *B, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float sum = 0.0f;
            for (int k = 0; k < K; k++) sum += A[(long)i * K + k] * B[(long)k * N + j];
            C[(long)i * N + j] = sum;
        }
}

// C = A B^T with B stored (N, K), the Linear layer's layout: here the naive loop is already unit
// stride (a dot product of two rows), and it sums in the same order as tw_linear_forward.
void tw_matmul_nt_naive(float *C, const float *A, const float *B, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            C[(long)i * N + j] = tw_dot_naive(A + (long)i * K, B + (long)j * K, K);
}
