// sdpa_tiled_avx512.c: the tiled attention's forward and backward (nn/sdpa_tiled.h) on AVX-512F,
// 16 keys per register: sdpa_tiled_body.h over this ISA's vector layer, after the kernel for narrow
// heads (sdpa_tiled_narrow_avx512.c) where it takes the call. Compiled with
// -mavx512f -mfma on this object only; sdpa_tiled_hook.c calls it at the avx512 level.
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "simd.h"

#define W 16
#define VF __m512
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, x) _mm512_storeu_ps((p), (x))
#define VSET1(f) _mm512_set1_ps(f)
#define VZERO() _mm512_setzero_ps()
#define VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VMUL(a, b) _mm512_mul_ps((a), (b))
#define VSUB(a, b) _mm512_sub_ps((a), (b))
#define VMAX(a, b) _mm512_max_ps((a), (b))
#define VHSUM(x) _mm512_reduce_add_ps(x)
#define VHMAX(x) _mm512_reduce_max_ps(x)
#define VEXP(y, x, n) tw_exp_avx512((y), (x), (n))
#define SUFFIX(name) name##_avx512

#include "simd/sdpa_tiled_body.h"

int tw_sdpa_tiled_forward_avx512(float *out, float *row_max, float *row_logsum, const float *q,
                                 const float *k, const float *v, const float *mask,
                                 const tw_simd_tiling *a) {
    return tw_sdpa_tiled_forward_narrow_avx512(out, row_max, row_logsum, q, k, v, mask, a) ||
           tiled_forward_avx512(out, row_max, row_logsum, q, k, v, mask, a);
}

int tw_sdpa_tiled_backward_avx512(float *dq, float *dk, float *dv, const float *dout,
                                  const float *out, const float *row_max, const float *row_logsum,
                                  const float *q, const float *k, const float *v, const float *mask,
                                  const tw_simd_tiling *a) {
    return tw_sdpa_tiled_backward_narrow_avx512(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v,
                                                mask, a) ||
           tiled_backward_avx512(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v, mask, a);
}
