// test_moe.c: the mixture-of-experts layer (lib/nn/router.c, lib/nn/moe.c): forward and backward
// against float64 PyTorch goldens (data/golden/moe/, from tests/golden/gen_moe.py), the backward
// against finite differences of a double forward written here, the dense limit E = k = 1 against
// tw_swiglu_forward bit for bit, the tie rule, and the configs the layer refuses.
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"
#include "grad_check.h"
#include "fd_central.h"

static const char *const MOE_CASES[] = {
    "mixtral", "qwen2_shared", "T1_C1", "E1", "k_eq_E", "k_eq_E_nonorm", "ties", "ties_k1",
    "deepseek", "deepseek_ties", "sigmoid_plain",
};

// A layer's config, weights and their gradients, in one allocation per tensor.
typedef struct {
    tw_moe_config cfg;
    int T;
    float aux_coef;
    float *x, *router, *bias, *gate, *up, *down, *s_gate, *s_up, *s_down;
    float *d_x, *d_router, *d_gate, *d_up, *d_down, *d_s_gate, *d_s_up, *d_s_down;
} moe_case;

static tw_moe_weights weights_of(const moe_case *m) {
    return (tw_moe_weights){ m->router, m->bias, m->gate, m->up, m->down,
                             m->s_gate, m->s_up, m->s_down };
}

static tw_moe_grads grads_of(const moe_case *m) {
    return (tw_moe_grads){ m->d_router, m->d_gate, m->d_up, m->d_down,
                           m->d_s_gate, m->d_s_up, m->d_s_down };
}

static void alloc_grads(moe_case *m) {
    const long C = m->cfg.C, E = m->cfg.router.E, F = m->cfg.F, Fs = m->cfg.F_shared;
    m->d_x = tt_zeros((long)m->T * C); m->d_router = tt_zeros(E * C);
    m->d_gate = tt_zeros(E * F * C); m->d_up = tt_zeros(E * F * C); m->d_down = tt_zeros(E * C * F);
    m->d_s_gate = Fs ? tt_zeros(Fs * C) : NULL; m->d_s_up = Fs ? tt_zeros(Fs * C) : NULL;
    m->d_s_down = Fs ? tt_zeros(C * Fs) : NULL;
}

static void free_case(moe_case *m) {
    float *all[] = { m->x, m->router, m->bias, m->gate, m->up, m->down, m->s_gate, m->s_up,
                     m->s_down, m->d_x, m->d_router, m->d_gate, m->d_up, m->d_down, m->d_s_gate,
                     m->d_s_up, m->d_s_down };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

static moe_case load_case(const char *dir) {
    moe_case m;
    memset(&m, 0, sizeof m);
    int *c = gc_load_i32(dir, "cfg", 11);
    float *fc = gc_load(dir, "fcfg", 2);
    m.T = c[0];
    m.cfg = (tw_moe_config){ .router = { .E = c[2], .k = c[3], .score = (tw_router_score)c[6],
                                         .norm_topk = c[7], .scale = fc[0], .n_group = c[8],
                                         .topk_group = c[9] },
                             .C = c[1], .F = c[4], .F_shared = c[5] };
    m.aux_coef = fc[1];
    const long T = m.T, C = c[1], E = c[2], F = c[4], Fs = c[5];
    m.x = gc_load(dir, "x", T * C); m.router = gc_load(dir, "router", E * C);
    m.bias = c[10] ? gc_load(dir, "bias", E) : NULL;
    m.gate = gc_load(dir, "gate", E * F * C); m.up = gc_load(dir, "up", E * F * C);
    m.down = gc_load(dir, "down", E * C * F);
    if (Fs) {
        m.s_gate = gc_load(dir, "s_gate", Fs * C); m.s_up = gc_load(dir, "s_up", Fs * C);
        m.s_down = gc_load(dir, "s_down", C * Fs);
    }
    free(c); free(fc);
    return m;
}

START_TEST(moe_matches_torch_float64)
{
    char dir[64];
    snprintf(dir, sizeof dir, "moe/%s", MOE_CASES[_i]);
    moe_case m = load_case(dir);
    const long T = m.T, C = m.cfg.C, E = m.cfg.router.E, k = m.cfg.router.k;
    const long F = m.cfg.F, Fs = m.cfg.F_shared;
    tw_moe_cache cache;
    ck_assert_int_eq(tw_moe_cache_init(&cache, &m.cfg, m.T), TW_OK);
    const tw_moe_weights W = weights_of(&m);
    float *y = tt_zeros(T * C);
    tw_moe_forward(y, &cache, m.x, &W, &m.cfg, m.T);

    // The choice is exact: the generator drew inputs whose choices are 1e-4 or more from
    // changing, or exact ties (decided by the lower index on both sides).
    int *sel = gc_load_i32(dir, "sel", T * k);
    for (long i = 0; i < T * k; i++)
        ck_assert_msg(cache.sel[i] == sel[i], "%s: sel[%ld] = %d, torch chose %d",
                      MOE_CASES[_i], i, cache.sel[i], sel[i]);
    // Tolerance 2e-6 abs + 2e-5 rel, that of the SwiGLU FFN (test_ffn.c): each expert is that
    // computation, and the router adds one float32 product of C <= 8 terms and a softmax or
    // sigmoid (a few ulp); the gate weighting and the sum of k <= 4 outputs add k roundings
    // (measured worst: 1.9e-6 abs on outputs up to 8.7, deepseek; 1.5e-6 on 12.1, mixtral).
    float *probs = gc_load(dir, "probs", T * E), *w = gc_load(dir, "w", T * k);
    float *want = gc_load(dir, "y", T * C), *aux = gc_load(dir, "aux", 1);
    ck_assert_allclose(cache.probs, probs, T * E, 2e-6, 2e-5);
    ck_assert_allclose(cache.w, w, T * k, 2e-6, 2e-5);
    ck_assert_allclose(y, want, T * C, 2e-6, 2e-5);
    float got_aux = tw_router_aux_loss(cache.probs, cache.sel, m.T, &m.cfg.router);
    ck_assert_allclose(&got_aux, aux, 1, 2e-6, 2e-5);

    // Backward: the metric of grad_check.h with rel 5e-5, REL_CHAIN of the FFN gradients
    // (test_grad_golden.c), since an expert's backward is that chain and the router's adds a
    // softmax backward of E <= 8 terms.
    alloc_grads(&m);
    float *dy = gc_load(dir, "dy", T * C);
    const tw_moe_grads dW = grads_of(&m);
    tw_moe_backward(m.d_x, &dW, &cache, dy, m.x, &W, &m.cfg, m.T, m.aux_coef);
    struct { const char *name; const float *got; long n; } g[] = {
        { "x", m.d_x, T * C }, { "router", m.d_router, E * C }, { "gate", m.d_gate, E * F * C },
        { "up", m.d_up, E * F * C }, { "down", m.d_down, E * C * F },
        { "s_gate", m.d_s_gate, Fs * C }, { "s_up", m.d_s_up, Fs * C },
        { "s_down", m.d_s_down, C * Fs },
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        if (g[i].n == 0) continue;
        char name[32], label[96];
        snprintf(name, sizeof name, "d_%s", g[i].name);
        snprintf(label, sizeof label, "moe %s %s", MOE_CASES[_i], name);
        float *want_g = gc_load(dir, name, g[i].n);
        ck_assert_grad(label, g[i].got, want_g, g[i].n, 5e-5, 0.0);
        free(want_g);
    }
    free(sel); free(probs); free(w); free(want); free(aux); free(y); free(dy);
    tw_moe_cache_free(&cache);
    free_case(&m);
}
END_TEST

// ---- finite differences of a double forward with the choice held fixed ----

static double silu_d(double v) { return v / (1.0 + exp(-v)); }

// y (T, C) of the layer in double, for the choice sel (T, k) the float forward made.
static void ref_forward(double *y, double *aux, const moe_case *m, const int *sel,
                        double *const p[9]) {
    const int T = m->T, C = m->cfg.C, E = m->cfg.router.E, k = m->cfg.router.k;
    const int F = m->cfg.F, Fs = m->cfg.F_shared;
    const double *x = p[0], *R = p[1], *G = p[2], *U = p[3], *D = p[4];
    double *probs = malloc((size_t)T * E * sizeof(double)), h[64];
    for (int t = 0; t < T; t++) {
        double *pr = probs + (long)t * E, mx = -1e300, s = 0.0;
        for (int e = 0; e < E; e++) {
            double l = 0.0;
            for (int c = 0; c < C; c++) l += x[t * C + c] * R[e * C + c];
            pr[e] = l;
            if (l > mx) mx = l;
        }
        for (int e = 0; e < E; e++) {
            if (m->cfg.router.score == TW_ROUTER_SOFTMAX) { pr[e] = exp(pr[e] - mx); s += pr[e]; }
            else pr[e] = 1.0 / (1.0 + exp(-pr[e]));
        }
        if (m->cfg.router.score == TW_ROUTER_SOFTMAX)
            for (int e = 0; e < E; e++) pr[e] /= s;
        double S = 0.0;
        for (int j = 0; j < k; j++) S += pr[sel[t * k + j]];
        for (int c = 0; c < C; c++) y[t * C + c] = 0.0;
        for (int j = 0; j < k; j++) {
            const int e = sel[t * k + j];
            const double w = m->cfg.router.scale * pr[e] / (m->cfg.router.norm_topk ? S : 1.0);
            for (int f = 0; f < F; f++) {
                double a = 0.0, b = 0.0;
                for (int c = 0; c < C; c++) {
                    a += x[t * C + c] * G[((long)e * F + f) * C + c];
                    b += x[t * C + c] * U[((long)e * F + f) * C + c];
                }
                h[f] = silu_d(a) * b;
            }
            for (int c = 0; c < C; c++) {
                double o = 0.0;
                for (int f = 0; f < F; f++) o += D[((long)e * C + c) * F + f] * h[f];
                y[t * C + c] += w * o;
            }
        }
        for (int f = 0; f < Fs; f++) {
            double a = 0.0, b = 0.0;
            for (int c = 0; c < C; c++) { a += x[t * C + c] * p[5][f * C + c]; b += x[t * C + c] * p[6][f * C + c]; }
            h[f] = silu_d(a) * b;
        }
        for (int c = 0; c < C && Fs > 0; c++)
            for (int f = 0; f < Fs; f++) y[t * C + c] += p[7][c * Fs + f] * h[f];
    }
    *aux = 0.0;
    for (int e = 0; e < E; e++) {
        int cnt = 0;
        double P = 0.0;
        for (int i = 0; i < T * k; i++) cnt += sel[i] == e;
        for (int t = 0; t < T; t++) P += probs[(long)t * E + e];
        *aux += E * ((double)cnt / (T * k)) * (P / T);
    }
    free(probs);
}

// Draws a random layer: T C E k F Fs score norm n_group topk_group bias scale aux_coef
static moe_case random_case(const int *s, float scale, float aux_coef, uint64_t seed) {
    moe_case m;
    memset(&m, 0, sizeof m);
    m.T = s[0];
    m.cfg = (tw_moe_config){ .router = { .E = s[2], .k = s[3], .score = (tw_router_score)s[6],
                                         .norm_topk = s[7], .scale = scale, .n_group = s[8],
                                         .topk_group = s[9] },
                             .C = s[1], .F = s[4], .F_shared = s[5] };
    m.aux_coef = aux_coef;
    const long T = s[0], C = s[1], E = s[2], F = s[4], Fs = s[5];
    m.x = tt_rand(T * C, -2, 2, seed); m.router = tt_rand(E * C, -1.5f, 1.5f, seed + 1);
    m.bias = s[10] ? tt_rand(E, -0.3f, 0.3f, seed + 2) : NULL;
    m.gate = tt_rand(E * F * C, -1, 1, seed + 3); m.up = tt_rand(E * F * C, -1, 1, seed + 4);
    m.down = tt_rand(E * C * F, -1, 1, seed + 5);
    if (Fs) {
        m.s_gate = tt_rand(Fs * C, -1, 1, seed + 6); m.s_up = tt_rand(Fs * C, -1, 1, seed + 7);
        m.s_down = tt_rand(C * Fs, -1, 1, seed + 8);
    }
    return m;
}

// L = <r, y> + aux_coef aux in double, y and aux of ref_forward at the tensors p with the choice
// sel held fixed.
typedef struct { const moe_case *m; const int *sel; const float *r; double *y; } moe_objective;

static double moe_loss(double *const p[], void *ctx) {
    const moe_objective *o = ctx;
    double aux;
    ref_forward(o->y, &aux, o->m, o->sel, p);
    double L = o->m->aux_coef * aux;
    for (long q = 0; q < (long)o->m->T * o->m->cfg.C; q++) L += o->r[q] * o->y[q];
    return L;
}

static const int FD_CASES[][11] = {
    { 5, 6, 4, 2, 7, 0, 0, 1, 1, 1, 0 },   // Mixtral-like
    { 3, 5, 5, 3, 3, 4, 0, 0, 1, 1, 0 },   // no renormalisation, shared expert
    { 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0 },   // everything 1
    { 4, 3, 3, 3, 2, 0, 0, 1, 1, 1, 0 },   // k = E
    { 6, 7, 8, 3, 3, 5, 1, 1, 4, 2, 1 },   // DeepSeek-V3-like, odd C
};

START_TEST(moe_backward_matches_finite_differences)
{
    const int *s = FD_CASES[_i];
    moe_case m = random_case(s, s[6] ? 2.5f : 1.0f, 0.1f, 100 + 10 * (uint64_t)_i);
    const long T = m.T, C = m.cfg.C, E = m.cfg.router.E, F = m.cfg.F, Fs = m.cfg.F_shared;
    tw_moe_cache cache;
    ck_assert_int_eq(tw_moe_cache_init(&cache, &m.cfg, m.T), TW_OK);
    const tw_moe_weights W = weights_of(&m);
    float *y = tt_zeros(T * C), *r = tt_rand(T * C, -1, 1, 7);
    tw_moe_forward(y, &cache, m.x, &W, &m.cfg, m.T);
    alloc_grads(&m);
    const tw_moe_grads dW = grads_of(&m);
    tw_moe_backward(m.d_x, &dW, &cache, r, m.x, &W, &m.cfg, m.T, m.aux_coef);

    float *in[8] = { m.x, m.router, m.gate, m.up, m.down, m.s_gate, m.s_up, m.s_down };
    float *grad[8] = { m.d_x, m.d_router, m.d_gate, m.d_up, m.d_down, m.d_s_gate, m.d_s_up,
                       m.d_s_down };
    const long n[8] = { T * C, E * C, E * F * C, E * F * C, E * C * F, Fs * C, Fs * C, C * Fs };
    double *p[9] = { 0 };
    for (int j = 0; j < 8; j++) p[j] = fd_to_double(in[j], n[j]);
    // L = <r, y> + aux_coef aux in double (fd_central.h: errors ~1e-10), so what is measured is
    // the float backward's own error: rel 5e-5 of grad_check.h, as for the FFN chain there.
    moe_objective o = { &m, cache.sel, r, malloc((size_t)T * C * sizeof(double)) };
    float *want[8];
    const double scale = fd_central_grads(want, p, n, 8, moe_loss, &o);
    for (int j = 0; j < 8; j++) {
        char label[64];
        snprintf(label, sizeof label, "moe fd case %d tensor %d", _i, j);
        if (n[j] > 0) ck_assert_grad(label, grad[j], want[j], n[j], 5e-5, scale);
        free(want[j]); free(p[j]);
    }
    free(o.y); free(y); free(r);
    tw_moe_cache_free(&cache);
    free_case(&m);
}
END_TEST

START_TEST(moe_one_expert_is_swiglu_bit_for_bit)
{
    // E = 1, k = 1, no shared expert: the router's one probability is exactly 1 (softmax of one
    // logit; renormalised or not), so the layer must be tw_swiglu_forward exactly: tolerance 0,
    // compared as bytes.
    const int T = 7, C = 5, F = 9;
    for (int norm = 0; norm <= 1; norm++) {
        moe_case m = random_case((const int[11]){ T, C, 1, 1, F, 0, 0, norm, 1, 1, 0 }, 1.0f,
                                 0.0f, 40 + (uint64_t)norm);
        tw_moe_cache cache;
        ck_assert_int_eq(tw_moe_cache_init(&cache, &m.cfg, T), TW_OK);
        const tw_moe_weights W = weights_of(&m);
        float *y = tt_zeros(T * C), *want = tt_zeros(T * C), *h = tt_zeros(3L * T * F);
        tw_moe_forward(y, &cache, m.x, &W, &m.cfg, T);
        tw_swiglu_forward(want, h, h + T * F, h + 2 * T * F, m.x, tw_weight_fp32(m.gate),
                          tw_weight_fp32(m.up), tw_weight_fp32(m.down), T, C, F);
        ck_assert_msg(memcmp(y, want, (size_t)T * C * sizeof(float)) == 0,
                      "E = k = 1 (norm_topk %d) differs from SwiGLU", norm);
        free(y); free(want); free(h);
        tw_moe_cache_free(&cache);
        free_case(&m);
    }
}
END_TEST

START_TEST(router_ties_go_to_the_lower_index)
{
    // Scores with ties at every step; the wrong rule (last of the equals, or an unstable sort)
    // chooses 3 before 1, or group 2 before group 0.
    const float probs[6] = { 0.1f, 0.3f, 0.2f, 0.3f, 0.1f, 0.0f };
    int sel[3];
    tw_router_config r = { .E = 6, .k = 3, .score = TW_ROUTER_SOFTMAX, .norm_topk = 1,
                           .scale = 1.0f, .n_group = 1, .topk_group = 1 };
    tw_router_select(sel, probs, NULL, 1, &r);
    ck_assert_int_eq(sel[0], 1); ck_assert_int_eq(sel[1], 3); ck_assert_int_eq(sel[2], 2);
    // Groups {0,1} {2,3} {4,5} score 0.4, 0.5, 0.1: with one group allowed only {2,3} remains.
    r.k = 2; r.n_group = 3; r.topk_group = 1;
    tw_router_select(sel, probs, NULL, 1, &r);
    ck_assert_int_eq(sel[0], 3); ck_assert_int_eq(sel[1], 2);
    // A bias changes the choice but not the weights: expert 4 chosen, weighted by its 0.1.
    const float bias[6] = { 0, 0, 0, 0, 1.0f, 0 };
    float w[2];
    r.n_group = 1; r.topk_group = 1; r.norm_topk = 0;
    tw_router_select(sel, probs, bias, 1, &r);
    tw_router_gates(w, probs, sel, 1, &r);
    ck_assert_int_eq(sel[0], 4); ck_assert_int_eq(sel[1], 1);
    ck_assert_float_eq(w[0], 0.1f); ck_assert_float_eq(w[1], 0.3f);
}
END_TEST

START_TEST(moe_refuses_configs_that_cannot_route)
{
    tw_moe_config ok = { .router = { .E = 8, .k = 2, .score = TW_ROUTER_SIGMOID, .norm_topk = 1,
                                     .scale = 1.0f, .n_group = 4, .topk_group = 1 },
                         .C = 4, .F = 3, .F_shared = 0 };
    ck_assert_int_eq(tw_moe_check_config(&ok), TW_OK);
    tw_moe_config bad = ok; bad.router.k = 0;          ck_assert_int_eq(tw_moe_check_config(&bad), TW_ERR_ARG);
    bad = ok; bad.router.k = 9;                        ck_assert_int_eq(tw_moe_check_config(&bad), TW_ERR_ARG);
    bad = ok; bad.router.n_group = 3;                  ck_assert_int_eq(tw_moe_check_config(&bad), TW_ERR_ARG);
    bad = ok; bad.router.k = 3;                        ck_assert_int_eq(tw_moe_check_config(&bad), TW_ERR_ARG);
    bad = ok; bad.router.topk_group = 5;               ck_assert_int_eq(tw_moe_check_config(&bad), TW_ERR_ARG);
    tw_moe_cache c;
    ck_assert_int_eq(tw_moe_cache_init(&c, &bad, 4), TW_ERR_ARG);
    tw_moe_cache_free(&c);
}
END_TEST

Suite *suite_moe(void) {
    Suite *s = suite_create("moe");
    TCase *tc = tcase_create("moe");
    tcase_add_loop_test(tc, moe_matches_torch_float64, 0,
                        (int)(sizeof MOE_CASES / sizeof MOE_CASES[0]));
    tcase_add_loop_test(tc, moe_backward_matches_finite_differences, 0,
                        (int)(sizeof FD_CASES / sizeof FD_CASES[0]));
    tcase_add_test(tc, moe_one_expert_is_swiglu_bit_for_bit);
    tcase_add_test(tc, router_ties_go_to_the_lower_index);
    tcase_add_test(tc, moe_refuses_configs_that_cannot_route);
    suite_add_tcase(s, tc);
    return s;
}
