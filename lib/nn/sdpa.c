// sdpa.c: scaled dot-product attention for one head (Vaswani et al. 2017, eq. 1), in three
// visible steps (scores, softmax, mix) and fused. Multi-head bookkeeping lives in mha.c.
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "nn/sdpa.h"
#include "nn/linear.h"
#include "nn/softmax.h"
#include "simd/simd.h"

// ---- step 1: scores ----

void tw_sdpa_scores(float *scores, const float *q, const float *k, const float *mask,
                         int T, int S, int D, int causal, int causal_offset) {
    assert(T > 0 && S > 0 && D > 0);
    // A SIMD level with a kernel for narrow heads does all of this (without a mask) computing only
    // the keys each row sees (simd.h); it declines at the naive level.
    if (mask == NULL && tw_simd_sdpa_scores(scores, q, k, T, S, D, causal, causal_offset)) return;
    // q k^T is a Linear layer with k as the weight matrix: (T, D) x (S, D)^T -> (T, S).
    tw_linear_forward(scores, q, k, NULL, T, D, S);
    // Dividing by sqrt(D) keeps the dot products' variance near 1 for unit-variance q and k,
    // so the softmax does not saturate (section 3.2.1 of the paper).
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);
    for (int t = 0; t < T; t++) {
        float *row = scores + (size_t)t * S;
        // Row t sees keys [0, n): all of them, or under the causal rule s <= t + causal_offset.
        const long n = tw_causal_keys(t, S, causal, causal_offset);
        for (long s = 0; s < n; s++) row[s] *= inv_sqrt_d;
        if (mask)
            for (long s = 0; s < n; s++) row[s] += mask[(size_t)t * S + s];
        for (long s = n; s < S; s++) row[s] = -INFINITY;   // the future is hidden whatever the mask says
    }
}

// ---- step 3: mix the values ----

// tw_sdpa_mix, told the forward's causal rule: a SIMD level then reads no hidden weight (simd.h).
static void mix_causal(float *out, const float *weights, const float *v, int T, int S, int D,
                       int causal, int causal_offset) {
    if (tw_simd_sdpa_mix(out, weights, v, T, S, D, causal, causal_offset)) return;
    tw_sdpa_mix(out, weights, v, T, S, D);
}

void tw_sdpa_mix(float *out, const float *weights, const float *v, int T, int S, int D) {
    if (tw_simd_sdpa_mix(out, weights, v, T, S, D, 0, 0)) return;   // a SIMD level's (simd.h)
    for (int t = 0; t < T; t++) {
        float *o = out + (size_t)t * D;
        const float *w = weights + (size_t)t * S;
        for (int d = 0; d < D; d++) o[d] = 0.0f;
        for (int s = 0; s < S; s++) {
            if (w[s] == 0.0f) continue;   // masked keys contribute nothing (and skip 0 * inf)
            const float *vs = v + (size_t)s * D;
            for (int d = 0; d < D; d++) o[d] += w[s] * vs[d];
        }
    }
}

// ---- fused ----

// The softmax of each row over the keys it may see: with the causal rule, row t sees the first
// t + causal_offset + 1 keys and the rest of its weights are 0. This is tw_softmax_rows over whole
// rows bit for bit (a hidden key's -inf adds exp(-inf) = 0 to the row's sum and gets weight 0;
// a NaN row stays all NaN), without the exponentials of the hidden keys. sc may be weights.
static void softmax_visible(float *weights, const float *sc, int T, int S, int causal,
                            int causal_offset) {
    if (!causal) {
        tw_softmax_rows(weights, sc, T, S, 1.0f);
        return;
    }
    for (int t = 0; t < T; t++) {
        float *w = weights + (size_t)t * S;
        const int n = tw_causal_keys(t, S, 1, causal_offset);
        if (n > 0) tw_softmax_rows(w, sc + (size_t)t * S, 1, n, 1.0f);
        if (n > 0 && isnan(w[0]))
            for (int s = n; s < S; s++) w[s] = NAN;
        else if (n < S)   // memset: the element loop was a scalar store per hidden key
            memset(w + n, 0, (size_t)(S - n) * sizeof(float));
    }
}

void tw_sdpa_forward(float *out, float *scores, float *weights,
                     const float *q, const float *k, const float *v, const float *mask,
                     int T, int S, int D, int causal, int causal_offset) {
    assert(weights != NULL);
    // Without a scores buffer, the scores are built in weights and softmaxed in place.
    float *sc = scores ? scores : weights;
    tw_sdpa_scores(sc, q, k, mask, T, S, D, causal, causal_offset);
    softmax_visible(weights, sc, T, S, causal, causal_offset);
    mix_causal(out, weights, v, T, S, D, causal, causal_offset);
}

// ---- one query over strided keys (the decode step of one head) ----

void tw_sdpa_one(float *out, float *scores, float *pattern, const float *q, const float *k,
                 const float *v, int S, int D, int kv_stride) {
    assert(S > 0 && D > 0);
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);
    float *sc = scores ? scores : pattern;
    // The arithmetic of tw_sdpa_forward at T = 1 (one query sees every key, nothing is masked):
    // each score is the Linear layer's dot product (float, index order), then scaled.
    for (int s = 0; s < S; s++) {
        const float *ks = k + (size_t)s * kv_stride;
        float sum = 0.0f;
        for (int c = 0; c < D; c++) sum += q[c] * ks[c];
        sc[s] = sum * inv_sqrt_d;
    }
    tw_softmax_row(pattern, sc, S);
    for (int d = 0; d < D; d++) out[d] = 0.0f;
    for (int s = 0; s < S; s++) {
        if (pattern[s] == 0.0f) continue;   // as tw_sdpa_mix
        const float *vs = v + (size_t)s * kv_stride;
        for (int d = 0; d < D; d++) out[d] += pattern[s] * vs[d];
    }
}

// ---- backward ----

void tw_sdpa_backward(float *dq, float *dk, float *dv, float *dscores, const float *dout,
                      const float *q, const float *k, const float *v, const float *weights,
                      int T, int S, int D) {
    tw_sdpa_backward_causal(dq, dk, dv, dscores, dout, q, k, v, weights, T, S, D, 0, 0);
}

void tw_sdpa_backward_causal(float *dq, float *dk, float *dv, float *dscores, const float *dout,
                             const float *q, const float *k, const float *v,
                             const float *weights, int T, int S, int D, int causal,
                             int causal_offset) {
    assert(T > 0 && S > 0 && D > 0 && dscores != NULL);
    // A SIMD level runs the four products on its kernels (simd.h); naive: the loops below.
    if (tw_simd_sdpa_backward(dq, dk, dv, dscores, dout, q, k, v, weights, T, S, D, causal,
                              causal_offset))
        return;
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);   // the forward's factor, same rounding
    for (int t = 0; t < T; t++) {
        const float *w = weights + (size_t)t * S, *go = dout + (size_t)t * D;   // (S), (D)
        float *ds = dscores + (size_t)t * S;                                    // (S)
        // Row t's keys past n were hidden by the causal rule: weight 0, so no gradient (the
        // loops below would add exact zeros for them).
        const int n = tw_causal_keys(t, S, causal, causal_offset);
        for (int s = n; s < S; s++) ds[s] = 0.0f;
        // out[t] = sum_s w[s] v[s]: the gradient reaches v[s] scaled by w[s], and w[s] by
        // dout[t] . v[s].
        double dot = 0.0;
        for (int s = 0; s < n; s++) {
            float dw = 0.0f;
            if (w[s] != 0.0f) {   // hidden keys: weight 0, no gradient (and skip 0 * inf)
                const float *vs = v + (size_t)s * D;
                for (int d = 0; d < D; d++) dw += go[d] * vs[d];
                if (dv) {
                    float *dvs = dv + (size_t)s * D;
                    for (int d = 0; d < D; d++) dvs[d] += w[s] * go[d];
                }
            }
            ds[s] = dw;
            dot += (double)w[s] * dw;
        }
        // Softmax backward, then the 1/sqrt(D) of the scores.
        for (int s = 0; s < n; s++) ds[s] = (float)(w[s] * (ds[s] - dot)) * inv_sqrt_d;
        const float *q_t = q + (size_t)t * D;
        float *dq_t = dq ? dq + (size_t)t * D : NULL;
        for (int s = 0; s < n; s++) {
            const float g = ds[s];
            if (g == 0.0f) continue;
            const float *ks = k + (size_t)s * D;
            if (dq_t) for (int d = 0; d < D; d++) dq_t[d] += g * ks[d];
            if (dk) {
                float *dks = dk + (size_t)s * D;
                for (int d = 0; d < D; d++) dks[d] += g * q_t[d];
            }
        }
    }
}
