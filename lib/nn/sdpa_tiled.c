// sdpa_tiled.c: attention one block of keys at a time with an online softmax (sdpa_tiled.h).
// The naive reference (_naive): plain loops in the order the header describes; the unsuffixed
// functions try the SIMD level's kernel first (simd/sdpa_tiled_hook.c) and fall back to them. Each score is computed as
// tw_sdpa_scores computes it (a float dot product in index order, times 1/sqrt(D), plus the mask),
// so the forward and the backward see the same bits for the same score.
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "nn/sdpa_tiled.h"
#include "simd/simd.h"

// The score of query row q_t against key row k_s: q_t . k_s / sqrt(D) + mask.
//   q_t, k_s: (D)   mask_ts: the mask entry, or NULL
static float score(const float *q_t, const float *k_s, const float *mask_ts, int D,
                   float inv_sqrt_d) {
    float sum = 0.0f;
    for (int c = 0; c < D; c++) sum += q_t[c] * k_s[c];
    float x = sum * inv_sqrt_d;
    return mask_ts ? x + *mask_ts : x;
}

// The keys [0, n) row t may see under the tiling's causal rule (the mask may hide more).
static int visible_keys(const tw_sdpa_tiling *tl, int t) {
    return tw_causal_keys(t, tl->S, tl->causal, tl->causal_offset);
}

static const float *mask_row(const float *mask, const tw_sdpa_tiling *tl, int t) {
    return mask ? mask + (size_t)t * tl->mask_stride : NULL;
}

// ---- forward ----

// The running state of one query row: m (largest score so far), l (sum of exp(score - m) so far,
// in double as tw_softmax_row sums), acc (D) the unnormalised output sum of exp(score - m) v.
typedef struct {
    float  m;
    double l;
    float *acc;
} online_row;

// Folds one block of nb scores (sc, keys s0 .. s0+nb-1) into the row. When the block's maximum
// exceeds m, everything summed so far was measured against a smaller m: multiplying l and acc by
// exp(m_old - m_new) restates it against the new one (the rescaling step).
static void fold_block(online_row *r, const float *sc, int nb, const float *v, int s0,
                       int kv_stride, int D) {
    float bmax = -INFINITY;
    for (int j = 0; j < nb; j++) bmax = sc[j] > bmax ? sc[j] : bmax;
    if (bmax == -INFINITY) return;          // every key of the block hidden: nothing to add
    if (bmax > r->m) {
        if (r->m != -INFINITY) {            // (the first visible block has nothing to rescale)
            const float scale = expf(r->m - bmax);
            r->l *= scale;
            for (int d = 0; d < D; d++) r->acc[d] *= scale;
        }
        r->m = bmax;
    }
    for (int j = 0; j < nb; j++) {
        const float e = expf(sc[j] - r->m);
        r->l += e;
        if (e == 0.0f) continue;            // hidden or underflowed key: adds nothing (skip 0 * inf)
        const float *vs = v + (size_t)(s0 + j) * kv_stride;
        for (int d = 0; d < D; d++) r->acc[d] += e * vs[d];
    }
}

void tw_sdpa_tiled_forward_naive(float *out, float *row_max, float *row_logsum, const float *q,
                                 const float *k, const float *v, const float *mask,
                                 const tw_sdpa_tiling *tl) {
    const int D = tl->D, B = tl->block;
    assert(tl->T > 0 && tl->S > 0 && D > 0 && B > 0 && B <= TW_SDPA_TILE_MAX);
    float scratch[TW_SDPA_TILE_MAX];   // (B) one block's scores
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);   // tw_sdpa_scores' factor, same rounding
    for (int t = 0; t < tl->T; t++) {
        const float *q_t = q + (size_t)t * tl->q_stride;           // (D)
        const float *mrow = mask_row(mask, tl, t);                 // (S) or NULL
        online_row r = { -INFINITY, 0.0, out + (size_t)t * tl->q_stride };
        memset(r.acc, 0, (size_t)D * sizeof(float));
        const int n = visible_keys(tl, t);
        for (int s0 = 0; s0 < n; s0 += B) {
            const int nb = n - s0 < B ? n - s0 : B;                // the last block may be short
            for (int j = 0; j < nb; j++)
                scratch[j] = score(q_t, k + (size_t)(s0 + j) * tl->kv_stride,
                                   mrow ? mrow + s0 + j : NULL, D, inv_sqrt_d);
            fold_block(&r, scratch, nb, v, s0, tl->kv_stride, D);
        }
        // Divide once. A row that saw no key has l = 0 and acc = 0: its output stays 0.
        if (r.l > 0.0)
            for (int d = 0; d < D; d++) r.acc[d] = (float)(r.acc[d] / r.l);
        row_max[t] = r.m;
        row_logsum[t] = r.l > 0.0 ? (float)log(r.l) : -INFINITY;
    }
}

// ---- backward ----

void tw_sdpa_tiled_backward_naive(float *dq, float *dk, float *dv, const float *dout,
                                  const float *out, const float *row_max, const float *row_logsum,
                                  const float *q, const float *k, const float *v, const float *mask,
                                  const tw_sdpa_tiling *tl) {
    const int D = tl->D, B = tl->block;
    assert(tl->T > 0 && tl->S > 0 && D > 0 && B > 0);
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);
    for (int t = 0; t < tl->T; t++) {
        const float m = row_max[t], log_l = row_logsum[t];
        if (m == -INFINITY) continue;       // the row saw no key: its output was the constant 0
        const size_t row = (size_t)t * tl->q_stride;
        const float *q_t = q + row, *go = dout + row, *o = out + row;   // (D) each
        float *dq_t = dq ? dq + row : NULL;
        const float *mrow = mask_row(mask, tl, t);
        // D_t = rowsum(dout * out) = sum_s p_s (dout . v_s): the softmax backward's dot product,
        // from the output instead of from a stored row of weights.
        double Dt = 0.0;
        for (int d = 0; d < D; d++) Dt += (double)go[d] * o[d];
        const int n = visible_keys(tl, t);
        for (int s0 = 0; s0 < n; s0 += B) {
            const int nb = n - s0 < B ? n - s0 : B;
            for (int j = 0; j < nb; j++) {
                const int s = s0 + j;
                const float *ks = k + (size_t)s * tl->kv_stride, *vs = v + (size_t)s * tl->kv_stride;
                // The block's probabilities, recomputed from the kept statistics.
                const float p = expf((score(q_t, ks, mrow ? mrow + s : NULL, D, inv_sqrt_d) - m)
                                     - log_l);
                if (p == 0.0f) continue;    // hidden key (or underflow): no gradient
                float dp = 0.0f;
                for (int d = 0; d < D; d++) dp += go[d] * vs[d];
                if (dv) {
                    float *dvs = dv + (size_t)s * tl->kv_stride;
                    for (int d = 0; d < D; d++) dvs[d] += p * go[d];
                }
                const float ds = (float)(p * (dp - Dt)) * inv_sqrt_d;
                if (dq_t) for (int d = 0; d < D; d++) dq_t[d] += ds * ks[d];
                if (dk) {
                    float *dks = dk + (size_t)s * tl->kv_stride;
                    for (int d = 0; d < D; d++) dks[d] += ds * q_t[d];
                }
            }
        }
    }
}

// ---- the level's kernel first (simd/sdpa_tiled_hook.c), else the loops above ----

static tw_simd_tiling simd_args(const tw_sdpa_tiling *tl) {
    const tw_simd_tiling a = { tl->T, tl->S, tl->D, tl->q_stride, tl->kv_stride, tl->mask_stride,
                               tl->causal, tl->causal_offset, tl->block };
    return a;
}

void tw_sdpa_tiled_forward(float *out, float *row_max, float *row_logsum, const float *q,
                           const float *k, const float *v, const float *mask,
                           const tw_sdpa_tiling *tl) {
    const tw_simd_tiling a = simd_args(tl);
    if (!tw_simd_sdpa_tiled_forward(out, row_max, row_logsum, q, k, v, mask, &a))
        tw_sdpa_tiled_forward_naive(out, row_max, row_logsum, q, k, v, mask, tl);
}

void tw_sdpa_tiled_backward(float *dq, float *dk, float *dv, const float *dout,
                            const float *out, const float *row_max, const float *row_logsum,
                            const float *q, const float *k, const float *v, const float *mask,
                            const tw_sdpa_tiling *tl) {
    const tw_simd_tiling a = simd_args(tl);
    if (!tw_simd_sdpa_tiled_backward(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v, mask, &a))
        tw_sdpa_tiled_backward_naive(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v, mask, tl);
}

// ---- every head of a (grouped-query) attention ----

static tw_sdpa_tiling head_tiling(int T, int S, int H, int G, int D, int causal,
                                  int causal_offset, int block) {
    tw_sdpa_tiling tl = { .T = T, .S = S, .D = D, .q_stride = H * D, .kv_stride = G * D,
                          .mask_stride = S, .causal = causal, .causal_offset = causal_offset,
                          .block = block };
    return tl;
}

void tw_sdpa_tiled_heads_forward(float *out, float *row_max, float *row_logsum, const float *q,
                                 const float *k, const float *v, const float *mask, int T, int S,
                                 int H, int G, int D, int causal, int causal_offset, int block) {
    assert(G > 0 && H % G == 0);
    const tw_sdpa_tiling tl = head_tiling(T, S, H, G, D, causal, causal_offset, block);
    for (int h = 0; h < H; h++) {
        const size_t g = (size_t)(h / (H / G));   // the key/value head of query head h
        const size_t ht = (size_t)h * T;
        tw_sdpa_tiled_forward(out + (size_t)h * D, row_max + ht, row_logsum + ht,
                              q + (size_t)h * D, k + g * D, v + g * D, mask, &tl);
    }
}

void tw_sdpa_tiled_heads_backward(float *dq, float *dk, float *dv, const float *dout,
                                  const float *out, const float *row_max,
                                  const float *row_logsum, const float *q,
                                  const float *k, const float *v, const float *mask, int T,
                                  int S, int H, int G, int D, int causal, int causal_offset,
                                  int block) {
    assert(G > 0 && H % G == 0);
    const tw_sdpa_tiling tl = head_tiling(T, S, H, G, D, causal, causal_offset, block);
    for (int h = 0; h < H; h++) {
        const size_t hd = (size_t)h * D, gd = (size_t)(h / (H / G)) * D, ht = (size_t)h * T;
        tw_sdpa_tiled_backward(dq ? dq + hd : NULL, dk ? dk + gd : NULL, dv ? dv + gd : NULL,
                               dout + hd, out + hd, row_max + ht, row_logsum + ht, q + hd,
                               k + gd, v + gd, mask, &tl);
    }
}
