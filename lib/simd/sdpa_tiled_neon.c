// sdpa_tiled_neon.c: the tiled attention's forward and backward (nn/sdpa_tiled.h) on AArch64
// Advanced SIMD, 4 keys per register: sdpa_tiled_body.h over this ISA's vector layer.
// sdpa_tiled_hook.c calls it at the neon level.
#include <arm_neon.h>
#include <math.h>
#include <string.h>
#include "simd.h"

#define W 4
#define VF float32x4_t
#define VLOAD(p) vld1q_f32(p)
#define VSTORE(p, x) vst1q_f32((p), (x))
#define VSET1(f) vdupq_n_f32(f)
#define VZERO() vdupq_n_f32(0.0f)
#define VFMA(a, b, c) vfmaq_f32((c), (a), (b))
#define VADD(a, b) vaddq_f32((a), (b))
#define VMUL(a, b) vmulq_f32((a), (b))
#define VSUB(a, b) vsubq_f32((a), (b))
#define VMAX(a, b) vmaxq_f32((a), (b))
#define VHSUM(x) vaddvq_f32(x)
#define VHMAX(x) vmaxvq_f32(x)
#define VEXP(y, x, n) tw_exp_neon((y), (x), (n))
#define SUFFIX(name) name##_neon

#include "simd/sdpa_tiled_body.h"

int tw_sdpa_tiled_forward_neon(float *out, float *row_max, float *row_logsum, const float *q,
                               const float *k, const float *v, const float *mask,
                               const tw_simd_tiling *a) {
    return tiled_forward_neon(out, row_max, row_logsum, q, k, v, mask, a);
}

int tw_sdpa_tiled_backward_neon(float *dq, float *dk, float *dv, const float *dout,
                                const float *out, const float *row_max, const float *row_logsum,
                                const float *q, const float *k, const float *v, const float *mask,
                                const tw_simd_tiling *a) {
    return tiled_backward_neon(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v, mask, a);
}
