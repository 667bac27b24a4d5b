// q8_avx2.c: the int8 kernels for AVX2 (compiled with -mavx2 -mfma, this object only; see q8.h).
//
// The integer trick. vpmaddubsw multiplies unsigned bytes by signed bytes. Q8_0 has signed bytes
// on both sides, so the sign of w is moved onto x:  w * x = |w| * (sign(w) x), with |w| <= 128
// taken as unsigned and sign(w) x in [-127, 127] (x never holds -128: quantize_x cannot produce
// it). Adjacent products are added into int16 (|sum| <= 2 * 128 * 127 = 32512: no saturation),
// then vpmaddwd with ones adds pairs into int32. Per group the int32 lanes are exact; they are
// converted to float (exact below 2^24) and accumulated with one FMA by Ws * xs.
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include "q8.h"

// ---- activations ----

// max |x_i| over 8k values, through the integer view: for non-negative floats the bit patterns
// order as the values, and a NaN's pattern is above +Inf's, so a NaN wins as in the naive loop.
static float absmax_bits(const float *x, int n) {
    const __m256i mask = _mm256_set1_epi32(0x7fffffff);
    __m256i m = _mm256_setzero_si256();
    for (int i = 0; i < n; i += 8)
        m = _mm256_max_epu32(m, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(x + i)), mask));
    __m128i h = _mm_max_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0x4e));
    h = _mm_max_epu32(h, _mm_shuffle_epi32(h, 0xb1));
    return _mm_cvtss_f32(_mm_castsi128_ps(h));
}

void tw_q8_quantize_x_avx2(int8_t *q, float *s, const float *x, int n_groups, int gs) {
    // gs % 8 == 0: the caller's promise (tw_q8_quantize_x in lib/quant/q8_0.c runs the naive loop otherwise)
    const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
    for (int g = 0; g < n_groups; g++) {
        const float *xg = x + (long)g * gs;
        int8_t *qg = q + (long)g * gs;
        float scale = absmax_bits(xg, gs) / 127.0f;
        s[g] = scale;
        int usable = scale > 0.0f && scale < INFINITY;
        const __m256 vs = _mm256_set1_ps(scale);
        for (int i = 0; i < gs; i += 8) {
            __m128i b = _mm_setzero_si128();
            if (usable) {
                // the same division, clamp and round-to-nearest-even as the naive loop
                __m256 v = _mm256_div_ps(_mm256_loadu_ps(xg + i), vs);
                __m256i r = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
                __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
                b = _mm_packs_epi16(w16, w16);
            }
            _mm_storel_epi64((__m128i *)(qg + i), b);
        }
    }
}

// ---- matvec ----

static inline __m256i dot32(__m256i acc, const int8_t *w, const int8_t *x, __m256i ones) {
    __m256i wv = _mm256_loadu_si256((const __m256i *)w), xv = _mm256_loadu_si256((const __m256i *)x);
    __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(wv), _mm256_sign_epi8(xv, wv));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p16, ones));
}

static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

void tw_q8_matvec_avx2(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                       const float *xs, int N, int K, int gs) {
    // gs % 32 == 0: the caller's promise (tw_q8_matvec in lib/quant/q8_0.c runs the naive loop otherwise)
    const int n_groups = K / gs;
    const __m256i ones = _mm256_set1_epi16(1);
    for (int i = 0; i < N; i++) {
        const int8_t *row = Wq + (long)i * K;
        const float *row_s = Ws + (long)i * n_groups;
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();   // two FMA chains
        int g = 0;
        for (; g + 2 <= n_groups; g += 2) {
            __m256i d0 = _mm256_setzero_si256(), d1 = _mm256_setzero_si256();
            for (int k = 0; k < gs; k += 32) {
                d0 = dot32(d0, row + g * gs + k, xq + g * gs + k, ones);
                d1 = dot32(d1, row + (g + 1) * gs + k, xq + (g + 1) * gs + k, ones);
            }
            acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d0), _mm256_set1_ps(row_s[g] * xs[g]), acc0);
            acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d1), _mm256_set1_ps(row_s[g + 1] * xs[g + 1]), acc1);
        }
        if (g < n_groups) {
            __m256i d0 = _mm256_setzero_si256();
            for (int k = 0; k < gs; k += 32) d0 = dot32(d0, row + g * gs + k, xq + g * gs + k, ones);
            acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d0), _mm256_set1_ps(row_s[g] * xs[g]), acc0);
        }
        y[i] = hsum256(_mm256_add_ps(acc0, acc1));
    }
}
