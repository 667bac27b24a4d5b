// q8_cases.h: the checks of every int8 kernel (lib/simd/q8.h) against its naive twin in
// lib/quant/q8_0.c, written once and run by two drivers: the Check suite (tests/test_q8.c) and the
// Check-free self-test that `make test-arm-q8` runs under qemu (tests/arm/q8_selftest.c). Each
// case takes one level's table and one shape, returns 0 on success, or 1 with a message.
//
// What is compared, and how closely:
//   quantize_x   q and s must equal the naive ones bit for bit (the same max, division, clamp and
//                round-to-nearest-even; NaN scales compare equal to NaN). Tolerance 0.
//   matvec, exact  with every scale a power of two (Ws = 2^-7, xs = 2^-3) every float operation
//                of either version is exact (each term is an integer times 2^-10 and every
//                partial sum stays below 2^24 * 2^-10), so the results must be equal bit for bit:
//                this isolates the integer dot products, which must be exact. Weights cover the
//                whole int8 range including -128. Tolerance 0.
//                The same with Ws = 2^-20 and xs = 2^115 (the whole float range, as docs/kernels.md
//                asks of every kernel): each term d Ws xs = d 2^95 stays far below the float
//                maximum, but d xs alone (up to 2^16 * 2^115) does not, so a kernel that multiplies
//                d by xs before Ws overflows where the naive loop, ((d Ws) xs), does not.
//   matvec, random  realistic scales: the integer parts are still exact, but the float terms
//                d_g * Ws_g * xs_g are rounded (two products, <= 2u relative each way) and added in
//                a different order (the SIMD versions keep per-lane partial sums, i.e. the lanes
//                of d_g times the scale, and add lanes at the end). For row i the two results
//                differ by at most (2 n_g + 40) u A_i, with u = 2^-24, n_g = K / gs groups and
//                A_i = sum_g |Ws_ig xs_g| sum_k |w_k x_k|: each version is within (n_g + 20) u A_i
//                of the exact value (a chain of at most n_g FMAs per lane, a 16-lane reduction
//                (4 levels, or 16 adds in the worst order), and 2 roundings per product; Higham
//                eq. 3.5), and A_i bounds the sum of the absolute values of every lane's terms.
#ifndef Q8_CASES_H
#define Q8_CASES_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "quant/q8_0.h"
#include "simd/q8.h"
#include "sc_rand.h"   // sc_rand: seeded uniform floats

#define Q8_U_ROUND 5.9604644775390625e-8   // 2^-24

// Shapes (N rows, K columns, group size gs): group sizes the SIMD kernels take (32, 64, 128,
// 16 on NEON, 4 with the group-size-4 kernels) and ones they hand to the naive loop (8, 1, 96
// on AVX-512, 48); odd group
// counts (the 256-bit / masked tails), one row, and the 15M model's widths.
// Then shapes for the packed layout (any gs % 4 == 0): stories260K's widths 172 and 64 with its
// group size 4, and gs 12; N not a multiple of 16 leaves a block partly empty.
static const struct { int N, K, gs; } Q8_SHAPES[] = {
    { 1, 32, 32 },  { 3, 64, 32 },   { 17, 96, 32 },  { 5, 288, 32 },  { 7, 160, 32 },
    { 2, 64, 64 },  { 3, 192, 64 },  { 4, 128, 128 }, { 3, 384, 128 }, { 2, 96, 96 },
    { 3, 48, 16 },  { 2, 40, 8 },    { 2, 12, 4 },    { 2, 7, 1 },     { 3, 1000, 8 },
    { 9, 768, 32 }, { 6, 288, 96 },  { 2, 144, 48 },  { 33, 256, 256 },
    // gs 4, taken by the group-size-4 kernels (q8_g4_*.c): stories260K's matrices (64 x 64, the
    // 32 x 64 keys and values, 172 x 64, 64 x 172 whose rows end 44 bytes into a 64-byte step,
    // 512 x 64), one group, row counts that are not a multiple of 4, and every tail length of a
    // 16-, 32- and 64-byte step (K % 64 = 4 ... 60).
    { 64, 64, 4 },  { 32, 64, 4 },   { 172, 64, 4 },  { 64, 172, 4 },  { 512, 64, 4 },
    { 1, 4, 4 },    { 3, 8, 4 },     { 5, 20, 4 },    { 6, 36, 4 },    { 7, 124, 4 },
    { 2, 132, 4 },  { 9, 200, 4 },   { 4, 228, 4 },   { 3, 252, 4 },   { 2, 316, 4 },
    { 2, 188, 4 },  { 2, 104, 4 },   { 2, 92, 4 },    { 2, 76, 4 },    { 2, 168, 4 },
    { 5, 1024, 4 }, { 3, 1028, 4 },  { 2, 1100, 4 },   // the longest short row, and longer ones
    { 37, 172, 4 }, { 16, 64, 4 },   { 50, 96, 12 },
    // more than 128 rows, so the packed kernel runs a full set of eight blocks and then one, for
    // gs 32, 64 and (the loop for any gs) 12, the last block partly empty
    { 130, 288, 32 }, { 136, 128, 64 }, { 129, 48, 12 },
};
#define N_Q8_SHAPES ((int)(sizeof Q8_SHAPES / sizeof Q8_SHAPES[0]))

static int q8_oom(char *msg, size_t msz) { snprintf(msg, msz, "out of memory"); return 1; }

static int q8_same_float(float a, float b) {
    if (isnan(a) && isnan(b)) return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

// ---- quantize_x: bit for bit ----

// Quantizes x (K values, groups of gs) with level o and with the naive loop; 0 if q and s are
// equal bit for bit, else 1 and the first difference in msg.
static int q8_same_quantize(const tw_q8_ops *o, const float *x, int K, int gs, char *msg, size_t msz) {
    const int ng = K / gs;
    int8_t *q1 = malloc((size_t)K), *q2 = malloc((size_t)K);
    float *s1 = malloc((size_t)ng * sizeof(float)), *s2 = malloc((size_t)ng * sizeof(float));
    if (!q1 || !q2 || !s1 || !s2) { free(q1); free(q2); free(s1); free(s2); return q8_oom(msg, msz); }
    tw_q8_quantize_x_naive(q1, s1, x, ng, gs);
    tw_q8_quantize_x(o, q2, s2, x, ng, gs);
    int bad = 0;
    for (int g = 0; g < ng && !bad; g++)
        if (!q8_same_float(s1[g], s2[g])) {
            snprintf(msg, msz, "quantize_x gs %d: scale of group %d: got %.9g want %.9g", gs, g,
                     (double)s2[g], (double)s1[g]);
            bad = 1;
        }
    for (int k = 0; k < K && !bad; k++)
        if (q1[k] != q2[k]) {
            snprintf(msg, msz, "quantize_x gs %d: q[%d] (x = %.9g): got %d want %d", gs, k,
                     (double)x[k], q2[k], q1[k]);
            bad = 1;
        }
    free(q1); free(q2); free(s1); free(s2);
    return bad;
}

static int case_q8_quantize(const tw_q8_ops *o, int shape, char *msg, size_t msz) {
    const int K = Q8_SHAPES[shape].K, gs = Q8_SHAPES[shape].gs, ng = K / gs;
    float *x = sc_rand(K, -3.0f, 3.0f, 100u + (unsigned)shape);
    if (!x) return q8_oom(msg, msz);
    // Special groups: all zeros (scale 0), a NaN, an Inf, subnormals, exact ties (x = k + 1/2
    // with scale 1), and a dominant outlier.
    for (int g = 0; g < ng; g++) {
        float *xg = x + (long)g * gs;
        switch (g % 7) {
        case 1: for (int i = 0; i < gs; i++) xg[i] = 0.0f; break;
        case 2: xg[gs / 2] = NAN; break;
        case 3: xg[gs - 1] = -INFINITY; break;
        case 4: for (int i = 0; i < gs; i++) xg[i] *= 1e-40f; break;
        case 5: for (int i = 0; i < gs; i++) xg[i] = (float)(i % 9) - 4.5f; xg[0] = 127.0f; break;
        case 6: xg[0] = 1000.0f; break;
        default: break;
        }
    }
    const int bad = q8_same_quantize(o, x, K, gs, msg, msz);
    free(x);
    return bad;
}

// Values whose quotient x / scale lies just beside a half-integer, where any shortcut for the
// division (x times 1 / scale, say) would round some of them the other way, and so must fall back
// to the division exactly there (tried for q8_avx512.c: a threshold that let such values through
// failed this case, as it should): each group's first value, 127 s, sets the scale (s random between 2^-10 and 2^10, or near the
// ends of the float range, 2^-120 and 2^120), the others are (k + 1/2 + e) s for random integers
// k in [-127, 126] and offsets e from 0 to 2^-9 (0, 2^-24, 2^-20, 2^-16, 2^-14, 2^-13, 2^-12,
// 1.5 2^-12, 2^-11, 2^-9), of either sign. Tolerance 0.
static int case_q8_quantize_near_half(const tw_q8_ops *o, int shape, char *msg, size_t msz) {
    const int K = Q8_SHAPES[shape].K, gs = Q8_SHAPES[shape].gs, ng = K / gs;
    float *x = sc_rand(K, -1.0f, 1.0f, 300u + (unsigned)shape);   // (K) the signs of e
    float *r = sc_rand(2L * K, 0.0f, 1.0f, 400u + (unsigned)shape);   // (2 K) k, and s per group
    if (!x || !r) { free(x); free(r); return q8_oom(msg, msz); }
    static const float offsets[] = { 0.0f, 0x1p-24f, 0x1p-20f, 0x1p-16f, 0x1p-14f, 0x1p-13f,
                                     0x1p-12f, 0x1.8p-12f, 0x1p-11f, 0x1p-9f };
    for (int g = 0; g < ng; g++) {
        float *xg = x + (long)g * gs;
        const float *rg = r + K + (long)g * gs;
        const float s = g % 5 == 3   ? 0x1p-120f
                        : g % 5 == 4 ? 0x1p120f
                                     : ldexpf(1.0f + r[g], (int)(r[ng + g] * 20.0f) - 10);
        for (int i = 0; i < gs; i++) {
            const float k = floorf(rg[i] * 254.0f) - 127.0f;
            const float e = offsets[(g + i) % 10] * (xg[i] < 0 ? -1.0f : 1.0f);
            xg[i] = (k + 0.5f + e) * s;
        }
        xg[0] = 127.0f * s;
    }
    const int bad = q8_same_quantize(o, x, K, gs, msg, msz);
    free(x); free(r);
    return bad;
}

// y = W x by level o: its row-major matvec (packed 0) or its packed layout (packed 1; the copy
// is made here with o->pack, as a model state makes it). Returns 0, 1 if the level has no packed
// layout for gs (nothing to check), or -1 when out of memory.
static int q8_run(const tw_q8_ops *o, int packed, float *y, const int8_t *W, const float *Ws,
                  const int8_t *xq, const float *xs, int N, int K, int gs) {
    if (!packed) { tw_q8_matvec(o, y, W, Ws, xq, xs, N, K, gs); return 0; }
    if (!tw_q8_packs(o, gs)) return 1;
    void *P = malloc(o->packed_bytes(N, K, gs));
    int32_t *scratch = malloc((size_t)K * sizeof *scratch);
    if (!P || !scratch) { free(P); free(scratch); return -1; }
    o->pack(P, W, Ws, N, K, gs);
    o->matvec_packed(y, P, scratch, xq, xs, N, K, gs);
    free(P);
    free(scratch);
    return 0;
}

// ---- matvec with power-of-two scales: bit for bit ----

static int q8_matvec_exact(const tw_q8_ops *o, int packed, int shape, float w_scale, float x_scale,
                           char *msg, size_t msz) {
    const int N = Q8_SHAPES[shape].N, K = Q8_SHAPES[shape].K, gs = Q8_SHAPES[shape].gs, ng = K / gs;
    int8_t *W = malloc((size_t)N * K), *xq = malloc((size_t)K);
    float *Ws = malloc((size_t)N * ng * sizeof(float)), *xs = malloc((size_t)ng * sizeof(float));
    float *y1 = malloc((size_t)N * sizeof(float)), *y2 = malloc((size_t)N * sizeof(float));
    if (!W || !xq || !Ws || !xs || !y1 || !y2) {
        free(W); free(xq); free(Ws); free(xs); free(y1); free(y2); return q8_oom(msg, msz);
    }
    tw_rng r;
    tw_rng_init(&r, 7u + (unsigned)shape);
    for (long i = 0; i < (long)N * K; i++) W[i] = (int8_t)((int)(tw_rng_next(&r) % 256u) - 128);
    for (int k = 0; k < K; k++) xq[k] = (int8_t)((int)(tw_rng_next(&r) % 255u) - 127);
    for (long i = 0; i < (long)N * ng; i++) Ws[i] = w_scale;   // a power of two
    for (int g = 0; g < ng; g++) xs[g] = x_scale;               // a power of two
    W[0] = -128; W[(long)N * K - 1] = -128; xq[0] = -127; xq[K - 1] = 127;   // the extremes
    tw_q8_matvec_naive(y1, W, Ws, xq, xs, N, K, gs);
    const int ran = q8_run(o, packed, y2, W, Ws, xq, xs, N, K, gs);
    int bad = ran < 0 ? q8_oom(msg, msz) : 0;
    for (int i = 0; i < N && !bad && ran == 0; i++)
        if (!q8_same_float(y1[i], y2[i])) {
            snprintf(msg, msz, "%s (exact scales Ws %g, xs %g) N %d K %d gs %d: y[%d] got %.9g want %.9g",
                     packed ? "packed matvec" : "matvec", (double)w_scale, (double)x_scale, N, K, gs, i,
                     (double)y2[i], (double)y1[i]);
            bad = 1;
        }
    free(W); free(xq); free(Ws); free(xs); free(y1); free(y2);
    return bad;
}

// ---- matvec with realistic scales: within (2 n_g + 40) u A_i ----

static int q8_matvec_random(const tw_q8_ops *o, int packed, int shape, char *msg, size_t msz) {
    const int N = Q8_SHAPES[shape].N, K = Q8_SHAPES[shape].K, gs = Q8_SHAPES[shape].gs, ng = K / gs;
    float *Wf = sc_rand((long)N * K, -0.5f, 0.5f, 200u + (unsigned)shape);
    float *x = sc_rand(K, -4.0f, 4.0f, 300u + (unsigned)shape);
    int8_t *W = malloc((size_t)N * K), *xq = malloc((size_t)K);
    float *Ws = malloc((size_t)N * ng * sizeof(float)), *xs = malloc((size_t)ng * sizeof(float));
    float *y1 = malloc((size_t)N * sizeof(float)), *y2 = malloc((size_t)N * sizeof(float));
    if (!Wf || !x || !W || !xq || !Ws || !xs || !y1 || !y2) {
        free(Wf); free(x); free(W); free(xq); free(Ws); free(xs); free(y1); free(y2);
        return q8_oom(msg, msz);
    }
    tw_q8_quantize(W, Ws, Wf, N, K, gs);
    tw_q8_quantize_x_naive(xq, xs, x, ng, gs);
    tw_q8_matvec_naive(y1, W, Ws, xq, xs, N, K, gs);
    const int ran = q8_run(o, packed, y2, W, Ws, xq, xs, N, K, gs);
    int bad = ran < 0 ? q8_oom(msg, msz) : 0;
    for (int i = 0; i < N && !bad && ran == 0; i++) {
        double A = 0;
        for (int g = 0; g < ng; g++) {
            double abs_dot = 0;
            for (int k = g * gs; k < (g + 1) * gs; k++) abs_dot += fabs((double)W[(long)i * K + k] * xq[k]);
            A += fabs((double)Ws[(long)i * ng + g] * xs[g]) * abs_dot;
        }
        double bound = (2.0 * ng + 40.0) * Q8_U_ROUND * A;
        double d = fabs((double)y1[i] - y2[i]);
        if (!(d <= bound)) {
            snprintf(msg, msz, "%s N %d K %d gs %d: y[%d] got %.9g want %.9g, |diff| %.3g > bound %.3g",
                     packed ? "packed matvec" : "matvec", N, K, gs, i, (double)y2[i], (double)y1[i], d, bound);
            bad = 1;
        }
    }
    free(Wf); free(x); free(W); free(xq); free(Ws); free(xs); free(y1); free(y2);
    return bad;
}

static int case_q8_matvec_exact(const tw_q8_ops *o, int shape, char *msg, size_t msz) {
    return q8_matvec_exact(o, 0, shape, 0x1p-7f, 0x1p-3f, msg, msz);
}
static int case_q8_matvec_exact_huge_x(const tw_q8_ops *o, int shape, char *msg, size_t msz) {
    return q8_matvec_exact(o, 0, shape, 0x1p-20f, 0x1p115f, msg, msz);
}
static int case_q8_matvec(const tw_q8_ops *o, int shape, char *msg, size_t msz) {
    return q8_matvec_random(o, 0, shape, msg, msz);
}
// The packed layout (levels that have one, group sizes it takes; the others pass with nothing to
// check, and the row-major cases above cover them): the same comparisons, the same tolerances.
static int case_q8_packed_exact(const tw_q8_ops *o, int shape, char *msg, size_t msz) {
    return q8_matvec_exact(o, 1, shape, 0x1p-7f, 0x1p-3f, msg, msz);
}
static int case_q8_packed_exact_huge_x(const tw_q8_ops *o, int shape, char *msg, size_t msz) {
    return q8_matvec_exact(o, 1, shape, 0x1p-20f, 0x1p115f, msg, msz);
}
static int case_q8_packed(const tw_q8_ops *o, int shape, char *msg, size_t msz) {
    return q8_matvec_random(o, 1, shape, msg, msz);
}

typedef struct { const char *name; int (*run)(const tw_q8_ops *, int, char *, size_t); } q8_case;
static const q8_case Q8_CASES[] = {
    { "quantize_x", case_q8_quantize },
    { "quantize_x_near_half", case_q8_quantize_near_half },
    { "matvec_exact", case_q8_matvec_exact },
    { "matvec_exact_huge_x", case_q8_matvec_exact_huge_x },
    { "matvec", case_q8_matvec },
    { "packed_exact", case_q8_packed_exact },
    { "packed_exact_huge_x", case_q8_packed_exact_huge_x },
    { "packed", case_q8_packed },
};
#define N_Q8_CASES ((int)(sizeof Q8_CASES / sizeof Q8_CASES[0]))

#endif
