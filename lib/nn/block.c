// block.c: one transformer block (attention + feed-forward, each with a residual connection),
// pre-norm or post-norm. Every intermediate is left in tw_block_scratch (see block.h).
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "nn/block.h"
#include "nn/ffn.h"
#include "nn/norm.h"

tw_status tw_block_config_check(const tw_block_config *cfg) {
    tw_status st = tw_attn_config_check(&cfg->attn);
    if (st != TW_OK) return st;
    if (cfg->ffn_hidden <= 0) return TW_ERR_SHAPE;
    if (cfg->norm != TW_NORM_LAYER && cfg->norm != TW_NORM_RMS) return TW_ERR_ARG;
    if (cfg->ffn != TW_FFN_CLASSIC && cfg->ffn != TW_FFN_SWIGLU) return TW_ERR_ARG;
    if (!(cfg->norm_eps >= 0.0f)) return TW_ERR_ARG;
    return TW_OK;
}

tw_status tw_block_scratch_init(tw_block_scratch *s, const tw_block_config *cfg, int T_max, int S_max) {
    memset(s, 0, sizeof *s);
    tw_status st = tw_block_config_check(cfg);
    if (st != TW_OK) return st;
    st = tw_attn_scratch_init(&s->attn, &cfg->attn, T_max, S_max);
    if (st != TW_OK) return st;
    const size_t TC = (size_t)T_max * cfg->attn.d_model, TF = (size_t)T_max * cfg->ffn_hidden;
    s->T_max = T_max;
    s->attn_in    = calloc(TC, sizeof(float));
    s->norm1      = calloc(TC, sizeof(float));
    s->attn_out   = calloc(TC, sizeof(float));
    s->resid_mid  = calloc(TC, sizeof(float));
    s->norm2      = calloc(TC, sizeof(float));
    s->ffn_hidden = calloc(TF, sizeof(float));
    s->ffn_up     = calloc(TF, sizeof(float));
    s->ffn_act    = calloc(TF, sizeof(float));
    s->ffn_out    = calloc(TC, sizeof(float));
    s->mean       = calloc((size_t)T_max, sizeof(float));
    s->rstd       = calloc((size_t)T_max, sizeof(float));
    if (!s->attn_in || !s->norm1 || !s->attn_out || !s->resid_mid || !s->norm2 || !s->ffn_hidden ||
        !s->ffn_up || !s->ffn_act || !s->ffn_out || !s->mean || !s->rstd) {
        tw_block_scratch_free(s);
        return TW_ERR_NOMEM;
    }
    return TW_OK;
}

void tw_block_scratch_free(tw_block_scratch *s) {
    tw_attn_scratch_free(&s->attn);
    free(s->attn_in); free(s->norm1); free(s->attn_out); free(s->resid_mid); free(s->norm2);
    free(s->ffn_hidden); free(s->ffn_up); free(s->ffn_act); free(s->ffn_out);
    free(s->mean); free(s->rstd);
    memset(s, 0, sizeof *s);
}

// ---- the two sub-layers' pieces ----

// out = Norm(x) with the block's norm kind; row statistics go to s->mean / s->rstd.
static void block_norm(float *out, tw_block_scratch *s, const float *x, const float *w,
                       const float *b, const tw_block_config *cfg, int T) {
    const int C = cfg->attn.d_model;
    if (cfg->norm == TW_NORM_LAYER)
        tw_layernorm_forward(out, s->mean, s->rstd, x, w, b, T, C, cfg->norm_eps);
    else
        tw_rmsnorm_forward(out, s->rstd, x, w, T, C, cfg->norm_eps);
}

static void block_ffn(float *out, tw_block_scratch *s, const float *x, const tw_block_config *cfg,
                      const tw_block_weights *w, int T) {
    const int C = cfg->attn.d_model, F = cfg->ffn_hidden;
    if (cfg->ffn == TW_FFN_SWIGLU)
        tw_swiglu_forward(out, s->ffn_hidden, s->ffn_up, s->ffn_act, x,
                          w->ffn_gate, w->ffn_up, w->ffn_down, T, C, F);
    else
        tw_ffn_forward(out, s->ffn_hidden, x, w->ffn_w1, w->ffn_b1, w->ffn_w2, w->ffn_b2,
                       T, C, F, cfg->act);
}

// y = a + b elementwise (the residual connection); y may alias a or b.
static void residual_add(float *y, const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++) y[i] = a[i] + b[i];
}

// ---- forward ----

void tw_block_forward(float *out, tw_block_scratch *s, tw_kv_cache *cache, const float *x,
                      const tw_block_config *cfg, const tw_block_weights *w, int T, int pos0) {
    const int C = cfg->attn.d_model;
    const long n = (long)T * C;
    assert(T > 0 && T <= s->T_max);
    memmove(s->attn_in, x, (size_t)n * sizeof(float));   // from here on x is not read: out may alias it
    const float *xin = s->attn_in;

    if (cfg->prenorm) {
        // h = x + Attn(Norm1(x));   y = h + FFN(Norm2(h))
        block_norm(s->norm1, s, xin, w->norm1_w, w->norm1_b, cfg, T);
        tw_mha_forward(s->attn_out, &s->attn, cache, s->norm1, NULL, NULL, &cfg->attn, &w->attn,
                       T, T, pos0);
        residual_add(s->resid_mid, xin, s->attn_out, n);
        block_norm(s->norm2, s, s->resid_mid, w->norm2_w, w->norm2_b, cfg, T);
        block_ffn(s->ffn_out, s, s->norm2, cfg, w, T);
        residual_add(out, s->resid_mid, s->ffn_out, n);
    } else {
        // h = Norm1(x + Attn(x));   y = Norm2(h + FFN(h))
        tw_mha_forward(s->attn_out, &s->attn, cache, xin, NULL, NULL, &cfg->attn, &w->attn,
                       T, T, pos0);
        residual_add(s->norm1, xin, s->attn_out, n);
        block_norm(s->norm1, s, s->norm1, w->norm1_w, w->norm1_b, cfg, T);   // norms may alias
        memcpy(s->resid_mid, s->norm1, (size_t)n * sizeof(float));
        block_ffn(s->ffn_out, s, s->resid_mid, cfg, w, T);
        residual_add(s->norm2, s->resid_mid, s->ffn_out, n);
        block_norm(s->norm2, s, s->norm2, w->norm2_w, w->norm2_b, cfg, T);
        memcpy(out, s->norm2, (size_t)n * sizeof(float));
    }
}
