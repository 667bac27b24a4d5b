// q8_vnni_prev.c: the previous AVX-512 VNNI int8 matvec (lib/simd/q8_avx512vnni.c before its gs = 32
// loop folded eight groups' integer results before converting them), kept in the benchmark only,
// so `make bench` times the current kernel against it in the same run. Built with the VNNI
// flags (mk/simd_q8.mk), as probe_vnni.c; checked against the naive loop by bench_q8.c before
// it is timed.
#include <immintrin.h>
#include <stdint.h>
#include "simd/q8.h"

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

// Four rows r[0..3] (with their scales s[0..3]) against x; y receives the four results.
static void rows4_gs32(float *y, const int8_t *const r[4], const float *const s[4],
                       const int8_t *xq, const float *xs, int n_groups) {
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
           a3 = _mm512_setzero_ps();
    int g = 0;
    for (; g + 2 <= n_groups; g += 2) {
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

void bench_q8_matvec_vnni_prev(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                               const float *xs, int N, int K, int gs);
void bench_q8_matvec_vnni_prev(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
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
