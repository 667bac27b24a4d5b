// q8_g4_avx512vnni.c: the int8 matvec for group size 4 with AVX-512 VNNI (compiled with
// -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mavx2 -mfma, this object only; chosen at run
// time only when CPUID reports AVX512_VNNI, see q8_dispatch.c).
//
// vpdpbusd adds the four products of 4 unsigned bytes by 4 signed bytes into one int32 lane:
// with gs == 4 that is exactly one group's dot product per lane, in one instruction, and the 16
// lanes of a 64-byte step line up with the row's next 16 float scales. The unsigned operand is
// w + 128 (w XOR 0x80); the extra 128 * sum(x of the group) it adds is the same for every row, so
// the accumulator starts at -128 * sum(x) (computed once per 64 bytes of x and shared by the four
// rows done together) and vpdpbusd leaves the exact dot product. Per row and 64 bytes: a load
// with XOR, vpdpbusd, a conversion, a multiply by xs and an FMA by the row's scales.
//
// Four rows at a time share x, its correction and its scales; their 16-lane partial sums are
// reduced together at the end (a 4-way transpose-and-add). A row's last K % 64 bytes use masked
// loads: x reads as zero there, so whatever w + 128 is, it adds nothing, and the masked scales are 0.
// Rows of up to 1024 bytes (matvec_short_rows) prepare x once per call; longer ones once per
// 64 bytes and four rows (rows4).
#include <immintrin.h>
#include <stdint.h>
#include "q8.h"

// -128 * (sum of each 4 bytes of x) in each int32 lane.
static inline __m512i minus_128_sum(__m512i xv) {
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8((char)0x80),
                               _mm512_sub_epi8(_mm512_setzero_si512(), xv));
}

// One row's 16 groups: acc += ((float)dot * Ws) * xs, lane by lane: the naive loop's order of
// the two products, so a huge x scale times a dot product cannot overflow where the naive does not.
static inline __m512 row16(__m512 acc, __m512i wv, __m512i xv, __m512i corr, __m512 sx, __m512 ws) {
    __m512i d = _mm512_dpbusd_epi32(corr, _mm512_xor_si512(wv, _mm512_set1_epi8((char)0x80)), xv);
    return _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(d), ws), sx, acc);
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

// Rows r[0..3] (scales s[0..3]) against x; y receives the four results.
static void rows4(float *y, const int8_t *const r[4], const float *const s[4], const int8_t *xq,
                  const float *xs, int K) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(),
           a3 = _mm512_setzero_ps();
    for (int k = 0; k < K; k += 64) {
        const int nb = K - k < 64 ? K - k : 64;
        const __mmask64 mb = nb == 64 ? ~0ULL : (1ULL << nb) - 1ULL;
        const __mmask16 mg = (__mmask16)((1u << (nb / 4)) - 1u);
        const int g = k / 4;
        const __m512i xv = _mm512_maskz_loadu_epi8(mb, xq + k);
        const __m512i corr = minus_128_sum(xv);
        const __m512 sx = _mm512_maskz_loadu_ps(mg, xs + g);
        a0 = row16(a0, _mm512_maskz_loadu_epi8(mb, r[0] + k), xv, corr, sx, _mm512_maskz_loadu_ps(mg, s[0] + g));
        a1 = row16(a1, _mm512_maskz_loadu_epi8(mb, r[1] + k), xv, corr, sx, _mm512_maskz_loadu_ps(mg, s[1] + g));
        a2 = row16(a2, _mm512_maskz_loadu_epi8(mb, r[2] + k), xv, corr, sx, _mm512_maskz_loadu_ps(mg, s[2] + g));
        a3 = row16(a3, _mm512_maskz_loadu_epi8(mb, r[3] + k), xv, corr, sx, _mm512_maskz_loadu_ps(mg, s[3] + g));
    }
    reduce4(y, a0, a1, a2, a3);
}

// K <= 1024 (every width of the models this toolkit runs with gs == 4): x's 64-byte steps, their
// corrections and their scales are made once per call and kept (at most 16 of each, 3 KiB on the
// stack) for every block of four rows; full steps use plain loads (which the compiler folds into
// the XOR and the FMA), only a last partial step is masked. Per row and 64 bytes that leaves
// five instructions: XOR (with the load), vpdpbusd, conversion, multiply, FMA (with the load).
enum { G4_MAX_STEPS = 16 };

static void matvec_short_rows(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                              const float *xs, int N, int K) {
    const int n_groups = K / 4, n_full = K / 64, rest = K % 64;
    const __mmask64 mb = (1ULL << rest) - 1ULL;   // rest < 64
    const __mmask16 mg = (__mmask16)((1u << (rest / 4)) - 1u);
    __m512i xv[G4_MAX_STEPS], corr[G4_MAX_STEPS];
    __m512 sx[G4_MAX_STEPS];
    const int n_steps = n_full + (rest != 0);
    for (int c = 0; c < n_steps; c++) {
        xv[c] = c < n_full ? _mm512_loadu_si512(xq + 64 * c) : _mm512_maskz_loadu_epi8(mb, xq + 64 * c);
        corr[c] = minus_128_sum(xv[c]);
        sx[c] = c < n_full ? _mm512_loadu_ps(xs + 16 * c) : _mm512_maskz_loadu_ps(mg, xs + 16 * c);
    }
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
            a0 = row16(a0, _mm512_loadu_si512(r0 + 64 * c), xv[c], corr[c], sx[c], _mm512_loadu_ps(s0 + 16 * c));
            a1 = row16(a1, _mm512_loadu_si512(r1 + 64 * c), xv[c], corr[c], sx[c], _mm512_loadu_ps(s1 + 16 * c));
            a2 = row16(a2, _mm512_loadu_si512(r2 + 64 * c), xv[c], corr[c], sx[c], _mm512_loadu_ps(s2 + 16 * c));
            a3 = row16(a3, _mm512_loadu_si512(r3 + 64 * c), xv[c], corr[c], sx[c], _mm512_loadu_ps(s3 + 16 * c));
        }
        if (rest) {
            a0 = row16(a0, _mm512_maskz_loadu_epi8(mb, r0 + 64 * c), xv[c], corr[c], sx[c], _mm512_maskz_loadu_ps(mg, s0 + 16 * c));
            a1 = row16(a1, _mm512_maskz_loadu_epi8(mb, r1 + 64 * c), xv[c], corr[c], sx[c], _mm512_maskz_loadu_ps(mg, s1 + 16 * c));
            a2 = row16(a2, _mm512_maskz_loadu_epi8(mb, r2 + 64 * c), xv[c], corr[c], sx[c], _mm512_maskz_loadu_ps(mg, s2 + 16 * c));
            a3 = row16(a3, _mm512_maskz_loadu_epi8(mb, r3 + 64 * c), xv[c], corr[c], sx[c], _mm512_maskz_loadu_ps(mg, s3 + 16 * c));
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

void tw_q8_matvec_g4_avx512vnni(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                                const float *xs, int N, int K, int gs) {
    (void)gs;   // == 4
    if (K <= 64 * G4_MAX_STEPS) { matvec_short_rows(y, Wq, Ws, xq, xs, N, K); return; }
    const int n_groups = K / 4;
    for (int i = 0; i < N; i += 4) {
        const int8_t *r[4];
        const float *s[4];
        for (int j = 0; j < 4; j++) {   // past the last row, repeat it (the result is dropped)
            int row = i + j < N ? i + j : N - 1;
            r[j] = Wq + (long)row * K;
            s[j] = Ws + (long)row * n_groups;
        }
        float four[4];
        rows4(four, r, s, xq, xs, K);
        for (int j = 0; j < 4 && i + j < N; j++) y[i + j] = four[j];
    }
}
