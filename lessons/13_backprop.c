// Lesson 13: backpropagation: the chain rule, one layer at a time.
//
// Teaches: a gradient says how much the loss changes when one number is nudged, and can be checked
// by nudging it (a finite difference); the chain rule turns "upstream gradient times local
// derivative" into three small formulas for a Linear layer (dx = dy W, dW = dy^T x, db = sum dy);
// RMSNorm's backward needs the 1/rms its forward computed (every output depends on every input of
// the row through it, and a stale statistic gives a wrong gradient); softmax fused with
// cross-entropy has the gradient probs - onehot, which no longer divides by a probability; and
// attention's backward runs through the saved attention map, so masked keys get no gradient from
// the queries that could not see them; the nudge h of a finite difference has a best size in
// float (the lesson prints the error from h = 0.5 to 1e-6); a whole pre-norm block's backward is
// those parts composed along its two residual paths (SwiGLU, RMSNorm, attention ending in RoPE's
// transpose), equal to tw_block_backward; and a tied token table collects two gradients, the
// head's (every row) and the lookup's (the rows of the input's tokens).
// Calls: tw_linear_forward/_backward, tw_rmsnorm_forward/_backward,
//        tw_cross_entropy_forward/_backward, tw_sdpa_forward/_backward, tw_rope_forward/_backward,
//        tw_swiglu_backward, tw_mha_backward, tw_block_forward/_backward,
//        tw_model_forward_backward, tw_model_loss.
// Build & run: make lesson13 && ./lesson13 [--seed N] [--out DIR]
// Writes: gradients.dat
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    13, "Backpropagation: the chain rule, checked by nudging",
    "Training needs the gradient of the loss with respect to every weight. This lesson derives the "
    "backward pass of a Linear layer by hand with the chain rule, then of RMSNorm, of softmax with "
    "cross-entropy and of one attention head, runs the library's _backward for each and prints "
    "every gradient beside a finite-difference estimate (nudge one number up and down, watch the "
    "loss). It also shows why the backward keeps statistics from the forward pass, why a smaller "
    "nudge is worse in float, a whole Llama block's backward composed from those parts (residual "
    "paths, SwiGLU, RoPE transposed) against the library's, and the two gradients of a tied "
    "embedding table."
};

// ---- finite differences ----

// A scalar loss of the current contents of the lesson's arrays.
typedef double (*loss_fn)(void *ctx);

// Central difference: (L(p + h) - L(p - h)) / 2h. The forward runs in float, whose rounding
// (about 1e-7 of each output) is divided by 2h: h = 1e-2 keeps that near 1e-5 while the h^2
// truncation error stays near 1e-4 of the curvature. Smaller h is NOT better in float (the
// lesson prints the error for h from 0.5 to 1e-6 after the RMSNorm section).
static const float H = 1e-2f;

static double finite_difference_h(loss_fn L, void *ctx, float *p, float h) {
    const float keep = *p;
    *p = keep + h; double up = L(ctx);
    *p = keep - h; double down = L(ctx);
    *p = keep;
    return (up - down) / (2.0 * h);
}

static double finite_difference(loss_fn L, void *ctx, float *p) { return finite_difference_h(L, ctx, p, H); }

// The rows of gradients.dat: (section, index, analytic, finite difference, |difference|).
static float *g_rows;
static int g_n, g_cap;

// Prints n gradients of `name` beside their finite differences, records them, and returns the
// largest |analytic - estimate|.
static double compare(int section, const char *name, const float *grad, float *param, int n,
                      loss_fn L, void *ctx) {
    double worst = 0.0;
    printf("  %-10s %4s %12s %12s %10s\n", name, "i", "backward", "nudging", "diff");
    for (int i = 0; i < n; i++) {
        double fd = finite_difference(L, ctx, &param[i]);
        double d = fabs(grad[i] - fd);
        if (d > worst) worst = d;
        printf("  %-10s %4d %12.6f %12.6f %10.2e\n", "", i, (double)grad[i], fd, d);
        if (g_n < g_cap) {
            float row[5] = { (float)section, (float)i, grad[i], (float)fd, (float)d };
            memcpy(g_rows + (size_t)g_n * 5, row, sizeof row);
            g_n++;
        }
    }
    return worst;
}

// ---- 1. Linear ----

enum { LT = 2, LCI = 3, LCO = 2 };
typedef struct { float x[LT * LCI], W[LCO * LCI], b[LCO], r[LT * LCO]; } linear_ctx;

// L = sum r * y, with y = x W^T + b: r plays the part of "the gradient arriving from above".
static double linear_loss(void *p) {
    linear_ctx *c = p;
    float y[LT * LCO];
    tw_linear_forward(y, c->x, c->W, c->b, LT, LCI, LCO);
    double L = 0.0;
    for (int i = 0; i < LT * LCO; i++) L += (double)c->r[i] * y[i];
    return L;
}

// ---- 2. RMSNorm ----

enum { NC = 4 };
typedef struct { float x[NC], w[NC], r[NC]; } rms_ctx;

static double rms_loss(void *p) {
    rms_ctx *c = p;
    float y[NC], rms;
    tw_rmsnorm_forward(y, &rms, c->x, c->w, 1, NC, 1e-5f);
    double L = 0.0;
    for (int i = 0; i < NC; i++) L += (double)c->r[i] * y[i];
    return L;
}

// ---- 3. cross-entropy ----

enum { CT = 3, CV = 5 };
typedef struct { float logits[CT * CV]; int targets[CT]; } ce_ctx;

static double ce_loss(void *p) {
    ce_ctx *c = p;
    float probs[CT * CV], loss;
    LESSON_TRY(tw_cross_entropy_forward(&loss, NULL, probs, c->logits, c->targets, CT, CV,
                                        TW_IGNORE_INDEX));
    return loss;
}

// ---- 4. attention ----

enum { AT = 3, AD = 2 };
typedef struct { float q[AT * AD], k[AT * AD], v[AT * AD], r[AT * AD]; } attn_ctx;

static double attn_loss(void *p) {
    attn_ctx *c = p;
    float out[AT * AD], w[AT * AT];
    tw_sdpa_forward(out, NULL, w, c->q, c->k, c->v, NULL, AT, AT, AD, 1, 0);
    double L = 0.0;
    for (int i = 0; i < AT * AD; i++) L += (double)c->r[i] * out[i];
    return L;
}

static void copy_uniform(float *dst, int n, float lo, float hi, uint64_t seed) {
    memcpy(dst, lesson_uniform(n, lo, hi, seed), sizeof(float) * (size_t)n);
}

// Agreement we ask of backward vs nudging: the finite difference's own error (rounding ~1e-5,
// truncation ~1e-4 times the third derivative) with room to spare, and far below the size of any
// gradient printed (0.05 .. 3), so a wrong formula cannot pass.
static const double AGREE = 2e-3;

// ---- the sections of main(), 1 to 4 ----

// 1. dW, dx and db of a Linear layer by hand, against tw_linear_backward and nudging.
static void chain_rule_through_linear(uint64_t seed) {
    lesson_say("A loss L depends on a layer's output y = x W^T + b. Suppose the layers above have "
               "already worked out dL/dy (call it dy, one number per output; here a random r, "
               "and L = sum r * y so that dL/dy = r exactly). The chain rule says: "
               "dL/dW[o][c] = sum over t of dy[t][o] * x[t][c] (each weight touches one input per "
               "row), dL/dx[t][c] = sum over o of dy[t][o] * W[o][c] (each input feeds every "
               "output), and dL/db[o] = sum over t of dy[t][o]. As matrices: dW = dy^T x, "
               "dx = dy W, db = the column sums of dy.");
    linear_ctx lc;
    copy_uniform(lc.x, LT * LCI, -1, 1, seed);
    copy_uniform(lc.W, LCO * LCI, -1, 1, seed + 1);
    copy_uniform(lc.b, LCO, -1, 1, seed + 2);
    copy_uniform(lc.r, LT * LCO, -1, 1, seed + 3);
    lesson_print_matrix("x", lc.x, LT, LCI);
    lesson_print_matrix("W", lc.W, LCO, LCI);
    lesson_print_matrix("dy = r", lc.r, LT, LCO);
    float dW_hand[LCO * LCI] = { 0 }, dx_hand[LT * LCI] = { 0 }, db_hand[LCO] = { 0 };
    for (int t = 0; t < LT; t++)
        for (int o = 0; o < LCO; o++) {
            const float dy = lc.r[t * LCO + o];
            for (int c = 0; c < LCI; c++) {
                dW_hand[o * LCI + c] += dy * lc.x[t * LCI + c];
                dx_hand[t * LCI + c] += dy * lc.W[o * LCI + c];
            }
            db_hand[o] += dy;
        }
    float dW[LCO * LCI] = { 0 }, dx[LT * LCI] = { 0 }, db[LCO] = { 0 };
    tw_linear_backward(dx, dW, db, lc.r, lc.x, lc.W, LT, LCI, LCO);
    lesson_expect_close("tw_linear_backward dW == by hand", dW, dW_hand, LCO * LCI, 1e-6f);
    lesson_expect_close("tw_linear_backward dx == by hand", dx, dx_hand, LT * LCI, 1e-6f);
    lesson_expect_close("tw_linear_backward db == by hand", db, db_hand, LCO, 1e-6f);
    lesson_say("Now check each one by nudging: change one number by +-h = %g, rerun the forward, "
               "and divide the change in L by 2h.", (double)H);
    double w1 = compare(1, "dW", dW, lc.W, LCO * LCI, linear_loss, &lc);
    double w2 = compare(1, "dx", dx, lc.x, LT * LCI, linear_loss, &lc);
    double w3 = compare(1, "db", db, lc.b, LCO, linear_loss, &lc);
    lesson_expect("every Linear gradient agrees with nudging within 2e-3",
                  fmax(w1, fmax(w2, w3)) <= AGREE);
    lesson_note("the backward costs about two forwards (two matrix products) and gives ALL the "
                "gradients at once; nudging costs two forwards PER NUMBER. That is why training "
                "uses backpropagation and why nudging is only a check.");
}

// How big a nudge: the error of the estimate of dx[0] against the backward's, for h from 0.5
// down to 1e-6. Two errors pull in opposite directions.
static void best_nudge_size(rms_ctx *rc, const float *rdx) {
    lesson_say("How big should the nudge h be? The estimate has two errors. Truncation: the "
               "central difference is off by about h^2/6 times the third derivative, so it shrinks "
               "as h does. Rounding: the loss is computed in float, each value carries an error "
               "of about 1e-7 of its size, and that error is divided by 2h, so it GROWS as h "
               "shrinks. dx[0] of the RMSNorm above, estimated with each h:");
    static const float HS[6] = { 0.5f, 1e-1f, 1e-2f, 1e-3f, 1e-4f, 1e-6f };
    double herr[6];
    printf("  %10s %14s %12s\n", "h", "nudging", "|error|");
    for (int i = 0; i < 6; i++) {
        const double fd = finite_difference_h(rms_loss, rc, &rc->x[0], HS[i]);
        herr[i] = fabs(fd - rdx[0]);
        printf("  %10.0e %14.8f %12.2e\n", (double)HS[i], fd, herr[i]);
    }
    lesson_expect("h = 1e-2 beats both a large h (0.5) and a tiny one (1e-6)",
                  herr[2] < herr[0] && herr[2] < herr[5]);
    lesson_note("smaller is not better in float: below about 1e-3 the rounding, divided by 2h, "
                "overtakes the truncation. This lesson nudges by h = 1e-2 and accepts 2e-3; in "
                "double (rounding about 1e-16) the balance moves to a far smaller h and error");
}

// The same backward handed a stale rms (10% larger); r1 is how far the real dx was from nudging.
static void stale_statistic(const rms_ctx *rc, float rms, const float *rdx, double r1) {
    lesson_say("What if the backward were handed a stale statistic, say the rms of the row before "
               "the last optimizer step (here: 10%% larger)? The formula runs, the numbers look "
               "plausible, and they are wrong:");
    float stale = rms * 1.1f, sdx[NC] = { 0 };
    tw_rmsnorm_backward(sdx, NULL, rc->r, rc->x, &stale, rc->w, 1, NC);
    double stale_err = 0.0;
    for (int i = 0; i < NC; i++) stale_err = fmax(stale_err, fabs(sdx[i] - rdx[i]));
    lesson_print_vector("dx with the saved rms", rdx, NC);
    lesson_print_vector("dx with a stale rms ", sdx, NC);
    // The real dx is within r1 of the nudged gradient, so the stale one is at least
    // stale_err - r1 away from it: a bound that holds for any seed, not a fixed 0.05.
    printf("  the stale dx moves by up to %.4f; it misses the nudged gradient by at least %.4f\n",
           stale_err, stale_err - r1);
    lesson_expect("a stale rms misses the nudged gradient by more than the 2e-3 asked above",
                  stale_err - r1 > AGREE);
    lesson_note("this is why a training step runs forward then backward on the SAME weights and "
                "keeps the forward's intermediates (inputs, rms, mean, 1/std, softmax outputs) until "
                "the backward has used them: they are most of a training step's memory.");
}

// 2. RMSNorm's backward, which needs the rms its forward computed.
static void rmsnorm_backward_needs_rms(uint64_t seed) {
    lesson_say("y = x / rms * w with rms = sqrt(mean(x^2) + eps). Every output of the row depends "
               "on every input through rms, so the chain rule gives, with g = dy * w and "
               "xhat = x / rms: dx = (g - xhat * mean(g * xhat)) / rms, and dw = dy * xhat. Both "
               "need rms. The forward has just computed it; tw_rmsnorm_forward hands it back (one "
               "number per row, C times smaller than the row) and tw_rmsnorm_backward takes it.");
    rms_ctx rc;
    copy_uniform(rc.x, NC, -2, 2, seed + 4);
    copy_uniform(rc.w, NC, 0.5f, 1.5f, seed + 5);
    copy_uniform(rc.r, NC, -1, 1, seed + 6);
    float y[NC], rms;
    tw_rmsnorm_forward(y, &rms, rc.x, rc.w, 1, NC, 1e-5f);
    lesson_print_vector("x", rc.x, NC);
    printf("  saved by the forward: rms = %.6f\n", (double)rms);
    float rdx[NC] = { 0 }, rdw[NC] = { 0 };
    tw_rmsnorm_backward(rdx, rdw, rc.r, rc.x, &rms, rc.w, 1, NC);
    double r1 = compare(2, "dx", rdx, rc.x, NC, rms_loss, &rc);
    double r2 = compare(2, "dw", rdw, rc.w, NC, rms_loss, &rc);
    lesson_expect("every RMSNorm gradient agrees with nudging within 2e-3", fmax(r1, r2) <= AGREE);

    best_nudge_size(&rc, rdx);
    stale_statistic(&rc, rms, rdx, r1);
}

// 3. Softmax with cross-entropy: probs minus one-hot, and a padded position.
static void softmax_cross_entropy_backward(uint64_t seed) {
    lesson_say("The loss of next-token prediction is -log p[target], averaged over the positions "
               "that have a target, with p = softmax(logits). Chained naively, the backward would "
               "divide by p[target] (from the log) and multiply by the softmax Jacobian; the two "
               "cancel into dL/dlogits = (p - onehot(target)) / n. Position 1 below is padding "
               "(target %d, ignored): it adds nothing to the loss and gets no gradient.",
               TW_IGNORE_INDEX);
    ce_ctx cc;
    copy_uniform(cc.logits, CT * CV, -2, 2, seed + 7);
    cc.targets[0] = 3; cc.targets[1] = TW_IGNORE_INDEX; cc.targets[2] = 0;
    float probs[CT * CV], loss, dlogits[CT * CV] = { 0 };
    LESSON_TRY(tw_cross_entropy_forward(&loss, NULL, probs, cc.logits, cc.targets, CT, CV,
                                        TW_IGNORE_INDEX));
    LESSON_TRY(tw_cross_entropy_backward(dlogits, 1.0f, probs, cc.targets, CT, CV,
                                         TW_IGNORE_INDEX));
    lesson_print_matrix("probs", probs, CT, CV);
    printf("  loss = %.6f (ln %d = %.6f would be a uniform guess)\n", (double)loss, CV, log(CV));
    lesson_print_matrix("dL/dlogits", dlogits, CT, CV);
    double c1 = compare(3, "dlogits", dlogits, cc.logits, CT * CV, ce_loss, &cc);
    lesson_expect("every cross-entropy gradient agrees with nudging within 2e-3", c1 <= AGREE);
    double rowsum = 0.0;
    int padding_zero = 1;
    for (int v = 0; v < CV; v++) {
        rowsum += dlogits[0 * CV + v];
        if (dlogits[1 * CV + v] != 0.0f) padding_zero = 0;
    }
    lesson_expect("each row of the gradient sums to 0 (probabilities sum to 1)", fabs(rowsum) < 1e-6);
    lesson_expect("the padded position gets exactly zero gradient", padding_zero);
    lesson_expect("the target's logit is pushed up (negative gradient)", dlogits[0 * CV + 3] < 0.0f);
}

// 4. One attention head's backward, through the attention map its forward saved.
static void attention_backward_through_map(uint64_t seed) {
    lesson_say("out = softmax(q k^T / sqrt(D) + causal mask) v. The backward goes through the same "
               "three steps in reverse, using the attention weights A (T, T) the forward saved (A, not "
               "W: W above was a Linear layer's weight): dv = A^T dout; dA = dout v^T; through the "
               "softmax, dscores = A * (dA - rowsum(A * dA)); then "
               "dq = dscores k / sqrt(D) and dk = dscores^T q / sqrt(D). The mask needs no "
               "backward of its own: a hidden key has weight exactly 0, so its dscores is 0 too.");
    attn_ctx ac;
    copy_uniform(ac.q, AT * AD, -1.5f, 1.5f, seed + 8);
    copy_uniform(ac.k, AT * AD, -1.5f, 1.5f, seed + 9);
    copy_uniform(ac.v, AT * AD, -1.5f, 1.5f, seed + 10);
    copy_uniform(ac.r, AT * AD, -1, 1, seed + 11);
    float out[AT * AD], wts[AT * AT], dsc[AT * AT];
    float dq[AT * AD] = { 0 }, dk[AT * AD] = { 0 }, dv[AT * AD] = { 0 };
    tw_sdpa_forward(out, NULL, wts, ac.q, ac.k, ac.v, NULL, AT, AT, AD, 1, 0);
    tw_sdpa_backward(dq, dk, dv, dsc, ac.r, ac.q, ac.k, ac.v, wts, AT, AT, AD);
    lesson_print_matrix("A, the saved attention weights (causal)", wts, AT, AT);
    double a1 = compare(4, "dq", dq, ac.q, AT * AD, attn_loss, &ac);
    double a2 = compare(4, "dk", dk, ac.k, AT * AD, attn_loss, &ac);
    double a3 = compare(4, "dv", dv, ac.v, AT * AD, attn_loss, &ac);
    lesson_expect("every attention gradient agrees with nudging within 2e-3",
                  fmax(a1, fmax(a2, a3)) <= AGREE);
    // The last value row is seen only by the last query: dv[last] = w[last][last] * dout[last].
    int last_ok = 1;
    for (int d = 0; d < AD; d++) {
        float want = wts[(AT - 1) * AT + (AT - 1)] * ac.r[(AT - 1) * AD + d];
        if (fabsf(dv[(AT - 1) * AD + d] - want) > 1e-6f) last_ok = 0;
    }
    lesson_expect("the last value gets gradient only from the last query (causal mask)", last_ok);
    lesson_note("dq of the first query is exactly 0: it sees one key, its weight is 1 whatever the "
                "score, so nudging q[0] changes nothing (the printed nudging agrees).");
    lesson_expect("the first query's gradient is exactly 0", dq[0] == 0.0f && dq[1] == 0.0f);
}

// ---- 5. a whole block, and 6. a tied embedding ----

enum { BT = 5, BV = 12 };   // positions, and the vocabulary of the tiny model below

// A tiny Llama-style model: 1 layer, C 8, 2 heads of width 4 (RoPE, adjacent pairs), SwiGLU to
// F 16, RMSNorm, and the head tied to the token table. Random weights, gains near 1.
static void make_tiny(tw_model *m, uint64_t seed) {
    tw_model_config c;
    tw_model_config_preset(&c, "llama");
    c.vocab = BV; c.max_seq = 8; c.n_layer = 1; c.tied = 1;
    c.block.attn.d_model = 8; c.block.attn.n_head = 2; c.block.attn.n_kv_head = 2;
    c.block.attn.head_dim = 4; c.block.ffn_hidden = 16;
    LESSON_TRY(tw_model_init(m, &c));
    tw_model_randomize(m, seed);
    for (int i = 0; i < m->n_params; i++)   // larger weights than 0.02, so every path matters
        if (m->params[i].kind != TW_PARAM_GAIN)
            for (long j = 0; j < m->params[i].count; j++) m->params[i].data[j] *= 20.0f;
}

typedef struct { const tw_model *m; tw_block_acts *s; const float *x, *r; float *y; } block_ctx;

// L = sum r * block(x), the block being layer 0 of the tiny model.
static double block_loss(void *p) {
    block_ctx *c = p;
    tw_block_forward(c->y, c->s, NULL, c->x, &c->m->cfg.block, &c->m->layers[0], BT, 0);
    double L = 0.0;
    for (int i = 0; i < BT * c->m->cfg.block.attn.d_model; i++) L += (double)c->r[i] * c->y[i];
    return L;
}

// A writable pointer to a parameter of g by name.
static float *grad_of(tw_model_grads *g, const char *name) {
    tw_param *p = tw_model_param(g, name);
    if (!p) lesson_die("no parameter %s", name);
    return p->data;
}

static void block_backward_composed(uint64_t seed) {
    lesson_say("A pre-norm Llama block is h = x + Attn(Norm1(x)), y = h + FFN(Norm2(h)). Going "
               "back from dy: the residual sum copies dy to both of its inputs, so dh = dy "
               "(straight through) + the gradient that comes back through the FFN and Norm2; then "
               "dx = dh + the gradient back through attention and Norm1. Each sub-layer is a "
               "backward we have met: SwiGLU (through Wd, then d up = d act * silu(gate), d gate = "
               "d act * up * silu'(gate), then Wg and Wu), RMSNorm, and attention, which ends with "
               "RoPE's backward: RoPE rotates each pair by an angle, a rotation's transpose is the "
               "rotation by minus that angle, so the gradient is turned back.");
    // RoPE's transpose, on one head vector: <R a, b> = <a, R^T b>.
    float ra[4], rb[4];
    memcpy(ra, lesson_uniform(4, -1, 1, seed + 40), sizeof ra);
    memcpy(rb, lesson_uniform(4, -1, 1, seed + 41), sizeof rb);
    double lhs = 0.0, rhs = 0.0;
    float Ra[4], Rtb[4];
    memcpy(Ra, ra, sizeof Ra); memcpy(Rtb, rb, sizeof Rtb);
    tw_rope_forward(Ra, TW_ROPE_ADJACENT, 1, 1, 4, 3, 10000.0f);    // R a at position 3
    tw_rope_backward(Rtb, TW_ROPE_ADJACENT, 1, 1, 4, 3, 10000.0f);  // R^T b
    for (int i = 0; i < 4; i++) { lhs += (double)Ra[i] * rb[i]; rhs += (double)ra[i] * Rtb[i]; }
    printf("  RoPE at position 3: <R a, b> = %.7f, <a, R^T b> = %.7f\n", lhs, rhs);
    // 1e-6: two float rotations of numbers below 1, summed in double.
    lesson_expect_near("RoPE's backward is its transpose", lhs, rhs, 1e-6);

    tw_model m;
    make_tiny(&m, seed + 42);
    const tw_block_config *cfg = &m.cfg.block;
    const tw_block_weights *w = &m.layers[0];
    const int C = cfg->attn.d_model, F = cfg->ffn_hidden;
    float *x = lesson_uniform((long)BT * C, -1, 1, seed + 43), *r = lesson_uniform((long)BT * C, -1, 1, seed + 44);
    float *y = lesson_alloc((long)BT * C);
    tw_block_acts s, ds;
    tw_mha_acts dattn;
    LESSON_TRY(tw_block_acts_init(&s, cfg, BT, BT));
    LESSON_TRY(tw_mha_acts_init(&dattn, &cfg->attn, BT, BT));
    tw_model_grads gh, gl;   // the by-hand composition's gradients, and tw_block_backward's
    LESSON_TRY(tw_model_grads_init(&gh, &m));
    LESSON_TRY(tw_model_grads_init(&gl, &m));

    // By hand, from the parts: the two residual paths are the two copies of a gradient below.
    tw_block_forward(y, &s, NULL, x, cfg, w, BT, 0);
    float *dh = lesson_alloc((long)BT * C), *dx = lesson_alloc((long)BT * C);
    float *dffn_norm = lesson_alloc((long)BT * C), *dattn_norm = lesson_alloc((long)BT * C);
    float *dgate = lesson_alloc((long)BT * F), *dup = lesson_alloc((long)BT * F);
    memcpy(dh, r, sizeof(float) * BT * C);                                   // y = h + ...: dh = dy
    tw_swiglu_backward(dffn_norm, grad_of(&gh, "layers.0.ffn.gate"), grad_of(&gh, "layers.0.ffn.up"),
                       grad_of(&gh, "layers.0.ffn.down"), dgate, dup, r, s.ffn_gate, s.ffn_up,
                       s.ffn_act, s.ffn_norm, w->ffn_gate.f32, w->ffn_up.f32, w->ffn_down.f32, BT, C, F);
    tw_rmsnorm_backward(dh, grad_of(&gh, "layers.0.norm2.w"), dffn_norm, s.resid_mid, s.ffn_norm_rms,
                        w->norm2_w, BT, C);                                   // dh += through Norm2
    memcpy(dx, dh, sizeof(float) * BT * C);                                  // h = x + ...: dx = dh
    const tw_mha_grads ag = { grad_of(&gh, "layers.0.attn.wq"), NULL, grad_of(&gh, "layers.0.attn.wk"), NULL,
                              grad_of(&gh, "layers.0.attn.wv"), NULL, grad_of(&gh, "layers.0.attn.wo"),
                              NULL, NULL, NULL };
    tw_mha_backward(dattn_norm, NULL, &ag, &dattn, dh, &s.attn, s.attn_norm, NULL, &cfg->attn,
                    &w->attn, BT, BT, 0);                                     // ends with RoPE^T
    tw_rmsnorm_backward(dx, grad_of(&gh, "layers.0.norm1.w"), dattn_norm, s.attn_in, s.attn_norm_rms,
                        w->norm1_w, BT, C);                                   // dx += through Norm1

    // The library's block backward (the forward again: the backward used its per-head rows).
    tw_block_forward(y, &s, NULL, x, cfg, w, BT, 0);
    LESSON_TRY(tw_block_acts_init(&ds, cfg, BT, BT));
    float *dx_lib = lesson_alloc((long)BT * C);
    // Named fields; the ones not named (biases, LayerNorm betas, the classic FFN, experts,
    // latent attention) are NULL: this block has none of them.
    const tw_block_grads bg = {
        .norm1_w = grad_of(&gl, "layers.0.norm1.w"),
        .attn = { .wq = grad_of(&gl, "layers.0.attn.wq"), .wk = grad_of(&gl, "layers.0.attn.wk"),
                  .wv = grad_of(&gl, "layers.0.attn.wv"), .wo = grad_of(&gl, "layers.0.attn.wo") },
        .norm2_w = grad_of(&gl, "layers.0.norm2.w"),
        .ffn_gate = grad_of(&gl, "layers.0.ffn.gate"), .ffn_up = grad_of(&gl, "layers.0.ffn.up"),
        .ffn_down = grad_of(&gl, "layers.0.ffn.down") };
    tw_block_backward(dx_lib, &bg, &ds, r, &s, cfg, w, BT);
    // 0 difference expected: the same functions in the same order; 1e-6 would allow another
    // order of the residual additions.
    lesson_expect_close("dx composed by hand == tw_block_backward's", dx, dx_lib, (long)BT * C, 1e-6f);
    lesson_expect_close("every weight gradient composed by hand == tw_block_backward's", gh.memory,
                        gl.memory, gl.n_floats, 1e-6f);

    lesson_say("And the block's gradients against nudging (L = sum r * y, float forward, h = 0.01), "
               "two entries of each kind of weight and of x:");
    block_ctx bc = { &m, &s, x, r, y };
    static const char *const NAMES[7] = { "layers.0.attn.wq", "layers.0.attn.wk", "layers.0.attn.wo",
                                          "layers.0.ffn.gate", "layers.0.ffn.down", "layers.0.norm1.w",
                                          "layers.0.norm2.w" };
    static const char *const SHORT[7] = { "dWq", "dWk", "dWo", "dWgate", "dWdown", "dnorm1", "dnorm2" };
    double worst = compare(5, "dx", dx_lib, x, 2, block_loss, &bc);
    for (int i = 0; i < 7; i++)
        worst = fmax(worst, compare(5, SHORT[i], grad_of(&gl, NAMES[i]), tw_model_param(&m, NAMES[i])->data,
                                    2, block_loss, &bc));
    lesson_expect("every block gradient agrees with nudging within 2e-3", worst <= AGREE);
    lesson_note("dWq and dWk come back through RoPE's transpose: the queries and keys at positions "
                "1 to 4 were rotated (position 0 is not), and their gradients are turned back "
                "before dW = dq^T x");
    tw_block_acts_free(&s); tw_block_acts_free(&ds); tw_mha_acts_free(&dattn);
    tw_model_grads_free(&gh); tw_model_grads_free(&gl);
    tw_model_free(&m);
}

typedef struct { tw_model *m; tw_model_state *s; const int *tok, *tg; } model_ctx;

static double model_loss(void *p) {
    model_ctx *c = p;
    float l;
    LESSON_TRY(tw_model_loss(&l, c->s, c->m, c->tok, c->tg, 1, BT));
    return l;
}

static void tied_embedding_two_gradients(uint64_t seed) {
    lesson_say("With a tied head the token table E (V, C) is used twice: as the embedding lookup "
               "(row tok[t] enters the stream) and as the head (logits = h E^T). Its gradient is "
               "the sum of both: the head's part dE += dlogits^T h, which every row receives (each "
               "token's logit was scored), and the lookup's part, d embed[t] added to row tok[t] "
               "only. A token that never appears in the input still learns, through the head.");
    tw_model m;
    make_tiny(&m, seed + 50);
    const int C = m.cfg.block.attn.d_model, V = BV;
    const int tok[BT] = { 1, 3, 5, 3, 7 }, tg[BT] = { 3, 5, 3, 7, 2 };   // token 0 is never used
    tw_model_state s, ds;
    tw_model_grads g;
    LESSON_TRY(tw_model_state_init(&s, &m, BT, 0));
    LESSON_TRY(tw_model_state_init(&ds, &m, BT, 0));
    LESSON_TRY(tw_model_grads_init(&g, &m));
    float loss;
    LESSON_TRY(tw_model_forward_backward(&loss, &g, &ds, &s, &m, tok, tg, 1, BT, 1.0f));
    // The two parts, from what the backward left: ds.logits = dlogits, ds.embed = d embed.
    float *head = lesson_alloc((long)V * C), *lookup = lesson_alloc((long)V * C), *sum = lesson_alloc((long)V * C);
    tw_linear_backward(NULL, head, NULL, ds.logits, s.final_norm, m.tok_emb, BT, C, V);
    for (int t = 0; t < BT; t++)
        for (int c = 0; c < C; c++) lookup[tok[t] * C + c] += ds.embed[t * C + c];
    for (long i = 0; i < (long)V * C; i++) sum[i] = head[i] + lookup[i];
    printf("  row   |head part|   |lookup part|   (in the input?)\n");
    static const int ROWS[3] = { 0, 3, 5 };
    for (int i = 0; i < 3; i++) {
        double nh = 0, nl = 0;
        for (int c = 0; c < C; c++) { nh += head[ROWS[i] * C + c] * head[ROWS[i] * C + c]; nl += lookup[ROWS[i] * C + c] * lookup[ROWS[i] * C + c]; }
        printf("  %3d   %11.6f   %13.6f   %s\n", ROWS[i], sqrt(nh), sqrt(nl), ROWS[i] == 0 ? "no" : "yes");
    }
    // 1e-6: the library adds the same two parts, in its own order, in float.
    lesson_expect_close("the table's gradient is the head part plus the lookup part", g.tok_emb, sum,
                        (long)V * C, 1e-6f);
    lesson_expect("token 0, never in the input, gets a gradient only through the head",
                  lookup[0] == 0.0f && head[0] != 0.0f);
    model_ctx mc = { &m, &s, tok, tg };
    const double w1 = compare(6, "dE[0]", g.tok_emb, m.tok_emb, 2, model_loss, &mc);
    const double w2 = compare(6, "dE[3]", g.tok_emb + 3 * C, m.tok_emb + 3 * C, 2, model_loss, &mc);
    lesson_expect("the tied table's gradient agrees with nudging within 2e-3", fmax(w1, w2) <= AGREE);
    tw_model_state_free(&s); tw_model_state_free(&ds);
    tw_model_grads_free(&g);
    tw_model_free(&m);
}

// ---- files ----

// gradients.dat: every gradient compare() printed, beside its finite difference.
static void write_gradients(void) {
    static const char *const COLS[5] = { "section", "index", "backward", "nudging", "abs_diff" };
    lesson_write_columns("gradients.dat", g_rows, g_n, 5, COLS,
                         "lesson 13: every gradient printed, beside its central finite difference "
                         "(h = 0.01); sections 1 Linear, 2 RMSNorm, 3 cross-entropy, 4 attention, 5 a "
                         "whole block, 6 a tied embedding");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 13, .T = 0 }, NULL);
    g_cap = 256;
    g_rows = lesson_alloc((long)g_cap * 5);

    lesson_section("The chain rule through one Linear layer, by hand");
    chain_rule_through_linear(a.seed);

    lesson_section("RMSNorm: the backward needs what the forward saw");
    rmsnorm_backward_needs_rms(a.seed);

    lesson_section("Softmax and cross-entropy: probs minus one-hot");
    softmax_cross_entropy_backward(a.seed);

    lesson_section("One attention head: backward through the saved attention map");
    attention_backward_through_map(a.seed);

    lesson_section("A whole block: residual paths, SwiGLU, RoPE transposed");
    block_backward_composed(a.seed);

    lesson_section("A tied embedding: one table, two gradients");
    tied_embedding_two_gradients(a.seed);

    lesson_section("Files");
    write_gradients();
    lesson_say("Try it: make exercise11 (Linear backward), make exercise12 (cross-entropy backward), make exercise27 (RMSNorm backward)");
    return lesson_finish();
}
