// exp_avx512.h: exp of 16 floats in one AVX-512 register, shared by the kernels that need it
// inline (kernels_avx512.c's exp and softmax, sdpa_tiled_narrow_avx512.c). Include it only from a
// file compiled with -mavx512f.
#ifndef TW_EXP_AVX512_H
#define TW_EXP_AVX512_H
#include <immintrin.h>

// exp(x) for 16 floats: the same range reduction and Taylor polynomial as exp256 in
// kernels_avx2.c, but the final scaling by 2^n uses vscalefps, which handles overflow (+inf)
// and gradual underflow (subnormals) exactly, so no thresholds are needed beyond a clamp that
// keeps n in range. NaN stays NaN (min/max return their second operand when one is NaN).
static inline __m512 exp512(__m512 x) {
    // Below -104 the true value rounds to 0 even as a subnormal; above 89 it is +inf.
    __m512 xc = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(89.0f), x));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), xc);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

#endif
