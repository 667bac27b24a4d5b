// test_sdpa_tiled.c: the tiled attention with an online softmax (lib/nn/sdpa_tiled.c) against
//   - the materialised attention (lib/nn/sdpa.c), forward and backward, at T in {1, 7, 64, 257,
//     1024}, causal or not, with additive masks, blocks that do not divide T, a KV-cache offset;
//   - the same at one block per row, where the operations are those of a materialised softmax
//     that divides once at the end: the same bits;
//   - adversarial rows: scores near +-1e4 that grow or shrink from block to block (every block
//     rescales), all keys but one masked, every key masked (output 0, no gradient, never NaN);
//   - GQA and MQA through the multi-head call, against the per-head materialised attention;
//   - float64 PyTorch autograd goldens (data/golden/backward/sdpa_tiled/, from
//     tests/golden/gen_sdpa_tiled.py) and central finite differences of a double forward.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "golden_case.h"
#include "grad_check.h"

// ---- helpers ----

static tw_sdpa_tiling one_head(int T, int S, int D, int causal, int offset, int block) {
    tw_sdpa_tiling tl = { .T = T, .S = S, .D = D, .q_stride = D, .kv_stride = D,
                          .mask_stride = S, .causal = causal, .causal_offset = offset,
                          .block = block };
    return tl;
}

// An additive mask (T, S): each entry -inf with probability 1/4, else 0; row `dead` entirely -inf.
static float *random_mask(int T, int S, int dead, uint64_t seed) {
    float *m = tt_rand((long)T * S, 0, 1, seed);
    for (long i = 0; i < (long)T * S; i++) m[i] = m[i] < 0.25f ? -INFINITY : 0.0f;
    if (dead >= 0 && dead < T)
        for (int s = 0; s < S; s++) m[(size_t)dead * S + s] = -INFINITY;
    return m;
}

static int all_finite(const float *a, long n) {
    for (long i = 0; i < n; i++)
        if (!isfinite(a[i])) return 0;
    return 1;
}

// The size of the terms dq and dk are summed from: ds * k and ds * q with |ds| <= |p (dp - D_t)|
// / sqrt(D) <= 2 D max|dout| max|v| / sqrt(D). Where a row is one-hot (one key, or scores 1e4
// apart) its dq and dk vanish in exact arithmetic (dp = D_t) but are computed from such terms, and
// the materialised form's weight of exactly 1 gives exact zeros where the tiled form keeps the
// float-versus-double rounding of dp - D_t: grad_check.h's case_scale for them.
static double term_scale(const float *q, long nq, const float *k, long nk, const float *v,
                         const float *dout, int D) {
    const double qk = fmax(gc_maxabs(q, nq), gc_maxabs(k, nk));
    return qk * 2.0 * D * gc_maxabs(v, nk) * gc_maxabs(dout, nq) / sqrt((double)D);
}

// The materialised forward and backward of one head (the reference): out, dq, dk, dv.
static void materialised(float *out, float *dq, float *dk, float *dv, const float *dout,
                         const float *q, const float *k, const float *v, const float *mask,
                         int T, int S, int D, int causal, int offset) {
    float *w = tt_zeros((long)T * S), *ds = tt_zeros((long)T * S);
    tw_sdpa_forward(out, NULL, w, q, k, v, mask, T, S, D, causal, offset);
    tw_sdpa_backward_causal(dq, dk, dv, ds, dout, q, k, v, w, T, S, D, causal, offset);
    free(w); free(ds);
}

// ---- tiled == materialised, within a bound ----

typedef struct { int T, S, D, causal, offset, masked, block; } tile_case;
static const tile_case CASES[] = {
    { 1,    1,    8,  1, 0,  0, 64 },    // one query, one key
    { 7,    7,    8,  1, 0,  1, 3 },     // blocks of 3 over 7 keys: the last one is short
    { 64,   64,   16, 1, 0,  0, 16 },    // blocks divide T
    { 64,   64,   16, 0, 0,  1, 64 },    // one block covers every row
    { 257,  257,  16, 1, 0,  1, 64 },    // 257 = 4 * 64 + 1: a one-key last block
    { 257,  257,  8,  0, 0,  0, 50 },
    { 1024, 1024, 16, 1, 0,  0, 100 },   // 100 does not divide 1024
    { 1024, 1024, 16, 1, 0,  1, 64 },
    { 3,    19,   8,  1, 16, 1, 4 },     // three new queries over a KV cache of 19 keys
};

START_TEST(tiled_matches_materialised)
{
    const tile_case c = CASES[_i];
    const int T = c.T, S = c.S, D = c.D;
    const uint64_t seed = 100 + 10 * (uint64_t)_i;
    float *q = tt_rand((long)T * D, -2, 2, seed), *k = tt_rand((long)S * D, -2, 2, seed + 1);
    float *v = tt_rand((long)S * D, -1, 1, seed + 2), *dout = tt_rand((long)T * D, -1, 1, seed + 3);
    float *mask = c.masked ? random_mask(T, S, T / 2, seed + 4) : NULL;
    float *out_m = tt_zeros((long)T * D), *dq_m = tt_zeros((long)T * D);
    float *dk_m = tt_zeros((long)S * D), *dv_m = tt_zeros((long)S * D);
    materialised(out_m, dq_m, dk_m, dv_m, dout, q, k, v, mask, T, S, D, c.causal, c.offset);

    const tw_sdpa_tiling tl = one_head(T, S, D, c.causal, c.offset, c.block);
    float *out = tt_zeros((long)T * D), *lse = tt_zeros(2L * T);
    float *dq = tt_zeros((long)T * D), *dk = tt_zeros((long)S * D), *dv = tt_zeros((long)S * D);
    tw_sdpa_tiled_forward(out, lse, lse + T, q, k, v, mask, &tl);
    tw_sdpa_tiled_backward(dq, dk, dv, dout, out, lse, lse + T, q, k, v, mask, &tl);

    // Both outputs are averages of |v| <= 1 rows with weights that sum to 1; each differs from the
    // exact one by a few float roundings per term of the S-term float sum (relative ~S * 6e-8 at
    // worst, far less in practice). Measured worst: 1.2e-7 abs at T = 1024. Bound: 2e-6 abs +
    // 1e-5 rel, the attention tests' single-operation tolerance.
    ck_assert_allclose(out, out_m, (long)T * D, 2e-6, 1e-5);
    // The gradients are sums over up to S keys of products of O(1) terms, in a different order
    // and with the softmax's dot product taken from dout . out instead of the weights. The metric
    // of grad_check.h at rel 1e-5 (the golden tests' single-component tolerance); measured worst
    // 2e-7 relative to each tensor's largest entry.
    // A row of one key (T = S = 1) is one-hot: its dq and dk vanish (term_scale above).
    const double vanish = S == 1 ? term_scale(q, (long)T * D, k, (long)S * D, v, dout, D) : 0.0;
    ck_assert_grad("dq", dq, dq_m, (long)T * D, 1e-5, vanish);
    ck_assert_grad("dk", dk, dk_m, (long)S * D, 1e-5, vanish);
    ck_assert_grad("dv", dv, dv_m, (long)S * D, 1e-5, 0.0);
    if (mask) {   // the fully masked row: output 0, statistics -inf, its query gets no gradient
        const int dead = T / 2;
        for (int d = 0; d < D; d++) {
            ck_assert_float_eq(out[(size_t)dead * D + d], 0.0f);
            ck_assert_float_eq(dq[(size_t)dead * D + d], 0.0f);
        }
        ck_assert(lse[dead] == -INFINITY && lse[T + dead] == -INFINITY);   // (row_max, row_logsum)
    }
    ck_assert(all_finite(out, (long)T * D) && all_finite(dq, (long)T * D));
    ck_assert(all_finite(dk, (long)S * D) && all_finite(dv, (long)S * D));
    free(q); free(k); free(v); free(dout); free(mask); free(out_m); free(dq_m); free(dk_m);
    free(dv_m); free(out); free(lse); free(dq); free(dk); free(dv);
}
END_TEST

// ---- one block per row: the same bits as a materialised softmax that divides once ----

// The materialised form with the tiled form's order of operations: tw_sdpa_scores' scores, the
// row maximum, e = expf(score - max) summed in double in key order, out = sum e v in float
// (skipping e = 0, as tw_sdpa_mix skips zero weights), divided by the sum once.
static void divide_once_reference(float *out, const float *q, const float *k, const float *v,
                                  const float *mask, int T, int S, int D, int causal) {
    float *sc = tt_zeros((long)T * S);
    tw_sdpa_scores(sc, q, k, mask, T, S, D, causal, 0);
    for (int t = 0; t < T; t++) {
        const float *row = sc + (size_t)t * S;
        float *o = out + (size_t)t * D;
        float max = -INFINITY;
        for (int s = 0; s < S; s++) max = row[s] > max ? row[s] : max;
        double l = 0.0;
        for (int d = 0; d < D; d++) o[d] = 0.0f;
        for (int s = 0; s < S && max != -INFINITY; s++) {
            const float e = expf(row[s] - max);
            l += e;
            if (e == 0.0f) continue;
            for (int d = 0; d < D; d++) o[d] += e * v[(size_t)s * D + d];
        }
        if (l > 0.0)
            for (int d = 0; d < D; d++) o[d] = (float)(o[d] / l);
    }
    free(sc);
}

START_TEST(one_block_is_bit_identical)
{
    static const int TS[] = { 1, 7, 64, 257 };
    const int T = TS[_i], D = 16;
    for (int masked = 0; masked <= 1; masked++) {
        float *q = tt_rand((long)T * D, -2, 2, 7 + _i), *k = tt_rand((long)T * D, -2, 2, 8 + _i);
        float *v = tt_rand((long)T * D, -1, 1, 9 + _i);
        float *mask = masked ? random_mask(T, T, T - 1, 10 + _i) : NULL;
        float *want = tt_zeros((long)T * D), *out = tt_zeros((long)T * D);
        float *lse = tt_zeros(2L * T);
        divide_once_reference(want, q, k, v, mask, T, T, D, 1);
        const tw_sdpa_tiling tl = one_head(T, T, D, 1, 0, T);   // one block of T keys
        tw_sdpa_tiled_forward(out, lse, lse + T, q, k, v, mask, &tl);
        // The same operations in the same order: tolerance 0.
        ck_assert_allclose(out, want, (long)T * D, 0.0, 0.0);
        free(q); free(k); free(v); free(mask); free(want); free(out); free(lse);
    }
}
END_TEST

// ---- adversarial rows ----

START_TEST(scores_near_1e4_rescale_every_block)
{
    // Row t's keys s have score ~ sign * 1e4 * (s + 1) / S: growing (every block raises the
    // maximum: acc and l are rescaled by exp(-large) = 0 each time) or shrinking (later blocks'
    // exponentials underflow to 0). q = (a, 0, ..), k_s = (b_s, 0, ..) so the score is exact-ish.
    const int T = 4, S = 257, D = 8, block = 16;
    float *q = tt_zeros((long)T * D), *k = tt_zeros((long)S * D), *v = tt_rand((long)S * D, -1, 1, 3);
    float *dout = tt_rand((long)T * D, -1, 1, 4);
    const float sqrt_d = sqrtf((float)D);
    const float sign[4] = { 1.0f, -1.0f, 1.0f, -1.0f };
    for (int t = 0; t < T; t++) q[(size_t)t * D] = sign[t] * (t < 2 ? 1e4f : 1.0f) * sqrt_d;
    for (int s = 0; s < S; s++) k[(size_t)s * D] = (float)(s + 1) / (float)S;
    // Rows 2 and 3 see scores near +-1 plus one key near +-1e4 in the middle of a block.
    k[(size_t)100 * D + 1] = 1e4f;
    q[2 * D + 1] = sqrt_d; q[3 * D + 1] = -sqrt_d;
    float *out_m = tt_zeros((long)T * D), *dq_m = tt_zeros((long)T * D);
    float *dk_m = tt_zeros((long)S * D), *dv_m = tt_zeros((long)S * D);
    materialised(out_m, dq_m, dk_m, dv_m, dout, q, k, v, NULL, T, S, D, 0, 0);
    const tw_sdpa_tiling tl = one_head(T, S, D, 0, 0, block);
    float *out = tt_zeros((long)T * D), *lse = tt_zeros(2L * T);
    float *dq = tt_zeros((long)T * D), *dk = tt_zeros((long)S * D), *dv = tt_zeros((long)S * D);
    tw_sdpa_tiled_forward(out, lse, lse + T, q, k, v, NULL, &tl);
    tw_sdpa_tiled_backward(dq, dk, dv, dout, out, lse, lse + T, q, k, v, NULL, &tl);
    ck_assert(all_finite(out, (long)T * D) && all_finite(dq, (long)T * D));
    ck_assert(all_finite(dk, (long)S * D) && all_finite(dv, (long)S * D));
    // Near-one-hot rows: the same tolerances as tiled_matches_materialised (the scores themselves,
    // computed by the same float operations on both sides, are identical; what differs is the
    // order of the softmax's and the mix's roundings). Row 0 picks key S-1, row 1 key 0 (exactly:
    // every other weight underflows).
    ck_assert_allclose(out, out_m, (long)T * D, 2e-6, 1e-5);
    ck_assert_allclose(out, v + (size_t)(S - 1) * D, D, 0.0, 0.0);
    ck_assert_allclose(out + D, v, D, 0.0, 0.0);
    // Every row is one-hot, so dq and dk vanish in exact arithmetic (term_scale above, here
    // ~1e5 from |q| = 1e4 sqrt(8)); dv = p dout is checked at the plain rel 1e-5.
    const double vanish = term_scale(q, (long)T * D, k, (long)S * D, v, dout, D);
    ck_assert_grad("dq", dq, dq_m, (long)T * D, 1e-5, vanish);
    ck_assert_grad("dk", dk, dk_m, (long)S * D, 1e-5, vanish);
    ck_assert_grad("dv", dv, dv_m, (long)S * D, 1e-5, 0.0);
    free(q); free(k); free(v); free(dout); free(out_m); free(dq_m); free(dk_m); free(dv_m);
    free(out); free(lse); free(dq); free(dk); free(dv);
}
END_TEST

START_TEST(all_but_one_masked_and_all_masked)
{
    // Row 0 sees only key 37 (in the third block of 16), row 1 no key at all, row 2 only key 0,
    // with scores near -1e4 (the lone visible key must still get weight 1).
    const int T = 3, S = 64, D = 8, block = 16;
    float *q = tt_rand((long)T * D, -1, 1, 51), *k = tt_rand((long)S * D, -1, 1, 52);
    float *v = tt_rand((long)S * D, -1, 1, 53), *dout = tt_rand((long)T * D, -1, 1, 54);
    for (int d = 0; d < D; d++) { q[2 * D + d] = d == 0 ? -1e3f : 0.0f; k[d] = d == 0 ? 30.0f : k[d]; }
    float *mask = tt_zeros((long)T * S);
    for (int s = 0; s < S; s++) {
        mask[s] = s == 37 ? 0.0f : -INFINITY;
        mask[S + s] = -INFINITY;
        mask[2 * S + s] = s == 0 ? 0.0f : -INFINITY;
    }
    const tw_sdpa_tiling tl = one_head(T, S, D, 0, 0, block);
    float *out = tt_zeros((long)T * D), *lse = tt_zeros(2L * T);
    float *dq = tt_zeros((long)T * D), *dk = tt_zeros((long)S * D), *dv = tt_zeros((long)S * D);
    tw_sdpa_tiled_forward(out, lse, lse + T, q, k, v, mask, &tl);
    tw_sdpa_tiled_backward(dq, dk, dv, dout, out, lse, lse + T, q, k, v, mask, &tl);
    // One visible key: e = expf(0) = 1, l = 1, out = v / 1: exactly that key's value row.
    ck_assert_allclose(out, v + 37 * D, D, 0.0, 0.0);
    ck_assert_allclose(out + 2 * D, v, D, 0.0, 0.0);
    for (int d = 0; d < D; d++) ck_assert_float_eq(out[D + d], 0.0f);   // no key: 0, not NaN
    ck_assert(lse[1] == -INFINITY && lse[T + 1] == -INFINITY);   // row 1: (row_max, row_logsum)
    // Gradients: dv of the lone key is dout exactly (p = 1); dq of a one-hot row is
    // p (dp - D_t) k = (dout.v - dout.v) k: zero up to the float-vs-double rounding of the two
    // equal dot products (|dp| <= D = 8, so |dp - D_t| <= 8 * 2^-24 * 8 / sqrt(8) ~ 1e-6).
    ck_assert_allclose(dv + 37 * D, dout, D, 0.0, 0.0);
    for (int d = 0; d < D; d++) {
        ck_assert(fabsf(dq[d]) < 1e-5f);
        ck_assert_float_eq(dq[D + d], 0.0f);
    }
    for (int s = 1; s < S; s++)
        if (s != 37)
            for (int d = 0; d < D; d++) {
                ck_assert_float_eq(dk[(size_t)s * D + d], 0.0f);
                ck_assert_float_eq(dv[(size_t)s * D + d], 0.0f);
            }
    free(q); free(k); free(v); free(dout); free(mask); free(out); free(lse);
    free(dq); free(dk); free(dv);
}
END_TEST

// ---- GQA and MQA: every head in place ----

static void gather(float *dst, const float *src, int n, int heads, int D, int j) {
    for (int r = 0; r < n; r++) memcpy(dst + (size_t)r * D, src + ((size_t)r * heads + j) * D, (size_t)D * sizeof(float));
}

static void scatter_add(float *dst, const float *src, int n, int heads, int D, int j) {
    for (int r = 0; r < n; r++)
        for (int d = 0; d < D; d++) dst[((size_t)r * heads + j) * D + d] += src[(size_t)r * D + d];
}

START_TEST(grouped_heads_match_per_head_materialised)
{
    static const int GS[] = { 4, 2, 1 };   // MHA, GQA, MQA
    const int T = 33, H = 4, G = GS[_i], D = 8, block = 8, group = H / G;
    const int HD = H * D, GD = G * D;
    float *q = tt_rand((long)T * HD, -2, 2, 61), *k = tt_rand((long)T * GD, -2, 2, 62);
    float *v = tt_rand((long)T * GD, -1, 1, 63), *dout = tt_rand((long)T * HD, -1, 1, 64);
    float *mask = random_mask(T, T, 5, 65);
    float *out_m = tt_zeros((long)T * HD), *dq_m = tt_zeros((long)T * HD);
    float *dk_m = tt_zeros((long)T * GD), *dv_m = tt_zeros((long)T * GD);
    float *qh = tt_zeros((long)T * D), *kh = tt_zeros((long)T * D), *vh = tt_zeros((long)T * D);
    float *gh = tt_zeros((long)T * D), *oh = tt_zeros((long)T * D), *dqh = tt_zeros((long)T * D);
    float *dkh = tt_zeros((long)T * D), *dvh = tt_zeros((long)T * D);
    for (int h = 0; h < H; h++) {
        gather(qh, q, T, H, D, h); gather(kh, k, T, G, D, h / group);
        gather(vh, v, T, G, D, h / group); gather(gh, dout, T, H, D, h);
        memset(dqh, 0, (size_t)T * D * sizeof(float));
        memset(dkh, 0, (size_t)T * D * sizeof(float));
        memset(dvh, 0, (size_t)T * D * sizeof(float));
        materialised(oh, dqh, dkh, dvh, gh, qh, kh, vh, mask, T, T, D, 1, 0);
        scatter_add(out_m, oh, T, H, D, h); scatter_add(dq_m, dqh, T, H, D, h);
        scatter_add(dk_m, dkh, T, G, D, h / group); scatter_add(dv_m, dvh, T, G, D, h / group);
    }
    float *out = tt_zeros((long)T * HD), *lse = tt_zeros(2L * H * T);
    float *dq = tt_zeros((long)T * HD), *dk = tt_zeros((long)T * GD), *dv = tt_zeros((long)T * GD);
    tw_sdpa_tiled_heads_forward(out, lse, lse + (size_t)H * T, q, k, v, mask, T, T, H, G, D, 1, 0,
                                block);
    tw_sdpa_tiled_heads_backward(dq, dk, dv, dout, out, lse,
                                 lse + (size_t)H * T, q, k, v, mask, T, T, H, G, D, 1, 0,
                                 block);
    // As tiled_matches_materialised (a key/value head's gradient sums H/G heads' of the same size).
    ck_assert_allclose(out, out_m, (long)T * HD, 2e-6, 1e-5);
    ck_assert_grad("dq", dq, dq_m, (long)T * HD, 1e-5, 0.0);
    ck_assert_grad("dk", dk, dk_m, (long)T * GD, 1e-5, 0.0);
    ck_assert_grad("dv", dv, dv_m, (long)T * GD, 1e-5, 0.0);
    free(q); free(k); free(v); free(dout); free(mask); free(out_m); free(dq_m); free(dk_m);
    free(dv_m); free(qh); free(kh); free(vh); free(gh); free(oh); free(dqh); free(dkh); free(dvh);
    free(out); free(lse); free(dq); free(dk); free(dv);
}
END_TEST

// ---- float64 PyTorch goldens ----

// Cases of tests/golden/gen_sdpa_tiled.py; cfg = (T, H, G, D, causal, has_mask, block).
static const char *const GOLDEN_CASES[] = { "gqa_T7", "mqa_T64_mask", "mha_T257_full" };

START_TEST(tiled_matches_torch_float64)
{
    char dir[96];
    snprintf(dir, sizeof dir, "backward/sdpa_tiled/%s", GOLDEN_CASES[_i]);
    int *cfg = gc_load_i32(dir, "cfg", 7);
    const int T = cfg[0], H = cfg[1], G = cfg[2], D = cfg[3], causal = cfg[4], block = cfg[6];
    const long nq = (long)T * H * D, nk = (long)T * G * D;
    float *q = gc_load(dir, "q", nq), *k = gc_load(dir, "k", nk), *v = gc_load(dir, "v", nk);
    float *mask = cfg[5] ? gc_load(dir, "mask", (long)T * T) : NULL;
    float *dout = gc_load(dir, "dout", nq), *want = gc_load(dir, "out", nq);
    float *want_dq = gc_load(dir, "d_q", nq), *want_dk = gc_load(dir, "d_k", nk);
    float *want_dv = gc_load(dir, "d_v", nk);
    float *out = tt_zeros(nq), *lse = tt_zeros(2L * H * T);
    float *dq = tt_zeros(nq), *dk = tt_zeros(nk), *dv = tt_zeros(nk);
    tw_sdpa_tiled_heads_forward(out, lse, lse + (size_t)H * T, q, k, v, mask, T, T, H, G, D, causal,
                                0, block);
    tw_sdpa_tiled_heads_backward(dq, dk, dv, dout, out, lse,
                                 lse + (size_t)H * T, q, k, v, mask, T, T, H, G, D, causal,
                                 0, block);
    // The attention tests' single-operation tolerances (test_attention.c, test_grad_golden.c):
    // out 2e-6 abs + 1e-5 rel; gradients rel 1e-5 of grad_check.h's metric.
    ck_assert_allclose(out, want, nq, 2e-6, 1e-5);
    ck_assert_grad("dq", dq, want_dq, nq, 1e-5, 0.0);
    ck_assert_grad("dk", dk, want_dk, nk, 1e-5, 0.0);
    ck_assert_grad("dv", dv, want_dv, nk, 1e-5, 0.0);
    free(cfg); free(q); free(k); free(v); free(mask); free(dout); free(want); free(want_dq);
    free(want_dk); free(want_dv); free(out); free(lse); free(dq); free(dk); free(dv);
}
END_TEST

// ---- central finite differences of a double forward ----

// Attention in double, from the formulas: out = softmax(q k^T / sqrt(D) + mask) v, causal.
//   out, q: (T, D)   k, v: (T, D)   mask: (T, T) or NULL
static void attention_f64(double *out, const double *q, const double *k, const double *v,
                          const float *mask, int T, int D) {
    double *p = malloc((size_t)T * sizeof(double));
    ck_assert(p != NULL);
    for (int t = 0; t < T; t++) {
        double m = -INFINITY, l = 0.0;
        for (int s = 0; s <= t; s++) {
            double x = 0.0;
            for (int d = 0; d < D; d++) x += q[t * D + d] * k[s * D + d];
            p[s] = x / sqrt((double)D) + (mask ? mask[t * T + s] : 0.0);
            m = p[s] > m ? p[s] : m;
        }
        for (int d = 0; d < D; d++) out[t * D + d] = 0.0;
        if (m == -INFINITY) continue;
        for (int s = 0; s <= t; s++) { p[s] = exp(p[s] - m); l += p[s]; }
        for (int s = 0; s <= t; s++)
            for (int d = 0; d < D; d++) out[t * D + d] += p[s] / l * v[s * D + d];
    }
    free(p);
}

static double loss_f64(const double *q, const double *k, const double *v, const float *mask,
                       const float *r, int T, int D) {
    double *out = malloc((size_t)T * D * sizeof(double)), L = 0.0;
    ck_assert(out != NULL);
    attention_f64(out, q, k, v, mask, T, D);
    for (int i = 0; i < T * D; i++) L += r[i] * out[i];
    free(out);
    return L;
}

START_TEST(tiled_backward_matches_finite_differences)
{
    const int T = 9, D = 4, block = 4;
    const long n = (long)T * D;
    float *qf = tt_rand(n, -2, 2, 71), *kf = tt_rand(n, -2, 2, 72), *vf = tt_rand(n, -1, 1, 73);
    float *r = tt_rand(n, -1, 1, 74), *mask = random_mask(T, T, 4, 75);
    mask[0] = 0.0f;   // row 0's only key stays visible
    const tw_sdpa_tiling tl = one_head(T, T, D, 1, 0, block);
    float *out = tt_zeros(n), *lse = tt_zeros(2L * T);
    float *dq = tt_zeros(n), *dk = tt_zeros(n), *dv = tt_zeros(n);
    tw_sdpa_tiled_forward(out, lse, lse + T, qf, kf, vf, mask, &tl);
    tw_sdpa_tiled_backward(dq, dk, dv, r, out, lse, lse + T, qf, kf, vf, mask, &tl);
    double *in[3] = { malloc(n * sizeof(double)), malloc(n * sizeof(double)), malloc(n * sizeof(double)) };
    const float *src[3] = { qf, kf, vf }, *grad[3] = { dq, dk, dv };
    const char *name[3] = { "dq", "dk", "dv" };
    for (int j = 0; j < 3; j++) {
        ck_assert(in[j] != NULL);
        for (long i = 0; i < n; i++) in[j][i] = src[j][i];
    }
    // h = 1e-5 * max(1, |p|): truncation ~1e-11 and rounding ~1e-11 |L|, far below float
    // precision (test_grad_fd.c's argument), so the estimate is the exact derivative and the
    // tolerance is the float backward's: rel 1e-5 of grad_check.h's metric.
    for (int j = 0; j < 3; j++) {
        float *fd = tt_zeros(n);
        for (long i = 0; i < n; i++) {
            const double p0 = in[j][i], h = 1e-5 * (fabs(p0) > 1.0 ? fabs(p0) : 1.0);
            in[j][i] = p0 + h;
            const double Lp = loss_f64(in[0], in[1], in[2], mask, r, T, D);
            in[j][i] = p0 - h;
            const double Lm = loss_f64(in[0], in[1], in[2], mask, r, T, D);
            in[j][i] = p0;
            fd[i] = (float)((Lp - Lm) / (2.0 * h));
        }
        ck_assert_grad(name[j], grad[j], fd, n, 1e-5, 0.0);
        free(fd);
    }
    for (int j = 0; j < 3; j++) free(in[j]);
    free(qf); free(kf); free(vf); free(r); free(mask); free(out); free(lse);
    free(dq); free(dk); free(dv);
}
END_TEST

Suite *suite_sdpa_tiled(void) {
    Suite *s = suite_create("sdpa_tiled");
    TCase *tc = tcase_create("tiled");
    tcase_add_loop_test(tc, tiled_matches_materialised, 0, (int)(sizeof CASES / sizeof CASES[0]));
    tcase_add_loop_test(tc, one_block_is_bit_identical, 0, 4);
    tcase_add_test(tc, scores_near_1e4_rescale_every_block);
    tcase_add_test(tc, all_but_one_masked_and_all_masked);
    tcase_add_loop_test(tc, grouped_heads_match_per_head_materialised, 0, 3);
    tcase_add_loop_test(tc, tiled_matches_torch_float64, 0,
                        (int)(sizeof GOLDEN_CASES / sizeof GOLDEN_CASES[0]));
    tcase_add_test(tc, tiled_backward_matches_finite_differences);
    suite_add_tcase(s, tc);
    return s;
}
