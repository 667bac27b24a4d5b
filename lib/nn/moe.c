// moe.c: the mixture-of-experts FFN (moe.h): route, group the chosen (token, slot) pairs by
// expert, run each expert once on its rows with tw_swiglu_forward (ffn.c), and add the outputs
// back weighted by the gates. The backward mirrors it: the experts' backward on the same
// groups, the gate weights' gradient <dy_t, expert output>, then the router (router.c).
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "nn/ffn.h"
#include "nn/linear.h"
#include "nn/moe.h"

tw_status tw_moe_check_config(const tw_moe_config *cfg) {
    const tw_router_config *r = &cfg->router;
    if (cfg->C < 1 || cfg->F < 1 || cfg->F_shared < 0 || r->E < 1 || r->k < 1 || r->k > r->E)
        return TW_ERR_ARG;
    const int G = r->n_group;
    if (G < 1 || G > TW_ROUTER_MAX_GROUPS || r->E % G != 0 || r->topk_group < 1 ||
        r->topk_group > G || (long)r->topk_group * (r->E / G) < r->k)
        return TW_ERR_ARG;
    return TW_OK;
}

void tw_moe_cache_free(tw_moe_cache *c) {
    void *bufs[] = { c->logits, c->probs, c->sel, c->w, c->count, c->start, c->row, c->tok,
                     c->xs, c->g, c->u, c->a, c->eo, c->sg, c->su, c->sa, c->so, c->dw, c->deo,
                     c->dxs, c->dg, c->du, c->dlogits };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    memset(c, 0, sizeof *c);
}

tw_status tw_moe_cache_init(tw_moe_cache *c, const tw_moe_config *cfg, int T_max) {
    memset(c, 0, sizeof *c);
    if (T_max < 1 || tw_moe_check_config(cfg) != TW_OK) return TW_ERR_ARG;
    const size_t T = (size_t)T_max, E = (size_t)cfg->router.E, k = (size_t)cfg->router.k;
    const size_t C = (size_t)cfg->C, F = (size_t)cfg->F, Fs = (size_t)cfg->F_shared;
    const size_t Fd = F > Fs ? F : Fs, Rd = T * k > T ? T * k : T;
    c->T_max = T_max;
    c->logits = calloc(T * E, sizeof(float));  c->probs = calloc(T * E, sizeof(float));
    c->sel = calloc(T * k, sizeof(int));       c->w = calloc(T * k, sizeof(float));
    c->count = calloc(E, sizeof(int));         c->start = calloc(E + 1, sizeof(int));
    c->row = calloc(T * k, sizeof(int));       c->tok = calloc(T * k, sizeof(int));
    c->xs = calloc(T * k * C, sizeof(float));  c->eo = calloc(T * k * C, sizeof(float));
    c->g = calloc(T * k * F, sizeof(float));   c->u = calloc(T * k * F, sizeof(float));
    c->a = calloc(T * k * F, sizeof(float));
    c->dw = calloc(T * k, sizeof(float));      c->dlogits = calloc(T * E, sizeof(float));
    c->deo = calloc(T * k * C, sizeof(float)); c->dxs = calloc(T * k * C, sizeof(float));
    c->dg = calloc(Rd * Fd, sizeof(float));    c->du = calloc(Rd * Fd, sizeof(float));
    int ok = c->logits && c->probs && c->sel && c->w && c->count && c->start && c->row &&
             c->tok && c->xs && c->eo && c->g && c->u && c->a && c->dw && c->dlogits &&
             c->deo && c->dxs && c->dg && c->du;
    if (Fs > 0) {
        c->sg = calloc(T * Fs, sizeof(float)); c->su = calloc(T * Fs, sizeof(float));
        c->sa = calloc(T * Fs, sizeof(float)); c->so = calloc(T * C, sizeof(float));
        ok = ok && c->sg && c->su && c->sa && c->so;
    }
    if (!ok) { tw_moe_cache_free(c); return TW_ERR_NOMEM; }
    return TW_OK;
}

// Groups the T k chosen pairs by expert: count, start, row, tok, and the grouped inputs xs.
static void group_by_expert(tw_moe_cache *c, const float *x, const tw_moe_config *cfg, int T) {
    const int E = cfg->router.E, k = cfg->router.k, C = cfg->C;
    tw_router_counts(c->count, c->sel, T, &cfg->router);
    c->start[0] = 0;
    for (int e = 0; e < E; e++) c->start[e + 1] = c->start[e] + c->count[e];
    for (int e = 0; e < E; e++) c->count[e] = 0;   // refilled below as the next free row
    for (int t = 0; t < T; t++)
        for (int j = 0; j < k; j++) {
            const int e = c->sel[t * k + j], r = c->start[e] + c->count[e]++;
            c->row[t * k + j] = r;
            c->tok[r] = t;
            memcpy(c->xs + (long)r * C, x + (long)t * C, (size_t)C * sizeof(float));
        }
}

void tw_moe_forward(float *y, tw_moe_cache *c, const float *x, const tw_moe_weights *W,
                    const tw_moe_config *cfg, int T) {
    const tw_router_config *r = &cfg->router;
    const int E = r->E, k = r->k, C = cfg->C, F = cfg->F, Fs = cfg->F_shared;
    assert(T >= 1 && T <= c->T_max);
    // 1. route: logits, scores, the choice, the gate weights
    tw_linear_forward(c->logits, x, W->router, NULL, T, C, E);
    tw_router_scores(c->probs, c->logits, T, r);
    tw_router_select(c->sel, c->probs, W->bias, T, r);
    tw_router_gates(c->w, c->probs, c->sel, T, r);
    // 2. each expert once, on the rows routed to it (an expert nobody chose costs nothing)
    group_by_expert(c, x, cfg, T);
    for (int e = 0; e < E; e++) {
        const int n = c->count[e];
        if (n == 0) continue;
        const long o = c->start[e];
        tw_swiglu_forward(c->eo + o * C, c->g + o * F, c->u + o * F, c->a + o * F, c->xs + o * C,
                          tw_weight_fp32(W->gate + (long)e * F * C),
                          tw_weight_fp32(W->up + (long)e * F * C),
                          tw_weight_fp32(W->down + (long)e * C * F), n, C, F);
    }
    // 3. combine: y_t = sum_j w_tj eo[row_tj], starting from the first term (so that E = k = 1
    // gives the expert's output bit for bit, -0.0 included), then the shared expert
    for (int t = 0; t < T; t++) {
        float *yt = y + (long)t * C;
        for (int j = 0; j < k; j++) {
            const float wj = c->w[t * k + j];
            const float *et = c->eo + (long)c->row[t * k + j] * C;
            for (int i = 0; i < C; i++) yt[i] = j == 0 ? wj * et[i] : yt[i] + wj * et[i];
        }
    }
    if (Fs > 0) {
        tw_swiglu_forward(c->so, c->sg, c->su, c->sa, x, tw_weight_fp32(W->s_gate),
                          tw_weight_fp32(W->s_up), tw_weight_fp32(W->s_down), T, C, Fs);
        for (long i = 0; i < (long)T * C; i++) y[i] += c->so[i];
    }
}

void tw_moe_backward(float *dx, const tw_moe_grads *dW, tw_moe_cache *c, const float *dy,
                     const float *x, const tw_moe_weights *W, const tw_moe_config *cfg, int T,
                     float aux_coef) {
    const tw_router_config *r = &cfg->router;
    const int E = r->E, k = r->k, C = cfg->C, F = cfg->F, Fs = cfg->F_shared;
    assert(T >= 1 && T <= c->T_max);
    // 3'. combine: dw_tj = <dy_t, eo[row_tj]>,  d eo[row_tj] = w_tj dy_t
    for (int t = 0; t < T; t++)
        for (int j = 0; j < k; j++) {
            const long rr = c->row[t * k + j];
            const float *dyt = dy + (long)t * C, *et = c->eo + rr * C;
            float *de = c->deo + rr * C, s = 0.0f;
            for (int i = 0; i < C; i++) { s += dyt[i] * et[i]; de[i] = c->w[t * k + j] * dyt[i]; }
            c->dw[t * k + j] = s;
        }
    if (Fs > 0)
        tw_swiglu_backward(dx, dW->s_gate, dW->s_up, dW->s_down, c->dg, c->du, dy, c->sg, c->su,
                           c->sa, x, W->s_gate, W->s_up, W->s_down, T, C, Fs);
    // 2'. each expert's backward on its rows; the grouped input gradients go back to their tokens
    memset(c->dxs, 0, (size_t)T * k * C * sizeof(float));
    for (int e = 0; e < E; e++) {
        const int n = c->count[e];
        if (n == 0) continue;
        const long o = c->start[e];
        tw_swiglu_backward(c->dxs + o * C, dW->gate + (long)e * F * C, dW->up + (long)e * F * C,
                           dW->down + (long)e * C * F, c->dg, c->du, c->deo + o * C,
                           c->g + o * F, c->u + o * F, c->a + o * F, c->xs + o * C,
                           W->gate + (long)e * F * C, W->up + (long)e * F * C,
                           W->down + (long)e * C * F, n, C, F);
    }
    if (dx)
        for (long rr = 0; rr < (long)T * k; rr++)
            for (int i = 0; i < C; i++) dx[(long)c->tok[rr] * C + i] += c->dxs[rr * C + i];
    // 1'. the router: gate weights and aux loss to logits, then the router Linear
    tw_router_backward(c->dlogits, c->dw, c->probs, c->sel, T, r, aux_coef);
    tw_linear_backward(dx, dW->router, NULL, c->dlogits, x, W->router, T, C, E);
}

long long tw_moe_params_total(const tw_moe_config *cfg) {
    const long long C = cfg->C, E = cfg->router.E;
    return E * C + E * 3 * C * cfg->F + 3 * C * cfg->F_shared;
}

long long tw_moe_params_active(const tw_moe_config *cfg) {
    const long long C = cfg->C, E = cfg->router.E, k = cfg->router.k;
    return E * C + k * 3 * C * cfg->F + 3 * C * cfg->F_shared;
}
