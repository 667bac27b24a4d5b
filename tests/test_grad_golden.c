// test_grad_golden.c: every _backward of lib/ against PyTorch autograd (float64 from the same
// float32 inputs, rounded to float32 once), data/golden/backward/ from tests/golden/gen_backward.py.
// Each golden holds the inputs, the upstream gradient dy and the gradients of
// L = sum(dy * f(inputs)); the C side runs our float forward (for what the backward needs kept),
// then the backward on zeroed gradient buffers.
//
// Tolerances use grad_check.h's metric (atol = rel * scale, rtol = rel). Their justification:
//   - REL_OP = 1e-5 for a single component. A gradient element is a float sum of at most 65
//     products (or a double-accumulated row reduction rounded once), so its error is at most about
//     65 * 2^-24 ~ 4e-6 of the terms' size; the golden's own rounding adds 6e-8. Measured worst
//     (TW_GRAD_REPORT=1, relative to the tensor's largest entry): 7.6e-7 (softmax, 7 x 3).
//   - REL_CHAIN = 5e-5 for MHA and the FFNs: several such steps in a row (projection, QK-norm,
//     RoPE, softmax, two products, projection), each able to amplify the error before it by its
//     condition number (a softmax with peaked weights, an RMSNorm of a small row). Measured worst:
//     3.3e-7 (d Wq of mha_g1).
//   Gradients that vanish in exact arithmetic (attention's key bias, norms of width 1) are bounded
//   by the case scale instead (grad_check.h); measured worst 2.2e-7 absolute against a scale of
//   about 1.
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"
#include "grad_check.h"

#define REL_OP    1e-5
#define REL_CHAIN 5e-5

static const int SIZES[] = { 1, 3, 7, 64, 65 };

// The case's gradient scale (grad_check.h): the largest |d_<name>| over the named gradients.
static double case_scale(const char *dir, const char *const *names, const long *sizes, int n) {
    double m = 0.0;
    for (int j = 0; j < n; j++) {
        if (!names[j]) continue;
        char file[64];
        snprintf(file, sizeof file, "d_%s", names[j]);
        float *want = gc_load(dir, file, sizes[j]);
        double a = gc_maxabs(want, sizes[j]);
        if (a > m) m = a;
        free(want);
    }
    return m;
}

// Checks the gradient named d_<name> of case dir against got (scale: see grad_check.h).
static void expect_grad_scaled(const char *dir, const char *name, const float *got, long n,
                               double rel, double scale) {
    char file[64], what[128];
    snprintf(file, sizeof file, "d_%s", name);
    snprintf(what, sizeof what, "%s/%s", dir, file);
    float *want = gc_load(dir, file, n);
    ck_assert_grad(what, got, want, n, rel, scale);
    free(want);
}

static void expect_grad(const char *dir, const char *name, const float *got, long n, double rel) {
    expect_grad_scaled(dir, name, got, n, rel, 0.0);
}

// ---- linear ----

START_TEST(linear_backward_matches_autograd)
{
    const int with_bias = _i >= 5, i = _i % 5;
    const int T = SIZES[i], C_in = SIZES[(i + 1) % 5], C_out = SIZES[(i + 2) % 5];
    char dir[64];
    snprintf(dir, sizeof dir, "backward/linear/%d", i);
    float *x = gc_load(dir, "x", (long)T * C_in), *W = gc_load(dir, "W", (long)C_out * C_in);
    float *dy = gc_load(dir, "dy", (long)T * C_out);
    float *dx = tt_zeros((long)T * C_in), *dW = tt_zeros((long)C_out * C_in), *db = tt_zeros(C_out);
    tw_linear_backward(dx, dW, with_bias ? db : NULL, dy, x, W, T, C_in, C_out);
    expect_grad(dir, "x", dx, (long)T * C_in, REL_OP);
    expect_grad(dir, "W", dW, (long)C_out * C_in, REL_OP);
    if (with_bias) expect_grad(dir, "b", db, C_out, REL_OP);
    else for (int o = 0; o < C_out; o++) ck_assert_msg(db[o] == 0.0f, "db written without a bias");
    free(x); free(W); free(dy); free(dx); free(dW); free(db);
}
END_TEST

// Input and parameter gradients accumulate onto what the buffers hold (tw.h): starting from
// random contents, the result is contents + the gradient from zero. Tolerance 1e-6 relative to
// the sizes involved (|contents| <= 1, gradient terms <= 1, 7 terms): a few float roundings.
START_TEST(linear_backward_accumulates)
{
    const int T = 3, C_in = 7, C_out = 5;
    float *x = tt_rand(T * C_in, -1, 1, 1), *W = tt_rand(C_out * C_in, -1, 1, 2);
    float *dy = tt_rand(T * C_out, -1, 1, 3);
    float *g[3] = { tt_zeros(T * C_in), tt_zeros(C_out * C_in), tt_zeros(C_out) };
    float *a[3] = { tt_rand(T * C_in, -1, 1, 4), tt_rand(C_out * C_in, -1, 1, 5),
                    tt_rand(C_out, -1, 1, 6) };
    float *a0[3] = { tt_zeros(T * C_in), tt_zeros(C_out * C_in), tt_zeros(C_out) };
    const long n[3] = { T * C_in, C_out * C_in, C_out };
    for (int j = 0; j < 3; j++) memcpy(a0[j], a[j], sizeof(float) * n[j]);
    tw_linear_backward(g[0], g[1], g[2], dy, x, W, T, C_in, C_out);
    tw_linear_backward(a[0], a[1], a[2], dy, x, W, T, C_in, C_out);
    for (int j = 0; j < 3; j++) {
        for (long i = 0; i < n[j]; i++) a0[j][i] += g[j][i];
        ck_assert_allclose(a[j], a0[j], n[j], 1e-6, 1e-6);
        free(g[j]); free(a[j]); free(a0[j]);
    }
    free(x); free(W); free(dy);
}
END_TEST

// ---- embedding and learned positions ----

START_TEST(embedding_backward_scatter_adds)
{
    const int V = 11, C = 7, T = 9;
    const char *dir = "backward/embedding";
    int *ids = gc_load_i32(dir, "ids", T);
    float *dy = gc_load(dir, "dy", (long)T * C), *dtable = tt_zeros((long)V * C);
    ck_assert_int_eq(tw_embedding_backward(dtable, dy, ids, T, V, C), TW_OK);
    expect_grad(dir, "table", dtable, (long)V * C, REL_OP);
    // A bad id is refused before anything is written.
    float *before = tt_zeros((long)V * C);
    memcpy(before, dtable, sizeof(float) * V * C);
    ids[4] = V;
    ck_assert_int_eq(tw_embedding_backward(dtable, dy, ids, T, V, C), TW_ERR_SHAPE);
    ck_assert(memcmp(before, dtable, sizeof(float) * V * C) == 0);
    free(ids); free(dy); free(dtable); free(before);
}
END_TEST

START_TEST(learned_positions_backward_matches_autograd)
{
    const int T = 5, C = 7, P = 16, pos0 = 9;
    const char *dir = "backward/learned";
    float *dy = gc_load(dir, "dy", (long)T * C), *dtable = tt_zeros((long)P * C);
    tw_posenc_learned_backward(dtable, dy, T, C, pos0);
    expect_grad(dir, "table", dtable, (long)P * C, REL_OP);
    expect_grad(dir, "x", dy, (long)T * C, 0.0);   // in place: x's gradient is dy, unchanged
    free(dy); free(dtable);
}
END_TEST

// ---- norms ----

START_TEST(layernorm_backward_matches_autograd)
{
    const int T = SIZES[(_i + 1) % 5], C = SIZES[_i];
    char dir[64];
    snprintf(dir, sizeof dir, "backward/layernorm/%d", _i);
    float *x = gc_load(dir, "x", (long)T * C), *gamma = gc_load(dir, "gamma", C);
    float *beta = gc_load(dir, "beta", C), *eps = gc_load(dir, "eps", 1);
    float *dy = gc_load(dir, "dy", (long)T * C);
    float *out = tt_zeros((long)T * C), *mean = tt_zeros(T), *rstd = tt_zeros(T);
    float *dx = tt_zeros((long)T * C), *dg = tt_zeros(C), *db = tt_zeros(C);
    tw_layernorm_forward(out, mean, rstd, x, gamma, beta, T, C, eps[0]);
    tw_layernorm_backward(dx, dg, db, dy, x, mean, rstd, gamma, T, C);
    const char *names[3] = { "x", "gamma", "beta" };
    const long sizes[3] = { (long)T * C, C, C };
    // C = 1: every normalised value is 0, so dx vanishes exactly; the case scale bounds it.
    expect_grad_scaled(dir, "x", dx, (long)T * C, REL_OP, case_scale(dir, names, sizes, 3));
    expect_grad_scaled(dir, "gamma", dg, C, REL_OP, case_scale(dir, names, sizes, 3));
    expect_grad(dir, "beta", db, C, REL_OP);
    free(x); free(gamma); free(beta); free(eps); free(dy); free(out); free(mean); free(rstd);
    free(dx); free(dg); free(db);
}
END_TEST

START_TEST(rmsnorm_backward_matches_autograd)
{
    const int T = SIZES[(_i + 1) % 5], C = SIZES[_i];
    char dir[64];
    snprintf(dir, sizeof dir, "backward/rmsnorm/%d", _i);
    float *x = gc_load(dir, "x", (long)T * C), *gamma = gc_load(dir, "gamma", C);
    float *eps = gc_load(dir, "eps", 1), *dy = gc_load(dir, "dy", (long)T * C);
    float *out = tt_zeros((long)T * C), *rms = tt_zeros(T);
    float *dx = tt_zeros((long)T * C), *dg = tt_zeros(C);
    tw_rmsnorm_forward(out, rms, x, gamma, T, C, eps[0]);
    tw_rmsnorm_backward(dx, dg, dy, x, rms, gamma, T, C);
    const char *names[2] = { "x", "gamma" };
    const long sizes[2] = { (long)T * C, C };
    // C = 1: dx = gamma eps / (x^2 + eps)^1.5 is tiny and is the cancellation of two terms of
    // size |dy gamma| / rms, computed with the float-rounded rms; the case scale bounds it.
    expect_grad_scaled(dir, "x", dx, (long)T * C, REL_OP, case_scale(dir, names, sizes, 2));
    expect_grad(dir, "gamma", dg, C, REL_OP);
    free(x); free(gamma); free(eps); free(dy); free(out); free(rms); free(dx); free(dg);
}
END_TEST

// ---- activations ----

static const char *const ACT_NAMES[] = { "relu", "gelu_erf", "gelu_tanh", "silu" };

START_TEST(activation_backward_matches_autograd)
{
    char dir[64];
    snprintf(dir, sizeof dir, "backward/act/%s", ACT_NAMES[_i]);
    const long n = 814;   // 801 points on [-20, 20] and 13 extremes, as gen_core.py
    float *x = gc_load(dir, "x", n), *dy = gc_load(dir, "dy", n), *dx = tt_zeros(n);
    tw_activation_backward(dx, dy, x, n, (tw_act)_i);   // tw_act order: relu, gelu, gelu_tanh, silu
    expect_grad(dir, "x", dx, n, REL_OP);
    free(x); free(dy); free(dx);
}
END_TEST

// ---- softmax ----

START_TEST(softmax_backward_matches_autograd)
{
    char dir[64];
    int rows = 5, cols = 5;
    if (_i < 5) {
        rows = SIZES[(_i + 1) % 5]; cols = SIZES[_i];
        snprintf(dir, sizeof dir, "backward/softmax/%d", _i);
    } else {
        snprintf(dir, sizeof dir, "backward/softmax/extreme");
    }
    const long n = (long)rows * cols;
    float *x = gc_load(dir, "x", n), *temp = gc_load(dir, "temp", 1), *dy = gc_load(dir, "dy", n);
    float *y = tt_zeros(n), *dx = tt_zeros(n);
    tw_softmax_rows(y, x, rows, cols, temp[0]);
    tw_softmax_rows_backward(dx, dy, y, rows, cols, temp[0]);
    expect_grad(dir, "x", dx, n, REL_OP);
    free(x); free(temp); free(dy); free(y); free(dx);
}
END_TEST

// ---- cross-entropy ----

static const int CE_TV[][2] = { {1, 3}, {3, 7}, {7, 65}, {64, 1}, {65, 64} };

START_TEST(cross_entropy_matches_autograd)
{
    const int T = CE_TV[_i][0], V = CE_TV[_i][1];
    char dir[64];
    snprintf(dir, sizeof dir, "backward/cross_entropy/%d", _i);
    float *logits = gc_load(dir, "logits", (long)T * V), *dloss = gc_load(dir, "dloss", 1);
    float *want_loss = gc_load(dir, "loss", 1), *want_probs = gc_load(dir, "probs", (long)T * V);
    int *targets = gc_load_i32(dir, "targets", T);
    float *probs = tt_zeros((long)T * V), *dlogits = tt_zeros((long)T * V), loss = -1.0f;
    ck_assert_int_eq(tw_cross_entropy_forward(&loss, NULL, probs, logits, targets, T, V,
                                              TW_IGNORE_INDEX), TW_OK);
    // The loss is a double log-sum-exp rounded once: 1e-6 relative covers that rounding and the
    // float probabilities' 6e-8; measured worst 1e-7.
    ck_assert_msg(fabs(loss - want_loss[0]) <= 1e-6 * (1.0 + fabs(want_loss[0])),
                  "loss %.9g, torch %.9g", loss, want_loss[0]);
    ck_assert_grad("probs", probs, want_probs, (long)T * V, REL_OP, 0.0);
    ck_assert_int_eq(tw_cross_entropy_backward(dlogits, dloss[0], probs, targets, T, V,
                                               TW_IGNORE_INDEX), TW_OK);
    expect_grad(dir, "logits", dlogits, (long)T * V, REL_OP);
    free(logits); free(dloss); free(want_loss); free(want_probs); free(targets); free(probs);
    free(dlogits);
}
END_TEST

// probs may alias logits (the forward reads each logit before overwriting it); bad targets are
// refused without writing; a batch with every position ignored has loss 0 and no gradient.
START_TEST(cross_entropy_in_place_bad_targets_and_all_ignored)
{
    const int T = 3, V = 7;
    float *logits = tt_rand(T * V, -3, 3, 5), *probs = tt_zeros(T * V), *inplace = tt_zeros(T * V);
    int targets[3] = { 2, TW_IGNORE_INDEX, 6 };
    float l1, l2;
    memcpy(inplace, logits, sizeof(float) * T * V);
    ck_assert_int_eq(tw_cross_entropy_forward(&l1, NULL, probs, logits, targets, T, V, TW_IGNORE_INDEX), TW_OK);
    ck_assert_int_eq(tw_cross_entropy_forward(&l2, NULL, inplace, inplace, targets, T, V, TW_IGNORE_INDEX), TW_OK);
    ck_assert_float_eq(l1, l2);
    ck_assert(memcmp(probs, inplace, sizeof(float) * T * V) == 0);
    int bad[3] = { 2, 7, 0 };
    float *d = tt_zeros(T * V);
    ck_assert_int_eq(tw_cross_entropy_forward(&l1, NULL, probs, logits, bad, T, V, TW_IGNORE_INDEX), TW_ERR_SHAPE);
    ck_assert_int_eq(tw_cross_entropy_backward(d, 1.0f, probs, bad, T, V, TW_IGNORE_INDEX), TW_ERR_SHAPE);
    int none[3] = { TW_IGNORE_INDEX, TW_IGNORE_INDEX, TW_IGNORE_INDEX };
    ck_assert_int_eq(tw_cross_entropy_forward(&l1, NULL, probs, logits, none, T, V, TW_IGNORE_INDEX), TW_OK);
    ck_assert_float_eq(l1, 0.0f);
    ck_assert_int_eq(tw_cross_entropy_backward(d, 1.0f, probs, none, T, V, TW_IGNORE_INDEX), TW_OK);
    for (int i = 0; i < T * V; i++) ck_assert_float_eq(d[i], 0.0f);
    free(logits); free(probs); free(inplace); free(d);
}
END_TEST

// ---- RoPE ----

static const int ROPE_D[] = { 2, 6, 8, 64, 66 }, ROPE_H[] = { 1, 2, 3, 1, 2 };
static const int ROPE_POS0[] = { 0, 7, 100, 4096, 1 };
static const float ROPE_THETA[] = { 10000.0f, 1e6f, 10000.0f, 1e6f, 10000.0f };

START_TEST(rope_backward_matches_autograd)
{
    const int i = _i % 5, halves = _i >= 5;
    const int T = SIZES[i], H = ROPE_H[i], D = ROPE_D[i];
    const long n = (long)T * H * D;
    char dir[64];
    snprintf(dir, sizeof dir, "backward/rope_%s/%d", halves ? "halves" : "adjacent", i);
    float *dy = gc_load(dir, "dy", n);
    tw_rope_backward(dy, halves ? TW_ROPE_HALVES : TW_ROPE_ADJACENT, T, H, D, ROPE_POS0[i],
                     ROPE_THETA[i]);
    // One rotation of float pairs with float cos/sin (each rounded from double): two products
    // and a sum, ~3 * 2^-24 relative; REL_OP covers it. (Positions up to 4160 keep the double
    // angle exact enough that cos and sin are correctly rounded.)
    expect_grad(dir, "x", dy, n, REL_OP);
    free(dy);
}
END_TEST

// ---- scaled dot-product attention ----

static const char *const SDPA_CASES[] = {
    "causal_T3", "single_T1", "padmask_T7", "cross_T3_S7", "offset_T3_S7", "bias_T2_S65",
};

START_TEST(sdpa_backward_matches_autograd)
{
    char dir[96];
    snprintf(dir, sizeof dir, "backward/sdpa/%s", SDPA_CASES[_i]);
    int *c = gc_load_i32(dir, "cfg", 6);
    const int T = c[0], S = c[1], D = c[2], causal = c[3], offset = c[4], has_mask = c[5];
    float *q = gc_load(dir, "q", (long)T * D), *k = gc_load(dir, "k", (long)S * D);
    float *v = gc_load(dir, "v", (long)S * D), *dy = gc_load(dir, "dy", (long)T * D);
    float *mask = has_mask ? gc_load(dir, "mask", (long)T * S) : NULL;
    float *out = tt_zeros((long)T * D), *w = tt_zeros((long)T * S), *ds = tt_zeros((long)T * S);
    float *dq = tt_zeros((long)T * D), *dk = tt_zeros((long)S * D), *dv = tt_zeros((long)S * D);
    tw_sdpa_forward(out, NULL, w, q, k, v, mask, T, S, D, causal, offset);
    tw_sdpa_backward(dq, dk, dv, ds, dy, q, k, v, w, T, S, D);
    expect_grad(dir, "q", dq, (long)T * D, REL_OP);
    expect_grad(dir, "k", dk, (long)S * D, REL_OP);
    expect_grad(dir, "v", dv, (long)S * D, REL_OP);
    free(c); free(q); free(k); free(v); free(dy); free(mask); free(out); free(w); free(ds);
    free(dq); free(dk); free(dv);
}
END_TEST

// ---- multi-head attention ----

static const char *const MHA_CASES[] = {
    "mha_g1", "gqa2_adj", "gqa4_halves", "gqa8", "mqa", "qwen_headdim", "qknorm_adj_T1",
    "cross_mask", "cross_gqa", "noncausal",
};

START_TEST(mha_backward_matches_autograd)
{
    char dir[96];
    snprintf(dir, sizeof dir, "backward/mha/%s", MHA_CASES[_i]);
    int *c = gc_load_i32(dir, "cfg", 13);
    float *fc = gc_load(dir, "fcfg", 2);
    const int C = c[0], H = c[1], G = c[2], D = c[3], T = c[4], S = c[5], bias = c[9];
    const int qk = c[8], pos0 = c[10], cross = c[11];
    const long HD = (long)H * D, GD = (long)G * D;
    tw_mha_config cfg = { .d_model = C, .n_head = H, .n_kv_head = G, .head_dim = D,
                           .causal = c[6], .rope = (tw_rope_kind)c[7], .rope_theta = fc[0],
                           .qk_norm = qk, .norm_eps = fc[1] };
    // Weights and their gradient buffers, by name; sizes per tw_mha_weights.
    const char *names[10] = { "attn.wq", "attn.bq", "attn.wk", "attn.bk", "attn.wv", "attn.bv",
                              "attn.wo", "attn.bo", "attn.q_norm", "attn.k_norm" };
    const long sizes[10] = { HD * C, HD, GD * C, GD, GD * C, GD, C * HD, C, D, D };
    const int present[10] = { 1, bias, 1, bias, 1, bias, 1, bias, qk, qk };
    float *wt[10] = { 0 }, *gr[10] = { 0 };
    for (int j = 0; j < 10; j++)
        if (present[j]) { wt[j] = gc_load(dir, names[j], sizes[j]); gr[j] = tt_zeros(sizes[j]); }
    tw_mha_weights w = { tw_weight_fp32(wt[0]), wt[1], tw_weight_fp32(wt[2]), wt[3], tw_weight_fp32(wt[4]), wt[5], tw_weight_fp32(wt[6]), wt[7],
                         wt[8], wt[9] };
    tw_mha_grads dw = { gr[0], gr[1], gr[2], gr[3], gr[4], gr[5], gr[6], gr[7], gr[8], gr[9] };
    float *x = gc_load(dir, "x", (long)T * C), *dy = gc_load(dir, "dy", (long)T * C);
    float *x_kv = cross ? gc_load(dir, "x_kv", (long)S * C) : NULL;
    float *mask = c[12] ? gc_load(dir, "mask", (long)T * S) : NULL;
    float *out = tt_zeros((long)T * C), *dx = tt_zeros((long)T * C);
    float *dx_kv = cross ? tt_zeros((long)S * C) : NULL;
    const int n_kv = cross ? S : T;
    tw_mha_acts s;
    tw_mha_acts g;   // the gradients of the intermediates, in the same layout
    ck_assert_int_eq(tw_mha_acts_init(&s, &cfg, T, n_kv), TW_OK);
    ck_assert_int_eq(tw_mha_acts_init(&g, &cfg, T, n_kv), TW_OK);

    tw_mha_forward(out, &s, NULL, x, x_kv, mask, &cfg, &w, T, S, pos0);
    tw_mha_backward(dx, dx_kv, &dw, &g, dy, &s, x, x_kv, &cfg, &w, T, S, pos0);

    // The key bias's gradient is 0 in exact arithmetic (adding q.bk to a whole row of scores
    // does not change its softmax): the case scale bounds its rounding.
    const char *grad_names[10];
    for (int j = 0; j < 10; j++) grad_names[j] = present[j] ? names[j] : NULL;
    const double scale = case_scale(dir, grad_names, sizes, 10);
    expect_grad(dir, "x", dx, (long)T * C, REL_CHAIN);
    if (cross) expect_grad(dir, "x_kv", dx_kv, (long)S * C, REL_CHAIN);
    for (int j = 0; j < 10; j++)
        if (present[j]) expect_grad_scaled(dir, names[j], gr[j], sizes[j], REL_CHAIN, scale);

    tw_mha_acts_free(&s);
    tw_mha_acts_free(&g);
    for (int j = 0; j < 10; j++) { free(wt[j]); free(gr[j]); }
    free(c); free(fc); free(x); free(dy); free(x_kv); free(mask); free(out); free(dx); free(dx_kv);
}
END_TEST

// ---- feed-forward ----

static const char *const FFN_CASES[] = { "relu_bias", "gelu_bias_F65", "gelu_tanh", "swiglu",
                                         "swiglu_T7" };

START_TEST(ffn_backward_matches_autograd)
{
    char dir[96];
    snprintf(dir, sizeof dir, "backward/ffn/%s", FFN_CASES[_i]);
    int *c = gc_load_i32(dir, "cfg", 6);
    const int T = c[0], C = c[1], F = c[2], bias = c[4], swiglu = c[5];
    const tw_act act = (tw_act)c[3];
    const long TC = (long)T * C, TF = (long)T * F, FC = (long)F * C;
    float *x = gc_load(dir, "x", TC), *dy = gc_load(dir, "dy", TC);
    float *out = tt_zeros(TC), *dx = tt_zeros(TC);
    float *h1 = tt_zeros(TF), *h2 = tt_zeros(TF), *h3 = tt_zeros(TF), *s1 = tt_zeros(TF),
          *s2 = tt_zeros(TF);
    if (swiglu) {
        float *Wg = gc_load(dir, "ffn.gate", FC), *Wu = gc_load(dir, "ffn.up", FC);
        float *Wd = gc_load(dir, "ffn.down", FC);
        float *dWg = tt_zeros(FC), *dWu = tt_zeros(FC), *dWd = tt_zeros(FC);
        tw_swiglu_forward(out, h1, h2, h3, x, tw_weight_fp32(Wg), tw_weight_fp32(Wu),
                          tw_weight_fp32(Wd), T, C, F);
        tw_swiglu_backward(dx, dWg, dWu, dWd, s1, s2, dy, h1, h2, h3, x, Wg, Wu, Wd, T, C, F);
        expect_grad(dir, "ffn.gate", dWg, FC, REL_CHAIN);
        expect_grad(dir, "ffn.up", dWu, FC, REL_CHAIN);
        expect_grad(dir, "ffn.down", dWd, FC, REL_CHAIN);
        free(Wg); free(Wu); free(Wd); free(dWg); free(dWu); free(dWd);
    } else {
        float *W1 = gc_load(dir, "ffn.w1", FC), *W2 = gc_load(dir, "ffn.w2", FC);
        float *b1 = bias ? gc_load(dir, "ffn.b1", F) : NULL, *b2 = bias ? gc_load(dir, "ffn.b2", C) : NULL;
        float *dW1 = tt_zeros(FC), *dW2 = tt_zeros(FC), *db1 = tt_zeros(F), *db2 = tt_zeros(C);
        tw_ffn_forward_keep(out, h1, h2, x, tw_weight_fp32(W1), b1, tw_weight_fp32(W2), b2, T, C, F,
                            act);
        tw_ffn_backward(dx, dW1, bias ? db1 : NULL, dW2, bias ? db2 : NULL, s1, dy, h1, h2, x,
                        W1, W2, T, C, F, act);
        expect_grad(dir, "ffn.w1", dW1, FC, REL_CHAIN);
        expect_grad(dir, "ffn.w2", dW2, FC, REL_CHAIN);
        if (bias) {
            expect_grad(dir, "ffn.b1", db1, F, REL_CHAIN);
            expect_grad(dir, "ffn.b2", db2, C, REL_CHAIN);
        }
        free(W1); free(W2); free(b1); free(b2); free(dW1); free(dW2); free(db1); free(db2);
    }
    expect_grad(dir, "x", dx, TC, REL_CHAIN);
    free(c); free(x); free(dy); free(out); free(dx); free(h1); free(h2); free(h3); free(s1); free(s2);
}
END_TEST

// tw_ffn_forward_keep computes exactly what tw_ffn_forward does (same calls, same order).
START_TEST(ffn_forward_keep_equals_ffn_forward)
{
    const int T = 3, C = 7, F = 13;
    float *x = tt_rand(T * C, -2, 2, 1), *W1 = tt_rand(F * C, -1, 1, 2), *W2 = tt_rand(C * F, -1, 1, 3);
    float *b1 = tt_rand(F, -1, 1, 4), *b2 = tt_rand(C, -1, 1, 5);
    float *o1 = tt_zeros(T * C), *o2 = tt_zeros(T * C), *h = tt_zeros(T * F), *pre = tt_zeros(T * F),
          *h2 = tt_zeros(T * F);
    for (int a = 0; a < 4; a++) {
        tw_ffn_forward(o1, h, x, tw_weight_fp32(W1), b1, tw_weight_fp32(W2), b2, T, C, F, (tw_act)a);
        tw_ffn_forward_keep(o2, pre, h2, x, tw_weight_fp32(W1), b1, tw_weight_fp32(W2), b2, T, C, F,
                            (tw_act)a);
        ck_assert(memcmp(o1, o2, sizeof(float) * T * C) == 0);
        ck_assert(memcmp(h, h2, sizeof(float) * T * F) == 0);
    }
    free(x); free(W1); free(W2); free(b1); free(b2); free(o1); free(o2); free(h); free(pre); free(h2);
}
END_TEST

Suite *suite_grad_golden(void) {
    Suite *s = suite_create("grad_golden");
    TCase *tc = tcase_create("components");
    tcase_add_loop_test(tc, linear_backward_matches_autograd, 0, 10);
    tcase_add_test(tc, linear_backward_accumulates);
    tcase_add_test(tc, embedding_backward_scatter_adds);
    tcase_add_test(tc, learned_positions_backward_matches_autograd);
    tcase_add_loop_test(tc, layernorm_backward_matches_autograd, 0, 5);
    tcase_add_loop_test(tc, rmsnorm_backward_matches_autograd, 0, 5);
    tcase_add_loop_test(tc, activation_backward_matches_autograd, 0, 4);
    tcase_add_loop_test(tc, softmax_backward_matches_autograd, 0, 6);
    tcase_add_loop_test(tc, cross_entropy_matches_autograd, 0, 5);
    tcase_add_test(tc, cross_entropy_in_place_bad_targets_and_all_ignored);
    tcase_add_loop_test(tc, rope_backward_matches_autograd, 0, 10);
    tcase_add_loop_test(tc, sdpa_backward_matches_autograd, 0,
                        (int)(sizeof SDPA_CASES / sizeof SDPA_CASES[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("layers");
    tcase_add_loop_test(tc, mha_backward_matches_autograd, 0,
                        (int)(sizeof MHA_CASES / sizeof MHA_CASES[0]));
    tcase_add_loop_test(tc, ffn_backward_matches_autograd, 0,
                        (int)(sizeof FFN_CASES / sizeof FFN_CASES[0]));
    tcase_add_test(tc, ffn_forward_keep_equals_ffn_forward);
    suite_add_tcase(s, tc);
    return s;
}
