// test_mla.c: multi-head latent attention (lib/nn/mla.c): the training form's forward and
// backward against float64 PyTorch goldens (data/golden/mla/, tests/golden/gen_mla.py), the
// backward against finite differences of a double forward written here, and the absorbed
// decoding form over the latent cache against the expanded form.
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"
#include "grad_check.h"
#include "fd_central.h"

static const char *const MLA_CASES[] = { "small", "T1", "one_head", "wide" };

enum { N_W = 7 };   // q_a, q_a_norm, q_b, kv_a, kv_a_norm, kv_b, o
static const char *const W_NAMES[N_W] = { "q_a", "q_a_norm", "q_b", "kv_a", "kv_a_norm", "kv_b", "o" };

typedef struct {
    tw_mla_config g;
    int T;
    float *x, *w[N_W], *dx, *dw[N_W];
} mla_case;

static long w_count(const tw_mla_config *g, int i) {
    const long C = g->C, H = g->H, rq = g->q_rank, rkv = g->kv_rank;
    const long dn = g->d_nope, dr = g->d_rope, dv = g->d_v;
    const long n[N_W] = { rq * C, rq, H * (dn + dr) * rq, (rkv + dr) * C, rkv, H * (dn + dv) * rkv,
                          C * H * dv };
    return n[i];
}

static tw_mla_weights weights_of(const mla_case *m) {
    return (tw_mla_weights){ m->w[0], m->w[1], m->w[2], m->w[3], m->w[4], m->w[5], m->w[6] };
}
static tw_mla_grads grads_of(const mla_case *m) {
    return (tw_mla_grads){ m->dw[0], m->dw[1], m->dw[2], m->dw[3], m->dw[4], m->dw[5], m->dw[6] };
}

static void alloc_grads(mla_case *m) {
    m->dx = tt_zeros((long)m->T * m->g.C);
    for (int i = 0; i < N_W; i++) m->dw[i] = tt_zeros(w_count(&m->g, i));
}

static void free_case(mla_case *m) {
    free(m->x); free(m->dx);
    for (int i = 0; i < N_W; i++) { free(m->w[i]); free(m->dw[i]); }
}

static mla_case load_case(const char *dir) {
    mla_case m;
    memset(&m, 0, sizeof m);
    int *c = gc_load_i32(dir, "cfg", 8);
    float *f = gc_load(dir, "fcfg", 2);
    m.T = c[0];
    m.g = (tw_mla_config){ .C = c[1], .H = c[2], .q_rank = c[3], .kv_rank = c[4], .d_nope = c[5],
                           .d_rope = c[6], .d_v = c[7], .eps = f[0], .theta = f[1] };
    m.x = gc_load(dir, "x", (long)m.T * m.g.C);
    for (int i = 0; i < N_W; i++) m.w[i] = gc_load(dir, W_NAMES[i], w_count(&m.g, i));
    free(c); free(f);
    return m;
}

START_TEST(mla_matches_torch_float64)
{
    char dir[64];
    snprintf(dir, sizeof dir, "mla/%s", MLA_CASES[_i]);
    mla_case m = load_case(dir);
    const long T = m.T, C = m.g.C;
    tw_mla_cache cache;
    ck_assert_int_eq(tw_mla_cache_init(&cache, &m.g, m.T), TW_OK);
    const tw_mla_weights W = weights_of(&m);
    float *y = tt_zeros(T * C);
    tw_mla_forward(y, &cache, m.x, &W, &m.g, m.T);
    // Tolerance 2e-6 abs + 2e-5 rel, that of attention and MHA in test_mha.c: a chain of float32
    // products over widths <= 16, two RMSNorms (reductions in double) and a softmax of <= 9
    // scores, inputs of order 1-2 (measured worst 9.5e-7 abs, on |y| <= 5.2).
    float *want = gc_load(dir, "y", T * C), *c = gc_load(dir, "c", T * m.g.kv_rank);
    float *kp = gc_load(dir, "kp", T * m.g.d_rope);
    ck_assert_allclose(cache.c, c, T * m.g.kv_rank, 2e-6, 2e-5);
    ck_assert_allclose(cache.kp, kp, T * m.g.d_rope, 2e-6, 2e-5);
    ck_assert_allclose(y, want, T * C, 2e-6, 2e-5);

    // Backward: rel 5e-5 of grad_check.h, REL_CHAIN of MHA's gradients (test_grad_golden.c),
    // with the case's largest gradient as the scale: with q_rank or kv_rank 1 (one_head) the
    // norm's input gradient vanishes in exact arithmetic but is summed from non-zero terms.
    alloc_grads(&m);
    float *dy = gc_load(dir, "dy", T * C);
    const tw_mla_grads dW = grads_of(&m);
    tw_mla_backward(m.dx, &dW, &cache, dy, m.x, &W, &m.g, m.T);
    float *want_g[N_W + 1];
    double scale = 0.0;
    want_g[N_W] = gc_load(dir, "d_x", T * C);
    for (int i = 0; i < N_W; i++) {
        char name[32];
        snprintf(name, sizeof name, "d_%s", W_NAMES[i]);
        want_g[i] = gc_load(dir, name, w_count(&m.g, i));
        scale = fmax(scale, gc_maxabs(want_g[i], w_count(&m.g, i)));
    }
    scale = fmax(scale, gc_maxabs(want_g[N_W], T * C));
    char label[96];
    snprintf(label, sizeof label, "mla %s d_x", MLA_CASES[_i]);
    ck_assert_grad(label, m.dx, want_g[N_W], T * C, 5e-5, scale);
    for (int i = 0; i < N_W; i++) {
        snprintf(label, sizeof label, "mla %s d_%s", MLA_CASES[_i], W_NAMES[i]);
        ck_assert_grad(label, m.dw[i], want_g[i], w_count(&m.g, i), 5e-5, scale);
    }
    for (int i = 0; i <= N_W; i++) free(want_g[i]);
    free(y); free(want); free(c); free(kp); free(dy);
    tw_mla_cache_free(&cache);
    free_case(&m);
}
END_TEST

// ---- finite differences of a double forward ----

static void ref_rmsnorm(double *y, const double *x, const double *w, int n, double eps) {
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    const double r = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) y[i] = x[i] * r * w[i];
}

static void ref_rope(double *x, int d, int pos, double theta) {
    for (int i = 0; i < d / 2; i++) {
        const double a = pos * pow(theta, -2.0 * i / d), c = cos(a), s = sin(a);
        const double u = x[2 * i], v = x[2 * i + 1];
        x[2 * i] = u * c - v * s;
        x[2 * i + 1] = u * s + v * c;
    }
}

static void ref_matvec(double *y, const double *W, const double *x, int out, int in) {
    for (int o = 0; o < out; o++) {
        double s = 0.0;
        for (int i = 0; i < in; i++) s += W[(long)o * in + i] * x[i];
        y[o] = s;
    }
}

// y (T, C) of MLA in double from p[0] = x and p[1..7] = the weights.
static void ref_mla(double *y, const tw_mla_config *g, int T, double *const p[N_W + 1]) {
    const int C = g->C, H = g->H, rq = g->q_rank, rkv = g->kv_rank;
    const int dn = g->d_nope, dr = g->d_rope, dv = g->d_v, dq = dn + dr, dkv = dn + dv;
    double *q = malloc(sizeof(double) * T * H * dq), *kv = malloc(sizeof(double) * T * H * dkv);
    double *kp = malloc(sizeof(double) * T * dr), *o = malloc(sizeof(double) * H * dv);
    double t1[64], t2[64], sc[64];
    for (int t = 0; t < T; t++) {
        const double *x = p[0] + (long)t * C;
        ref_matvec(t1, p[1], x, rq, C);
        ref_rmsnorm(t2, t1, p[2], rq, g->eps);
        ref_matvec(q + (long)t * H * dq, p[3], t2, H * dq, rq);
        for (int h = 0; h < H; h++) ref_rope(q + ((long)t * H + h) * dq + dn, dr, t, g->theta);
        ref_matvec(t1, p[4], x, rkv + dr, C);
        ref_rmsnorm(t2, t1, p[5], rkv, g->eps);
        for (int i = 0; i < dr; i++) kp[t * dr + i] = t1[rkv + i];
        ref_rope(kp + t * dr, dr, t, g->theta);
        ref_matvec(kv + (long)t * H * dkv, p[6], t2, H * dkv, rkv);
    }
    for (int t = 0; t < T; t++) {
        for (int h = 0; h < H; h++) {
            const double *qt = q + ((long)t * H + h) * dq;
            double mx = -1e300, sum = 0.0;
            for (int s = 0; s <= t; s++) {
                const double *ks = kv + ((long)s * H + h) * dkv;
                double d = 0.0;
                for (int i = 0; i < dn; i++) d += qt[i] * ks[i];
                for (int i = 0; i < dr; i++) d += qt[dn + i] * kp[s * dr + i];
                sc[s] = d / sqrt((double)dq);
                if (sc[s] > mx) mx = sc[s];
            }
            for (int s = 0; s <= t; s++) { sc[s] = exp(sc[s] - mx); sum += sc[s]; }
            for (int i = 0; i < dv; i++) {
                double a = 0.0;
                for (int s = 0; s <= t; s++) a += sc[s] / sum * kv[((long)s * H + h) * dkv + dn + i];
                o[h * dv + i] = a;
            }
        }
        ref_matvec(y + (long)t * C, p[7], o, C, H * dv);
    }
    free(q); free(kv); free(kp); free(o);
}

// L = <r, y> in double, y of ref_mla at the tensors p.
typedef struct { const tw_mla_config *g; int T; const float *r; double *y; } mla_objective;

static double mla_loss(double *const p[], void *ctx) {
    const mla_objective *o = ctx;
    ref_mla(o->y, o->g, o->T, p);
    double L = 0.0;
    for (long q = 0; q < (long)o->T * o->g->C; q++) L += o->r[q] * o->y[q];
    return L;
}

static const int FD_CASES[][8] = {   // T C H q_rank kv_rank d_nope d_rope d_v
    { 4, 5, 2, 3, 3, 2, 2, 3 },
    { 1, 3, 1, 2, 2, 1, 2, 1 },
    { 5, 6, 3, 4, 5, 3, 4, 2 },
};

START_TEST(mla_backward_matches_finite_differences)
{
    const int *s = FD_CASES[_i];
    mla_case m;
    memset(&m, 0, sizeof m);
    m.T = s[0];
    m.g = (tw_mla_config){ .C = s[1], .H = s[2], .q_rank = s[3], .kv_rank = s[4], .d_nope = s[5],
                           .d_rope = s[6], .d_v = s[7], .eps = 1e-6f, .theta = 100.0f };
    const long T = m.T, C = m.g.C;
    m.x = tt_rand(T * C, -2, 2, 300 + (uint64_t)_i);
    for (int i = 0; i < N_W; i++) m.w[i] = tt_rand(w_count(&m.g, i), -1, 1, 310 + 10 * (uint64_t)_i + i);
    tw_mla_cache cache;
    ck_assert_int_eq(tw_mla_cache_init(&cache, &m.g, m.T), TW_OK);
    const tw_mla_weights W = weights_of(&m);
    float *y = tt_zeros(T * C), *r = tt_rand(T * C, -1, 1, 9);
    tw_mla_forward(y, &cache, m.x, &W, &m.g, m.T);
    alloc_grads(&m);
    const tw_mla_grads dW = grads_of(&m);
    tw_mla_backward(m.dx, &dW, &cache, r, m.x, &W, &m.g, m.T);

    float *in[N_W + 1] = { m.x, m.w[0], m.w[1], m.w[2], m.w[3], m.w[4], m.w[5], m.w[6] };
    float *got[N_W + 1] = { m.dx, m.dw[0], m.dw[1], m.dw[2], m.dw[3], m.dw[4], m.dw[5], m.dw[6] };
    long n[N_W + 1];
    n[0] = T * C;
    for (int i = 0; i < N_W; i++) n[i + 1] = w_count(&m.g, i);
    double *p[N_W + 1];
    for (int j = 0; j <= N_W; j++) p[j] = fd_to_double(in[j], n[j]);
    // L = <r, y> in double (fd_central.h: errors ~1e-10), so what is measured is the float
    // backward's error: rel 5e-5.
    mla_objective o = { &m.g, m.T, r, malloc(sizeof(double) * T * C) };
    float *want[N_W + 1];
    const double scale = fd_central_grads(want, p, n, N_W + 1, mla_loss, &o);
    for (int j = 0; j <= N_W; j++) {
        char label[64];
        snprintf(label, sizeof label, "mla fd case %d %s", _i, j ? W_NAMES[j - 1] : "x");
        ck_assert_grad(label, got[j], want[j], n[j], 5e-5, scale);
        free(want[j]); free(p[j]);
    }
    free(o.y); free(y); free(r);
    tw_mla_cache_free(&cache);
    free_case(&m);
}
END_TEST

START_TEST(mla_absorbed_decode_equals_the_expanded_form)
{
    // Token by token over the latent cache (kv_rank + d_rope numbers per token) against the
    // training form over the whole sequence. The two sum the same products in other orders
    // (W_kvb folded into the query and applied after the value mix), so they agree to float
    // rounding: bound 1e-5 abs + 1e-4 rel on outputs of order 1-5 (a few ulp of the ~30-term
    // sums at each of the four reassociated stages; measured worst 6.3e-7 abs, |y| <= 4.6).
    mla_case m = load_case("mla/wide");
    const int T = m.T, C = m.g.C;
    tw_mla_cache cache;
    ck_assert_int_eq(tw_mla_cache_init(&cache, &m.g, T), TW_OK);
    const tw_mla_weights W = weights_of(&m);
    float *y = tt_zeros((long)T * C), *yd = tt_zeros((long)T * C);
    tw_mla_forward(y, &cache, m.x, &W, &m.g, T);
    const int per = tw_mla_cache_per_token(&m.g);
    ck_assert_int_eq(per, m.g.kv_rank + m.g.d_rope);
    float *cc = tt_zeros((long)T * m.g.kv_rank), *kc = tt_zeros((long)T * m.g.d_rope);
    float *work = tt_zeros(tw_mla_decode_work_floats(&m.g, T));
    for (int t = 0; t < T; t++)
        tw_mla_decode_absorbed(yd + (long)t * C, cc, kc, work, m.x + (long)t * C, t, &W, &m.g);
    ck_assert_allclose(yd, y, (long)T * C, 1e-5, 1e-4);
    // the cache holds the forward's latent and rotated key (same operations: tolerance 1 ulp-ish)
    ck_assert_allclose(cc, cache.c, (long)T * m.g.kv_rank, 1e-6, 1e-6);
    ck_assert_allclose(kc, cache.kp, (long)T * m.g.d_rope, 1e-6, 1e-6);
    free(y); free(yd); free(cc); free(kc); free(work);
    tw_mla_cache_free(&cache);
    free_case(&m);
}
END_TEST

START_TEST(mla_refuses_an_odd_rope_width)
{
    tw_mla_config g = { .C = 4, .H = 2, .q_rank = 2, .kv_rank = 2, .d_nope = 2, .d_rope = 2,
                        .d_v = 2, .eps = 1e-6f, .theta = 10000.0f };
    ck_assert_int_eq(tw_mla_check_config(&g), TW_OK);
    g.d_rope = 3;
    ck_assert_int_eq(tw_mla_check_config(&g), TW_ERR_ARG);
    tw_mla_cache c;
    ck_assert_int_eq(tw_mla_cache_init(&c, &g, 4), TW_ERR_ARG);
    tw_mla_cache_free(&c);
}
END_TEST

Suite *suite_mla(void) {
    Suite *s = suite_create("mla");
    TCase *tc = tcase_create("mla");
    tcase_add_loop_test(tc, mla_matches_torch_float64, 0,
                        (int)(sizeof MLA_CASES / sizeof MLA_CASES[0]));
    tcase_add_loop_test(tc, mla_backward_matches_finite_differences, 0,
                        (int)(sizeof FD_CASES / sizeof FD_CASES[0]));
    tcase_add_test(tc, mla_absorbed_decode_equals_the_expanded_form);
    tcase_add_test(tc, mla_refuses_an_odd_rope_width);
    suite_add_tcase(s, tc);
    return s;
}
