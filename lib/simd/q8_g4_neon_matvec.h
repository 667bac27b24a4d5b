// q8_g4_neon_matvec.h: the row loop of the two AArch64 int8 matvecs for group size 4, written
// once: q8_g4_neon.c (widening multiplies, every 64-bit Arm) and q8_g4_neon_dot.c (sdot, built
// with +dotprod). They differ only in how 16 bytes of a row and of x become the 4 exact group
// dot products, one per int32 lane; each file defines that, before including this header, as
//     static inline int32x4_t dot4_groups(int8x16_t w, int8x16_t x);
// so the call below is inlined at compile time (no function pointer in the inner loop), and each
// object gets its own copy of the loop, built with its own flags (as q8_neon_matvec.h does).
#ifndef TW_Q8_G4_NEON_MATVEC_H
#define TW_Q8_G4_NEON_MATVEC_H
#include <arm_neon.h>
#include <stdint.h>

// acc + ((the 4 group dot products of w and x) * ws) * xs, lane by lane: the naive loop's order
// of the two products (q8.h).   w, x: (16)   ws, xs: (4)
static inline float32x4_t q8_g4_neon_step(float32x4_t acc, const int8_t *w, const int8_t *x,
                                          const float *ws, const float *xs) {
    const int32x4_t d = dot4_groups(vld1q_s8(w), vld1q_s8(x));
    return vfmaq_f32(acc, vmulq_f32(vcvtq_f32_s32(d), vld1q_f32(ws)), vld1q_f32(xs));
}

// y = W x in Q8_0 with gs == 4. y: (N); Wq: (N, K) int8, Ws: (N, K / 4); xq: (K) int8,
// xs: (K / 4). 16 bytes (4 groups) a step, two chains; a row's last K % 16 bytes (at most 3
// groups) are added one group at a time in plain integer code.
static inline void q8_g4_neon_matvec_rows(float *y, const int8_t *Wq, const float *Ws,
                                          const int8_t *xq, const float *xs, int N, int K) {
    const int n_groups = K / 4, K16 = K - K % 16;
    for (int i = 0; i < N; i++) {
        const int8_t *row = Wq + (long)i * K;
        const float *row_s = Ws + (long)i * n_groups;
        float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
        int k = 0;
        for (; k + 32 <= K16; k += 32) {   // two independent chains
            acc0 = q8_g4_neon_step(acc0, row + k, xq + k, row_s + k / 4, xs + k / 4);
            acc1 = q8_g4_neon_step(acc1, row + k + 16, xq + k + 16, row_s + k / 4 + 4, xs + k / 4 + 4);
        }
        if (k < K16) acc0 = q8_g4_neon_step(acc0, row + k, xq + k, row_s + k / 4, xs + k / 4);
        float sum = vaddvq_f32(vaddq_f32(acc0, acc1));
        for (int g = K16 / 4; g < n_groups; g++) {   // the last groups, one at a time
            int32_t dot = 0;
            for (int j = 4 * g; j < 4 * g + 4; j++) dot += (int32_t)row[j] * (int32_t)xq[j];
            sum += (float)dot * row_s[g] * xs[g];
        }
        y[i] = sum;
    }
}

#endif
