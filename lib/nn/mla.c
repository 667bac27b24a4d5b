// mla.c: multi-head latent attention (mla.h): the training form (every key and value expanded,
// forward and backward as mirrors) and the absorbed decoding form over the latent cache. The
// projections are tw_linear_forward / tw_linear_backward, the norms tw_rmsnorm_*, the rotation
// tw_rope_* (adjacent pairs); the attention core is written out here because its keys (d_nope +
// d_rope) and values (d_v) have different widths.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nn/linear.h"
#include "nn/mla.h"
#include "nn/norm.h"
#include "nn/rope.h"

tw_status tw_mla_check_config(const tw_mla_config *g) {
    if (g->C < 1 || g->H < 1 || g->q_rank < 1 || g->kv_rank < 1 || g->d_nope < 1 ||
        g->d_rope < 2 || g->d_rope % 2 != 0 || g->d_v < 1 || !(g->eps > 0.0f) || !(g->theta > 0.0f))
        return TW_ERR_ARG;
    return TW_OK;
}

int tw_mla_cache_per_token(const tw_mla_config *g) { return g->kv_rank + g->d_rope; }

void tw_mla_cache_free(tw_mla_cache *c) {
    float *all[] = { c->qa, c->qa_rms, c->cq, c->q, c->qn, c->qp, c->c_raw, c->c_rms, c->c, c->kp,
                     c->kv, c->kn, c->v, c->att, c->ao, c->d_ao, c->d_qn, c->d_qp, c->d_kn,
                     c->d_v, c->d_kp, c->d_q, c->d_kv, c->d_c, c->d_craw, c->d_kva, c->d_cq,
                     c->d_qa, c->d_row };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    memset(c, 0, sizeof *c);
}

tw_status tw_mla_cache_init(tw_mla_cache *c, const tw_mla_config *g, int T_max) {
    memset(c, 0, sizeof *c);
    if (T_max < 1 || tw_mla_check_config(g) != TW_OK) return TW_ERR_ARG;
    const size_t T = (size_t)T_max, H = (size_t)g->H, rq = (size_t)g->q_rank;
    const size_t rkv = (size_t)g->kv_rank, dn = (size_t)g->d_nope, dr = (size_t)g->d_rope;
    const size_t dv = (size_t)g->d_v;
    struct { float **p; size_t n; } bufs[] = {
        { &c->qa, T * rq }, { &c->qa_rms, T }, { &c->cq, T * rq }, { &c->q, T * H * (dn + dr) },
        { &c->qn, T * H * dn }, { &c->qp, T * H * dr }, { &c->c_raw, T * rkv }, { &c->c_rms, T },
        { &c->c, T * rkv }, { &c->kp, T * dr }, { &c->kv, T * H * (dn + dv) },
        { &c->kn, T * H * dn }, { &c->v, T * H * dv }, { &c->att, H * T * T },
        { &c->ao, T * H * dv }, { &c->d_ao, T * H * dv }, { &c->d_qn, T * H * dn },
        { &c->d_qp, T * H * dr }, { &c->d_kn, T * H * dn }, { &c->d_v, T * H * dv },
        { &c->d_kp, T * dr }, { &c->d_q, T * H * (dn + dr) }, { &c->d_kv, T * H * (dn + dv) },
        { &c->d_c, T * rkv }, { &c->d_craw, T * rkv }, { &c->d_kva, T * (rkv + dr) },
        { &c->d_cq, T * rq }, { &c->d_qa, T * rq }, { &c->d_row, T },
    };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (!(*bufs[i].p = calloc(bufs[i].n, sizeof(float)))) { tw_mla_cache_free(c); return TW_ERR_NOMEM; }
    c->T_max = T_max;
    return TW_OK;
}

// Copies columns [from, from + w) of each of n rows of width `stride` into dst (n, w).
static void take_cols(float *dst, const float *src, int n, int stride, int from, int w) {
    for (int i = 0; i < n; i++)
        memcpy(dst + (long)i * w, src + (long)i * stride + from, (size_t)w * sizeof(float));
}

// The reverse: writes src (n, w) into columns [from, from + w) of dst's rows.
static void put_cols(float *dst, const float *src, int n, int stride, int from, int w) {
    for (int i = 0; i < n; i++)
        memcpy(dst + (long)i * stride + from, src + (long)i * w, (size_t)w * sizeof(float));
}

static float dot(const float *a, const float *b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

void tw_mla_forward(float *y, tw_mla_cache *c, const float *x, const tw_mla_weights *W,
                    const tw_mla_config *g, int T) {
    const int C = g->C, H = g->H, rq = g->q_rank, rkv = g->kv_rank;
    const int dn = g->d_nope, dr = g->d_rope, dv = g->d_v, dq = dn + dr, dkv = dn + dv;
    const float scale = 1.0f / sqrtf((float)dq);
    // queries: down, norm, up; split each head into its nope and rope parts; rotate the latter
    tw_linear_forward(c->qa, x, W->q_a, NULL, T, C, rq);
    tw_rmsnorm_forward(c->cq, c->qa_rms, c->qa, W->q_a_norm, T, rq, g->eps);
    tw_linear_forward(c->q, c->cq, W->q_b, NULL, T, rq, H * dq);
    // (T, H dq) viewed as T H rows of dq: nope columns then rope columns
    take_cols(c->qn, c->q, T * H, dq, 0, dn);
    take_cols(c->qp, c->q, T * H, dq, dn, dr);
    tw_rope_adjacent_forward(c->qp, T, H, dr, 0, g->theta);
    // the latent and the shared RoPE key: one projection, split, the latent normed
    float *kva = c->d_kva;   // (T, rkv + dr), borrowed: the backward overwrites it
    tw_linear_forward(kva, x, W->kv_a, NULL, T, C, rkv + dr);
    take_cols(c->c_raw, kva, T, rkv + dr, 0, rkv);
    take_cols(c->kp, kva, T, rkv + dr, rkv, dr);
    tw_rmsnorm_forward(c->c, c->c_rms, c->c_raw, W->kv_a_norm, T, rkv, g->eps);
    tw_rope_adjacent_forward(c->kp, T, 1, dr, 0, g->theta);
    // keys' nope parts and values, expanded per head from the latent
    tw_linear_forward(c->kv, c->c, W->kv_b, NULL, T, rkv, H * dkv);
    take_cols(c->kn, c->kv, T * H, dkv, 0, dn);
    take_cols(c->v, c->kv, T * H, dkv, dn, dv);
    // causal attention per head: scores from both parts, softmax, weighted values
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++) {
            float *p = c->att + ((long)h * T + t) * T, mx = -INFINITY, sum = 0.0f;
            const float *qn = c->qn + ((long)t * H + h) * dn, *qp = c->qp + ((long)t * H + h) * dr;
            for (int s = 0; s <= t; s++) {
                p[s] = (dot(qn, c->kn + ((long)s * H + h) * dn, dn) +
                        dot(qp, c->kp + (long)s * dr, dr)) * scale;
                if (p[s] > mx) mx = p[s];
            }
            for (int s = 0; s <= t; s++) { p[s] = expf(p[s] - mx); sum += p[s]; }
            for (int s = 0; s <= t; s++) p[s] /= sum;
            for (int s = t + 1; s < T; s++) p[s] = 0.0f;
            float *o = c->ao + (long)t * H * dv + (long)h * dv;
            for (int i = 0; i < dv; i++) o[i] = 0.0f;
            for (int s = 0; s <= t; s++) {
                const float *vs = c->v + ((long)s * H + h) * dv;
                for (int i = 0; i < dv; i++) o[i] += p[s] * vs[i];
            }
        }
    tw_linear_forward(y, c->ao, W->o, NULL, T, H * dv, C);
}

void tw_mla_backward(float *dx, const tw_mla_grads *dW, tw_mla_cache *c, const float *dy,
                     const float *x, const tw_mla_weights *W, const tw_mla_config *g, int T) {
    const int C = g->C, H = g->H, rq = g->q_rank, rkv = g->kv_rank;
    const int dn = g->d_nope, dr = g->d_rope, dv = g->d_v, dq = dn + dr, dkv = dn + dv;
    const float scale = 1.0f / sqrtf((float)dq);
    const long nq = (long)T * H;
    memset(c->d_ao, 0, (size_t)nq * dv * sizeof(float));
    memset(c->d_qn, 0, (size_t)nq * dn * sizeof(float));
    memset(c->d_qp, 0, (size_t)nq * dr * sizeof(float));
    memset(c->d_kn, 0, (size_t)nq * dn * sizeof(float));
    memset(c->d_v, 0, (size_t)nq * dv * sizeof(float));
    memset(c->d_kp, 0, (size_t)T * dr * sizeof(float));
    memset(c->d_c, 0, (size_t)T * rkv * sizeof(float));
    memset(c->d_craw, 0, (size_t)T * rkv * sizeof(float));
    memset(c->d_cq, 0, (size_t)T * rq * sizeof(float));
    memset(c->d_qa, 0, (size_t)T * rq * sizeof(float));
    // output projection
    tw_linear_backward(c->d_ao, dW->o, NULL, dy, c->ao, W->o, T, H * dv, C);
    // attention core: d p, through the softmax, into both parts of q and k and into v
    float *dp = c->d_row;   // (T) one row of d scores
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++) {
            const float *p = c->att + ((long)h * T + t) * T;
            const float *dout = c->d_ao + (long)t * H * dv + (long)h * dv;
            float pdp = 0.0f;
            for (int s = 0; s <= t; s++) {
                float *dvs = c->d_v + ((long)s * H + h) * dv;
                const float *vs = c->v + ((long)s * H + h) * dv;
                dp[s] = dot(dout, vs, dv);
                pdp += p[s] * dp[s];
                for (int i = 0; i < dv; i++) dvs[i] += p[s] * dout[i];
            }
            const long tq = (long)t * H + h;
            for (int s = 0; s <= t; s++) {
                const float ds = p[s] * (dp[s] - pdp) * scale;
                const long sq = (long)s * H + h;
                for (int i = 0; i < dn; i++) {
                    c->d_qn[tq * dn + i] += ds * c->kn[sq * dn + i];
                    c->d_kn[sq * dn + i] += ds * c->qn[tq * dn + i];
                }
                for (int i = 0; i < dr; i++) {
                    c->d_qp[tq * dr + i] += ds * c->kp[(long)s * dr + i];
                    c->d_kp[(long)s * dr + i] += ds * c->qp[tq * dr + i];
                }
            }
        }
    // keys and values back to the latent
    put_cols(c->d_kv, c->d_kn, T * H, dkv, 0, dn);
    put_cols(c->d_kv, c->d_v, T * H, dkv, dn, dv);
    tw_linear_backward(c->d_c, dW->kv_b, NULL, c->d_kv, c->c, W->kv_b, T, rkv, H * dkv);
    tw_rmsnorm_backward(c->d_craw, dW->kv_a_norm, c->d_c, c->c_raw, c->c_rms, W->kv_a_norm, T, rkv);
    tw_rope_adjacent_backward(c->d_kp, T, 1, dr, 0, g->theta);
    put_cols(c->d_kva, c->d_craw, T, rkv + dr, 0, rkv);
    put_cols(c->d_kva, c->d_kp, T, rkv + dr, rkv, dr);
    tw_linear_backward(dx, dW->kv_a, NULL, c->d_kva, x, W->kv_a, T, C, rkv + dr);
    // queries back through the up projection, the norm and the down projection
    tw_rope_adjacent_backward(c->d_qp, T, H, dr, 0, g->theta);
    put_cols(c->d_q, c->d_qn, T * H, dq, 0, dn);
    put_cols(c->d_q, c->d_qp, T * H, dq, dn, dr);
    tw_linear_backward(c->d_cq, dW->q_b, NULL, c->d_q, c->cq, W->q_b, T, rq, H * dq);
    tw_rmsnorm_backward(c->d_qa, dW->q_a_norm, c->d_cq, c->qa, c->qa_rms, W->q_a_norm, T, rq);
    tw_linear_backward(dx, dW->q_a, NULL, c->d_qa, x, W->q_a, T, C, rq);
}

// ---- the absorbed decoding form ----

long tw_mla_decode_work_floats(const tw_mla_config *g, int n_pos) {
    const long H = g->H;
    // qa, cq (q_rank); q (H dq); q~ (H kv_rank); kva (kv_rank + d_rope); p (n_pos);
    // latent mix (kv_rank); o (H d_v)
    return 2L * g->q_rank + H * (g->d_nope + g->d_rope) + H * g->kv_rank + g->kv_rank +
           g->d_rope + n_pos + g->kv_rank + H * g->d_v;
}

void tw_mla_decode_absorbed(float *y, float *c_cache, float *kp_cache, float *work,
                            const float *x, int pos, const tw_mla_weights *W,
                            const tw_mla_config *g) {
    const int C = g->C, H = g->H, rq = g->q_rank, rkv = g->kv_rank;
    const int dn = g->d_nope, dr = g->d_rope, dv = g->d_v, dq = dn + dr, dkv = dn + dv;
    const float scale = 1.0f / sqrtf((float)dq);
    float *qa = work, *cq = qa + rq, *q = cq + rq, *qt = q + (long)H * dq, *kva = qt + (long)H * rkv;
    float *p = kva + rkv + dr, *mix = p + pos + 1, *o = mix + rkv;
    // this token's query, as in the forward (RoPE at position pos)
    tw_linear_forward(qa, x, W->q_a, NULL, 1, C, rq);
    tw_rmsnorm_forward(cq, NULL, qa, W->q_a_norm, 1, rq, g->eps);
    tw_linear_forward(q, cq, W->q_b, NULL, 1, rq, H * dq);
    for (int h = 0; h < H; h++) tw_rope_adjacent_forward(q + (long)h * dq + dn, 1, 1, dr, pos, g->theta);
    // its latent and shared RoPE key, appended to the cache
    tw_linear_forward(kva, x, W->kv_a, NULL, 1, C, rkv + dr);
    tw_rmsnorm_forward(c_cache + (long)pos * rkv, NULL, kva, W->kv_a_norm, 1, rkv, g->eps);
    memcpy(kp_cache + (long)pos * dr, kva + rkv, (size_t)dr * sizeof(float));
    tw_rope_adjacent_forward(kp_cache + (long)pos * dr, 1, 1, dr, pos, g->theta);
    for (int h = 0; h < H; h++) {
        const float *qn = q + (long)h * dq, *qp = qn + dn;
        const float *Wh = W->kv_b + (long)h * dkv * rkv;   // head h's (d_n + d_v, r_kv) rows
        // q~ = W_uk,h^T q_nope: the key up-projection folded into the query
        float *qth = qt + (long)h * rkv;
        for (int j = 0; j < rkv; j++) qth[j] = 0.0f;
        for (int i = 0; i < dn; i++)
            for (int j = 0; j < rkv; j++) qth[j] += qn[i] * Wh[(long)i * rkv + j];
        float mx = -INFINITY, sum = 0.0f;
        for (int s = 0; s <= pos; s++) {
            p[s] = (dot(qth, c_cache + (long)s * rkv, rkv) + dot(qp, kp_cache + (long)s * dr, dr)) * scale;
            if (p[s] > mx) mx = p[s];
        }
        for (int s = 0; s <= pos; s++) { p[s] = expf(p[s] - mx); sum += p[s]; }
        for (int j = 0; j < rkv; j++) mix[j] = 0.0f;
        for (int s = 0; s <= pos; s++)
            for (int j = 0; j < rkv; j++) mix[j] += (p[s] / sum) * c_cache[(long)s * rkv + j];
        // o_h = W_uv,h mix: the value up-projection applied once, after the weighted sum
        for (int i = 0; i < dv; i++) o[(long)h * dv + i] = dot(Wh + (long)(dn + i) * rkv, mix, rkv);
    }
    tw_linear_forward(y, o, W->o, NULL, 1, H * dv, C);
}
