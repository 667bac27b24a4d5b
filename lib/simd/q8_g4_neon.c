// q8_g4_neon.c: the int8 kernels for group size 4 on AArch64 Advanced SIMD (baseline on every
// 64-bit Arm; see q8.h): the activation quantizer, and the matvec with widening multiplies for
// CPUs without the dot-product extension (the sdot version is q8_g4_neon_dot.c).
//
// With gs == 4 a 16-byte step holds 4 groups, and the row's next 4 float scales line up with 4
// int32 lanes. vmull_s8 / vmull_high_s8 multiply the bytes into int16 (|w x| <= 128 * 127),
// vpaddlq_s16 adds neighbouring products into int32 (bytes 4j..4j+1 and 4j+2..4j+3 side by side),
// and vpaddq_s32 adds those neighbours: lane j is then the exact dot product of group j. The row
// loop around it is q8_g4_neon_matvec.h, shared with the sdot version.
#include <arm_neon.h>
#include <math.h>
#include <stdint.h>
#include "q8.h"

// ---- activations ----

void tw_q8_quantize_x_g4_neon(int8_t *q, float *s, const float *x, int n_groups, int gs) {
    (void)gs;   // == 4: the caller's promise
    const float32x4_t lo = vdupq_n_f32(-127.0f), hi = vdupq_n_f32(127.0f);
    for (int g = 0; g < n_groups; g++) {   // one group = one 128-bit register
        float32x4_t v = vld1q_f32(x + 4 * g);
        // max |x| through the integer view (a NaN's pattern is above +Inf's, so a NaN wins)
        uint32_t bits = vmaxvq_u32(vandq_u32(vreinterpretq_u32_f32(v), vdupq_n_u32(0x7fffffffu)));
        float m;
        __builtin_memcpy(&m, &bits, sizeof m);
        float scale = m / 127.0f;
        s[g] = scale;
        int32x4_t r = vdupq_n_s32(0);
        if (scale > 0.0f && scale < INFINITY)   // the naive loop's division, clamp and rounding
            r = vcvtnq_s32_f32(vminq_f32(vmaxq_f32(vdivq_f32(v, vdupq_n_f32(scale)), lo), hi));
        int8x8_t b = vqmovn_s16(vcombine_s16(vqmovn_s32(r), vdup_n_s16(0)));
        int32_t four = vget_lane_s32(vreinterpret_s32_s8(b), 0);
        __builtin_memcpy(q + 4 * g, &four, 4);
    }
}

// ---- matvec ----

// The 4 exact group dot products of 16 bytes of a row with x, one per int32 lane.
static inline int32x4_t dot4_groups(int8x16_t wv, int8x16_t xv) {
    int32x4_t lo = vpaddlq_s16(vmull_s8(vget_low_s8(wv), vget_low_s8(xv)));
    int32x4_t hi = vpaddlq_s16(vmull_high_s8(wv, xv));
    return vpaddq_s32(lo, hi);
}

#include "simd/q8_g4_neon_matvec.h"   // q8_g4_neon_matvec_rows: the row loop around dot4_groups

void tw_q8_matvec_g4_neon(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                          const float *xs, int N, int K, int gs) {
    (void)gs;   // == 4
    q8_g4_neon_matvec_rows(y, Wq, Ws, xq, xs, N, K);
}
