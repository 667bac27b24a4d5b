// q8_vnni_rows16.c: the int8 matvec with AVX-512 VNNI on weights repacked sixteen rows at a time
// (compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni, this object only; chosen at run
// time only when CPUID reports AVX512_VNNI, see dispatch.c).
//
// Why repack. In the row-major Q8_0 layout one 64-byte load holds two groups of one row, and
// vpdpbusd leaves each group's products spread over eight int32 lanes: before the group's scale
// can be applied, those lanes must be folded together (q8_avx512vnni.c: nine shuffles and adds
// per row and 256 bytes), and those folds, not the multiplies, set the speed, well under the
// VNNI peak. Here each int32 lane belongs to a different row instead. A 64-byte load holds four
// consecutive weights of each of sixteen rows, the same four columns of x are broadcast to every
// lane, and after gs / 4 vpdpbusd each lane holds its row's whole group sum: one conversion and
// one multiply-add per group apply sixteen rows' scales at once, with nothing to fold.
//
// The signs. vpdpbusd multiplies unsigned bytes by signed bytes. The unsigned side is w + 128
// (w XOR 0x80, stored so by the packing: free at run time), the signed side is x; the products
// then hold an extra 128 * sum(x) per group, which is the same for every row, so it is computed
// once per call (in the caller's scratch) and the sums of every row start from
// -128 * sum(x). The integer result is exactly sum(w x), for every int8 w and x (-128 included):
// vpdpbusd adds without saturating (modulo 2^32), so a lane ends at the true sum whenever that
// fits in an int32, and |sum(w x)| <= 128 * 128 * gs < 2^31 for any gs below 131072.
//
// The layout. A block is sixteen rows (rows 16 b .. 16 b + 15; rows past N are zeros). One group
// of one block is 64 + 16 gs bytes, as many as the row-major Q8_0 copy holds for those rows:
//   scale:  (16) float   the group's weight scale Ws[row][g], per row
//   w:      (gs / 4, 16, 4) uint8   chunk c holds w[row][g gs + 4 c .. + 3] + 128 for the sixteen rows
// The kernel works on sets of eight blocks side by side (then a set of four, two, one for the
// blocks left over: set_size), and a set is stored group after group, each group's blocks one
// after another, so the kernel reads the whole matrix as one ascending stream, which every
// hardware prefetcher follows (the lesson of lib/simd/matvec_avx512.c). gs must be a multiple of 4.
//
// What sets the speed (the figures, and the CPUs they were measured on: docs/performance.md,
// "Kernels", and docs/quantization.md, second to fourth pass). On Sapphire/Emerald Rapids
// vpdpbusd zmm issues on ports 0 and 5, and so do the float ops of each group's end (cvt, mul,
// fma): with gs 32 a block-group is 8 vpdpbusd + 3 float ops, at most 2 * 8 / 11 = 1.45 vpdpbusd a
// cycle. So a set of eight blocks takes its groups two at a time (group_pair): one chain per block
// and group, sixteen chains of gs / 4, and no vpaddd to join two chains of one group (with two
// chains a group, 8 + 4 ops a block-group). An odd group count runs its odd group first, with two
// chains a block: last, its chains are still draining when the call ends (measured slower).
// The per-call corrections are a tree of pair sums (minus_128_group_sums, 22 vector ops at K = 288
// instead of 45). In L1 the loop of pairs stays under the port bound, and removing its weight
// loads (timing only) closes most of the gap while moving them all to one line does not: the load
// uops, not the L1 capacity, take the rest. The weights cannot be
// vpdpbusd's memory operand (only its signed operand can), so each 64 bytes is a load of its own.
// On AMD Zen 4 (512-bit ops in two 256-bit halves, about one vpdpbusd zmm and one 64-byte load a
// cycle) loads and the single VNNI pipe bound it; the changes only remove ops (the joining vpaddd,
// half the correction ops) and reorder groups, and the pair loop keeps its 16 chains, 8 sums, 2
// broadcasts of x and a weight in 27 of the 32 zmm registers (gcc keeps them all in registers:
// no stack traffic in the loop), so nothing there can spill or need a second VNNI pipe.
// On AMD Zen 5 (two VNNI pipes) a pair of groups runs close to what the multiply and the FMA of
// each block-group, on the same pipes, allow; weights as vpdpbusd's memory operand, the
// int-to-float conversion by the 1.5 * 2^23 trick and a software prefetch were all slower there
// (docs/quantization.md, fourth pass).
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "q8.h"

enum { ROWS = 16 };

static size_t group_bytes(int gs) { return ROWS * 4 + (size_t)ROWS * (size_t)gs; }

size_t tw_q8_rows16_bytes(int N, int K, int gs) {
    return (size_t)((N + ROWS - 1) / ROWS) * (size_t)(K / gs) * group_bytes(gs);
}

// Blocks in the set that starts at block b of n_blocks: 8 while eight are left, then 4, 2, 1.
static int set_size(int b, int n_blocks) {
    const int left = n_blocks - b;
    return left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

// Group g of block b (rows 16 b ..) written at p.
static void pack_group(unsigned char *p, const int8_t *Wq, const float *Ws, int b, int g, int N,
                       int K, int gs) {
    const int n_groups = K / gs;
    float scale[ROWS] = { 0 };
    uint8_t *w = p + sizeof scale;   // (gs / 4, 16, 4)
    memset(w, 0x80, (size_t)ROWS * (size_t)gs);   // rows past N: w = 0, stored as 128
    for (int r = 0; r < ROWS && b * ROWS + r < N; r++) {
        const long row = (long)b * ROWS + r;
        const int8_t *src = Wq + row * K + (long)g * gs;   // (gs)
        for (int k = 0; k < gs; k++)
            w[(k / 4) * (ROWS * 4) + r * 4 + k % 4] = (uint8_t)(src[k] + 128);
        scale[r] = Ws[row * n_groups + g];
    }
    memcpy(p, scale, sizeof scale);
}

void tw_q8_rows16_pack(void *dst, const int8_t *Wq, const float *Ws, int N, int K, int gs) {
    const int n_blocks = (N + ROWS - 1) / ROWS, n_groups = K / gs;
    unsigned char *p = dst;
    for (int b = 0; b < n_blocks; b += set_size(b, n_blocks))
        for (int g = 0; g < n_groups; g++)
            for (int j = 0; j < set_size(b, n_blocks); j++) {
                pack_group(p, Wq, Ws, b + j, g, N, K, gs);
                p += group_bytes(gs);
            }
}

// The kernels below are written once for any number of chunks per group (CH = gs / 4) and of
// blocks side by side (NB); forced inline, so each use with constants gets its loops unrolled
// (UNROLL: otherwise gcc keeps the arrays of registers in memory).
#define INLINE static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 16")
enum { NB_MAX = 8, CHAINS_MAX = 8 };

// Independent vpdpbusd chains per block: two in sets of eight or four, 8 / NB in smaller sets (a
// group has 8 to 16 chains; with latency 5 and two issued a cycle, 10 are needed, and the next
// group's chains make up the rest), at most one per chunk. One chain per block in a set of eight
// (no vpaddd to join them) measured slower (docs/performance.md, "Kernels").
#define CHAINS_WANTED(NB) ((NB) >= 4 ? 2 : 8 / (NB))
#define CHAINS(NB, CH) (CHAINS_WANTED(NB) < (CH) ? CHAINS_WANTED(NB) : (CH))

// Four bytes of x at p broadcast to the sixteen int32 lanes (vpbroadcastd zmm, m32: a load, no
// ALU work).
INLINE __m512i bcast4(const int8_t *p) {
    return _mm512_broadcastd_epi32(_mm_loadu_si32(p));
}

// One group of NB blocks (blk[j]: block j's copy of the group, 64 + 16 gs bytes), added into
// acc[j]: the group's integer sums, sixteen rows a block, start from -128 sum(x of the group)
// (*corr, minus_128_group_sums) and end times Ws xs. Each broadcast of x feeds
// NB vpdpbusd.
INLINE void groups(__m512 acc[NB_MAX], const unsigned char *const blk[NB_MAX], const int8_t *xg,
                   const int32_t *corr, const float *xs, int CH, int NB) {
    const int NC = CHAINS(NB, CH);
    __m512i d[NB_MAX][CHAINS_MAX];   // (NB, NC) the chains; chain i takes chunks i, i + NC, ...
    // one broadcast, copied into each block's first chain (a load per block instead, from the
    // group's other lanes, measured slower: the loads are the scarcer resource)
    const __m512i c0 = _mm512_set1_epi32(*corr);
    UNROLL for (int j = 0; j < NB; j++) {
        d[j][0] = c0;
        UNROLL for (int i = 1; i < NC; i++) d[j][i] = _mm512_setzero_si512();
    }
    UNROLL for (int c = 0; c < CH; c++) {
        const __m512i xb = bcast4(xg + 4 * c);
        UNROLL for (int j = 0; j < NB; j++) {
            const __m512i w = _mm512_loadu_si512(blk[j] + ROWS * 4 + (size_t)c * ROWS * 4);
            d[j][c % NC] = _mm512_dpbusd_epi32(d[j][c % NC], w, xb);
        }
    }
    const __m512 sx = _mm512_set1_ps(*xs);
    UNROLL for (int j = 0; j < NB; j++) {
        UNROLL for (int i = 1; i < NC; i++) d[j][0] = _mm512_add_epi32(d[j][0], d[j][i]);
        // Ws xs first (one product for sixteen rows), then d times it: d xs alone could overflow
        // where the naive ((d Ws) xs) does not (tests/q8_cases.h, the huge-x case)
        const __m512 s = _mm512_mul_ps(_mm512_loadu_ps(blk[j]), sx);
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d[j][0]), s, acc[j]);
    }
}

// Two consecutive groups of NB blocks (blk0[j], blk1[j]: block j's copies of groups g and g + 1),
// added into acc[j] in that order, exactly as two calls of groups() would add them: one chain per
// block and group (2 NB chains), so no vpaddd joins chains.
INLINE void group_pair(__m512 acc[NB_MAX], const unsigned char *const blk0[NB_MAX],
                       const unsigned char *const blk1[NB_MAX], const int8_t *xg,
                       const int32_t *corr, const float *xs, int CH, int NB) {
    __m512i d0[NB_MAX], d1[NB_MAX];   // (NB) the chains of group g, of group g + 1
    const __m512i c0 = _mm512_set1_epi32(corr[0]), c1 = _mm512_set1_epi32(corr[1]);
    UNROLL for (int j = 0; j < NB; j++) d0[j] = c0, d1[j] = c1;
    UNROLL for (int c = 0; c < CH; c++) {
        const __m512i xb0 = bcast4(xg + 4 * c), xb1 = bcast4(xg + 4 * CH + 4 * c);
        UNROLL for (int j = 0; j < NB; j++) {
            const __m512i w0 = _mm512_loadu_si512(blk0[j] + ROWS * 4 + (size_t)c * ROWS * 4);
            d0[j] = _mm512_dpbusd_epi32(d0[j], w0, xb0);
            const __m512i w1 = _mm512_loadu_si512(blk1[j] + ROWS * 4 + (size_t)c * ROWS * 4);
            d1[j] = _mm512_dpbusd_epi32(d1[j], w1, xb1);
        }
    }
    const __m512 sx0 = _mm512_set1_ps(xs[0]), sx1 = _mm512_set1_ps(xs[1]);
    UNROLL for (int j = 0; j < NB; j++) {
        const __m512 s0 = _mm512_mul_ps(_mm512_loadu_ps(blk0[j]), sx0);
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0[j]), s0, acc[j]);
        const __m512 s1 = _mm512_mul_ps(_mm512_loadu_ps(blk1[j]), sx1);
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1[j]), s1, acc[j]);
    }
}

// NB blocks starting at block b: every group in order, then their rows stored (y past N untouched).
INLINE void blocks(float *y, const unsigned char *packed, const int8_t *xq, const int32_t *corr,
                   const float *xs, int b, int N, int K, int gs, int CH, int NB) {
    const int n_groups = K / gs;
    const size_t gb = group_bytes(gs);
    const unsigned char *p = packed + (size_t)b * n_groups * gb;   // the set's first group
    __m512 acc[NB_MAX];
    UNROLL for (int j = 0; j < NB; j++) acc[j] = _mm512_setzero_ps();
    // In pairs (sets of eight, groups of two chunks or more), an odd group first (see the header);
    // otherwise one group at a time.
    const int pairs = NB == 8 && CH >= 2;
    int g = 0;
    for (; g < n_groups && (!pairs || g < n_groups % 2); g++, p += NB * gb) {
        const unsigned char *blk[NB_MAX];
        UNROLL for (int j = 0; j < NB; j++) blk[j] = p + j * gb;
        groups(acc, blk, xq + (long)g * gs, corr + g, xs + g, CH, NB);
    }
    if (pairs)
        for (; g + 2 <= n_groups; g += 2, p += 2 * NB * gb) {
            const unsigned char *blk0[NB_MAX], *blk1[NB_MAX];
            UNROLL for (int j = 0; j < NB; j++) blk0[j] = p + j * gb, blk1[j] = p + (NB + j) * gb;
            group_pair(acc, blk0, blk1, xq + (long)g * gs, corr + g, xs + g, CH, NB);
        }
    UNROLL for (int j = 0; j < NB; j++) {
        const int row0 = (b + j) * ROWS, left = N - row0;
        const __mmask16 m = left >= ROWS ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        _mm512_mask_storeu_ps(y + row0, m, acc[j]);
    }
}

// All the blocks, in the sets of set_size.
INLINE void all_blocks(float *y, const unsigned char *packed, const int8_t *xq, const int32_t *corr,
                       const float *xs, int N, int K, int gs, int CH) {
    const int n_blocks = (N + ROWS - 1) / ROWS;
    int b = 0;   // the sets of set_size
    for (; n_blocks - b >= 8; b += 8) blocks(y, packed, xq, corr, xs, b, N, K, gs, CH, 8);
    if (n_blocks - b >= 4) { blocks(y, packed, xq, corr, xs, b, N, K, gs, CH, 4); b += 4; }
    if (n_blocks - b >= 2) { blocks(y, packed, xq, corr, xs, b, N, K, gs, CH, 2); b += 2; }
    if (n_blocks - b >= 1) blocks(y, packed, xq, corr, xs, b, N, K, gs, CH, 1);
}

// Bytes of x at p, n <= 64 of them (the rest zeros), as one vector.
INLINE __m512i load_bytes(const int8_t *p, int n) {
    return _mm512_maskz_loadu_epi8(n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1), p);
}

// The dword indices 0, 2, 4, ... 30 of two vectors side by side (for vpermt2d), and 1, 3, ... 31.
INLINE __m512i even_dwords(void) {
    return _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
}
INLINE __m512i odd_dwords(void) {
    return _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
}

// Lane i of the result: a[2i] + a[2i + 1] for i < 8, b[2i - 16] + b[2i - 15] after: the sums of
// neighbouring lanes of a, then of b, in order (two vpermt2d and a vpaddd).
INLINE __m512i pair_sums(__m512i a, __m512i b) {
    return _mm512_add_epi32(_mm512_permutex2var_epi32(a, even_dwords(), b),
                            _mm512_permutex2var_epi32(a, odd_dwords(), b));
}

// The bytes of x from k on, as one vector: 64 of them, or the K - k < 64 left and zeros.
INLINE __m512i x_bytes(const int8_t *xq, int k, int K) {
    return k + 64 <= K  ? _mm512_loadu_si512(xq + k)
           : k + 32 == K ? _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)(xq + k)))
                         : load_bytes(xq + k, K - k);   // (a 256-bit load needs no mask register)
}

// The corrections -128 * (sum of x over group g) at sums[g], for g < K / gs: sums (K / gs) of the
// (K) int32 the caller gives. For gs = 4 .. 64 (a power of two) in registers, sixteen groups at a
// time from the 2^m = gs / 4 vectors of x that hold them. gs = 4: vpdpbusd with bytes of 128 makes
// the sums of each 4 bytes, times 128. Larger gs: the even and the odd dwords of two vectors of x
// (two vpermt2d), each through one vpdpbusd into the same lanes, make the sums of each 8 bytes,
// then m - 1 rounds of pair_sums halve the vectors and double the bytes each lane sums (vectors
// past K are zero and never made). At K = 288, gs = 32 that is 22 vector instructions, where
// folding each vector's lanes in place (and storing every group's sum gs / 4 times) took 45. Whole
// vector stores where the (K) scratch has room: a vector store read back by scalar loads while
// still in flight is forwarded only when unmasked. Other gs: one group at a time.
INLINE void minus_128_group_sums(int32_t *sums, const int8_t *xq, int K, int gs) {
    const int n_groups = K / gs;
    const __m512i u128 = _mm512_set1_epi8((char)0x80);   // 128 as vpdpbusd's unsigned bytes
    if (gs == 4 || gs == 8 || gs == 16 || gs == 32 || gs == 64) {
        for (int g0 = 0; g0 < n_groups; g0 += 16) {
            __m512i v[8];   // (gs / 8) vectors of sums (gs = 4: one), half as many after each round
            // zeros first: every lane read below is written first, but gcc 12 cannot see that
            // through the rounds and warns (-Wmaybe-uninitialized); the dead stores are removed
            UNROLL for (int i = 0; i < 8; i++) v[i] = _mm512_setzero_si512();
            const int k0 = g0 * gs;
            if (gs == 4) v[0] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u128, x_bytes(xq, k0, K));
            UNROLL for (int i = 0; i < gs / 8; i++) {   // x[k0 + 128 i ..] and the next 64 bytes
                const int k = k0 + 128 * i;
                if (k >= K) { v[i] = _mm512_setzero_si512(); continue; }
                const __m512i a = x_bytes(xq, k, K), b = k + 64 < K ? x_bytes(xq, k + 64, K) : _mm512_setzero_si512();
                v[i] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), u128,
                                                               _mm512_permutex2var_epi32(a, even_dwords(), b)),
                                           u128, _mm512_permutex2var_epi32(a, odd_dwords(), b));
            }
            UNROLL for (int w = gs / 8, span = 128; w > 1; w /= 2, span *= 2)   // w vectors -> w / 2
                UNROLL for (int i = 0; i < w / 2; i++)   // v[2 i + 1] starts at x[k0 + (2 i + 1) span]
                    v[i] = k0 + (2 * i + 1) * span < K ? pair_sums(v[2 * i], v[2 * i + 1])
                           : k0 + 2 * i * span < K     ? pair_sums(v[2 * i], _mm512_setzero_si512())
                                                       : _mm512_setzero_si512();
            const __m512i c = _mm512_sub_epi32(_mm512_setzero_si512(), v[0]);
            if (g0 + 16 <= K) _mm512_storeu_si512(sums + g0, c);
            else _mm512_mask_storeu_epi32(sums + g0, (__mmask16)((1u << (n_groups - g0)) - 1u), c);
        }
        return;
    }
    for (int g = 0; g < n_groups; g++) {
        __m512i q = _mm512_setzero_si512();
        for (int k = 0; k < gs; k += 64)
            q = _mm512_dpbusd_epi32(q, u128, load_bytes(xq + (long)g * gs + k, gs - k));
        sums[g] = -_mm512_reduce_add_epi32(q);
    }
}

void tw_q8_matvec_rows16_avx512vnni(float *y, const void *packed, int32_t *scratch,
                                    const int8_t *xq, const float *xs, int N, int K, int gs) {
    int32_t *corr = scratch;   // (K / gs) of the (K) the caller gives: minus_128_group_sums
    // The group sizes of the models in this toolkit with their chunk count as a constant
    // (stories260K: 4; llama2.c's 15M export: 32; 64), any other multiple of 4 in one loop.
    switch (gs) {
    case 4:
        minus_128_group_sums(corr, xq, K, 4);
        all_blocks(y, packed, xq, corr, xs, N, K, 4, 1);
        break;
    case 32:
        minus_128_group_sums(corr, xq, K, 32);
        all_blocks(y, packed, xq, corr, xs, N, K, 32, 8);
        break;
    case 64:
        minus_128_group_sums(corr, xq, K, 64);
        all_blocks(y, packed, xq, corr, xs, N, K, 64, 16);
        break;
    default:
        minus_128_group_sums(corr, xq, K, gs);
        all_blocks(y, packed, xq, corr, xs, N, K, gs, gs / 4);
        break;
    }
}
