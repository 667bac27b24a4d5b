// test_grad_fd.c: every _backward of lib/ against central finite differences of a double-precision
// reimplementation of its forward, written here from the formulas (no PyTorch, no golden file),
// so that a golden generator sharing a mistake with the library cannot hide it.
//
// Method. Inputs are random floats; the library runs its float forward and backward with the
// upstream gradient r. The scalar L = sum(r * f(inputs)) is then evaluated in double by the
// reference forward below, and each checked coordinate's derivative is estimated as
//     (L(p + h) - L(p - h)) / 2h,   h = 1e-5 * max(1, |p|).
// Error of the estimate: truncation h^2 |L'''| / 6 ~ 1e-11 and rounding 2^-53 |L| / h ~ 1e-11 |L|,
// both far below float precision, so the estimate is the exact derivative for our purposes and
// what is measured is the error of the float backward alone. Tolerances are therefore those of
// the golden tests (test_grad_golden.c), with the same metric (grad_check.h):
//   REL_OP = 1e-5 for one component, REL_CHAIN = 5e-5 for MHA and the FFNs; measured worst
//   (TW_GRAD_REPORT=1, relative to each tensor's largest entry, gradients that vanish in exact
//   arithmetic aside): 2.7e-7 (linear bias) and 5.6e-7 (the QK-norm gains).
// Coordinates checked: every one for tensors of up to 64 elements, else 64 spread evenly
// (including the first and the last).
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "grad_check.h"

#define REL_OP    1e-5
#define REL_CHAIN 5e-5
#define MAX_COORDS 64

static const int SIZES[] = { 1, 3, 7, 64, 65 };

// ---- the finite-difference harness ----

// A problem: a double forward y = f(inputs) of ny outputs, and the inputs it may be perturbed in.
typedef struct fd_problem fd_problem;
struct fd_problem {
    void (*forward)(const fd_problem *p, double *y);
    long ny;
    double *in[12];          // perturbable double inputs (copies of the float ones)
    long n_in[12];
    const char *name[12];
    const float *grad[12];   // the library's gradient of each input
    int n;
    const void *ctx;         // what forward needs besides the inputs
    double term_scale;       // size of the terms the gradients are summed from, where the
                             // gradients themselves can vanish (norms of width 1, V = 1); else 0
};

static double *to_double(const float *a, long n) {
    double *d = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    ck_assert(d != NULL);
    for (long i = 0; i < n; i++) d[i] = a[i];
    return d;
}

static void fd_add(fd_problem *p, const char *name, double *in, long n, const float *grad) {
    ck_assert(p->n < 12);
    p->name[p->n] = name; p->in[p->n] = in; p->n_in[p->n] = n; p->grad[p->n] = grad;
    p->n++;
}

static double fd_loss(const fd_problem *p, const float *r, double *y) {
    p->forward(p, y);
    double L = 0.0;
    for (long i = 0; i < p->ny; i++) L += (double)r[i] * y[i];
    return L;
}

// Checks every input's gradient; scale: the largest FD derivative over all inputs, or the
// problem's term scale if larger (grad_check.h).
static void fd_check(const char *what, const fd_problem *p, const float *r, double rel) {
    double *y = malloc((size_t)p->ny * sizeof(double));
    float *got[12], *want[12];
    long m[12];
    double scale = p->term_scale;
    for (int j = 0; j < p->n; j++) {
        const long n = p->n_in[j];
        const long k = n <= MAX_COORDS ? n : MAX_COORDS;
        got[j] = tt_zeros(k); want[j] = tt_zeros(k); m[j] = k;
        for (long c = 0; c < k; c++) {
            long i = n <= MAX_COORDS ? c : (c * (n - 1)) / (k - 1);
            double *x = &p->in[j][i], keep = *x, h = 1e-5 * fmax(1.0, fabs(keep));
            *x = keep + h; double up = fd_loss(p, r, y);
            *x = keep - h; double dn = fd_loss(p, r, y);
            *x = keep;
            want[j][c] = (float)((up - dn) / (2.0 * h));
            got[j][c] = p->grad[j][i];
            if (fabs(want[j][c]) > scale) scale = fabs(want[j][c]);
        }
    }
    for (int j = 0; j < p->n; j++) {
        char label[128];
        snprintf(label, sizeof label, "fd %s d_%s", what, p->name[j]);
        ck_assert_grad(label, got[j], want[j], m[j], rel, scale);
        free(got[j]); free(want[j]);
    }
    free(y);
}

// ---- double references, written from the formulas ----

static void ref_linear(double *y, const double *x, const double *W, const double *b,
                       int T, int Ci, int Co) {
    for (int t = 0; t < T; t++)
        for (int o = 0; o < Co; o++) {
            double s = b ? b[o] : 0.0;
            for (int c = 0; c < Ci; c++) s += x[t * Ci + c] * W[o * Ci + c];
            y[t * Co + o] = s;
        }
}

static void ref_layernorm(double *y, const double *x, const double *g, const double *b,
                          int T, int C, double eps) {
    for (int t = 0; t < T; t++) {
        double m = 0.0, v = 0.0;
        for (int c = 0; c < C; c++) m += x[t * C + c];
        m /= C;
        for (int c = 0; c < C; c++) v += (x[t * C + c] - m) * (x[t * C + c] - m);
        v /= C;
        for (int c = 0; c < C; c++)
            y[t * C + c] = (x[t * C + c] - m) / sqrt(v + eps) * g[c] + (b ? b[c] : 0.0);
    }
}

static void ref_rmsnorm(double *y, const double *x, const double *g, int T, int C, double eps) {
    for (int t = 0; t < T; t++) {
        double ss = 0.0;
        for (int c = 0; c < C; c++) ss += x[t * C + c] * x[t * C + c];
        double r = sqrt(ss / C + eps);
        for (int c = 0; c < C; c++) y[t * C + c] = x[t * C + c] / r * (g ? g[c] : 1.0);
    }
}

static double ref_act(double x, tw_act act) {
    switch (act) {
    case TW_ACT_RELU:      return x > 0 ? x : 0.0;
    case TW_ACT_GELU_ERF:  return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case TW_ACT_GELU_TANH: return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case TW_ACT_SILU:      return x / (1.0 + exp(-x));
    }
    return 0.0;
}

// A row of all -inf gives zeros, as tw_softmax_rows.
static void ref_softmax_rows(double *y, const double *x, int rows, int cols, double temp) {
    for (int r = 0; r < rows; r++) {
        const double *xr = x + (size_t)r * cols;
        double *yr = y + (size_t)r * cols, mx = -INFINITY, s = 0.0;
        for (int j = 0; j < cols; j++) if (xr[j] > mx) mx = xr[j];
        for (int j = 0; j < cols; j++) { yr[j] = mx == -INFINITY ? 0.0 : exp((xr[j] - mx) / temp); s += yr[j]; }
        for (int j = 0; j < cols; j++) yr[j] = s > 0 ? yr[j] / s : 0.0;
    }
}

static void ref_rope(double *x, int T, int H, int D, int pos0, double theta, int halves) {
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < D / 2; i++) {
                double ang = (pos0 + t) * pow(theta, -2.0 * i / D), c = cos(ang), s = sin(ang);
                double *v = x + ((size_t)t * H + h) * D;
                int a = halves ? i : 2 * i, b = halves ? i + D / 2 : 2 * i + 1;
                double va = v[a], vb = v[b];
                v[a] = va * c - vb * s;
                v[b] = va * s + vb * c;
            }
}

// out (T, D) = softmax(q k^T / sqrt D + mask, causal) v for one head; rows q (T, ld), k, v (S, ld)
// with row stride ld so heads can be read in place.
static void ref_sdpa(double *out, int ldo, const double *q, const double *k, const double *v,
                     int ld, const float *mask, int T, int S, int D, int causal, int offset) {
    double *sc = malloc((size_t)S * sizeof(double));
    for (int t = 0; t < T; t++) {
        for (int s = 0; s < S; s++) {
            double d = 0.0;
            for (int i = 0; i < D; i++) d += q[(size_t)t * ld + i] * k[(size_t)s * ld + i];
            sc[s] = d / sqrt((double)D) + (mask ? mask[t * S + s] : 0.0);
            if (causal && s > t + offset) sc[s] = -INFINITY;
        }
        ref_softmax_rows(sc, sc, 1, S, 1.0);
        for (int i = 0; i < D; i++) {
            double o = 0.0;
            for (int s = 0; s < S; s++) if (sc[s] != 0.0) o += sc[s] * v[(size_t)s * ld + i];
            out[(size_t)t * ldo + i] = o;
        }
    }
    free(sc);
}

// ---- linear, embedding, positions ----

typedef struct { int T, Ci, Co; double *x, *W, *b; } lin_ctx;
static void fwd_linear(const fd_problem *p, double *y) {
    const lin_ctx *c = p->ctx;
    ref_linear(y, c->x, c->W, c->b, c->T, c->Ci, c->Co);
}

START_TEST(linear_backward_matches_finite_differences)
{
    const int bias = _i >= 5, i = _i % 5;
    lin_ctx c = { SIZES[i], SIZES[(i + 1) % 5], SIZES[(i + 2) % 5], 0, 0, 0 };
    const long nx = (long)c.T * c.Ci, nw = (long)c.Co * c.Ci, ny = (long)c.T * c.Co;
    float *x = tt_rand(nx, -1, 1, 1 + _i), *W = tt_rand(nw, -1, 1, 2 + _i), *b = tt_rand(c.Co, -1, 1, 3 + _i);
    float *r = tt_rand(ny, -1, 1, 4 + _i);
    float *dx = tt_zeros(nx), *dW = tt_zeros(nw), *db = tt_zeros(c.Co);
    tw_linear_backward(dx, dW, bias ? db : NULL, r, x, W, c.T, c.Ci, c.Co);
    c.x = to_double(x, nx); c.W = to_double(W, nw); c.b = bias ? to_double(b, c.Co) : NULL;
    fd_problem p = { .forward = fwd_linear, .ny = ny, .ctx = &c };
    fd_add(&p, "x", c.x, nx, dx);
    fd_add(&p, "W", c.W, nw, dW);
    if (bias) fd_add(&p, "b", c.b, c.Co, db);
    fd_check("linear", &p, r, REL_OP);
    free(x); free(W); free(b); free(r); free(dx); free(dW); free(db); free(c.x); free(c.W); free(c.b);
}
END_TEST

typedef struct { int T, C, pos0; const int *ids; double *table, *x; } emb_ctx;
static void fwd_embedding(const fd_problem *p, double *y) {
    const emb_ctx *c = p->ctx;
    for (int t = 0; t < c->T; t++)
        for (int j = 0; j < c->C; j++) y[t * c->C + j] = c->table[c->ids[t] * c->C + j];
}
static void fwd_learned(const fd_problem *p, double *y) {
    const emb_ctx *c = p->ctx;
    for (int t = 0; t < c->T; t++)
        for (int j = 0; j < c->C; j++)
            y[t * c->C + j] = c->x[t * c->C + j] + c->table[(c->pos0 + t) * c->C + j];
}

START_TEST(embedding_and_learned_positions_match_finite_differences)
{
    const int V = 11, C = 7, T = 9, P = 16, pos0 = 5;
    const int ids[9] = { 0, 10, 3, 3, 7, 1, 10, 0, 5 };
    float *table = tt_rand(V * C, -1, 1, 1), *r = tt_rand(T * C, -1, 1, 2), *dt = tt_zeros(V * C);
    ck_assert_int_eq(tw_embedding_backward(dt, r, ids, T, V, C), TW_OK);
    emb_ctx c = { T, C, 0, ids, to_double(table, V * C), NULL };
    fd_problem p = { .forward = fwd_embedding, .ny = T * C, .ctx = &c };
    fd_add(&p, "table", c.table, V * C, dt);
    fd_check("embedding", &p, r, REL_OP);

    // Learned positions: x += table[pos0 + t], in place; the gradient of x is r itself.
    float *pt = tt_rand(P * C, -1, 1, 3), *x = tt_rand(T * C, -1, 1, 4), *dpt = tt_zeros(P * C);
    tw_posenc_learned_backward(dpt, r, T, C, pos0);
    emb_ctx c2 = { T, C, pos0, NULL, to_double(pt, P * C), to_double(x, T * C) };
    fd_problem p2 = { .forward = fwd_learned, .ny = T * C, .ctx = &c2 };
    fd_add(&p2, "table", c2.table, P * C, dpt);
    fd_add(&p2, "x", c2.x, T * C, r);
    fd_check("learned positions", &p2, r, REL_OP);
    free(table); free(r); free(dt); free(c.table); free(pt); free(x); free(dpt); free(c2.table);
    free(c2.x);
}
END_TEST

// The sinusoidal encoding has no parameters and is added in place: the input gradient passes
// through unchanged, i.e. the in-place gradient buffer needs no call at all. FD confirms d(x +
// pe)/dx = identity against the library's own table.
typedef struct { int T, C; const float *pe; double *x; } sin_ctx;
static void fwd_sinusoidal(const fd_problem *p, double *y) {
    const sin_ctx *c = p->ctx;
    for (int i = 0; i < c->T * c->C; i++) y[i] = c->x[i] + c->pe[i];
}

START_TEST(sinusoidal_gradient_passes_through)
{
    const int T = 7, C = 65;
    float *pe = tt_zeros(T * C), *x = tt_rand(T * C, -1, 1, 1), *r = tt_rand(T * C, -1, 1, 2);
    tw_posenc_sinusoidal(pe, T, C, 3);
    sin_ctx c = { T, C, pe, to_double(x, T * C) };
    fd_problem p = { .forward = fwd_sinusoidal, .ny = T * C, .ctx = &c };
    fd_add(&p, "x", c.x, T * C, r);
    fd_check("sinusoidal", &p, r, REL_OP);
    free(pe); free(x); free(r); free(c.x);
}
END_TEST

// ---- norms ----

static const float NORM_EPS[] = { 1e-5f, 1e-6f, 1e-2f, 1e-5f, 1e-6f };

typedef struct { int T, C, rms; double eps; double *x, *g, *b; } norm_ctx;
static void fwd_norm(const fd_problem *p, double *y) {
    const norm_ctx *c = p->ctx;
    if (c->rms) ref_rmsnorm(y, c->x, c->g, c->T, c->C, c->eps);
    else        ref_layernorm(y, c->x, c->g, c->b, c->T, c->C, c->eps);
}

START_TEST(norm_backward_matches_finite_differences)
{
    // _i: 0..4 LayerNorm, 5..9 RMSNorm, 10..14 RMSNorm with unit gain, at the golden shapes.
    const int i = _i % 5, kind = _i / 5, T = SIZES[(i + 1) % 5], C = SIZES[i];
    const long n = (long)T * C;
    float *x = tt_rand(n, -3, 5, 10 + _i), *g = tt_rand(C, 0.5f, 1.5f, 30 + _i);
    float *b = tt_rand(C, -1, 1, 50 + _i), *r = tt_rand(n, -1, 1, 70 + _i);
    float *out = tt_zeros(n), *s1 = tt_zeros(T), *s2 = tt_zeros(T);
    float *dx = tt_zeros(n), *dg = tt_zeros(C), *db = tt_zeros(C);
    norm_ctx c = { T, C, kind > 0, NORM_EPS[i], to_double(x, n), to_double(g, C), to_double(b, C) };
    fd_problem p = { .forward = fwd_norm, .ny = n, .ctx = &c };
    fd_add(&p, "x", c.x, n, dx);
    if (kind == 0) {
        tw_layernorm_forward(out, s1, s2, x, g, b, T, C, NORM_EPS[i]);
        tw_layernorm_backward(dx, dg, db, r, x, s1, s2, g, T, C);
        fd_add(&p, "gamma", c.g, C, dg);
        fd_add(&p, "beta", c.b, C, db);
    } else {
        const float *gain = kind == 1 ? g : NULL;
        if (kind == 2) { free(c.g); c.g = NULL; }
        tw_rmsnorm_forward(out, s1, x, gain, T, C, NORM_EPS[i]);
        tw_rmsnorm_backward(dx, kind == 1 ? dg : NULL, r, x, s1, gain, T, C);
        if (kind == 1) fd_add(&p, "weight", c.g, C, dg);
    }
    // dx is a difference of terms of size |r * gain| / rms (or * rstd); for C = 1 it nearly
    // cancels (x / sqrt(x^2 + eps) is almost flat), so those terms set the scale.
    double gmax = 0.0, smax = 0.0;
    for (long j = 0; j < n; j++) gmax = fmax(gmax, fabs(r[j] * (kind == 2 ? 1.0f : g[j % C])));
    for (int t = 0; t < T; t++) smax = fmax(smax, kind == 0 ? s2[t] : 1.0 / s1[t]);
    p.term_scale = gmax * smax;
    fd_check(kind == 0 ? "layernorm" : "rmsnorm", &p, r, REL_OP);
    free(x); free(g); free(b); free(r); free(out); free(s1); free(s2); free(dx); free(dg); free(db);
    free(c.x); free(c.g); free(c.b);
}
END_TEST

// ---- activations, softmax, cross-entropy ----

typedef struct { long n; tw_act act; double *x; } act_ctx;
static void fwd_act(const fd_problem *p, double *y) {
    const act_ctx *c = p->ctx;
    for (long i = 0; i < c->n; i++) y[i] = ref_act(c->x[i], c->act);
}

START_TEST(activation_backward_matches_finite_differences)
{
    // 64 points on [-6, 6] (away from ReLU's kink at 0 by construction: none is within h of 0).
    const long n = 64;
    float *x = tt_zeros(n), *r = tt_rand(n, -1, 1, 1), *dx = tt_zeros(n);
    for (long i = 0; i < n; i++) x[i] = -6.0f + 12.0f * ((float)i + 0.37f) / (float)n;
    tw_activation_backward(dx, r, x, n, (tw_act)_i);
    act_ctx c = { n, (tw_act)_i, to_double(x, n) };
    fd_problem p = { .forward = fwd_act, .ny = n, .ctx = &c };
    fd_add(&p, "x", c.x, n, dx);
    fd_check(tw_act_name((tw_act)_i), &p, r, REL_OP);
    free(x); free(r); free(dx); free(c.x);
}
END_TEST

static const float SOFTMAX_TEMPS[] = { 1.0f, 0.5f, 2.0f, 0.7f, 1.3f };

typedef struct { int rows, cols; double temp; double *x; } sm_ctx;
static void fwd_softmax(const fd_problem *p, double *y) {
    const sm_ctx *c = p->ctx;
    ref_softmax_rows(y, c->x, c->rows, c->cols, c->temp);
}

START_TEST(softmax_backward_matches_finite_differences)
{
    const int rows = SIZES[(_i + 1) % 5], cols = SIZES[_i];
    const long n = (long)rows * cols;
    float *x = tt_rand(n, -8, 8, 1 + _i), *r = tt_rand(n, -1, 1, 2 + _i);
    float *y = tt_zeros(n), *dx = tt_zeros(n);
    tw_softmax_rows(y, x, rows, cols, SOFTMAX_TEMPS[_i]);
    tw_softmax_rows_backward(dx, r, y, rows, cols, SOFTMAX_TEMPS[_i]);
    sm_ctx c = { rows, cols, SOFTMAX_TEMPS[_i], to_double(x, n) };
    fd_problem p = { .forward = fwd_softmax, .ny = n, .ctx = &c };
    fd_add(&p, "x", c.x, n, dx);
    fd_check("softmax", &p, r, REL_OP);
    free(x); free(r); free(y); free(dx); free(c.x);
}
END_TEST

// Cross-entropy: the "output" is the scalar loss, so ny = 1 and r = dloss.
static const int CE_TV[][2] = { {1, 3}, {3, 7}, {7, 65}, {64, 1}, {65, 64} };

typedef struct { int T, V; const int *targets; double *logits; } ce_ctx;
static void fwd_ce(const fd_problem *p, double *y) {
    const ce_ctx *c = p->ctx;
    double total = 0.0;
    int n = 0;
    for (int t = 0; t < c->T; t++) {
        if (c->targets[t] == TW_IGNORE_INDEX) continue;
        const double *z = c->logits + (size_t)t * c->V;
        double s = 0.0;
        for (int v = 0; v < c->V; v++) s += exp(z[v]);
        total += log(s) - z[c->targets[t]];
        n++;
    }
    y[0] = n ? total / n : 0.0;
}

START_TEST(cross_entropy_backward_matches_finite_differences)
{
    const int T = CE_TV[_i][0], V = CE_TV[_i][1];
    const long n = (long)T * V;
    float *logits = tt_rand(n, -4, 4, 1 + _i), *probs = tt_zeros(n), *d = tt_zeros(n);
    int *targets = malloc(sizeof(int) * T);
    for (int t = 0; t < T; t++) targets[t] = (t * 7 + 3) % V;
    if (T > 2) targets[1] = TW_IGNORE_INDEX;   // a padded position
    float loss, dloss = 0.75f;
    ck_assert_int_eq(tw_cross_entropy_forward(&loss, NULL, probs, logits, targets, T, V, TW_IGNORE_INDEX), TW_OK);
    ck_assert_int_eq(tw_cross_entropy_backward(d, dloss, probs, targets, T, V, TW_IGNORE_INDEX), TW_OK);
    ce_ctx c = { T, V, targets, to_double(logits, n) };
    // With V = 1 every gradient is exactly 0 (probs = 1): the terms dloss / n * probs set the scale.
    fd_problem p = { .forward = fwd_ce, .ny = 1, .ctx = &c, .term_scale = dloss / (T > 2 ? T - 1 : T) };
    fd_add(&p, "logits", c.logits, n, d);
    fd_check("cross-entropy", &p, &dloss, REL_OP);
    free(logits); free(probs); free(d); free(targets); free(c.logits);
}
END_TEST

// ---- RoPE ----

static const int ROPE_D[] = { 2, 6, 8, 64, 66 }, ROPE_H[] = { 1, 2, 3, 1, 2 };
static const int ROPE_POS0[] = { 0, 7, 100, 4096, 1 };
static const float ROPE_THETA[] = { 10000.0f, 1e6f, 10000.0f, 1e6f, 10000.0f };

typedef struct { int T, H, D, pos0, halves; double theta; double *x; } rope_ctx;
static void fwd_rope(const fd_problem *p, double *y) {
    const rope_ctx *c = p->ctx;
    memcpy(y, c->x, sizeof(double) * (size_t)p->ny);
    ref_rope(y, c->T, c->H, c->D, c->pos0, c->theta, c->halves);
}

START_TEST(rope_backward_matches_finite_differences)
{
    const int i = _i % 5, halves = _i >= 5, T = SIZES[i], H = ROPE_H[i], D = ROPE_D[i];
    const long n = (long)T * H * D;
    float *x = tt_rand(n, -2, 2, 1 + _i), *r = tt_rand(n, -1, 1, 2 + _i), *d = tt_zeros(n);
    memcpy(d, r, sizeof(float) * n);
    tw_rope_backward(d, halves ? TW_ROPE_HALVES : TW_ROPE_ADJACENT, T, H, D, ROPE_POS0[i], ROPE_THETA[i]);
    rope_ctx c = { T, H, D, ROPE_POS0[i], halves, ROPE_THETA[i], to_double(x, n) };
    fd_problem p = { .forward = fwd_rope, .ny = n, .ctx = &c };
    fd_add(&p, "x", c.x, n, d);
    fd_check(halves ? "rope halves" : "rope adjacent", &p, r, REL_OP);
    free(x); free(r); free(d); free(c.x);
}
END_TEST

// ---- attention ----

// As gen_model.py's SDPA cases: T S D causal offset mask (1: padding of the last two keys when
// causal, else a finite random bias with key 0 padded).
static const int SDPA[][6] = { {3, 3, 8, 1, 0, 0}, {1, 1, 1, 1, 0, 0}, {7, 7, 5, 1, 0, 1},
                               {3, 7, 4, 0, 0, 0}, {3, 7, 6, 1, 4, 0}, {2, 65, 3, 0, 0, 1} };

typedef struct { int T, S, D, causal, offset; const float *mask; double *q, *k, *v; } sdpa_ctx;
static void fwd_sdpa(const fd_problem *p, double *y) {
    const sdpa_ctx *c = p->ctx;
    // ref_sdpa reads rows with one stride; q has D columns, as k and v.
    ref_sdpa(y, c->D, c->q, c->k, c->v, c->D, c->mask, c->T, c->S, c->D, c->causal, c->offset);
}

START_TEST(sdpa_backward_matches_finite_differences)
{
    const int T = SDPA[_i][0], S = SDPA[_i][1], D = SDPA[_i][2], causal = SDPA[_i][3];
    const int offset = SDPA[_i][4], has_mask = SDPA[_i][5];
    float *q = tt_rand(T * D, -2, 2, 1 + _i), *k = tt_rand(S * D, -2, 2, 2 + _i);
    float *v = tt_rand(S * D, -2, 2, 3 + _i), *r = tt_rand(T * D, -1, 1, 4 + _i);
    float *mask = NULL;
    if (has_mask) {
        mask = tt_rand(T * S, -1, 1, 5 + _i);
        for (int t = 0; t < T; t++)
            for (int s = 0; s < S; s++) {
                if (causal) mask[t * S + s] = s >= S - 2 ? -INFINITY : 0.0f;
                else if (s == 0) mask[t * S + s] = -INFINITY;
            }
    }
    float *out = tt_zeros(T * D), *w = tt_zeros(T * S), *ds = tt_zeros(T * S);
    float *dq = tt_zeros(T * D), *dk = tt_zeros(S * D), *dv = tt_zeros(S * D);
    tw_sdpa_forward(out, NULL, w, q, k, v, mask, T, S, D, causal, offset);
    tw_sdpa_backward(dq, dk, dv, ds, r, q, k, v, w, T, S, D);
    sdpa_ctx c = { T, S, D, causal, offset, mask, to_double(q, T * D), to_double(k, S * D),
                   to_double(v, S * D) };
    fd_problem p = { .forward = fwd_sdpa, .ny = T * D, .ctx = &c };
    fd_add(&p, "q", c.q, T * D, dq);
    fd_add(&p, "k", c.k, S * D, dk);
    fd_add(&p, "v", c.v, S * D, dv);
    fd_check("sdpa", &p, r, REL_OP);
    free(q); free(k); free(v); free(r); free(mask); free(out); free(w); free(ds); free(dq); free(dk);
    free(dv); free(c.q); free(c.k); free(c.v);
}
END_TEST

// ---- multi-head attention: the cases of gen_model.py's MHA_CASES ----

// C H G D T S causal rope qk bias pos0 cross mask; theta
static const int MHA[][13] = {
    {24, 4, 4, 6, 5, 5, 1, 0, 0, 1, 0, 0, 0}, {16, 4, 2, 4, 7, 7, 1, 1, 0, 0, 3, 0, 0},
    {16, 8, 2, 2, 3, 3, 1, 2, 0, 1, 5, 0, 0}, {16, 16, 2, 2, 7, 7, 1, 1, 0, 0, 0, 0, 0},
    {16, 4, 1, 4, 7, 7, 1, 2, 0, 0, 2, 0, 0}, {20, 4, 2, 6, 7, 7, 1, 2, 1, 0, 2, 0, 0},
    {16, 2, 1, 10, 1, 1, 1, 1, 1, 1, 9, 0, 0}, {16, 2, 2, 8, 3, 5, 0, 0, 0, 1, 0, 1, 1},
    {12, 4, 2, 3, 7, 3, 0, 0, 0, 0, 0, 1, 0}, {16, 4, 4, 4, 7, 7, 0, 0, 0, 1, 0, 0, 0},
};
static const float MHA_THETA[] = { 1e4f, 1e4f, 1e6f, 1e6f, 1e4f, 1e6f, 1e4f, 1e4f, 1e4f, 1e4f };

typedef struct {
    tw_mha_config cfg;
    int T, S, pos0, cross;
    const float *mask;
    double *x, *x_kv, *w[10];   // weights in tw_mha_weights order; NULL where absent
} mha_ctx;

// The double reference: every step of mha.h's comment, written out, one head at a time on
// contiguous copies.
static void fwd_mha_heads(const fd_problem *p, double *y) {
    const mha_ctx *c = p->ctx;
    const int C = c->cfg.d_model, H = c->cfg.n_head, G = c->cfg.n_kv_head, D = c->cfg.head_dim;
    const int T = c->T, S = c->cross ? c->S : c->T;
    const double *src = c->cross ? c->x_kv : c->x;
    double *q = malloc(sizeof(double) * T * H * D), *k = malloc(sizeof(double) * S * G * D);
    double *v = malloc(sizeof(double) * S * G * D), *z = malloc(sizeof(double) * T * H * D);
    double *qh = malloc(sizeof(double) * T * D), *kh = malloc(sizeof(double) * S * D);
    double *vh = malloc(sizeof(double) * S * D), *zh = malloc(sizeof(double) * T * D);
    ref_linear(q, c->x, c->w[0], c->w[1], T, C, H * D);
    ref_linear(k, src, c->w[2], c->w[3], S, C, G * D);
    ref_linear(v, src, c->w[4], c->w[5], S, C, G * D);
    if (c->cfg.qk_norm) {
        ref_rmsnorm(q, q, c->w[8], T * H, D, c->cfg.norm_eps);
        ref_rmsnorm(k, k, c->w[9], S * G, D, c->cfg.norm_eps);
    }
    if (!c->cross && c->cfg.rope != TW_ROPE_NONE) {
        ref_rope(q, T, H, D, c->pos0, c->cfg.rope_theta, c->cfg.rope == TW_ROPE_HALVES);
        ref_rope(k, S, G, D, c->pos0, c->cfg.rope_theta, c->cfg.rope == TW_ROPE_HALVES);
    }
    for (int h = 0; h < H; h++) {
        const int g = h / (H / G);   // GQA: query head h reads key/value head g
        for (int t = 0; t < T; t++) memcpy(qh + t * D, q + (t * H + h) * D, sizeof(double) * D);
        for (int s = 0; s < S; s++) {
            memcpy(kh + s * D, k + (s * G + g) * D, sizeof(double) * D);
            memcpy(vh + s * D, v + (s * G + g) * D, sizeof(double) * D);
        }
        ref_sdpa(zh, D, qh, kh, vh, D, c->mask, T, S, D, c->cfg.causal && !c->cross, 0);
        for (int t = 0; t < T; t++) memcpy(z + (t * H + h) * D, zh + t * D, sizeof(double) * D);
    }
    ref_linear(y, z, c->w[6], c->w[7], T, H * D, C);
    free(q); free(k); free(v); free(z); free(qh); free(kh); free(vh); free(zh);
}

START_TEST(mha_backward_matches_finite_differences)
{
    const int *m = MHA[_i];
    mha_ctx c;
    memset(&c, 0, sizeof c);
    c.cfg = (tw_mha_config){ .d_model = m[0], .n_head = m[1], .n_kv_head = m[2], .head_dim = m[3],
                              .causal = m[6], .rope = (tw_rope_kind)m[7], .rope_theta = MHA_THETA[_i],
                              .qk_norm = m[8], .norm_eps = 1e-6f };
    const int C = m[0], H = m[1], G = m[2], D = m[3], bias = m[9], qk = m[8];
    c.T = m[4]; c.S = m[5]; c.pos0 = m[10]; c.cross = m[11];
    const int T = c.T, S = c.S, n_kv = c.cross ? S : T;
    const long HD = (long)H * D, GD = (long)G * D;
    const long sizes[10] = { HD * C, HD, GD * C, GD, GD * C, GD, C * HD, C, D, D };
    const int present[10] = { 1, bias, 1, bias, 1, bias, 1, bias, qk, qk };
    const char *names[10] = { "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "q_norm", "k_norm" };
    float *wf[10] = { 0 }, *gr[10] = { 0 };
    for (int j = 0; j < 10; j++)
        if (present[j]) {
            const float lo = j >= 8 ? 0.5f : (j % 2 ? -0.2f : -0.5f), hi = j >= 8 ? 1.5f : -lo;
            wf[j] = tt_rand(sizes[j], lo, hi, 100 * _i + j);
            gr[j] = tt_zeros(sizes[j]);
            c.w[j] = to_double(wf[j], sizes[j]);
        }
    float *x = tt_rand((long)T * C, -1, 1, 1000 + _i), *r = tt_rand((long)T * C, -1, 1, 2000 + _i);
    float *x_kv = c.cross ? tt_rand((long)S * C, -1, 1, 3000 + _i) : NULL;
    float *mask = NULL;
    if (m[12]) {   // padding: the last key is padding for every query
        mask = tt_zeros((long)T * S);
        for (int t = 0; t < T; t++) mask[t * S + S - 1] = -INFINITY;
    }
    c.mask = mask;
    tw_mha_weights w = { tw_weight_fp32(wf[0]), wf[1], tw_weight_fp32(wf[2]), wf[3], tw_weight_fp32(wf[4]), wf[5], tw_weight_fp32(wf[6]), wf[7],
                         wf[8], wf[9] };
    tw_mha_grads dw = { gr[0], gr[1], gr[2], gr[3], gr[4], gr[5], gr[6], gr[7], gr[8], gr[9] };
    float *out = tt_zeros((long)T * C), *dx = tt_zeros((long)T * C);
    float *dx_kv = c.cross ? tt_zeros((long)S * C) : NULL;
    tw_mha_acts s;
    tw_mha_acts g;   // the gradients of the intermediates, in the same layout
    ck_assert_int_eq(tw_mha_acts_init(&s, &c.cfg, T, n_kv), TW_OK);
    ck_assert_int_eq(tw_mha_acts_init(&g, &c.cfg, T, n_kv), TW_OK);
    tw_mha_forward(out, &s, NULL, x, x_kv, mask, &c.cfg, &w, T, S, c.pos0);
    tw_mha_backward(dx, dx_kv, &dw, &g, r, &s, x, x_kv, &c.cfg, &w, T, S, c.pos0);

    c.x = to_double(x, (long)T * C);
    c.x_kv = c.cross ? to_double(x_kv, (long)S * C) : NULL;
    fd_problem p = { .forward = fwd_mha_heads, .ny = (long)T * C, .ctx = &c };
    fd_add(&p, "x", c.x, (long)T * C, dx);
    if (c.cross) fd_add(&p, "x_kv", c.x_kv, (long)S * C, dx_kv);
    for (int j = 0; j < 10; j++)
        if (present[j]) fd_add(&p, names[j], c.w[j], sizes[j], gr[j]);
    fd_check("mha", &p, r, REL_CHAIN);

    tw_mha_acts_free(&s);
    tw_mha_acts_free(&g);
    for (int j = 0; j < 10; j++) { free(wf[j]); free(gr[j]); free(c.w[j]); }
    free(x); free(r); free(x_kv); free(mask); free(out); free(dx); free(dx_kv); free(c.x);
    free(c.x_kv);
}
END_TEST

// ---- feed-forward: gen_model.py's FFN_CASES (T C F act bias swiglu) ----

static const int FFN[][6] = { {3, 7, 13, 0, 1, 0}, {1, 7, 65, 1, 1, 0}, {3, 8, 13, 2, 0, 0},
                              {3, 7, 13, 3, 0, 1}, {7, 3, 65, 3, 0, 1} };

typedef struct { int T, C, F, swiglu; tw_act act; double *x, *w1, *b1, *w2, *b2, *wg, *wu, *wd; } ffn_ctx;
static void fwd_ffn(const fd_problem *p, double *y) {
    const ffn_ctx *c = p->ctx;
    const int T = c->T, C = c->C, F = c->F;
    double *a = malloc(sizeof(double) * T * F), *u = malloc(sizeof(double) * T * F);
    if (c->swiglu) {
        ref_linear(a, c->x, c->wg, NULL, T, C, F);
        ref_linear(u, c->x, c->wu, NULL, T, C, F);
        for (int i = 0; i < T * F; i++) a[i] = ref_act(a[i], TW_ACT_SILU) * u[i];
        ref_linear(y, a, c->wd, NULL, T, F, C);
    } else {
        ref_linear(a, c->x, c->w1, c->b1, T, C, F);
        for (int i = 0; i < T * F; i++) a[i] = ref_act(a[i], c->act);
        ref_linear(y, a, c->w2, c->b2, T, F, C);
    }
    free(a); free(u);
}

START_TEST(ffn_backward_matches_finite_differences)
{
    const int T = FFN[_i][0], C = FFN[_i][1], F = FFN[_i][2], bias = FFN[_i][4], swiglu = FFN[_i][5];
    const tw_act act = (tw_act)FFN[_i][3];
    const long TC = (long)T * C, TF = (long)T * F, FC = (long)F * C;
    float *x = tt_rand(TC, -3, 3, 1 + _i), *r = tt_rand(TC, -1, 1, 2 + _i);
    float *A = tt_rand(FC, -0.5f, 0.5f, 3 + _i), *B = tt_rand(FC, -0.5f, 0.5f, 4 + _i);
    float *Cw = tt_rand(FC, -0.5f, 0.5f, 5 + _i), *b1 = tt_rand(F, -0.2f, 0.2f, 6 + _i);
    float *b2 = tt_rand(C, -0.2f, 0.2f, 7 + _i);
    float *out = tt_zeros(TC), *dx = tt_zeros(TC), *h1 = tt_zeros(TF), *h2 = tt_zeros(TF),
          *h3 = tt_zeros(TF), *s1 = tt_zeros(TF), *s2 = tt_zeros(TF);
    float *dA = tt_zeros(FC), *dB = tt_zeros(FC), *dC = tt_zeros(FC), *db1 = tt_zeros(F), *db2 = tt_zeros(C);
    ffn_ctx c = { T, C, F, swiglu, act, to_double(x, TC), 0, 0, 0, 0, 0, 0, 0 };
    fd_problem p = { .forward = fwd_ffn, .ny = TC, .ctx = &c };
    fd_add(&p, "x", c.x, TC, dx);
    if (swiglu) {   // A = Wg, B = Wu, Cw = Wd
        tw_swiglu_forward(out, h1, h2, h3, x, tw_weight_fp32(A), tw_weight_fp32(B), tw_weight_fp32(Cw),
                          T, C, F);
        tw_swiglu_backward(dx, dA, dB, dC, s1, s2, r, h1, h2, h3, x, A, B, Cw, T, C, F);
        c.wg = to_double(A, FC); c.wu = to_double(B, FC); c.wd = to_double(Cw, FC);
        fd_add(&p, "gate", c.wg, FC, dA);
        fd_add(&p, "up", c.wu, FC, dB);
        fd_add(&p, "down", c.wd, FC, dC);
    } else {        // A = W1, B = W2
        tw_ffn_forward_keep(out, h1, h2, x, tw_weight_fp32(A), bias ? b1 : NULL, tw_weight_fp32(B),
                            bias ? b2 : NULL, T, C, F, act);
        tw_ffn_backward(dx, dA, bias ? db1 : NULL, dB, bias ? db2 : NULL, s1, r, h1, h2, x, A, B,
                        T, C, F, act);
        c.w1 = to_double(A, FC); c.w2 = to_double(B, FC);
        fd_add(&p, "w1", c.w1, FC, dA);
        fd_add(&p, "w2", c.w2, FC, dB);
        if (bias) {
            c.b1 = to_double(b1, F); c.b2 = to_double(b2, C);
            fd_add(&p, "b1", c.b1, F, db1);
            fd_add(&p, "b2", c.b2, C, db2);
        }
    }
    fd_check(swiglu ? "swiglu" : "ffn", &p, r, REL_CHAIN);
    free(x); free(r); free(A); free(B); free(Cw); free(b1); free(b2); free(out); free(dx);
    free(h1); free(h2); free(h3); free(s1); free(s2); free(dA); free(dB); free(dC); free(db1);
    free(db2); free(c.x); free(c.w1); free(c.b1); free(c.w2); free(c.b2); free(c.wg); free(c.wu);
    free(c.wd);
}
END_TEST

Suite *suite_grad_fd(void) {
    Suite *s = suite_create("grad_fd");
    TCase *tc = tcase_create("components");
    tcase_add_loop_test(tc, linear_backward_matches_finite_differences, 0, 10);
    tcase_add_test(tc, embedding_and_learned_positions_match_finite_differences);
    tcase_add_test(tc, sinusoidal_gradient_passes_through);
    tcase_add_loop_test(tc, norm_backward_matches_finite_differences, 0, 15);
    tcase_add_loop_test(tc, activation_backward_matches_finite_differences, 0, 4);
    tcase_add_loop_test(tc, softmax_backward_matches_finite_differences, 0, 5);
    tcase_add_loop_test(tc, cross_entropy_backward_matches_finite_differences, 0, 5);
    tcase_add_loop_test(tc, rope_backward_matches_finite_differences, 0, 10);
    tcase_add_loop_test(tc, sdpa_backward_matches_finite_differences, 0, 6);
    suite_add_tcase(s, tc);
    tc = tcase_create("layers");
    tcase_add_loop_test(tc, mha_backward_matches_finite_differences, 0, 10);
    tcase_add_loop_test(tc, ffn_backward_matches_finite_differences, 0, 5);
    suite_add_tcase(s, tc);
    return s;
}
