// matmul_5_avx2.c: the AVX2 + FMA micro-kernel for the packed matmul (rung 4, matmul_4_packed.c),
// and the dispatch entries built on it. Compiled with -mavx2 -mfma on this object only.
//
// The tile is 6 x 16: 6 rows of C, each two 8-float registers, is 12 accumulators. With the two
// B registers and one broadcast of A that is 15 of the 16 ymm registers. Per k the kernel does
// 2 loads of B, 6 broadcasts of A and 12 FMAs: 12 independent FMAs cover the FMA latency (4
// cycles x 2 ports = 8 in flight needed), and 8 loads per 12 FMAs stay under 2 loads per cycle.
#include <immintrin.h>
#include "simd.h"

enum { MR = 6, NR = 16 };

static void ukernel_avx2(int kc, const float *Ap, const float *Bp, float *C, long ldc,
                         int accumulate) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (int k = 0; k < kc; k++) {
        const float *a = Ap + k * MR;
        __m256 b0 = _mm256_load_ps(Bp + k * NR), b1 = _mm256_load_ps(Bp + k * NR + 8);
        __m256 ai;
        ai = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(ai, b0, c00); c01 = _mm256_fmadd_ps(ai, b1, c01);
        ai = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(ai, b0, c10); c11 = _mm256_fmadd_ps(ai, b1, c11);
        ai = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(ai, b0, c20); c21 = _mm256_fmadd_ps(ai, b1, c21);
        ai = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(ai, b0, c30); c31 = _mm256_fmadd_ps(ai, b1, c31);
        ai = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(ai, b0, c40); c41 = _mm256_fmadd_ps(ai, b1, c41);
        ai = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(ai, b0, c50); c51 = _mm256_fmadd_ps(ai, b1, c51);
    }
    __m256 acc[MR][2] = { {c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51} };
    for (int i = 0; i < MR; i++) {
        float *c = C + i * ldc;
        if (accumulate) {
            acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(c));
            acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(c + 8));
        }
        _mm256_storeu_ps(c, acc[i][0]);
        _mm256_storeu_ps(c + 8, acc[i][1]);
    }
}

// mr x kc of A = 6 x 256 x 4 B = 6 KiB in L1; kc x nc of B = 256 x 1024 x 4 B = 1 MiB in L2.
const tw_ukernel tw_ukernel_avx2 = { "avx2 6x16", MR, NR, 256, 144, 1024, ukernel_avx2 };

void tw_matmul_avx2(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_avx2, C, A, B, N, 1, M, N, K, 1);
}
void tw_matmul_nt_avx2(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_avx2, C, A, B, 1, K, M, N, K, 1);
}
void tw_matmul_mt_avx2(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_avx2, C, A, B, N, 1, M, N, K, tw_matmul_threads());
}
void tw_matmul_nt_mt_avx2(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_avx2, C, A, B, 1, K, M, N, K, tw_matmul_threads());
}
