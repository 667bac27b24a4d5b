// q8_g4_avx2.c: the int8 kernels for group size 4 with AVX2 (compiled with -mavx2 -mfma, this
// object only; see q8.h).
//
// With gs == 4 one group is one 32-bit lane's worth of bytes, so a 256-bit step of 32 bytes holds
// 8 groups and the row's next 8 float scales line up with the 8 int32 lanes of its integer dot
// products. The integer part is q8_avx2.c's: |w| times sign(w) x with vpmaddubsw (pairs in int16,
// no saturation: |sum| <= 2 * 128 * 127), then vpmaddwd with ones adds each lane's two pairs into
// int32, which is then the exact dot product of one group. AVX2 has no masked byte loads, but a
// row's last K % 32 bytes are whole groups, i.e. whole int32 lanes, which vpmaskmovd reads (the
// lanes past the row read as zero and add nothing).
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "q8.h"

// ---- activations ----

// 8 values = 2 groups, one per 128-bit lane: the naive loop's steps, bit for bit (max |x| through
// the integer view so a NaN wins, scale = max / 127, q = 0 unless 0 < scale < Inf).
static void quantize8(int8_t *q, float *s, const float *x) {
    __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)x), _mm256_set1_epi32(0x7fffffff));
    a = _mm256_max_epu32(a, _mm256_shuffle_epi32(a, 0x4e));
    a = _mm256_max_epu32(a, _mm256_shuffle_epi32(a, 0xb1));
    __m256 scale = _mm256_div_ps(_mm256_castsi256_ps(a), _mm256_set1_ps(127.0f));
    __m256 ok = _mm256_and_ps(_mm256_cmp_ps(scale, _mm256_setzero_ps(), _CMP_GT_OQ),
                              _mm256_cmp_ps(scale, _mm256_set1_ps(__builtin_inff()), _CMP_LT_OQ));
    __m256 v = _mm256_div_ps(_mm256_loadu_ps(x), scale);
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
    __m256i i32 = _mm256_and_si256(_mm256_cvtps_epi32(v), _mm256_castps_si256(ok));
    __m128i i16 = _mm_packs_epi32(_mm256_castsi256_si128(i32), _mm256_extracti128_si256(i32, 1));
    _mm_storel_epi64((__m128i *)q, _mm_packs_epi16(i16, i16));
    s[0] = _mm256_cvtss_f32(scale);
    s[1] = _mm_cvtss_f32(_mm256_extractf128_ps(scale, 1));
}

void tw_q8_quantize_x_g4_avx2(int8_t *q, float *s, const float *x, int n_groups, int gs) {
    (void)gs;   // == 4: the caller's promise
    int g = 0;
    for (; g + 2 <= n_groups; g += 2) quantize8(q + 4 * g, s + g, x + 4 * g);
    if (g < n_groups) {   // one group left: quantize it beside a group of zeros, keep the first
        float xb[8] = { 0 };
        int8_t qb[8];
        float sb[2];
        memcpy(xb, x + 4 * g, 4 * sizeof(float));
        quantize8(qb, sb, xb);
        memcpy(q + 4 * g, qb, 4);
        s[g] = sb[0];
    }
}

// ---- matvec ----

// The 8 exact group dot products of 32 bytes of a row with x, one per int32 lane.
static inline __m256i dot8_groups(__m256i wv, __m256i xv) {
    __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(wv), _mm256_sign_epi8(xv, wv));
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

static inline __m256 step8(__m256 acc, __m256i wv, __m256i xv, const float *xs, const float *ws) {
    __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(dot8_groups(wv, xv)), _mm256_loadu_ps(ws));
    return _mm256_fmadd_ps(t, _mm256_loadu_ps(xs), acc);
}

static inline float hsum8(__m256 v) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

void tw_q8_matvec_g4_avx2(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                          const float *xs, int N, int K, int gs) {
    (void)gs;   // == 4
    const int n_groups = K / 4, K32 = K - K % 32, tail = K % 32;
    // The last K % 32 bytes (a multiple of 4) are read as whole int32 lanes with vpmaskmovd, and
    // their scales with vmaskmovps: the lanes past the row read as zero and add nothing.
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i tmask = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail / 4), lanes);
    const __m256i xtv = _mm256_maskload_epi32((const int *)(const void *)(xq + K32), tmask);
    const __m256 xst = _mm256_maskload_ps(xs + K32 / 4, tmask);
    for (int i = 0; i < N; i++) {
        const int8_t *row = Wq + (long)i * K;
        const float *row_s = Ws + (long)i * n_groups;
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        int k = 0;
        for (; k + 64 <= K32; k += 64) {   // two independent chains
            acc0 = step8(acc0, _mm256_loadu_si256((const __m256i *)(row + k)),
                         _mm256_loadu_si256((const __m256i *)(xq + k)), xs + k / 4, row_s + k / 4);
            acc1 = step8(acc1, _mm256_loadu_si256((const __m256i *)(row + k + 32)),
                         _mm256_loadu_si256((const __m256i *)(xq + k + 32)), xs + k / 4 + 8, row_s + k / 4 + 8);
        }
        if (k < K32)
            acc0 = step8(acc0, _mm256_loadu_si256((const __m256i *)(row + k)),
                         _mm256_loadu_si256((const __m256i *)(xq + k)), xs + k / 4, row_s + k / 4);
        if (tail) {
            __m256i wt = _mm256_maskload_epi32((const int *)(const void *)(row + K32), tmask);
            __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(dot8_groups(wt, xtv)), _mm256_maskload_ps(row_s + K32 / 4, tmask));
            acc1 = _mm256_fmadd_ps(t, xst, acc1);
        }
        y[i] = hsum8(_mm256_add_ps(acc0, acc1));
    }
}
