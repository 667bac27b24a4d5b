// test_sdpa_tiled_simd.c: the SIMD levels of the tiled attention (lib/simd/sdpa_tiled_*.c, one
// algorithm in sdpa_tiled_body.h) against the naive tiled loops (tw_sdpa_tiled_forward_naive and
// _backward_naive, lib/nn/sdpa_tiled.c), at every level this machine has (x86: avx2, avx512;
// AArch64: neon, under qemu by make test-arm-tiled). Cases: T in {1, 7, 64, 257}, head sizes 4 ..
// 64 (below, equal to and above a register's width), blocks that do not divide T, additive masks,
// a KV-cache offset, GQA strides (a head read in place from a (T, H*D) matrix), scores near
// +-1e4, a row with every key masked (output 0, no gradient, never NaN) and one with one key.
// The kernel must also run (return 1) where its scratch fits and decline (0, nothing touched)
// where it does not.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "grad_check.h"
#include "simd/simd.h"
#include "nn/sdpa_tiled.h"

typedef struct { int T, S, D, causal, offset, masked, block, H, scale; } simd_case;
// H: heads side by side in q (stride H*D); keys and values of head 0 of G = H/2 kv heads.
// scale: 1 ordinary inputs in [-1, 1]; 100: q and k times 100 (scores near +-1e4 / sqrt(D)).
static const simd_case CASES[] = {
    { 1,   1,   8,  1, 0,  0, 64,  1, 1 },
    { 7,   7,   8,  1, 0,  1, 3,   1, 1 },     // blocks of 3: short last block, masks
    { 64,  64,  8,  1, 0,  0, 64,  8, 1 },     // stories260K's heads: D 8, stride 64
    { 64,  64,  16, 0, 0,  1, 16,  2, 1 },
    { 257, 257, 16, 1, 0,  1, 64,  1, 1 },     // 257 = 4 * 64 + 1
    { 257, 257, 4,  0, 0,  0, 50,  1, 1 },     // D below every register's width
    { 40,  40,  20, 1, 0,  0, 17,  1, 1 },     // D not a multiple of any width
    { 64,  64,  64, 1, 0,  1, 64,  1, 1 },     // D x block = 4096: the largest the kernels take
    { 3,   19,  8,  1, 16, 1, 4,   1, 1 },     // three new queries over a KV cache of 19 keys
    { 33,  33,  8,  1, 0,  0, 8,   1, 100 },   // near-one-hot rows that rescale every block
};
enum { N_CASES = sizeof CASES / sizeof CASES[0] };

typedef struct { float *q, *k, *v, *dout, *mask; } inputs;

static int all_finite_f(const float *a, long n) {
    for (long i = 0; i < n; i++)
        if (!isfinite(a[i])) return 0;
    return 1;
}

static inputs make_inputs(const simd_case *c, uint64_t seed) {
    const int qs = c->H * c->D, kvs = (c->H > 1 ? c->H / 2 : 1) * c->D;
    inputs in;
    in.q = tt_rand((long)c->T * qs, -1, 1, seed);
    in.k = tt_rand((long)c->S * kvs, -1, 1, seed + 1);
    in.v = tt_rand((long)c->S * kvs, -1, 1, seed + 2);
    in.dout = tt_rand((long)c->T * qs, -1, 1, seed + 3);
    for (long i = 0; i < (long)c->T * qs; i++) in.q[i] *= (float)c->scale;
    for (long i = 0; i < (long)c->S * kvs; i++) in.k[i] *= (float)c->scale;
    in.mask = NULL;
    if (c->masked) {
        in.mask = tt_rand((long)c->T * c->S, 0, 1, seed + 4);
        for (long i = 0; i < (long)c->T * c->S; i++) in.mask[i] = in.mask[i] < 0.25f ? -INFINITY : 0.0f;
        for (int s = 0; s < c->S; s++) in.mask[s] = -INFINITY;                    // row 0: no key
        if (c->T > 1)
            for (int s = 0; s < c->S; s++) in.mask[c->S + s] = s == 0 ? 0.0f : -INFINITY;   // row 1: one
    }
    return in;
}

static void free_inputs(inputs *in) {
    free(in->q); free(in->k); free(in->v); free(in->dout); free(in->mask);
}

// The size of the terms dq and dk are summed from (test_sdpa_tiled.c's term_scale): a one-hot row
// (one visible key, or scores 1e4 apart) has dq = dk = 0 in exact arithmetic, computed from terms
// p (dp - D_t) k whose rounding differs between the two orders: grad_check.h's case_scale.
static double term_scale(const float *q, long nq, const float *k, long nk, const float *v,
                         const float *dout, int D) {
    const double qk = fmax(gc_maxabs(q, nq), gc_maxabs(k, nk));
    return qk * 2.0 * D * gc_maxabs(v, nk) * gc_maxabs(dout, nq) / sqrt((double)D);
}

// Runs the case at `level` and naive; compares out, the row statistics, dq, dk and dv.
static void check_level(const char *level, const simd_case *c, int ci) {
    const int qs = c->H * c->D, kvs = (c->H > 1 ? c->H / 2 : 1) * c->D;
    inputs in = make_inputs(c, 1000u + 10u * (uint64_t)ci);
    const tw_sdpa_tiling tl = { .T = c->T, .S = c->S, .D = c->D, .q_stride = qs, .kv_stride = kvs,
                                .mask_stride = c->S, .causal = c->causal, .causal_offset = c->offset,
                                .block = c->block };
    const tw_simd_tiling a = { c->T, c->S, c->D, qs, kvs, c->S, c->causal, c->offset, c->block };
    const long nq = (long)c->T * qs, nk = (long)c->S * kvs;
    float *out_n = tt_zeros(nq), *out_s = tt_zeros(nq), *st_n = tt_zeros(2L * c->T), *st_s = tt_zeros(2L * c->T);
    float *dq_n = tt_zeros(nq), *dk_n = tt_zeros(nk), *dv_n = tt_zeros(nk);
    float *dq_s = tt_zeros(nq), *dk_s = tt_zeros(nk), *dv_s = tt_zeros(nk);
    tw_sdpa_tiled_forward_naive(out_n, st_n, st_n + c->T, in.q, in.k, in.v, in.mask, &tl);
    tw_sdpa_tiled_backward_naive(dq_n, dk_n, dv_n, in.dout, out_n, st_n, st_n + c->T, in.q, in.k,
                                 in.v, in.mask, &tl);
    ck_assert_str_eq(tw_simd_init(level), level);
    ck_assert_msg(tw_simd_sdpa_tiled_forward(out_s, st_s, st_s + c->T, in.q, in.k, in.v, in.mask, &a) == 1,
                  "%s case %d: the forward kernel declined", level, ci);
    ck_assert_msg(tw_simd_sdpa_tiled_backward(dq_s, dk_s, dv_s, in.dout, out_s, st_s, st_s + c->T, in.q,
                                              in.k, in.v, in.mask, &a) == 1,
                  "%s case %d: the backward kernel declined", level, ci);
    tw_simd_init("naive");
    // Columns of q and out the call does not own (the other heads) stay untouched: still 0.
    for (long t = 0; t < c->T; t++)
        for (int j = c->D; j < qs; j++) ck_assert(out_s[t * qs + j] == 0.0f && dq_s[t * qs + j] == 0.0f);
    ck_assert(all_finite_f(out_s, nq) && all_finite_f(dq_s, nq) && all_finite_f(dk_s, nk) &&
              all_finite_f(dv_s, nk));
    if (c->masked) for (int d = 0; d < c->D; d++) ck_assert(out_s[d] == 0.0f);   // row 0 saw no key
    // Tolerances. Forward: the naive loop's score is a dot product in index order, the kernel's a
    // chain of fused multiply-adds, and its exp is the level's vector exp (within 2 ulp of expf);
    // the terms of a row sum in another order. Out is a convex combination of v (|v| <= 1):
    // 2e-6 abs + 1e-5 rel, the attention tests' single-operation tolerance, at scale 1. At scale
    // 100 a score near 1e4 / sqrt(D) has an ulp of ~5e-4, so the two dot products can land one or
    // two ulp apart and a weight exp(score - m) moves by up to ~1e-3 relative: 2e-3 abs there.
    // Gradients: grad_check.h's metric (|got - want| / (max|want| + |want|)) at rel 1e-5, as the
    // tiled-against-materialised test; at scale 100 the same 2e-3 as the forward's weights.
    const double atol = c->scale > 1 ? 2e-3 : 2e-6, grel = c->scale > 1 ? 2e-3 : 1e-5;
    ck_assert_allclose(out_s, out_n, nq, atol, 1e-5);
    for (int t = 0; t < c->T; t++) {   // m: the same maximum of the same kind of scores
        ck_assert(isinf(st_n[t]) == isinf(st_s[t]));
        if (isfinite(st_n[t]))
            ck_assert_msg(fabs(st_s[t] - st_n[t]) <= atol * 10 + 1e-5 * fabs(st_n[t]),
                          "%s case %d row %d: row_max %g, naive %g", level, ci, t, st_s[t], st_n[t]);
    }
    const double vanish = term_scale(in.q, nq, in.k, nk, in.v, in.dout, c->D);
    ck_assert_grad("dq", dq_s, dq_n, nq, grel, vanish);
    ck_assert_grad("dk", dk_s, dk_n, nk, grel, vanish);
    ck_assert_grad("dv", dv_s, dv_n, nk, grel, 0.0);
    free(out_n); free(out_s); free(st_n); free(st_s);
    free(dq_n); free(dk_n); free(dv_n); free(dq_s); free(dk_s); free(dv_s);
    free_inputs(&in);
}

START_TEST(every_level_matches_the_naive_tiled_loop)
{
    char levels[256];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    int ran = 0;
    for (char *save = NULL, *lv = strtok_r(levels, " ", &save); lv; lv = strtok_r(NULL, " ", &save)) {
        if (strcmp(lv, "naive") == 0) continue;
        for (int i = 0; i < (int)N_CASES; i++) check_level(lv, &CASES[i], i);
        ran++;
    }
    if (getenv("TW_VERBOSE")) printf("sdpa_tiled_simd: %d SIMD level(s) checked (%s)\n", ran, tw_simd_available());
}
END_TEST

START_TEST(too_large_a_tile_declines_and_touches_nothing)
{
    // D = 128 at blocks of 64 (Qwen3's heads): 8192 floats of scratch, more than the kernels keep
    // on the stack: every level declines, and tw_sdpa_tiled_forward runs the naive loop instead.
    const int T = 5, D = 128;
    const tw_simd_tiling a = { T, T, D, D, D, T, 1, 0, 64 };
    float *q = tt_rand((long)T * D, -1, 1, 7), *out = tt_zeros((long)T * D), *st = tt_zeros(2L * T);
    char levels[256];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *save = NULL, *lv = strtok_r(levels, " ", &save); lv; lv = strtok_r(NULL, " ", &save)) {
        ck_assert_str_eq(tw_simd_init(lv), lv);
        ck_assert_int_eq(tw_simd_sdpa_tiled_forward(out, st, st + T, q, q, q, NULL, &a), 0);
        ck_assert_int_eq(tw_simd_sdpa_tiled_backward(out, out, out, q, q, st, st + T, q, q, q, NULL, &a), 0);
        for (long i = 0; i < (long)T * D; i++) ck_assert(out[i] == 0.0f);
    }
    tw_simd_init("naive");
    free(q); free(out); free(st);
}
END_TEST

Suite *suite_sdpa_tiled_simd(void) {
    Suite *s = suite_create("sdpa_tiled_simd");
    TCase *tc = tcase_create("levels");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_level_matches_the_naive_tiled_loop);
    tcase_add_test(tc, too_large_a_tile_declines_and_touches_nothing);
    suite_add_tcase(s, tc);
    return s;
}
