// q8_vnni_rows16.c: the int8 matvec with AVX-512 VNNI on weights repacked sixteen rows at a time
// (compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni, this object only; chosen at run
// time only when CPUID reports AVX512_VNNI, see q8_dispatch.c).
//
// Why repack. In the row-major Q8_0 layout one 64-byte load holds two groups of one row, and
// vpdpbusd leaves each group's products spread over eight int32 lanes: before the group's scale
// can be applied, those lanes must be folded together (q8_avx512vnni.c: nine shuffles and adds
// per row and 256 bytes), and those folds, not the multiplies, set the speed (about 38 % of the
// VNNI peak). Here each int32 lane belongs to a different row instead. A 64-byte load holds four
// consecutive weights of each of sixteen rows, the same four columns of x are broadcast to every
// lane, and after gs / 4 vpdpbusd each lane holds its row's whole group sum: one conversion and
// one multiply-add per group apply sixteen rows' scales at once, with nothing to fold.
//
// The signs. vpdpbusd multiplies unsigned bytes by signed bytes. The unsigned side is x + 128
// (x XOR 0x80, computed once per call for the whole row of x), the signed side is w; the products
// then hold an extra 128 * sum(w) per group and row, which does not depend on x, so the packing
// stores -128 * sum(w) per group and row and the sums start from it. The integer result is
// exactly sum(w x), for every int8 w and x (-128 included); with gs <= 65536 no int32 lane can
// overflow (gs * 255 * 128 + gs * 128 * 128 < 2^31).
//
// The layout of one block of sixteen rows (rows 16 b .. 16 b + 15; rows past N are zeros), group
// after group (g = 0 .. K / gs - 1), blocks one after another:
//   corr:   (16) int32   -128 * sum of the group's weights, per row
//   scale:  (16) float   the group's weight scale Ws[row][g], per row
//   w:      (gs / 4, 16, 4) int8   chunk c holds w[row][g gs + 4 c .. + 3] for the sixteen rows
// so one group of one block is 128 + 16 gs bytes, read front to back. gs must be a multiple of 4.
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "q8.h"

enum { ROWS = 16 };

static size_t group_bytes(int gs) { return 2 * ROWS * 4 + (size_t)ROWS * (size_t)gs; }

size_t tw_q8_rows16_bytes(int N, int K, int gs) {
    return (size_t)((N + ROWS - 1) / ROWS) * (size_t)(K / gs) * group_bytes(gs);
}

void tw_q8_rows16_pack(void *dst, const int8_t *Wq, const float *Ws, int N, int K, int gs) {
    const int n_groups = K / gs;
    unsigned char *p = dst;
    for (int b = 0; b < (N + ROWS - 1) / ROWS; b++)
        for (int g = 0; g < n_groups; g++) {
            int32_t corr[ROWS] = { 0 };
            float scale[ROWS] = { 0 };
            int8_t *w = (int8_t *)(p + 2 * ROWS * 4);   // (gs / 4, 16, 4)
            memset(w, 0, (size_t)ROWS * (size_t)gs);
            for (int r = 0; r < ROWS && b * ROWS + r < N; r++) {
                const long row = (long)b * ROWS + r;
                const int8_t *src = Wq + row * K + (long)g * gs;   // (gs)
                int32_t sum = 0;
                for (int k = 0; k < gs; k++) {
                    w[(k / 4) * (ROWS * 4) + r * 4 + k % 4] = src[k];
                    sum += src[k];
                }
                corr[r] = -128 * sum;
                scale[r] = Ws[row * n_groups + g];
            }
            memcpy(p, corr, sizeof corr);
            memcpy(p + sizeof corr, scale, sizeof scale);
            p += group_bytes(gs);
        }
}

// Four bytes of xu at p, as one int32 broadcast to all sixteen lanes.
static inline __m512i bcast4(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

// One group of NB blocks (NB = 1 or 2, a constant after inlining), packed NB groups apart in
// memory (blk[j] is block j's group), added into acc[j]: the group's integer sums per row, then
// times Ws xs. Two chains of vpdpbusd per block (even and odd chunks) keep the multiplier busy.
static inline void groups(__m512 acc[2], const unsigned char *const blk[2], const uint8_t *xg,
                          float xs, int gs, int NB) {
    __m512i d0[2], d1[2];
    for (int j = 0; j < NB; j++) {
        d0[j] = _mm512_loadu_si512(blk[j]);   // starts at -128 sum(w)
        d1[j] = _mm512_setzero_si512();
    }
    const int chunks = gs / 4;
    int c = 0;
    for (; c + 2 <= chunks; c += 2) {
        const __m512i x0 = bcast4(xg + 4 * c), x1 = bcast4(xg + 4 * c + 4);
        for (int j = 0; j < NB; j++) {
            const unsigned char *w = blk[j] + 2 * ROWS * 4 + (size_t)c * ROWS * 4;
            d0[j] = _mm512_dpbusd_epi32(d0[j], x0, _mm512_loadu_si512(w));
            d1[j] = _mm512_dpbusd_epi32(d1[j], x1, _mm512_loadu_si512(w + ROWS * 4));
        }
    }
    if (c < chunks) {
        const __m512i x0 = bcast4(xg + 4 * c);
        for (int j = 0; j < NB; j++)
            d0[j] = _mm512_dpbusd_epi32(d0[j], x0,
                                        _mm512_loadu_si512(blk[j] + 2 * ROWS * 4 + (size_t)c * ROWS * 4));
    }
    const __m512 sx = _mm512_set1_ps(xs);
    for (int j = 0; j < NB; j++) {
        const __m512 s = _mm512_mul_ps(_mm512_loadu_ps(blk[j] + ROWS * 4), sx);
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(d0[j], d1[j])), s, acc[j]);
    }
}

// NB blocks starting at block b: every group in order, then the sixteen (or fewer) rows stored.
static inline void blocks(float *y, const unsigned char *packed, const uint8_t *xu, const float *xs,
                          int b, int N, int K, int gs, int NB) {
    const int n_groups = K / gs;
    const size_t gb = group_bytes(gs), bb = gb * (size_t)n_groups;
    __m512 acc[2] = { _mm512_setzero_ps(), _mm512_setzero_ps() };
    for (int g = 0; g < n_groups; g++) {
        const unsigned char *blk[2] = { packed + (size_t)b * bb + g * gb, NULL };
        if (NB == 2) blk[1] = blk[0] + bb;
        groups(acc, blk, xu + (long)g * gs, xs[g], gs, NB);
    }
    for (int j = 0; j < NB; j++) {
        const int row0 = (b + j) * ROWS, left = N - row0;
        const __mmask16 m = left >= ROWS ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        _mm512_mask_storeu_ps(y + row0, m, acc[j]);
    }
}

void tw_q8_rows16_matvec(float *y, const void *packed, uint8_t *xu, const int8_t *xq,
                         const float *xs, int N, int K, int gs) {
    // x + 128 as unsigned bytes: x XOR 0x80, 64 bytes at a time, the tail masked.
    const __m512i bias = _mm512_set1_epi8((char)0x80);
    for (int k = 0; k < K; k += 64) {
        const __mmask64 m = K - k >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (K - k)) - 1);
        _mm512_mask_storeu_epi8(xu + k, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, xq + k), bias));
    }
    const int n_blocks = (N + ROWS - 1) / ROWS;
    int b = 0;
    for (; b + 2 <= n_blocks; b += 2) blocks(y, packed, xu, xs, b, N, K, gs, 2);
    if (b < n_blocks) blocks(y, packed, xu, xs, b, N, K, gs, 1);
}
