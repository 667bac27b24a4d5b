// q8.h: the int8 (Q8_0) kernels, beside their naive twins in lib/quant/q8_0.c, and the form in
// which each level's table (simd.h, made in dispatch.c) carries them. lib/quant/q8_0.h adds the
// naive level on top (tw_q8_ops_for) and the two calls that check a kernel's group-size promise (tw_q8_quantize_x, tw_q8_matvec).
//
// Two kernels per level:
//   quantize_x  the activation side: x (n_groups * gs floats) -> q (int8) and s (one float per
//               group), bit for bit what tw_q8_quantize_x_naive computes (same max, same
//               division, same round-to-nearest-even, same clamp), at every level.
//   matvec      y = W x with both sides quantized (tw_q8_matvec_naive's contract): the integer
//               dot product of each group is exact at every level; only the order in which the
//               float terms dot * Ws * xs are added (and whether Ws * xs is rounded first) differs.
// Levels (suffix):
//   _naive        lib/quant/q8_0.c
//   _avx2         AVX2: vpmaddubsw on |w| and sign(x, w), then vpmaddwd with ones (the signs are
//                 moved onto the activations so the unsigned operand is |w| <= 128; the int16 pair
//                 sums stay below 2 * 128 * 127 = 32512, so vpmaddubsw never saturates)
//   _avx512bw     AVX-512BW: the same at 512 bits, the sign applied with a mask (no vpsignb there)
//   _avx512vnni   AVX-512 VNNI: vpdpbusd on |w| and sign(x, w), four products a lane in one instruction
//   _neon         AArch64: vmull_s8 / vmlal_s8 widening multiplies, vpadalq_s16 into int32
//   _neon_dot     AArch64 with the dot-product extension (FEAT_DotProd): sdot
// Group sizes. The kernels here promise nothing for every group size: quantize_x needs
// gs % x_multiple == 0 and matvec gs % w_multiple == 0 (the table says which); the calls in
// lib/quant/q8_0.c run the naive loop for any other gs (still correct, just slow).
#ifndef TW_Q8_H
#define TW_Q8_H
#include <stddef.h>
#include <stdint.h>

typedef void (*tw_q8_quantize_fn)(int8_t *q, float *s, const float *x, int n_groups, int gs);
//   y: (N)   Wq: (N, K)   Ws: (N, K / gs)   xq: (K)   xs: (K / gs)
typedef void (*tw_q8_matvec_fn)(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                                const float *xs, int N, int K, int gs);

// A level may also have a matvec on its own layout of the weights, made once from the row-major
// Q8_0 arrays (when a model state is made, lib/nn/model.c) and read at every call instead of them:
//   packed_bytes(N, K, gs)                    the bytes of the packed copy of an (N, K) matrix
//   pack(dst, Wq, Ws, N, K, gs)               writes it
//   matvec_packed(y, P, scratch, xq, xs, N, K, gs)  y = W x from the packed copy P
// Same results as matvec, within the same bounds (tests/q8_cases.h). NULL where a level has none.
// The packed copy can be cut into runs of rows for threads (lib/quant/q8_threads.c): for r0 a
// multiple of pack_split_rows, the copy's bytes from packed_bytes(r0, K, gs) on are the packed copy
// of rows r0 .. N - 1 (and their first packed_bytes(r1 - r0, K, gs) bytes that of rows r0 .. r1 - 1
// when r1 is a multiple of pack_split_rows too), and matvec_packed on it computes those rows' bits.
typedef size_t (*tw_q8_packed_bytes_fn)(int N, int K, int gs);
typedef void (*tw_q8_pack_fn)(void *dst, const int8_t *Wq, const float *Ws, int N, int K, int gs);
//   y: (N)   P: packed_bytes(N, K, gs) bytes   scratch: (K) int32   xq: (K)   xs: (K / gs)
typedef void (*tw_q8_matvec_packed_fn)(float *y, const void *P, int32_t *scratch, const int8_t *xq,
                                       const float *xs, int N, int K, int gs);

typedef struct tw_q8_ops_s {
    const char        *level;   // "naive", "avx2", "avx512bw", "avx512vnni", "neon", "neon_dot"
    tw_q8_quantize_fn  quantize_x;
    tw_q8_matvec_fn    matvec;
    int                x_multiple;   // quantize_x handles gs % x_multiple == 0
    int                w_multiple;   // matvec handles gs % w_multiple == 0
    tw_q8_packed_bytes_fn  packed_bytes;    // NULL: no packed layout
    tw_q8_pack_fn          pack;
    tw_q8_matvec_packed_fn matvec_packed;
    int                    pack_multiple;   // the packed kernels handle gs % pack_multiple == 0
    int                    pack_split_rows; // the copy can be cut before any multiple of this many rows
    // Group size 4 (the only one stories260K's widths 64 and 172 share with a power of two
    // above 1), which the kernels above do not take: one int32 lane per 4-byte group (q8_g4_*.c).
    // NULL where a level has none; lib/quant/q8_0.c runs them when gs == 4.
    tw_q8_quantize_fn  quantize_x_g4;
    tw_q8_matvec_fn    matvec_g4;
} tw_q8_ops;


// Each level's table in simd.h (tw_kernels, made in dispatch.c) carries its int8 kernels in this
// form; lib/quant/q8_0.h answers for every level, the naive one included (tw_q8_ops_for).

// ---- per-ISA kernels (declared unconditionally; defined only where built) ----
void tw_q8_quantize_x_avx2(int8_t *q, float *s, const float *x, int n_groups, int gs);
void tw_q8_matvec_avx2(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                       const float *xs, int N, int K, int gs);
void tw_q8_quantize_x_avx512(int8_t *q, float *s, const float *x, int n_groups, int gs);
void tw_q8_matvec_avx512bw(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                           const float *xs, int N, int K, int gs);
void tw_q8_matvec_avx512vnni(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                             const float *xs, int N, int K, int gs);
// AVX-512 VNNI on weights interleaved sixteen rows at a time (q8_vnni_rows16.c; gs % 4 == 0).
// The copy is stored in sets of eight blocks of sixteen rows (the last sets: 4, 2, 1 blocks), so it
// can be cut before any multiple of 128 rows (pack_split_rows above).
#define TW_Q8_ROWS16_SPLIT 128
size_t tw_q8_rows16_bytes(int N, int K, int gs);
void tw_q8_rows16_pack(void *dst, const int8_t *Wq, const float *Ws, int N, int K, int gs);
void tw_q8_matvec_rows16_avx512vnni(float *y, const void *P, int32_t *scratch, const int8_t *xq,
                                    const float *xs, int N, int K, int gs);
void tw_q8_quantize_x_neon(int8_t *q, float *s, const float *x, int n_groups, int gs);
void tw_q8_matvec_neon(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                       const float *xs, int N, int K, int gs);
void tw_q8_matvec_neon_dot(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                           const float *xs, int N, int K, int gs);


// ---- group size 4 (q8_g4_*.c; same contracts as above, gs == 4 only) ----
void tw_q8_quantize_x_g4_avx2(int8_t *q, float *s, const float *x, int n_groups, int gs);
void tw_q8_matvec_g4_avx2(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                          const float *xs, int N, int K, int gs);
void tw_q8_quantize_x_g4_avx512(int8_t *q, float *s, const float *x, int n_groups, int gs);
void tw_q8_matvec_g4_avx512bw(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                              const float *xs, int N, int K, int gs);
void tw_q8_quantize_x_g4_neon(int8_t *q, float *s, const float *x, int n_groups, int gs);
void tw_q8_matvec_g4_neon(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                          const float *xs, int N, int K, int gs);
void tw_q8_matvec_g4_neon_dot(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                              const float *xs, int N, int K, int gs);

#endif
