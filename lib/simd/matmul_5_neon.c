// matmul_5_neon.c: the NEON micro-kernel for the packed matmul (rung 4, matmul_4_packed.c) and the
// dispatch entries built on it.
// The tile is 8 x 8: 8 rows of C, each two 4-float registers, is 16 accumulators of the 32
// NEON registers. Per k: two loads of B (8 floats), two loads of A (8 floats), and 16 FMAs
// that take their A factor from one lane of a register (vfmaq_laneq_f32), so A needs no
// broadcast instructions.
#include <arm_neon.h>
#include "simd.h"

enum { MR = 8, NR = 8 };

static void ukernel_neon(int kc, const float *Ap, const float *Bp, float *C, long ldc,
                         int accumulate) {
    float32x4_t c[MR][2];
    for (int i = 0; i < MR; i++) c[i][0] = c[i][1] = vdupq_n_f32(0.0f);
    for (int k = 0; k < kc; k++) {
        float32x4_t b0 = vld1q_f32(Bp + k * NR), b1 = vld1q_f32(Bp + k * NR + 4);
        float32x4_t a0 = vld1q_f32(Ap + k * MR), a1 = vld1q_f32(Ap + k * MR + 4);
        c[0][0] = vfmaq_laneq_f32(c[0][0], b0, a0, 0); c[0][1] = vfmaq_laneq_f32(c[0][1], b1, a0, 0);
        c[1][0] = vfmaq_laneq_f32(c[1][0], b0, a0, 1); c[1][1] = vfmaq_laneq_f32(c[1][1], b1, a0, 1);
        c[2][0] = vfmaq_laneq_f32(c[2][0], b0, a0, 2); c[2][1] = vfmaq_laneq_f32(c[2][1], b1, a0, 2);
        c[3][0] = vfmaq_laneq_f32(c[3][0], b0, a0, 3); c[3][1] = vfmaq_laneq_f32(c[3][1], b1, a0, 3);
        c[4][0] = vfmaq_laneq_f32(c[4][0], b0, a1, 0); c[4][1] = vfmaq_laneq_f32(c[4][1], b1, a1, 0);
        c[5][0] = vfmaq_laneq_f32(c[5][0], b0, a1, 1); c[5][1] = vfmaq_laneq_f32(c[5][1], b1, a1, 1);
        c[6][0] = vfmaq_laneq_f32(c[6][0], b0, a1, 2); c[6][1] = vfmaq_laneq_f32(c[6][1], b1, a1, 2);
        c[7][0] = vfmaq_laneq_f32(c[7][0], b0, a1, 3); c[7][1] = vfmaq_laneq_f32(c[7][1], b1, a1, 3);
    }
    for (int i = 0; i < MR; i++) {
        float *ci = C + i * ldc;
        if (accumulate) {
            c[i][0] = vaddq_f32(c[i][0], vld1q_f32(ci));
            c[i][1] = vaddq_f32(c[i][1], vld1q_f32(ci + 4));
        }
        vst1q_f32(ci, c[i][0]);
        vst1q_f32(ci + 4, c[i][1]);
    }
}

const tw_ukernel tw_ukernel_neon = { "neon 8x8", MR, NR, 256, 128, 1024, ukernel_neon };

void tw_matmul_neon(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_neon, C, A, B, N, 1, M, N, K, 1);
}
void tw_matmul_nt_neon(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_neon, C, A, B, 1, K, M, N, K, 1);
}
void tw_matmul_mt_neon(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_neon, C, A, B, N, 1, M, N, K, tw_matmul_threads());
}
void tw_matmul_nt_mt_neon(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_neon, C, A, B, 1, K, M, N, K, tw_matmul_threads());
}
