// q8_g4_avx512.c: the int8 kernels for group size 4 with AVX-512 (compiled with -mavx512f
// -mavx512bw -mavx512vl -mavx2 -mfma, this object only; see q8.h): the activation quantizer and
// the AVX-512BW matvec, which the VNNI level also uses for gs = 4 in the row-major layout (a model
// on a VNNI CPU runs the packed layout of q8_vnni_rows16.c instead, which takes gs = 4 too).
//
// With gs == 4 one group is one 32-bit lane's worth of bytes, so a 512-bit step of 64 bytes holds
// 16 groups and the 16 float scales of a row line up with the 16 int32 lanes of its integer dot
// products: nothing is broadcast or permuted. The integer part is q8_avx512.c's (|w| times x
// with w's sign moved onto it, vpmaddubsw then vpmaddwd with ones: each int32 lane is then the
// exact dot product of one group of 4). Four rows at a time share x and one 4-way reduction. A
// row's last K % 64 bytes are read with masked loads (the masked bytes and scales read as zero
// and add nothing).
#include <immintrin.h>
#include <stdint.h>
#include "q8.h"

// ---- activations ----

// 16 values = 4 groups, one per 128-bit lane: each lane's max |x| (through the integer view, so a
// NaN wins as in the naive loop; see q8_avx2.c), its scale max / 127, and the rounded values;
// groups whose scale is 0, Inf or NaN get q = 0. Bit for bit the naive loop's steps. `n` = the
// number of valid values (a multiple of 4, at most 16).
static void quantize16(int8_t *q, float *s, const float *x, int n) {
    const __mmask16 m = (__mmask16)((1u << n) - 1u);
    const __m512i absmask = _mm512_set1_epi32(0x7fffffff);
    __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(m, x), absmask);
    a = _mm512_max_epu32(a, _mm512_shuffle_epi32(a, _MM_PERM_BADC));   // swap pairs of lanes
    a = _mm512_max_epu32(a, _mm512_shuffle_epi32(a, _MM_PERM_CDAB));   // swap neighbours
    __m512 scale = _mm512_div_ps(_mm512_castsi512_ps(a), _mm512_set1_ps(127.0f));
    // usable: 0 < scale < Inf (both ordered compares are false for NaN)
    __mmask16 ok = _mm512_cmp_ps_mask(scale, _mm512_setzero_ps(), _CMP_GT_OQ) &
                   _mm512_cmp_ps_mask(scale, _mm512_set1_ps(__builtin_inff()), _CMP_LT_OQ) & m;
    __m512 v = _mm512_maskz_div_ps(ok, _mm512_maskz_loadu_ps(m, x), scale);
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
    _mm_mask_storeu_epi8(q, m, _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
    // lanes 0, 4, 8, 12 hold the four scales
    const __m512i pick = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
    _mm_mask_storeu_ps(s, (__mmask8)((1u << (n / 4)) - 1u),
                       _mm512_castps512_ps128(_mm512_permutexvar_ps(pick, scale)));
}

void tw_q8_quantize_x_g4_avx512(int8_t *q, float *s, const float *x, int n_groups, int gs) {
    (void)gs;   // == 4: the caller's promise
    const int n = n_groups * 4;
    int i = 0;
    for (; i + 16 <= n; i += 16) quantize16(q + i, s + i / 4, x + i, 16);
    if (i < n) quantize16(q + i, s + i / 4, x + i, n - i);
}

// ---- matvec ----

// The 16 exact group dot products of 64 bytes of a row with x, one per int32 lane.
static inline __m512i dot16_groups(__m512i wv, __m512i xv, __m512i ones) {
    __m512i sx = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(wv), _mm512_setzero_si512(), xv);
    return _mm512_madd_epi16(_mm512_maddubs_epi16(_mm512_abs_epi8(wv), sx), ones);
}

// One row's 16 groups: acc += ((float)dot * Ws) * xs, lane by lane (the naive loop's order of the
// two products: a huge x scale times a dot product then cannot overflow where the naive does not).
static inline __m512 row16(__m512 acc, __m512i wv, __m512i xv, __m512 sx, __m512 ws, __m512i ones) {
    return _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(dot16_groups(wv, xv, ones)), ws), sx, acc);
}

// The per-lane partial sums of four rows into y[0..3] (the four rows share the shuffles).
static inline void reduce4(float *y, __m512 a0, __m512 a1, __m512 a2, __m512 a3) {
    __m512 t01 = _mm512_add_ps(_mm512_unpacklo_ps(a0, a1), _mm512_unpackhi_ps(a0, a1));
    __m512 t23 = _mm512_add_ps(_mm512_unpacklo_ps(a2, a3), _mm512_unpackhi_ps(a2, a3));
    __m512 t = _mm512_add_ps(_mm512_shuffle_ps(t01, t23, 0x44), _mm512_shuffle_ps(t01, t23, 0xee));
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(t),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1)));
    _mm_storeu_ps(y, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

// Four rows at a time share x's loads and one 4-way reduction; full 64-byte steps use plain
// loads, a last partial one masked loads.
void tw_q8_matvec_g4_avx512bw(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                              const float *xs, int N, int K, int gs) {
    (void)gs;   // == 4
    const int n_groups = K / 4, n_full = K / 64, rest = K % 64;
    const __mmask64 mb = (1ULL << rest) - 1ULL;   // rest < 64
    const __mmask16 mg = (__mmask16)((1u << (rest / 4)) - 1u);
    const __m512i ones = _mm512_set1_epi16(1);
    for (int i = 0; i < N; i += 4) {
        // rows past the last one repeat it (their results are dropped)
        const int i1 = i + 1 < N ? i + 1 : N - 1, i2 = i + 2 < N ? i + 2 : N - 1, i3 = i + 3 < N ? i + 3 : N - 1;
        const int8_t *r0 = Wq + (long)i * K, *r1 = Wq + (long)i1 * K, *r2 = Wq + (long)i2 * K, *r3 = Wq + (long)i3 * K;
        const float *s0 = Ws + (long)i * n_groups, *s1 = Ws + (long)i1 * n_groups,
                    *s2 = Ws + (long)i2 * n_groups, *s3 = Ws + (long)i3 * n_groups;
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
               a3 = _mm512_setzero_ps();
        int c = 0;
        for (; c < n_full; c++) {
            const __m512i xv = _mm512_loadu_si512(xq + 64 * c);
            const __m512 sx = _mm512_loadu_ps(xs + 16 * c);
            a0 = row16(a0, _mm512_loadu_si512(r0 + 64 * c), xv, sx, _mm512_loadu_ps(s0 + 16 * c), ones);
            a1 = row16(a1, _mm512_loadu_si512(r1 + 64 * c), xv, sx, _mm512_loadu_ps(s1 + 16 * c), ones);
            a2 = row16(a2, _mm512_loadu_si512(r2 + 64 * c), xv, sx, _mm512_loadu_ps(s2 + 16 * c), ones);
            a3 = row16(a3, _mm512_loadu_si512(r3 + 64 * c), xv, sx, _mm512_loadu_ps(s3 + 16 * c), ones);
        }
        if (rest) {
            const __m512i xv = _mm512_maskz_loadu_epi8(mb, xq + 64 * c);
            const __m512 sx = _mm512_maskz_loadu_ps(mg, xs + 16 * c);
            a0 = row16(a0, _mm512_maskz_loadu_epi8(mb, r0 + 64 * c), xv, sx, _mm512_maskz_loadu_ps(mg, s0 + 16 * c), ones);
            a1 = row16(a1, _mm512_maskz_loadu_epi8(mb, r1 + 64 * c), xv, sx, _mm512_maskz_loadu_ps(mg, s1 + 16 * c), ones);
            a2 = row16(a2, _mm512_maskz_loadu_epi8(mb, r2 + 64 * c), xv, sx, _mm512_maskz_loadu_ps(mg, s2 + 16 * c), ones);
            a3 = row16(a3, _mm512_maskz_loadu_epi8(mb, r3 + 64 * c), xv, sx, _mm512_maskz_loadu_ps(mg, s3 + 16 * c), ones);
        }
        if (i + 4 <= N) {
            reduce4(y + i, a0, a1, a2, a3);
        } else {
            float four[4];
            reduce4(four, a0, a1, a2, a3);
            for (int j = 0; i + j < N; j++) y[i + j] = four[j];
        }
    }
}
