// q8_neon_matvec.h: the row loop of the two AArch64 int8 matvecs, written once: q8_neon.c
// (widening multiplies, every 64-bit Arm) and q8_neon_dot.c (sdot, built with +dotprod). They
// differ only in how the products of 16 signed bytes are added into four int32 lanes; each of
// the two files defines that, before including this header, as
//     static inline int32x4_t dot16(int32x4_t acc, const int8_t *w, const int8_t *x);
// so the call in the loop below is resolved and inlined at compile time (no function pointer in
// the inner loop), and each object gets its own copy of the loop, built with its own flags.
#ifndef TW_Q8_NEON_MATVEC_H
#define TW_Q8_NEON_MATVEC_H
#include <arm_neon.h>
#include <stdint.h>

// y = W x in Q8_0 (q8.h). y: (N); Wq: (N, K) int8, Ws: (N, K / gs) scales; xq: (K) int8,
// xs: (K / gs) scales. gs % 16 == 0. Two groups at a time, each with its own int32 and float
// accumulators (the float sums of the even and odd groups are added at the end of the row).
static inline void q8_neon_matvec_rows(float *y, const int8_t *Wq, const float *Ws,
                                       const int8_t *xq, const float *xs, int N, int K, int gs) {
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

#endif
