// mha.c: multi-head / grouped-query / multi-query attention with QK-norm, RoPE, an optional KV
// cache and cross-attention. Each step writes its result into tw_mha_acts so it can be
// inspected; the per-head math is tw_sdpa_forward (sdpa.c). After tw_simd_init with a SIMD
// level, a single query (the decode step, T = 1) instead runs the selected fused kernel straight
// on the cache rows (lib/simd/simd.h), still writing its scores and pattern into the activations.
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "nn/mha.h"
#include "nn/linear.h"
#include "nn/norm.h"
#include "nn/sdpa.h"
#include "nn/sdpa_tiled.h"
#include "simd/simd.h"

// ---- KV cache ----

size_t tw_kv_cache_bytes(int S_max, int G, int D) {
    return 2u * (size_t)S_max * (size_t)G * (size_t)D * sizeof(float);
}

tw_status tw_kv_cache_init(tw_kv_cache *c, int S_max, int G, int D) {
    memset(c, 0, sizeof *c);
    if (S_max <= 0 || G <= 0 || D <= 0) return TW_ERR_ARG;
    size_t n = (size_t)S_max * G * D;
    c->k = calloc(n, sizeof(float));
    c->v = calloc(n, sizeof(float));
    if (!c->k || !c->v) { tw_kv_cache_free(c); return TW_ERR_NOMEM; }
    c->S_max = S_max; c->G = G; c->D = D;
    return TW_OK;
}

void tw_kv_cache_free(tw_kv_cache *c) {
    free(c->k);
    free(c->v);
    memset(c, 0, sizeof *c);
}

// ---- configuration ----

tw_status tw_mha_config_check(const tw_mha_config *cfg) {
    if (cfg->d_model <= 0 || cfg->n_head <= 0 || cfg->n_kv_head <= 0 || cfg->head_dim <= 0)
        return TW_ERR_SHAPE;
    if (cfg->n_head % cfg->n_kv_head != 0) return TW_ERR_SHAPE;
    if (cfg->rope != TW_ROPE_NONE && cfg->head_dim % 2 != 0) return TW_ERR_SHAPE;
    if (cfg->rope != TW_ROPE_NONE && !(cfg->rope_theta > 0.0f)) return TW_ERR_ARG;
    if (cfg->qk_norm && !(cfg->norm_eps >= 0.0f)) return TW_ERR_ARG;
    if (cfg->rope != TW_ROPE_NONE && tw_rope_scaling_check(&cfg->rope_scaling) != TW_OK)
        return TW_ERR_ARG;
    if (cfg->rope_scaling.kind != TW_ROPE_SCALING_NONE && cfg->head_dim / 2 > TW_ROPE_MAX_PAIRS)
        return TW_ERR_SHAPE;
    return TW_OK;
}

// ---- helpers ----

// Copies head j (D columns starting at j*D) of rows (n, n_heads*D) into a contiguous (n, D) block.
static void gather_head(float *dst, const float *src, int n, int n_heads, int D, int j) {
    for (int r = 0; r < n; r++)
        memcpy(dst + (size_t)r * D, src + ((size_t)r * n_heads + j) * D, (size_t)D * sizeof(float));
}

// The inverse: writes a contiguous (n, D) block into head j of rows (n, n_heads*D).
static void scatter_head(float *dst, const float *src, int n, int n_heads, int D, int j) {
    for (int r = 0; r < n; r++)
        memcpy(dst + ((size_t)r * n_heads + j) * D, src + (size_t)r * D, (size_t)D * sizeof(float));
}

// QK-norm then RoPE on n rows of n_heads heads: x_rot = rope(rmsnorm_D(x) * gain).
// The QK-norm is an RMSNorm over each head's D values, i.e. over rows of the (n*n_heads, D) view;
// rms (n, n_heads) receives its statistics.
static void normalize_and_rotate(float *x_rot, float *rms, const float *x, const float *gain, int n,
                                 int n_heads, const tw_mha_config *cfg, int rotate, int pos0) {
    const size_t count = (size_t)n * n_heads * cfg->head_dim;
    if (cfg->qk_norm)
        tw_rmsnorm_forward(x_rot, rms, x, gain, n * n_heads, cfg->head_dim, cfg->norm_eps);
    else
        memcpy(x_rot, x, count * sizeof(float));
    if (rotate && cfg->rope_scaling.kind != TW_ROPE_SCALING_NONE)
        tw_rope_scaled_forward(x_rot, cfg->rope, n, n_heads, cfg->head_dim, pos0, cfg->rope_theta,
                               &cfg->rope_scaling);
    else if (rotate)
        tw_rope_forward(x_rot, cfg->rope, n, n_heads, cfg->head_dim, pos0, cfg->rope_theta);
}

// ---- forward ----

void tw_mha_forward(float *out, tw_mha_acts *s, tw_kv_cache *cache,
                    const float *x, const float *x_kv, const float *mask,
                    const tw_mha_config *cfg, const tw_mha_weights *w,
                    int T, int S, int pos0) {
    const int C = cfg->d_model, H = cfg->n_head, G = cfg->n_kv_head, D = cfg->head_dim;
    const int cross = x_kv != NULL;
    // Rows of new keys/values this call projects, and how many keys the queries see.
    const int n_new = cross ? S : T;
    const int S_total = (cache && !cross) ? pos0 + T : n_new;
    assert(T > 0 && T <= s->T_max && S_total <= s->S_max && n_new <= s->S_max);
    assert(s->H == H && s->G == G && s->D == D);
    assert(!cache || cross || (cache->G == G && cache->D == D && pos0 + T <= cache->S_max));

    // 1. Projections: q from x, k and v from x (self) or x_kv (cross). In self-attention the
    //    three read the same x: one call (in decode the threads then start once for the three
    //    matrices, lib/simd/simd.h), the same numbers as three.
    const float *src_kv = cross ? x_kv : x;
    if (!cross) {
        float *const ys[3] = { s->q, s->k, s->v };
        const tw_weight Ws[3] = { w->wq, w->wk, w->wv };
        const float *const bs[3] = { w->bq, w->bk, w->bv };
        const int outs[3] = { H * D, G * D, G * D };
        tw_linear_forward_many(3, ys, x, Ws, bs, outs, T, C);
    } else {
        tw_linear_forward_weight(s->q, x, w->wq, w->bq, T, C, H * D);
        tw_linear_forward_weight(s->k, src_kv, w->wk, w->bk, n_new, C, G * D);
        tw_linear_forward_weight(s->v, src_kv, w->wv, w->bv, n_new, C, G * D);
    }

    // 2. QK-norm, then RoPE at absolute positions pos0 .. (cross-attention has no positions:
    //    encoder outputs already carry theirs, so neither side is rotated).
    const int rotate = !cross && cfg->rope != TW_ROPE_NONE;
    normalize_and_rotate(s->q_rot, s->q_rms, s->q, w->q_norm, T, H, cfg, rotate, pos0);
    normalize_and_rotate(s->k_rot, s->k_rms, s->k, w->k_norm, n_new, G, cfg, rotate, pos0);

    // 3. The keys/values the queries attend to: the new rows, or the cache after appending them.
    //    The cache rows (G, D) per position have the same layout as k_rot rows (G*D).
    const float *keys = s->k_rot, *vals = s->v;
    int causal_offset = 0;
    if (cache && !cross) {
        const size_t row = (size_t)G * D;
        memcpy(cache->k + (size_t)pos0 * row, s->k_rot, (size_t)T * row * sizeof(float));
        memcpy(cache->v + (size_t)pos0 * row, s->v, (size_t)T * row * sizeof(float));
        keys = cache->k;
        vals = cache->v;
        causal_offset = pos0;   // query t sits at position pos0 + t and sees keys 0 .. pos0 + t
    }
    const int causal = cfg->causal && !cross;

    // 4. One scaled dot-product attention per query head; head h reads kv head h / (H / G).
    s->T = T;
    s->S = S_total;
    if (cfg->tiled)   // tiled (sdpa_tiled.h): every head read in place, per-row statistics kept
        tw_sdpa_tiled_heads_forward(s->z, s->row_max, s->row_logsum, s->q_rot, keys, vals, mask,
                                    T, S_total, H, G, D, causal, causal_offset, TW_SDPA_TILE);
    const int group = H / G;
    int gathered = -1;   // the kv head now in kh/vh: the H/G query heads of a group share it
    // Decode (one query, no mask): every head by the level's fused kernel, the heads shared among
    // the threads (simd.h); declines at the naive level.
    const int heads_done = !cfg->tiled && T == 1 && mask == NULL &&
        tw_simd_attend_heads(s->z, s->scores, s->pattern, s->q_rot, keys, vals, H, G, S_total, D,
                             (long)T * S_total);
    for (int h = 0; h < H && !cfg->tiled && !heads_done; h++) {
        const int g = h / group;
        float *sc = s->scores + (size_t)h * T * S_total;
        float *wt = s->pattern + (size_t)h * T * S_total;
        // One query sees every key (the causal rule hides nothing at T = 1), so the fused kernel
        // can read head g's rows in place, with the cache's row stride G*D: no gather, no mask.
        if (T == 1 && mask == NULL &&
            tw_simd_attend_one(s->z + (size_t)h * D, sc, wt, s->q_rot + (size_t)h * D,
                               keys + (size_t)g * D, vals + (size_t)g * D, S_total, D, G * D))
            continue;   // declines at the naive level
        gather_head(s->qh, s->q_rot, T, H, D, h);
        if (g != gathered) {
            gather_head(s->kh, keys, S_total, G, D, g);
            gather_head(s->vh, vals, S_total, G, D, g);
            gathered = g;
        }
        tw_sdpa_forward(s->zh, sc, wt, s->qh, s->kh, s->vh, mask, T, S_total, D, causal,
                        causal_offset);
        scatter_head(s->z, s->zh, T, H, D, h);
    }

    // Ablation (interpretability): a switched-off head's output is zeroed, exactly as if its D
    // columns of Wo were zero, or replaced by the caller's values (head_patch).
    if (s->head_off)
        for (int h = 0; h < H; h++)
            if (s->head_off[h])
                for (int t = 0; t < T; t++) {
                    float *zt = s->z + ((size_t)t * H + h) * D;
                    if (s->head_patch) memcpy(zt, s->head_patch + ((size_t)t * H + h) * D, (size_t)D * sizeof(float));
                    else memset(zt, 0, (size_t)D * sizeof(float));
                }

    // 5. Output projection mixes the heads back into the model width.
    tw_linear_forward_weight(out, s->z, w->wo, w->bo, T, H * D, C);
}

// ---- backward ----

// Adds a contiguous (n, D) block into head j of rows (n, n_heads*D): scatter_head's transpose.
static void scatter_add_head(float *dst, const float *src, int n, int n_heads, int D, int j) {
    for (int r = 0; r < n; r++) {
        float *d = dst + ((size_t)r * n_heads + j) * D;
        const float *a = src + (size_t)r * D;
        for (int i = 0; i < D; i++) d[i] += a[i];
    }
}

static void zero_floats(float *p, size_t n) { memset(p, 0, n * sizeof(float)); }

// The transpose of normalize_and_rotate: d_rot (n, n_heads*D) holds the gradient of x_rot and is
// rotated back in place; the gradient of x is then added to dx (through the QK-norm if on).
static void normalize_and_rotate_backward(float *dx, float *dgain, float *d_rot, const float *x,
                                          const float *rms, const float *gain, int n, int n_heads,
                                          const tw_mha_config *cfg, int rotate, int pos0) {
    const int D = cfg->head_dim;
    const size_t count = (size_t)n * n_heads * D;
    if (rotate && cfg->rope_scaling.kind != TW_ROPE_SCALING_NONE)
        tw_rope_scaled_backward(d_rot, cfg->rope, n, n_heads, D, pos0, cfg->rope_theta,
                                &cfg->rope_scaling);
    else if (rotate)
        tw_rope_backward(d_rot, cfg->rope, n, n_heads, D, pos0, cfg->rope_theta);
    if (cfg->qk_norm) {
        tw_rmsnorm_backward(dx, dgain, d_rot, x, rms, gain, n * n_heads, D);
    } else {
        for (size_t i = 0; i < count; i++) dx[i] += d_rot[i];
    }
}

void tw_mha_backward(float *dx, float *dx_kv, const tw_mha_grads *dw, tw_mha_acts *ds,
                     const float *dout, tw_mha_acts *s, const float *x,
                     const float *x_kv, const tw_mha_config *cfg, const tw_mha_weights *w,
                     int T, int S, int pos0) {
    const int C = cfg->d_model, H = cfg->n_head, G = cfg->n_kv_head, D = cfg->head_dim;
    const int cross = x_kv != NULL;
    const int n_kv = cross ? S : T;   // keys of the forward call (no cache during training)
    assert(T > 0 && T <= ds->T_max && n_kv <= ds->S_max);
    assert(s->T == T && s->S == n_kv && ds->H == H && ds->G == G && ds->D == D);
    const size_t HD = (size_t)H * D, GD = (size_t)G * D;

    // 5. Output projection: out = z Wo^T + bo.
    zero_floats(ds->z, (size_t)T * HD);
    tw_linear_backward(ds->z, dw->wo, dw->bo, dout, s->z, w->wo.f32, T, (int)HD, C);

    // 4. Attention per query head; kv head g is shared by query heads g*group .. so its
    //    gradients are summed over them (the transpose of repeating the head).
    zero_floats(ds->q_rot, (size_t)T * HD);
    zero_floats(ds->k_rot, (size_t)n_kv * GD);
    zero_floats(ds->v, (size_t)n_kv * GD);
    if (cfg->tiled)   // from z and the per-row statistics, every head in place (sdpa_tiled.h)
        tw_sdpa_tiled_heads_backward(ds->q_rot, ds->k_rot, ds->v, ds->z, s->z, s->row_max,
                                     s->row_logsum, s->q_rot, s->k_rot, s->v, NULL, T, n_kv, H, G,
                                     D, cfg->causal && !cross, 0, TW_SDPA_TILE);
    const int group = H / G;
    int gathered = -1;   // the kv head now in kh/vh (read only below), as in the forward
    for (int h = 0; h < H && !cfg->tiled; h++) {
        const int kv = h / group;
        gather_head(s->qh, s->q_rot, T, H, D, h);
        if (kv != gathered) {
            gather_head(s->kh, s->k_rot, n_kv, G, D, kv);
            gather_head(s->vh, s->v, n_kv, G, D, kv);
            gathered = kv;
        }
        gather_head(ds->zh, ds->z, T, H, D, h);
        zero_floats(ds->qh, (size_t)T * D);
        zero_floats(ds->kh, (size_t)n_kv * D);
        zero_floats(ds->vh, (size_t)n_kv * D);
        // The forward's causal rule (no cache while training: offset 0), so that the hidden
        // half of the pattern is not read.
        tw_sdpa_backward_causal(ds->qh, ds->kh, ds->vh, ds->scores, ds->zh, s->qh, s->kh, s->vh,
                                s->pattern + (size_t)h * T * n_kv, T, n_kv, D,
                                cfg->causal && !cross, 0);
        scatter_add_head(ds->q_rot, ds->qh, T, H, D, h);
        scatter_add_head(ds->k_rot, ds->kh, n_kv, G, D, kv);
        scatter_add_head(ds->v, ds->vh, n_kv, G, D, kv);
    }

    // 2. RoPE and QK-norm, transposed (cross-attention was not rotated).
    const int rotate = !cross && cfg->rope != TW_ROPE_NONE;
    zero_floats(ds->q, (size_t)T * HD);
    zero_floats(ds->k, (size_t)n_kv * GD);
    normalize_and_rotate_backward(ds->q, dw->q_norm, ds->q_rot, s->q, s->q_rms, w->q_norm, T, H,
                                  cfg, rotate, pos0);
    normalize_and_rotate_backward(ds->k, dw->k_norm, ds->k_rot, s->k, s->k_rms, w->k_norm, n_kv,
                                  G, cfg, rotate, pos0);

    // 1. The projections: q from x; k and v from x (self) or x_kv (cross).
    const float *src_kv = cross ? x_kv : x;
    float *dsrc_kv = cross ? dx_kv : dx;
    tw_linear_backward(dx, dw->wq, dw->bq, ds->q, x, w->wq.f32, T, C, (int)HD);
    tw_linear_backward(dsrc_kv, dw->wk, dw->bk, ds->k, src_kv, w->wk.f32, n_kv, C, (int)GD);
    tw_linear_backward(dsrc_kv, dw->wv, dw->bv, ds->v, src_kv, w->wv.f32, n_kv, C, (int)GD);
}
