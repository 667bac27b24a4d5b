// q8_avx512vnni.c: the int8 matvec with AVX-512 VNNI (compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni -mavx2 -mfma, this object only; chosen at run time only when CPUID
// reports AVX512_VNNI, see dispatch.c). The activation quantizer is q8_avx512.c's.
//
// vpdpbusd adds four products of unsigned bytes by signed bytes into each int32 lane in one
// instruction (no int16 step, so no saturation question at all). The signs are moved as in
// q8_avx512.c: |w| (<= 128, unsigned) times x' = (w < 0 ? -x : x).
// Group sizes: gs % 64 == 0 (one group per 64-byte step), or gs == 32 (two groups per step).
//
// gs == 32 (llama2.c's choice for the 15M model) has its own loop, four rows at a time, eight
// groups per step with the integer results folded before conversion (fold4), with the
// other way of making vpdpbusd's first operand unsigned: w + 128 (w XOR 0x80, one instruction)
// times x adds 128 sum(x) per lane, which is the same for every row, so it is computed once per
// 64 bytes of x (a vpdpbusd of the bytes 128 by -x) and used as the starting value of all four rows'
// accumulators. That is two instructions per row and 64 bytes (xor, vpdpbusd) instead of four
// (abs, sign mask, masked negate, vpdpbusd). The integer results are the same.
#include <immintrin.h>
#include <stdint.h>
#include "q8.h"

static inline __m512i dot64(__m512i acc, const int8_t *w, const int8_t *x) {
    __m512i wv = _mm512_loadu_si512(w), xv = _mm512_loadu_si512(x);
    __m512i sx = _mm512_mask_sub_epi8(xv, _mm512_movepi8_mask(wv), _mm512_setzero_si512(), xv);
    return _mm512_dpbusd_epi32(acc, _mm512_abs_epi8(wv), sx);
}

// ---- gs == 32, four rows at a time ----

// -128 * (sum of each 4 bytes of x) in each int32 lane: the correction of the w + 128 trick.
static inline __m512i minus_128_sum(__m512i xv) {
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8((char)0x80),
                               _mm512_sub_epi8(_mm512_setzero_si512(), xv));
}

// The integer dot products of 64 bytes of w (two groups of 32) with x, per int32 lane.
static inline __m512i dot64_biased(__m512i corr, const int8_t *w, __m512i xv) {
    __m512i wu = _mm512_xor_si512(_mm512_loadu_si512(w), _mm512_set1_epi8((char)0x80));   // w + 128
    return _mm512_dpbusd_epi32(corr, wu, xv);
}

// The per-lane partial sums of four rows, added into y[0..3]: a 4-way transpose-and-add (the
// four rows share the shuffles), then the four 128-bit quarters.
static inline void reduce4(float *y, __m512 a0, __m512 a1, __m512 a2, __m512 a3) {
    __m512 t01 = _mm512_add_ps(_mm512_unpacklo_ps(a0, a1), _mm512_unpackhi_ps(a0, a1));
    __m512 t23 = _mm512_add_ps(_mm512_unpacklo_ps(a2, a3), _mm512_unpackhi_ps(a2, a3));
    // each 128-bit quarter now holds (a0, a1, a0, a1) and (a2, a3, a2, a3) partials
    __m512 t = _mm512_add_ps(_mm512_shuffle_ps(t01, t23, 0x44), _mm512_shuffle_ps(t01, t23, 0xee));
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(t), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1)));
    _mm_storeu_ps(y, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

// Group scales of two consecutive groups of one row times those of x, spread over the two halves.
static inline __m512 pair_scale(const float *ws, __m128 sx, __m512i idx) {
    __m128 c = _mm_mul_ps(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(ws))), sx);
    return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(c));
}

// Eight groups at a time: the int32 lanes of four 64-byte steps d0..d3 of one row (step k holds
// groups 2k and 2k+1 in lanes 0-7 and 8-15) folded into one vector before anything is converted:
// two levels of unpack-and-add leave in lane j of 128-bit quarter q the sum of quarter q of d_j,
// i.e. half of group 2j + (q >= 2)'s products (exact: integer adds). One conversion and one FMA
// per 8 groups then replace four of each, with the scales of the 8 groups spread to match
// (group_lanes). This is the integer work accumulated before the float work, so the per-group
// float operations (convert, scale, multiply-add) no longer cost as much as the products.
static inline __m512i fold4(__m512i d0, __m512i d1, __m512i d2, __m512i d3) {
    __m512i a = _mm512_add_epi32(_mm512_unpacklo_epi32(d0, d1), _mm512_unpackhi_epi32(d0, d1));
    __m512i b = _mm512_add_epi32(_mm512_unpacklo_epi32(d2, d3), _mm512_unpackhi_epi32(d2, d3));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

// The 8 products Ws[g] xs[g] of one row's 8 groups, in fold4's lane order: lane (q, j) gets
// group 2j + (q >= 2).   ws: (8)   sx8: the 8 xs, in order
static inline __m512 group_lanes(const float *ws, __m256 sx8, __m512i idx) {
    __m256 c = _mm256_mul_ps(_mm256_loadu_ps(ws), sx8);
    return _mm512_permutexvar_ps(idx, _mm512_castps256_ps512(c));
}

// One row's 8 groups (256 bytes from g) folded, converted, scaled and added into acc.
static inline __m512 row8_gs32(__m512 acc, const int8_t *row, const float *ws, const __m512i xv[4],
                               const __m512i corr[4], __m256 sx8, __m512i idx) {
    __m512i d0 = dot64_biased(corr[0], row, xv[0]), d1 = dot64_biased(corr[1], row + 64, xv[1]);
    __m512i d2 = dot64_biased(corr[2], row + 128, xv[2]), d3 = dot64_biased(corr[3], row + 192, xv[3]);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(fold4(d0, d1, d2, d3)), group_lanes(ws, sx8, idx), acc);
}

// Four rows r[0..3] (with their scales s[0..3]) against x; y receives the four results.
static void rows4_gs32(float *y, const int8_t *const r[4], const float *const s[4],
                       const int8_t *xq, const float *xs, int n_groups) {
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
           a3 = _mm512_setzero_ps();
    int g = 0;
    const __m512i idx8 = _mm512_set_epi32(7, 5, 3, 1, 7, 5, 3, 1, 6, 4, 2, 0, 6, 4, 2, 0);
    for (; g + 8 <= n_groups; g += 8) {
        __m512i xv[4], corr[4];
        for (int k = 0; k < 4; k++) {
            xv[k] = _mm512_loadu_si512(xq + (g + 2 * k) * 32);
            corr[k] = minus_128_sum(xv[k]);
        }
        const __m256 sx8 = _mm256_loadu_ps(xs + g);
        a0 = row8_gs32(a0, r[0] + g * 32, s[0] + g, xv, corr, sx8, idx8);
        a1 = row8_gs32(a1, r[1] + g * 32, s[1] + g, xv, corr, sx8, idx8);
        a2 = row8_gs32(a2, r[2] + g * 32, s[2] + g, xv, corr, sx8, idx8);
        a3 = row8_gs32(a3, r[3] + g * 32, s[3] + g, xv, corr, sx8, idx8);
    }
    for (; g + 2 <= n_groups; g += 2) {   // the groups left over, two at a time
        __m512i xv = _mm512_loadu_si512(xq + g * 32);
        __m512i corr = minus_128_sum(xv);
        __m128 sx = _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(xs + g)));
        __m512i d0 = dot64_biased(corr, r[0] + g * 32, xv), d1 = dot64_biased(corr, r[1] + g * 32, xv);
        __m512i d2 = dot64_biased(corr, r[2] + g * 32, xv), d3 = dot64_biased(corr, r[3] + g * 32, xv);
        a0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), pair_scale(s[0] + g, sx, idx), a0);
        a1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), pair_scale(s[1] + g, sx, idx), a1);
        a2 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d2), pair_scale(s[2] + g, sx, idx), a2);
        a3 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d3), pair_scale(s[3] + g, sx, idx), a3);
    }
    if (g < n_groups) {   // one group of 32 left: the low half of a masked step (zeros above)
        const __mmask64 low = 0xffffffffULL;
        const __m512i bias = _mm512_set1_epi8((char)0x80);
        __m512i xv = _mm512_maskz_loadu_epi8(low, xq + g * 32);
        __m512i corr = minus_128_sum(xv);
        // the upper 32 bytes of x are 0, so whatever w + 128 is there contributes nothing
        __m512i d0 = _mm512_dpbusd_epi32(corr, _mm512_xor_si512(_mm512_maskz_loadu_epi8(low, r[0] + g * 32), bias), xv);
        __m512i d1 = _mm512_dpbusd_epi32(corr, _mm512_xor_si512(_mm512_maskz_loadu_epi8(low, r[1] + g * 32), bias), xv);
        __m512i d2 = _mm512_dpbusd_epi32(corr, _mm512_xor_si512(_mm512_maskz_loadu_epi8(low, r[2] + g * 32), bias), xv);
        __m512i d3 = _mm512_dpbusd_epi32(corr, _mm512_xor_si512(_mm512_maskz_loadu_epi8(low, r[3] + g * 32), bias), xv);
        a0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), _mm512_set1_ps(s[0][g] * xs[g]), a0);
        a1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), _mm512_set1_ps(s[1][g] * xs[g]), a1);
        a2 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d2), _mm512_set1_ps(s[2][g] * xs[g]), a2);
        a3 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d3), _mm512_set1_ps(s[3][g] * xs[g]), a3);
    }
    reduce4(y, a0, a1, a2, a3);
}

static void matvec_gs32(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                        const float *xs, int N, int K) {
    const int n_groups = K / 32;
    for (int i = 0; i < N; i += 4) {
        const int8_t *r[4];
        const float *s[4];
        for (int j = 0; j < 4; j++) {   // past the last row, repeat it (the result is dropped)
            int row = i + j < N ? i + j : N - 1;
            r[j] = Wq + (long)row * K;
            s[j] = Ws + (long)row * n_groups;
        }
        float four[4];
        rows4_gs32(four, r, s, xq, xs, n_groups);
        for (int j = 0; j < 4 && i + j < N; j++) y[i + j] = four[j];
    }
}

void tw_q8_matvec_avx512vnni(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                             const float *xs, int N, int K, int gs) {
    if (gs == 32) { matvec_gs32(y, Wq, Ws, xq, xs, N, K); return; }
    if (gs % 64 != 0) { tw_q8_matvec_avx2(y, Wq, Ws, xq, xs, N, K, gs); return; }
    const int n_groups = K / gs;
    for (int i = 0; i < N; i++) {
        const int8_t *row = Wq + (long)i * K;
        const float *row_s = Ws + (long)i * n_groups;
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
        int g = 0;
        for (; g + 2 <= n_groups; g += 2) {
            __m512i d0 = _mm512_setzero_si512(), d1 = _mm512_setzero_si512();
            for (int k = 0; k < gs; k += 64) {
                d0 = dot64(d0, row + g * gs + k, xq + g * gs + k);
                d1 = dot64(d1, row + (g + 1) * gs + k, xq + (g + 1) * gs + k);
            }
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), _mm512_set1_ps(row_s[g] * xs[g]), acc0);
            acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), _mm512_set1_ps(row_s[g + 1] * xs[g + 1]), acc1);
        }
        if (g < n_groups) {
            __m512i d0 = _mm512_setzero_si512();
            for (int k = 0; k < gs; k += 64) d0 = dot64(d0, row + g * gs + k, xq + g * gs + k);
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), _mm512_set1_ps(row_s[g] * xs[g]), acc0);
        }
        y[i] = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    }
}
