// q8_avx512.c: the int8 kernels for AVX-512 (compiled with -mavx512f -mavx512bw -mavx512vl
// -mavx2 -mfma, this object only; see q8.h): the activation quantizer and the AVX-512BW matvec.
// The VNNI matvec is in q8_avx512vnni.c, an object of its own, because a CPU can have AVX-512BW
// without VNNI (Skylake-SP) and the compiler must not emit VNNI instructions here.
//
// AVX-512 has no vpsignb, so the sign of w is moved onto x with a mask: m = sign bits of w,
// x' = m ? -x : x (vpsubb under the mask), then |w| * x' as in q8_avx2.c. Group sizes: gs % 64 ==
// 0 runs one group per 512-bit step; gs == 32 runs two groups per step, the float scales of the
// two halves set with one permute; other multiples of 32 use the AVX2 kernel.
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include "q8.h"

// ---- activations ----

static float absmax_bits(const float *x, int n) {
    const __m512i mask = _mm512_set1_epi32(0x7fffffff);
    __m512i m = _mm512_setzero_si512();
    for (int i = 0; i < n; i += 16)
        m = _mm512_max_epu32(m, _mm512_and_si512(_mm512_loadu_si512(x + i), mask));
    return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128((int)_mm512_reduce_max_epu32(m))));
}

void tw_q8_quantize_x_avx512(int8_t *q, float *s, const float *x, int n_groups, int gs) {
    if (gs % 16 != 0) { tw_q8_quantize_x_avx2(q, s, x, n_groups, gs); return; }
    const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
    for (int g = 0; g < n_groups; g++) {
        const float *xg = x + (long)g * gs;
        int8_t *qg = q + (long)g * gs;
        float scale = absmax_bits(xg, gs) / 127.0f;
        s[g] = scale;
        int usable = scale > 0.0f && scale < INFINITY;
        const __m512 vs = _mm512_set1_ps(scale);
        for (int i = 0; i < gs; i += 16) {
            __m128i b = _mm_setzero_si128();
            if (usable) {
                __m512 v = _mm512_div_ps(_mm512_loadu_ps(xg + i), vs);
                b = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi)));
            }
            _mm_storeu_si128((__m128i *)(qg + i), b);
        }
    }
}

// ---- matvec ----

static inline __m512i dot64(__m512i acc, const int8_t *w, const int8_t *x, __m512i ones) {
    __m512i wv = _mm512_loadu_si512(w), xv = _mm512_loadu_si512(x);
    __m512i sx = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(wv), _mm512_setzero_si512(), xv);
    __m512i p16 = _mm512_maddubs_epi16(_mm512_abs_epi8(wv), sx);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(p16, ones));
}

// Scales of two consecutive groups spread over the two 256-bit halves: lanes 0-7 = s[0], 8-15 = s[1].
static inline __m512 pair_scales(const float *ws, const float *xs) {
    __m128 c = _mm_mul_ps(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(ws))),
                          _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(xs))));
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(c));
}

void tw_q8_matvec_avx512bw(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                           const float *xs, int N, int K, int gs) {
    if (gs % 64 != 0 && gs != 32) { tw_q8_matvec_avx2(y, Wq, Ws, xq, xs, N, K, gs); return; }
    const int n_groups = K / gs;
    const __m512i ones = _mm512_set1_epi16(1);
    for (int i = 0; i < N; i++) {
        const int8_t *row = Wq + (long)i * K;
        const float *row_s = Ws + (long)i * n_groups;
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
        int g = 0;
        if (gs == 32) {
            for (; g + 4 <= n_groups; g += 4) {   // two 64-byte steps, two groups each
                __m512i d0 = dot64(_mm512_setzero_si512(), row + g * 32, xq + g * 32, ones);
                __m512i d1 = dot64(_mm512_setzero_si512(), row + g * 32 + 64, xq + g * 32 + 64, ones);
                acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), pair_scales(row_s + g, xs + g), acc0);
                acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), pair_scales(row_s + g + 2, xs + g + 2), acc1);
            }
            for (; g + 2 <= n_groups; g += 2) {
                __m512i d0 = dot64(_mm512_setzero_si512(), row + g * 32, xq + g * 32, ones);
                acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), pair_scales(row_s + g, xs + g), acc0);
            }
            if (g < n_groups) {   // one group of 32 left: 256-bit
                __m256i wv = _mm256_loadu_si256((const __m256i *)(row + g * 32));
                __m256i xv = _mm256_loadu_si256((const __m256i *)(xq + g * 32));
                __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(wv), _mm256_sign_epi8(xv, wv));
                __m256i d = _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
                __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(d), _mm256_set1_ps(row_s[g] * xs[g]));
                acc0 = _mm512_add_ps(acc0, _mm512_zextps256_ps512(t));
            }
        } else {
            for (; g + 2 <= n_groups; g += 2) {
                __m512i d0 = _mm512_setzero_si512(), d1 = _mm512_setzero_si512();
                for (int k = 0; k < gs; k += 64) {
                    d0 = dot64(d0, row + g * gs + k, xq + g * gs + k, ones);
                    d1 = dot64(d1, row + (g + 1) * gs + k, xq + (g + 1) * gs + k, ones);
                }
                acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), _mm512_set1_ps(row_s[g] * xs[g]), acc0);
                acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), _mm512_set1_ps(row_s[g + 1] * xs[g + 1]), acc1);
            }
            if (g < n_groups) {
                __m512i d0 = _mm512_setzero_si512();
                for (int k = 0; k < gs; k += 64) d0 = dot64(d0, row + g * gs + k, xq + g * gs + k, ones);
                acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), _mm512_set1_ps(row_s[g] * xs[g]), acc0);
            }
        }
        y[i] = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    }
}
