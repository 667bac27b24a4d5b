// q8_g4_avx512.c: the int8 kernels for group size 4 with AVX-512 (compiled with -mavx512f
// -mavx512bw -mavx512vl -mavx2 -mfma, this object only; see q8.h): the activation quantizer and
// the AVX-512BW matvec. The VNNI matvec is in q8_g4_avx512vnni.c.
//
// With gs == 4 one group is one 32-bit lane's worth of bytes, so a 512-bit step of 64 bytes holds
// 16 groups and the 16 float scales of a row line up with the 16 int32 lanes of its integer dot
// products: nothing is broadcast or permuted. The integer part is q8_avx512.c's (|w| times x
// with w's sign moved onto it, vpmaddubsw then vpmaddwd with ones: each int32 lane is then the
// exact dot product of one group of 4). A row's last K % 64 bytes are read with masked loads
// (the masked bytes and scales read as zero and add nothing).
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

void tw_q8_matvec_g4_avx512bw(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                              const float *xs, int N, int K, int gs) {
    (void)gs;   // == 4
    const int n_groups = K / 4;
    const __m512i ones = _mm512_set1_epi16(1);
    for (int i = 0; i < N; i++) {
        const int8_t *row = Wq + (long)i * K;
        const float *row_s = Ws + (long)i * n_groups;
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
        int k = 0;
        for (; k + 128 <= K; k += 128) {   // two independent chains
            __m512i d0 = dot16_groups(_mm512_loadu_si512(row + k), _mm512_loadu_si512(xq + k), ones);
            __m512i d1 = dot16_groups(_mm512_loadu_si512(row + k + 64), _mm512_loadu_si512(xq + k + 64), ones);
            __m512 t0 = _mm512_mul_ps(_mm512_cvtepi32_ps(d0), _mm512_loadu_ps(xs + k / 4));
            __m512 t1 = _mm512_mul_ps(_mm512_cvtepi32_ps(d1), _mm512_loadu_ps(xs + k / 4 + 16));
            acc0 = _mm512_fmadd_ps(t0, _mm512_loadu_ps(row_s + k / 4), acc0);
            acc1 = _mm512_fmadd_ps(t1, _mm512_loadu_ps(row_s + k / 4 + 16), acc1);
        }
        for (; k < K; k += 64) {   // 64 bytes, or the last K - k (masked: zeros add nothing)
            const int nb = K - k < 64 ? K - k : 64;
            const __mmask64 mb = nb == 64 ? ~0ULL : (1ULL << nb) - 1ULL;
            const __mmask16 mg = (__mmask16)((1u << (nb / 4)) - 1u);
            __m512i d = dot16_groups(_mm512_maskz_loadu_epi8(mb, row + k), _mm512_maskz_loadu_epi8(mb, xq + k), ones);
            __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(d), _mm512_maskz_loadu_ps(mg, xs + k / 4));
            acc0 = _mm512_fmadd_ps(t, _mm512_maskz_loadu_ps(mg, row_s + k / 4), acc0);
        }
        y[i] = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    }
}
