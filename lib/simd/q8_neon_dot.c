// q8_neon_dot.c: the int8 matvec with the Arm dot-product extension (compiled with
// -march=armv8.2-a+dotprod, this object only; chosen at run time only when the CPU reports it,
// see q8_dispatch.c). sdot adds four products of signed bytes into each int32 lane; both
// operands are signed, so no sign trick is needed.
#include <arm_neon.h>
#include <stdint.h>
#include "q8.h"

static inline int32x4_t dot16(int32x4_t acc, const int8_t *w, const int8_t *x) {
    return vdotq_s32(acc, vld1q_s8(w), vld1q_s8(x));
}

void tw_q8_matvec_neon_dot(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                           const float *xs, int N, int K, int gs) {
    // gs % 16 == 0: the caller's promise (tw_q8_matvec in lib/nn/quant.c runs the naive loop otherwise)
    const int n_groups = K / gs;
    for (int i = 0; i < N; i++) {
        const int8_t *row = Wq + (long)i * K;
        const float *row_s = Ws + (long)i * n_groups;
        float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
        int g = 0;
        for (; g + 2 <= n_groups; g += 2) {
            int32x4_t d0 = vdupq_n_s32(0), d1 = vdupq_n_s32(0);
            for (int k = 0; k < gs; k += 16) {
                d0 = dot16(d0, row + g * gs + k, xq + g * gs + k);
                d1 = dot16(d1, row + (g + 1) * gs + k, xq + (g + 1) * gs + k);
            }
            acc0 = vfmaq_n_f32(acc0, vcvtq_f32_s32(d0), row_s[g] * xs[g]);
            acc1 = vfmaq_n_f32(acc1, vcvtq_f32_s32(d1), row_s[g + 1] * xs[g + 1]);
        }
        if (g < n_groups) {
            int32x4_t d0 = vdupq_n_s32(0);
            for (int k = 0; k < gs; k += 16) d0 = dot16(d0, row + g * gs + k, xq + g * gs + k);
            acc0 = vfmaq_n_f32(acc0, vcvtq_f32_s32(d0), row_s[g] * xs[g]);
        }
        y[i] = vaddvq_f32(vaddq_f32(acc0, acc1));
    }
}
