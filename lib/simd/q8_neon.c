// q8_neon.c: the int8 kernels for AArch64 Advanced SIMD (baseline on every 64-bit Arm; see q8.h):
// the activation quantizer, and the matvec with widening multiplies for CPUs without the
// dot-product extension (the sdot version is q8_neon_dot.c, an object built with +dotprod).
//
// vmull_s8 / vmlal_high_s8 multiply signed bytes into int16 and add two products per lane
// (|sum| <= 2 * 128 * 127 = 32512: no overflow), vpadalq_s16 adds pairs of those into int32.
#include <arm_neon.h>
#include <math.h>
#include <stdint.h>
#include "q8.h"

// ---- activations ----

// max |x_i| through the integer view of the floats (a NaN's pattern is above +Inf's, so a NaN
// wins as in the naive loop).
static float absmax_bits(const float *x, int n) {
    const uint32x4_t mask = vdupq_n_u32(0x7fffffffu);
    uint32x4_t m = vdupq_n_u32(0);
    for (int i = 0; i < n; i += 4)
        m = vmaxq_u32(m, vandq_u32(vreinterpretq_u32_f32(vld1q_f32(x + i)), mask));
    uint32_t bits = vmaxvq_u32(m);
    float f;
    __builtin_memcpy(&f, &bits, sizeof f);
    return f;
}

void tw_q8_quantize_x_neon(int8_t *q, float *s, const float *x, int n_groups, int gs) {
    // gs % 8 == 0: the caller's promise (tw_q8_quantize_x in lib/quant/q8_0.c runs the naive loop otherwise)
    const float32x4_t lo = vdupq_n_f32(-127.0f), hi = vdupq_n_f32(127.0f);
    for (int g = 0; g < n_groups; g++) {
        const float *xg = x + (long)g * gs;
        int8_t *qg = q + (long)g * gs;
        float scale = absmax_bits(xg, gs) / 127.0f;
        s[g] = scale;
        int usable = scale > 0.0f && scale < INFINITY;
        const float32x4_t vs = vdupq_n_f32(scale);
        for (int i = 0; i < gs; i += 8) {
            int8x8_t b = vdup_n_s8(0);
            if (usable) {   // the same division, clamp and round-to-nearest-even as the naive loop
                float32x4_t v0 = vdivq_f32(vld1q_f32(xg + i), vs), v1 = vdivq_f32(vld1q_f32(xg + i + 4), vs);
                int32x4_t r0 = vcvtnq_s32_f32(vminq_f32(vmaxq_f32(v0, lo), hi));
                int32x4_t r1 = vcvtnq_s32_f32(vminq_f32(vmaxq_f32(v1, lo), hi));
                b = vqmovn_s16(vcombine_s16(vqmovn_s32(r0), vqmovn_s32(r1)));
            }
            vst1_s8(qg + i, b);
        }
    }
}

// ---- matvec ----

static inline int32x4_t dot16(int32x4_t acc, const int8_t *w, const int8_t *x) {
    int8x16_t wv = vld1q_s8(w), xv = vld1q_s8(x);
    int16x8_t p = vmull_s8(vget_low_s8(wv), vget_low_s8(xv));
    p = vmlal_high_s8(p, wv, xv);
    return vpadalq_s16(acc, p);
}
#include "simd/q8_neon_matvec.h"   // q8_neon_matvec_rows: the row loop around dot16

void tw_q8_matvec_neon(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                       const float *xs, int N, int K, int gs) {
    // gs % 16 == 0: the caller's promise (tw_q8_matvec in lib/quant/q8_0.c runs the naive loop otherwise)
    q8_neon_matvec_rows(y, Wq, Ws, xq, xs, N, K, gs);
}
