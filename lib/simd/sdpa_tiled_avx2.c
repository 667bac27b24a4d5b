// sdpa_tiled_avx2.c: the tiled attention's forward and backward (nn/sdpa_tiled.h) on AVX2 + FMA,
// 8 keys per register: sdpa_tiled_body.h over this ISA's vector layer. Compiled with -mavx2 -mfma
// on this object only; sdpa_tiled_hook.c calls it at the avx2 level.
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "simd.h"

#define W 8
#define VF __m256
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, x) _mm256_storeu_ps((p), (x))
#define VSET1(f) _mm256_set1_ps(f)
#define VZERO() _mm256_setzero_ps()
#define VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VMUL(a, b) _mm256_mul_ps((a), (b))
#define VSUB(a, b) _mm256_sub_ps((a), (b))
#define VMAX(a, b) _mm256_max_ps((a), (b))
#define VEXP(y, x, n) tw_exp_avx2((y), (x), (n))
#define SUFFIX(name) name##_avx2

static float hsum8(__m256 x) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static float hmax8(__m256 x) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#define VHSUM(x) hsum8(x)
#define VHMAX(x) hmax8(x)

#include "simd/sdpa_tiled_body.h"

int tw_sdpa_tiled_forward_avx2(float *out, float *row_max, float *row_logsum, const float *q,
                               const float *k, const float *v, const float *mask,
                               const tw_simd_tiling *a) {
    return tiled_forward_avx2(out, row_max, row_logsum, q, k, v, mask, a);
}

int tw_sdpa_tiled_backward_avx2(float *dq, float *dk, float *dv, const float *dout,
                                const float *out, const float *row_max, const float *row_logsum,
                                const float *q, const float *k, const float *v, const float *mask,
                                const tw_simd_tiling *a) {
    return tiled_backward_avx2(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v, mask, a);
}
