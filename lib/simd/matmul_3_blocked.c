// matmul_3_blocked.c: rung 3 of the matmul ladder, cache blocking (tiling), C = A B.
//   C: (M, N)   A: (M, K)   B: (K, N); C must not alias A or B.
// What changes from rung 2: the i-k-j loops run over tiles. A tile of B of BK x BN floats
// (128 x 256 x 4 bytes = 128 KiB, inside a typical 1-2 MiB L2) is reused by every row of A
// before the loop moves on, instead of all of B being streamed once per row. The C strip of BN
// floats and the B rows in use also stay in L1 during the innermost loop.
// What it does not fix: the inner loop still loads and stores C on every k (one load, one
// store per multiply-add), and it leaves register reuse to the compiler. Rung 4
// (matmul_4_packed.c + a micro-kernel) keeps a tile of C in registers for the whole k loop.
// Each C[i][j] is still summed in order of k (tiles of k are visited in order), so the result
// equals rungs 1 and 2 bit for bit.
#include "simd.h"

enum { BLOCK_K = 128, BLOCK_N = 256, BLOCK_M = 64 };

static int min_int(int a, int b) { return a < b ? a : b; }

void tw_matmul_blocked(float *C, const float *A, const float *B, int M, int N, int K) {
    for (long i = 0; i < (long)M * N; i++) C[i] = 0.0f;
    for (int j0 = 0; j0 < N; j0 += BLOCK_N) {
        int j1 = min_int(j0 + BLOCK_N, N);
        for (int k0 = 0; k0 < K; k0 += BLOCK_K) {
            int k1 = min_int(k0 + BLOCK_K, K);
            for (int i0 = 0; i0 < M; i0 += BLOCK_M) {
                int i1 = min_int(i0 + BLOCK_M, M);
                for (int i = i0; i < i1; i++) {
                    float *c = C + (long)i * N;
                    for (int k = k0; k < k1; k++) {
                        float a = A[(long)i * K + k];
                        const float *b = B + (long)k * N;
                        for (int j = j0; j < j1; j++) c[j] += a * b[j];
                    }
                }
            }
        }
    }
}
