// q8_neon_dot.c: the int8 matvec with the Arm dot-product extension (compiled with
// -march=armv8.2-a+dotprod, this object only; chosen at run time only when the CPU reports it,
// see dispatch.c). sdot adds four products of signed bytes into each int32 lane; both
// operands are signed, so no sign trick is needed.
#include <arm_neon.h>
#include <stdint.h>
#include "q8.h"

static inline int32x4_t dot16(int32x4_t acc, const int8_t *w, const int8_t *x) {
    return vdotq_s32(acc, vld1q_s8(w), vld1q_s8(x));
}
#include "simd/q8_neon_matvec.h"   // q8_neon_matvec_rows: the row loop around dot16

void tw_q8_matvec_neon_dot(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                           const float *xs, int N, int K, int gs) {
    // gs % 16 == 0: the caller's promise (tw_q8_matvec in lib/quant/q8_0.c runs the naive loop otherwise)
    q8_neon_matvec_rows(y, Wq, Ws, xq, xs, N, K, gs);
}
