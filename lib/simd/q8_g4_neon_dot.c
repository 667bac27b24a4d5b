// q8_g4_neon_dot.c: the int8 matvec for group size 4 with the AArch64 dot-product extension
// (FEAT_DotProd; compiled with -march=armv8.2-a+dotprod, this object only; chosen at run time
// only when the CPU reports it, see dispatch.c).
//
// sdot adds the four products of 4 signed bytes by 4 signed bytes into one int32 lane: with
// gs == 4 that is exactly one group's dot product per lane, and a 16-byte step's 4 lanes line up
// with the row's next 4 float scales. The row loop is q8_g4_neon_matvec.h, shared with q8_g4_neon.c.
#include <arm_neon.h>
#include <stdint.h>
#include "q8.h"

// The 4 exact group dot products of 16 bytes of a row with x: one sdot.
static inline int32x4_t dot4_groups(int8x16_t w, int8x16_t x) {
    return vdotq_s32(vdupq_n_s32(0), w, x);
}

#include "simd/q8_g4_neon_matvec.h"   // q8_g4_neon_matvec_rows: the row loop around dot4_groups

void tw_q8_matvec_g4_neon_dot(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                              const float *xs, int N, int K, int gs) {
    (void)gs;   // == 4
    q8_g4_neon_matvec_rows(y, Wq, Ws, xq, xs, N, K);
}
