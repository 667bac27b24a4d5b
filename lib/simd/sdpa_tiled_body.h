// sdpa_tiled_body.h: the tiled attention (nn/sdpa_tiled.h) written once over a small vector macro
// layer, #included by sdpa_tiled_avx2.c, sdpa_tiled_avx512.c and sdpa_tiled_neon.c, each of which
// first defines the layer for its ISA (the way ggml writes one kernel for many ISAs):
//   VF            the vector type, W floats
//   VLOAD(p) VSTORE(p, x) VSET1(f) VZERO()
//   VFMA(a, b, c) a * b + c, fused        VADD VMUL VSUB VMAX (lane by lane)
//   VHSUM(x) VHMAX(x)                     the sum / the largest of x's W lanes, as a float
//   VEXP(y, x, n)                         y = exp(x) for n floats (the level's exp kernel)
//   SUFFIX(name)                          name_avx2, ...
//
// The naive tiled loop (sdpa_tiled.c) runs one query row at a time and one key at a time, a dot
// product of D floats per score. Here the vectors run along the keys, as attn_avx512.c does for
// the materialised attention: a block of keys is transposed once into (D, nbp) scratch (nbp =
// the block rounded up to W, zero-padded) and shared by QB = 16 query rows, so a score vector of
// W keys is D fused multiply-adds, whatever D is (stories260K's heads have D = 8). The online
// softmax is the same: per row a running maximum m and sum l, the row rescaled when a block
// raises m, one division at the end; the backward recomputes p = exp(score - m - log l) and
// accumulates dk and dv in transposed scratch for the 16 rows before adding them back.
// Sums run in another order (lanes, fused multiply-adds, the level's vector exp), so the results
// differ from the naive loop's by rounding; tests/test_sdpa_tiled_simd.c bounds it.
// The sums over keys that feed one output coordinate (the forward's acc_d = sum_s e_s v_s[d], the
// backward's dq_d = sum_s ds_s k_s[d]) are kept as W lanes per row and coordinate, (QB, D, W),
// across the key blocks, and added across the lanes once per row at the end: a horizontal sum per
// coordinate and block cost as much as the products for D = 8.
// Scratch lives on the stack: a call whose D x nbp exceeds TILE_FLOATS, or whose D exceeds D_MAX,
// declines (returns 0) and the caller runs the naive loop (D = 128 at the library's block of 64).

#include "simd/key_transpose.h"

enum { QB = 16, TILE_FLOATS = 4096, D_MAX = 64 };

static int round_up_w(int n) { return (n + W - 1) / W * W; }

// sc (nbp) = (q_t . k_s) / sqrt(D) + mask for the nbt visible keys of the block, -inf for the rest.
//   kT: (D, nbp)   mrow: the mask row at the block's first key, or NULL
static void SUFFIX(block_scores)(float *sc, const float *q_t, const float *kT, const float *mrow,
                                 int nbt, int nbp, int D, float inv_sqrt_d) {
    const VF inv = VSET1(inv_sqrt_d);
    for (int j = 0; j < nbp; j += W) {
        VF acc = VZERO();
        for (int d = 0; d < D; d++) acc = VFMA(VSET1(q_t[d]), VLOAD(kT + (size_t)d * nbp + j), acc);
        VSTORE(sc + j, VMUL(acc, inv));
    }
    if (mrow) for (int j = 0; j < nbt; j++) sc[j] += mrow[j];
    for (int j = nbt; j < nbp; j++) sc[j] = -INFINITY;
}

static float SUFFIX(max_of)(const float *x, int nbp) {
    VF mx = VLOAD(x);
    for (int j = W; j < nbp; j += W) mx = VMAX(mx, VLOAD(x + j));
    return VHMAX(mx);
}

// e (nbp) = exp(x - shift), exactly 0 where x is -inf (a hidden key adds nothing): every level's
// exp clamps its argument at -104, where expf rounds to 0, and so gives 0 for -inf
// (tests/test_sdpa_tiled_simd.c checks it through a row that sees one key). e may be x.
// (Until 2026-12-06 a scalar loop here also zeroed the -inf keys; both callers pass e = x, so it
// read the exponentials, never fired, and was a tenth of a stories260K step under --attn flash.)
static void SUFFIX(exp_shifted)(float *e, const float *x, int nbp, float shift) {
    const VF s = VSET1(shift);
    for (int j = 0; j < nbp; j += W) VSTORE(e + j, VSUB(VLOAD(x + j), s));
    VEXP(e, e, nbp);
}

// sum_j x[j] over nbp floats (a multiple of W).
static float SUFFIX(sum_w)(const float *x, int nbp) {
    VF acc = VZERO();
    for (int j = 0; j < nbp; j += W) acc = VADD(acc, VLOAD(x + j));
    return VHSUM(acc);
}

// y (nbp) += f x (nbp)
static void SUFFIX(axpy_w)(float *y, float f, const float *x, int nbp) {
    const VF fv = VSET1(f);
    for (int j = 0; j < nbp; j += W) VSTORE(y + j, VFMA(fv, VLOAD(x + j), VLOAD(y + j)));
}

static int SUFFIX(tiled_forward)(float *out, float *row_max, float *row_logsum, const float *q,
                                 const float *k, const float *v, const float *mask,
                                 const tw_simd_tiling *a) {
    const int D = a->D, B = a->block;
    if (B < 1 || B > TW_SIMD_TILE_MAX || D > D_MAX || (long)D * round_up_w(B) > TILE_FLOATS) return 0;
    float kT[TILE_FLOATS], vT[TILE_FLOATS];           // (D, nbp) the block's keys and values
    float accv[QB * D_MAX * W];                       // (QB, D, W) the rows' output sums by lane
    float sc[TW_SIMD_TILE_MAX + 16];                  // (nbp) one row's scores, then exp
    float m[QB];
    double l[QB];
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);
    for (int t0 = 0; t0 < a->T; t0 += QB) {
        const int t1 = a->T - t0 < QB ? a->T : t0 + QB;
        for (int t = t0; t < t1; t++) {
            m[t - t0] = -INFINITY;
            l[t - t0] = 0.0;
        }
        memset(accv, 0, (size_t)(t1 - t0) * D * W * sizeof(float));
        const int n_all = tw_causal_keys(t1 - 1, a->S, a->causal, a->causal_offset);
        for (int s0 = 0; s0 < n_all; s0 += B) {
            const int nb = n_all - s0 < B ? n_all - s0 : B, nbp = round_up_w(nb);
            tw_keys_transpose(kT, k + (size_t)s0 * a->kv_stride, nb, nbp, D, a->kv_stride);
            tw_keys_transpose(vT, v + (size_t)s0 * a->kv_stride, nb, nbp, D, a->kv_stride);
            for (int t = t0; t < t1; t++) {
                const int n_t = tw_causal_keys(t, a->S, a->causal, a->causal_offset);
                if (s0 >= n_t) continue;
                const int nbt = n_t - s0 < nb ? n_t - s0 : nb, i = t - t0;
                const float *mrow = mask ? mask + (size_t)t * a->mask_stride + s0 : NULL;
                float *acc = accv + (size_t)i * D * W;        // (D, W) the unnormalised output
                SUFFIX(block_scores)(sc, q + (size_t)t * a->q_stride, kT, mrow, nbt, nbp, D, inv_sqrt_d);
                const float bmax = SUFFIX(max_of)(sc, nbp);
                if (bmax == -INFINITY) continue;              // every key of the block hidden
                if (bmax > m[i]) {                            // the rescaling step
                    if (m[i] != -INFINITY) {
                        const float scale = expf(m[i] - bmax);
                        l[i] *= scale;
                        const VF sv = VSET1(scale);
                        for (int d = 0; d < D; d++) VSTORE(acc + d * W, VMUL(VLOAD(acc + d * W), sv));
                    }
                    m[i] = bmax;
                }
                SUFFIX(exp_shifted)(sc, sc, nbp, m[i]);
                l[i] += (double)SUFFIX(sum_w)(sc, nbp);
                for (int d = 0; d < D; d++) {
                    VF s = VLOAD(acc + d * W);
                    const float *vd = vT + (size_t)d * nbp;
                    for (int j = 0; j < nbp; j += W) s = VFMA(VLOAD(sc + j), VLOAD(vd + j), s);
                    VSTORE(acc + d * W, s);
                }
            }
        }
        for (int t = t0; t < t1; t++) {                       // divide once
            const int i = t - t0;
            float *o = out + (size_t)t * a->q_stride;
            for (int d = 0; d < D; d++) {
                const float sum = VHSUM(VLOAD(accv + ((size_t)i * D + d) * W));
                o[d] = l[i] > 0.0 ? (float)(sum / l[i]) : 0.0f;   // a row that saw no key: 0
            }
            row_max[t] = m[i];
            row_logsum[t] = l[i] > 0.0 ? (float)log(l[i]) : -INFINITY;
        }
    }
    return 1;
}

static int SUFFIX(tiled_backward)(float *dq, float *dk, float *dv, const float *dout,
                                  const float *out, const float *row_max, const float *row_logsum,
                                  const float *q, const float *k, const float *v, const float *mask,
                                  const tw_simd_tiling *a) {
    const int D = a->D, B = a->block;
    if (B < 1 || B > TW_SIMD_TILE_MAX || D > D_MAX || (long)D * round_up_w(B) > TILE_FLOATS) return 0;
    float kT[TILE_FLOATS], vT[TILE_FLOATS], dkT[TILE_FLOATS], dvT[TILE_FLOATS];   // (D, nbp)
    float dqv[QB * D_MAX * W];                        // (QB, D, W) the rows' dq sums by lane
    float p[TW_SIMD_TILE_MAX + 16], dp[TW_SIMD_TILE_MAX + 16];                    // (nbp)
    float Dt[QB];
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);
    for (int t0 = 0; t0 < a->T; t0 += QB) {
        const int t1 = a->T - t0 < QB ? a->T : t0 + QB;
        for (int t = t0; t < t1; t++) {   // D_t = rowsum(dout * out), as the naive loop
            const float *go = dout + (size_t)t * a->q_stride, *o = out + (size_t)t * a->q_stride;
            double s = 0.0;
            for (int d = 0; d < D; d++) s += (double)go[d] * o[d];
            Dt[t - t0] = (float)s;
        }
        memset(dqv, 0, (size_t)(t1 - t0) * D * W * sizeof(float));
        const int n_all = tw_causal_keys(t1 - 1, a->S, a->causal, a->causal_offset);
        for (int s0 = 0; s0 < n_all; s0 += B) {
            const int nb = n_all - s0 < B ? n_all - s0 : B, nbp = round_up_w(nb);
            tw_keys_transpose(kT, k + (size_t)s0 * a->kv_stride, nb, nbp, D, a->kv_stride);
            tw_keys_transpose(vT, v + (size_t)s0 * a->kv_stride, nb, nbp, D, a->kv_stride);
            memset(dkT, 0, (size_t)D * nbp * sizeof(float));
            memset(dvT, 0, (size_t)D * nbp * sizeof(float));
            for (int t = t0; t < t1; t++) {
                const float mt = row_max[t];
                if (mt == -INFINITY) continue;                // the row saw no key
                const int n_t = tw_causal_keys(t, a->S, a->causal, a->causal_offset);
                if (s0 >= n_t) continue;
                const int nbt = n_t - s0 < nb ? n_t - s0 : nb;
                const size_t row = (size_t)t * a->q_stride;
                const float *q_t = q + row, *go = dout + row;
                const float *mrow = mask ? mask + (size_t)t * a->mask_stride + s0 : NULL;
                // p = exp(score - m - log l), the block's probabilities recomputed.
                SUFFIX(block_scores)(p, q_t, kT, mrow, nbt, nbp, D, inv_sqrt_d);
                const VF mv = VSET1(mt), lv = VSET1(row_logsum[t]);
                for (int j = 0; j < nbp; j += W) VSTORE(p + j, VSUB(VSUB(VLOAD(p + j), mv), lv));
                for (int j = nbt; j < nbp; j++) p[j] = -INFINITY;
                SUFFIX(exp_shifted)(p, p, nbp, 0.0f);
                // dp_s = dout_t . v_s, then ds = p (dp - D_t) / sqrt(D), into dp.
                for (int j = 0; j < nbp; j += W) VSTORE(dp + j, VZERO());
                for (int d = 0; d < D; d++) SUFFIX(axpy_w)(dp, go[d], vT + (size_t)d * nbp, nbp);
                const VF dtv = VSET1(Dt[t - t0]), inv = VSET1(inv_sqrt_d);
                for (int j = 0; j < nbp; j += W)
                    VSTORE(dp + j, VMUL(VMUL(VLOAD(p + j), VSUB(VLOAD(dp + j), dtv)), inv));
                if (dv) for (int d = 0; d < D; d++) SUFFIX(axpy_w)(dvT + (size_t)d * nbp, go[d], p, nbp);
                if (dk) for (int d = 0; d < D; d++) SUFFIX(axpy_w)(dkT + (size_t)d * nbp, q_t[d], dp, nbp);
                if (dq) {
                    float *acc = dqv + (size_t)(t - t0) * D * W;   // (D, W)
                    for (int d = 0; d < D; d++) {
                        VF s = VLOAD(acc + d * W);
                        const float *kd = kT + (size_t)d * nbp;
                        for (int j = 0; j < nbp; j += W) s = VFMA(VLOAD(dp + j), VLOAD(kd + j), s);
                        VSTORE(acc + d * W, s);
                    }
                }
            }
            if (dk) tw_keys_transpose_add(dk + (size_t)s0 * a->kv_stride, dkT, nb, nbp, D, a->kv_stride);
            if (dv) tw_keys_transpose_add(dv + (size_t)s0 * a->kv_stride, dvT, nb, nbp, D, a->kv_stride);
        }
        if (dq)
            for (int t = t0; t < t1; t++) {
                float *dq_t = dq + (size_t)t * a->q_stride;
                for (int d = 0; d < D; d++) dq_t[d] += VHSUM(VLOAD(dqv + ((size_t)(t - t0) * D + d) * W));
            }
    }
    return 1;
}
