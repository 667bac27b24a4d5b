// q8_g4_neon_dot.c: the int8 matvec for group size 4 with the AArch64 dot-product extension
// (FEAT_DotProd; compiled with -march=armv8.2-a+dotprod, this object only; chosen at run time
// only when the CPU reports it, see q8_dispatch.c).
//
// sdot adds the four products of 4 signed bytes by 4 signed bytes into one int32 lane: with
// gs == 4 that is exactly one group's dot product per lane, and a 16-byte step's 4 lanes line up
// with the row's next 4 float scales. A row's last K % 16 bytes (at most 3 groups) are added one
// group at a time in plain integer code.
#include <arm_neon.h>
#include <stdint.h>
#include "q8.h"

static inline float32x4_t step4(float32x4_t acc, const int8_t *w, const int8_t *x, const float *xs,
                                const float *ws) {
    int32x4_t d = vdotq_s32(vdupq_n_s32(0), vld1q_s8(w), vld1q_s8(x));
    return vfmaq_f32(acc, vmulq_f32(vcvtq_f32_s32(d), vld1q_f32(ws)), vld1q_f32(xs));
}

void tw_q8_matvec_g4_neon_dot(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                              const float *xs, int N, int K, int gs) {
    (void)gs;   // == 4
    const int n_groups = K / 4, K16 = K - K % 16;
    for (int i = 0; i < N; i++) {
        const int8_t *row = Wq + (long)i * K;
        const float *row_s = Ws + (long)i * n_groups;
        float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
        int k = 0;
        for (; k + 32 <= K16; k += 32) {   // two independent chains
            acc0 = step4(acc0, row + k, xq + k, xs + k / 4, row_s + k / 4);
            acc1 = step4(acc1, row + k + 16, xq + k + 16, xs + k / 4 + 4, row_s + k / 4 + 4);
        }
        if (k < K16) acc0 = step4(acc0, row + k, xq + k, xs + k / 4, row_s + k / 4);
        float sum = vaddvq_f32(vaddq_f32(acc0, acc1));
        for (int g = K16 / 4; g < n_groups; g++) {   // the last groups, one at a time
            int32_t dot = 0;
            for (int j = 4 * g; j < 4 * g + 4; j++) dot += (int32_t)row[j] * (int32_t)xq[j];
            sum += (float)dot * row_s[g] * xs[g];
        }
        y[i] = sum;
    }
}
