// Lesson 20: autograd: a reverse-mode automatic differentiator over scalars, in this file.
//
// Teaches: what PyTorch's autograd does when you call loss.backward(). Every arithmetic operation
// of the forward pass is appended to a tape (its kind, its inputs, its value); backward walks the
// tape in reverse topological order (a node after every node that used it) and applies the chain
// rule once per node: its gradient, times its local derivative, is added to each input's. A value
// used twice collects two contributions before it passes its own on. The same hundred-odd lines
// differentiate a tiny MLP with a cross-entropy loss and one causal attention head, and agree with
// the library's hand-written backward functions (which are checked against PyTorch) and with
// finite differences. The cost is the reason the library does not work this way: one node, 32
// bytes, per scalar operation.
// Calls: tw_linear_forward/_backward, tw_silu/_backward, tw_cross_entropy_forward/_backward,
//        tw_sdpa_forward/_backward (the references); the autograd itself is in this file.
// Build & run: make lesson20 && ./lesson20 [--seed N] [--out DIR]
// Writes: tape.txt gradients.dat
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    20, "Autograd: the chain rule, automated over a tape of scalars",
    "A reverse-mode automatic differentiator in about 150 lines: every operation of the forward "
    "pass is recorded on a tape, and backward walks it in reverse topological order, applying the "
    "chain rule once per node. It differentiates a small expression (printed node by node), a "
    "value used twice, a tiny MLP with cross-entropy and one causal attention head, and every "
    "gradient is checked against the library's hand-written backward and finite differences."
};

// ---- the autograd: a tape of scalar operations ----

typedef enum { AG_LEAF, AG_ADD, AG_MUL, AG_EXP, AG_LOG, AG_RECIP } ag_op;
static const char *const AG_NAME[] = { "leaf", "add", "mul", "exp", "log", "recip" };

// One scalar of the computation: how it was made, from which nodes, its value, and (after
// backward) the gradient of the output with respect to it.
typedef struct {
    ag_op  op;
    int    a, b;     // input node ids (-1: none)
    double val;
    double grad;
} ag_node;

// The tape: nodes in the order they were made. An input is always made before the node that
// uses it, so ids only point backwards.
typedef struct {
    ag_node *n;      // (cap)
    int      len, cap;
} ag_tape;

static int ag_push(ag_tape *t, ag_op op, int a, int b, double val) {
    if (t->len == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        ag_node *grown = realloc(t->n, (size_t)t->cap * sizeof *grown);
        if (!grown) lesson_die("out of memory for the tape (%d nodes)", t->len);
        t->n = grown;
    }
    t->n[t->len] = (ag_node){ op, a, b, val, 0.0 };
    return t->len++;
}

static void ag_free(ag_tape *t) { free(t->n); memset(t, 0, sizeof *t); }

// The operations. Each computes its value now and records how to differentiate it later.
static int ag_leaf(ag_tape *t, double v) { return ag_push(t, AG_LEAF, -1, -1, v); }
static int ag_add(ag_tape *t, int a, int b) { return ag_push(t, AG_ADD, a, b, t->n[a].val + t->n[b].val); }
static int ag_mul(ag_tape *t, int a, int b) { return ag_push(t, AG_MUL, a, b, t->n[a].val * t->n[b].val); }
static int ag_exp(ag_tape *t, int a) { return ag_push(t, AG_EXP, a, -1, exp(t->n[a].val)); }
static int ag_log(ag_tape *t, int a) { return ag_push(t, AG_LOG, a, -1, log(t->n[a].val)); }
static int ag_recip(ag_tape *t, int a) { return ag_push(t, AG_RECIP, a, -1, 1.0 / t->n[a].val); }
// Built from those: a * c for a constant c, and a - b.
static int ag_scale(ag_tape *t, int a, double c) { return ag_mul(t, a, ag_leaf(t, c)); }
static int ag_sub(ag_tape *t, int a, int b) { return ag_add(t, a, ag_scale(t, b, -1.0)); }

// The nodes `out` depends on, each after all of its inputs (a topological order), found by a
// depth-first walk from out. order: (t->len) receives the ids; returns how many. Iterative, with
// an explicit stack, so a long chain of additions cannot overflow the C stack.
static int ag_topo_order(const ag_tape *t, int out, int *order) {
    unsigned char *state = calloc((size_t)t->len, 1);   // 0 unseen, 1 on the stack, 2 placed
    int *stack = malloc((size_t)t->len * sizeof *stack);
    if (!state || !stack) lesson_die("out of memory for the topological order");
    int top = 0, n = 0;
    stack[top++] = out;
    state[out] = 1;
    while (top > 0) {
        const int id = stack[top - 1];
        const ag_node *x = &t->n[id];
        if (x->a >= 0 && state[x->a] == 0) { state[x->a] = 1; stack[top++] = x->a; continue; }
        if (x->b >= 0 && state[x->b] == 0) { state[x->b] = 1; stack[top++] = x->b; continue; }
        top--;               // both inputs placed: place this node
        state[id] = 2;
        order[n++] = id;
    }
    free(state);
    free(stack);
    return n;
}

// Reverse mode: d out / d out = 1; then every node, in reverse topological order (so all of its
// users have already added their contributions to its gradient), applies its local rule once,
// adding its gradient times its local derivative to each input's. Returns how many nodes did.
static int ag_backward(ag_tape *t, int out) {
    int *order = malloc((size_t)t->len * sizeof *order);
    if (!order) lesson_die("out of memory for the backward pass");
    for (int i = 0; i < t->len; i++) t->n[i].grad = 0.0;
    const int n = ag_topo_order(t, out, order);
    t->n[out].grad = 1.0;
    for (int k = n - 1; k >= 0; k--) {
        const ag_node *x = &t->n[order[k]];
        const double g = x->grad;
        switch (x->op) {
        case AG_LEAF:  break;                                     // nothing below it
        case AG_ADD:   t->n[x->a].grad += g; t->n[x->b].grad += g; break;
        case AG_MUL:   t->n[x->a].grad += g * t->n[x->b].val; t->n[x->b].grad += g * t->n[x->a].val; break;
        case AG_EXP:   t->n[x->a].grad += g * x->val; break;      // (e^a)' = e^a, already computed
        case AG_LOG:   t->n[x->a].grad += g / t->n[x->a].val; break;
        case AG_RECIP: t->n[x->a].grad -= g * x->val * x->val; break;   // (1/a)' = -1/a^2
        }
    }
    free(order);
    return n;
}

// ---- layers written with the tape (ids in, ids out) ----

// y = x W^T + b.   y: (T, Co)   x: (T, Ci)   W: (Co, Ci)   b: (Co)   (all node ids)
static void ag_linear(ag_tape *t, int *y, const int *x, const int *W, const int *b, int T, int Ci, int Co) {
    for (int r = 0; r < T; r++)
        for (int o = 0; o < Co; o++) {
            int acc = b[o];
            for (int c = 0; c < Ci; c++) acc = ag_add(t, acc, ag_mul(t, x[r * Ci + c], W[o * Ci + c]));
            y[r * Co + o] = acc;
        }
}

// silu(x) = x / (1 + e^-x), element by element.   y, x: (n)
static void ag_silu(ag_tape *t, int *y, const int *x, int n) {
    for (int i = 0; i < n; i++) {
        const int one = ag_leaf(t, 1.0);
        const int e = ag_exp(t, ag_scale(t, x[i], -1.0));
        y[i] = ag_mul(t, x[i], ag_recip(t, ag_add(t, one, e)));
    }
}

// The mean over T rows of -log softmax(z[r])[target[r]] = log sum_v e^(z_v - m) - (z_target - m).
// m, the row's maximum, is a constant leaf: softmax does not depend on it, so no gradient need
// flow through it (it is only there so that e^(z - m) cannot overflow).   z: (T, V)
static int ag_cross_entropy(ag_tape *t, const int *z, const int *target, int T, int V) {
    int total = ag_leaf(t, 0.0);
    for (int r = 0; r < T; r++) {
        const int *row = z + r * V;
        double mx = t->n[row[0]].val;
        for (int v = 1; v < V; v++) mx = fmax(mx, t->n[row[v]].val);
        const int m = ag_leaf(t, mx);
        int sum = ag_leaf(t, 0.0);
        for (int v = 0; v < V; v++) sum = ag_add(t, sum, ag_exp(t, ag_sub(t, row[v], m)));
        const int lse = ag_log(t, sum);
        total = ag_add(t, total, ag_sub(t, lse, ag_sub(t, row[target[r]], m)));
    }
    return ag_scale(t, total, 1.0 / T);
}

// Leaves for n floats.   ids: (n)
static void ag_leaves(ag_tape *t, int *ids, const float *x, int n) {
    for (int i = 0; i < n; i++) ids[i] = ag_leaf(t, x[i]);
}

// The gradients of n leaves, as floats.   g: (n)
static void ag_grads(const ag_tape *t, float *g, const int *ids, int n) {
    for (int i = 0; i < n; i++) g[i] = (float)t->n[ids[i]].grad;
}

// ---- the lesson ----

// The rows of gradients.dat: (part, index, autograd, library, |difference|).
static float *g_rows;
static int g_n, g_cap;

// Records n gradients of one tensor and returns the largest |autograd - library|.
static double record(int part, const float *ag, const float *lib, int n) {
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        const double d = fabs((double)ag[i] - lib[i]);
        worst = fmax(worst, d);
        if (g_n < g_cap) {
            const float row[5] = { (float)part, (float)i, ag[i], lib[i], (float)d };
            memcpy(g_rows + (size_t)g_n * 5, row, sizeof row);
            g_n++;
        }
    }
    return worst;
}

// 1. One expression, node by node: L = log(a b + e^c).
static void section_expression(void) {
    lesson_section("A tape, node by node");
    lesson_say("The forward pass runs as usual, but every operation also appends a node to the "
               "tape: its kind, the ids of its inputs, its value. For L = log(a b + e^c) with "
               "a = 2, b = 0.25, c = 0.5 the tape is seven nodes (three leaves, four operations). backward() then sets dL/dL = 1 and "
               "walks the tape from the end, each node adding (its gradient) x (its local "
               "derivative) to its inputs' gradients: add passes its gradient on unchanged, mul "
               "swaps the two values, exp multiplies by its own value, log divides by its input.");
    ag_tape t = { 0 };
    const int a = ag_leaf(&t, 2.0), b = ag_leaf(&t, 0.25), c = ag_leaf(&t, 0.5);
    const int ab = ag_mul(&t, a, b);   // one statement per node: C leaves the order of a call's
    const int ec = ag_exp(&t, c);      // arguments open, and the tape's order should not depend on it
    const int L = ag_log(&t, ag_add(&t, ab, ec));
    const int visited = ag_backward(&t, L);
    char text[2048];
    size_t k = 0;
    k += (size_t)snprintf(text + k, sizeof text - k, "  id  op      inputs        value     gradient dL/d(node)\n");
    for (int i = 0; i < t.len && k < sizeof text; i++) {
        const ag_node *x = &t.n[i];
        char in[32] = "";
        if (x->a >= 0) snprintf(in, sizeof in, x->b >= 0 ? "%d, %d" : "%d", x->a, x->b);
        k += (size_t)snprintf(text + k, sizeof text - k, "  %2d  %-6s  %-8s %10.6f  %12.6f\n", i,
                              AG_NAME[x->op], in, x->val, x->grad);
    }
    fputs(text, stdout);
    lesson_write_text("tape.txt", text);
    const double s = 2.0 * 0.25 + exp(0.5);   // dL/da = b / s, dL/db = a / s, dL/dc = e^c / s
    printf("  by hand: dL/da = b/s = %.6f, dL/db = a/s = %.6f, dL/dc = e^c/s = %.6f (s = ab + e^c = %.6f)\n",
           0.25 / s, 2.0 / s, exp(0.5) / s, s);
    // 1e-12: the same double operations in another order.
    lesson_expect("the tape's gradients equal the hand-derived ones",
                  fabs(t.n[a].grad - 0.25 / s) < 1e-12 && fabs(t.n[b].grad - 2.0 / s) < 1e-12 &&
                  fabs(t.n[c].grad - exp(0.5) / s) < 1e-12);
    lesson_expect("the chain rule ran once per node (7 nodes)", visited == t.len && t.len == 7);
    ag_free(&t);
}

// 2. Why the order matters: a value used twice.
static void section_order(void) {
    lesson_section("Topological order: a value used twice");
    lesson_say("In L = x x + x the node x feeds two operations. Its gradient is the SUM of what "
               "both users send (2x from the product, 1 from the sum: 2x + 1 = 7 at x = 3), so x "
               "may pass its own gradient on only after both have sent theirs. Walking the nodes "
               "in reverse topological order guarantees that: a depth-first walk from L places "
               "every node after all of its inputs, and the reverse of that list has every node "
               "after all of its users. (Here the tape's own order is already topological, since "
               "a node is appended after its inputs; the walk from L also skips nodes L does not "
               "depend on.)");
    ag_tape t = { 0 };
    const int x = ag_leaf(&t, 3.0);
    const int unused = ag_exp(&t, x);   // made, but L does not use it
    const int L = ag_add(&t, ag_mul(&t, x, x), x);
    int order[8];
    const int n = ag_topo_order(&t, L, order);
    printf("  topological order from L:");
    for (int i = 0; i < n; i++) printf(" %d (%s)", order[i], AG_NAME[t.n[order[i]].op]);
    printf("   node %d (exp, unused) is not in it\n", unused);
    ag_backward(&t, L);
    printf("  dL/dx = %.1f (2x + 1 = 7)\n", t.n[x].grad);
    lesson_expect("dL/dx = 2x + 1 = 7: both uses added", t.n[x].grad == 7.0);
    lesson_expect("the unused node is left out of the order", n == 3);
    ag_free(&t);
}

enum { MT = 3, MC = 4, MF = 6, MV = 5 };   // the MLP: T rows, C inputs, F hidden, V classes

// The MLP's loss on the tape, for finite differences.   x (MT, MC) W1 (MF, MC) b1 (MF) W2 (MV, MF) b2 (MV)
static double mlp_loss_tape(const float *x, const float *W1, const float *b1, const float *W2,
                            const float *b2, const int *target) {
    ag_tape t = { 0 };
    int ix[MT * MC], iW1[MF * MC], ib1[MF], iW2[MV * MF], ib2[MV], h[MT * MF], a[MT * MF], z[MT * MV];
    ag_leaves(&t, ix, x, MT * MC); ag_leaves(&t, iW1, W1, MF * MC); ag_leaves(&t, ib1, b1, MF);
    ag_leaves(&t, iW2, W2, MV * MF); ag_leaves(&t, ib2, b2, MV);
    ag_linear(&t, h, ix, iW1, ib1, MT, MC, MF);
    ag_silu(&t, a, h, MT * MF);
    ag_linear(&t, z, a, iW2, ib2, MT, MF, MV);
    const double L = t.n[ag_cross_entropy(&t, z, target, MT, MV)].val;
    ag_free(&t);
    return L;
}

// 3. A tiny MLP: linear, SiLU, linear, cross-entropy.
static void section_mlp(uint64_t seed) {
    lesson_section("A tiny MLP, differentiated by the tape");
    lesson_say("x (%d, %d) -> Linear to %d -> SiLU -> Linear to %d logits -> mean cross-entropy "
               "against %d targets. The forward is written with the tape's operations only (SiLU "
               "as x / (1 + e^-x), cross-entropy as log-sum-exp minus the target's logit); one "
               "backward() gives the gradient of every input and weight. The library's way: "
               "tw_cross_entropy_backward, tw_linear_backward, tw_silu_backward, "
               "tw_linear_backward, each written by hand.", MT, MC, MF, MV, MT);
    float *x = lesson_uniform(MT * MC, -1, 1, seed), *W1 = lesson_uniform(MF * MC, -1, 1, seed + 1);
    float *b1 = lesson_uniform(MF, -0.5f, 0.5f, seed + 2), *W2 = lesson_uniform(MV * MF, -1, 1, seed + 3);
    float *b2 = lesson_uniform(MV, -0.5f, 0.5f, seed + 4);
    const int target[MT] = { 1, 4, 0 };

    ag_tape t = { 0 };
    int ix[MT * MC], iW1[MF * MC], ib1[MF], iW2[MV * MF], ib2[MV], h[MT * MF], a[MT * MF], z[MT * MV];
    ag_leaves(&t, ix, x, MT * MC); ag_leaves(&t, iW1, W1, MF * MC); ag_leaves(&t, ib1, b1, MF);
    ag_leaves(&t, iW2, W2, MV * MF); ag_leaves(&t, ib2, b2, MV);
    ag_linear(&t, h, ix, iW1, ib1, MT, MC, MF);
    ag_silu(&t, a, h, MT * MF);
    ag_linear(&t, z, a, iW2, ib2, MT, MF, MV);
    const int L = ag_cross_entropy(&t, z, target, MT, MV);
    const int visited = ag_backward(&t, L);
    float gx[MT * MC], gW1[MF * MC], gb1[MF], gW2[MV * MF], gb2[MV];
    ag_grads(&t, gx, ix, MT * MC); ag_grads(&t, gW1, iW1, MF * MC); ag_grads(&t, gb1, ib1, MF);
    ag_grads(&t, gW2, iW2, MV * MF); ag_grads(&t, gb2, ib2, MV);

    // The library: forward in float, then the hand-written backward functions in reverse.
    float fh[MT * MF], fa[MT * MF], fz[MT * MV], probs[MT * MV], loss;
    tw_linear_forward(fh, x, W1, b1, MT, MC, MF);
    tw_silu(fa, fh, MT * MF);
    tw_linear_forward(fz, fa, W2, b2, MT, MF, MV);
    LESSON_TRY(tw_cross_entropy_forward(&loss, NULL, probs, fz, target, MT, MV, TW_IGNORE_INDEX));
    float dz[MT * MV] = { 0 }, da[MT * MF] = { 0 }, dh[MT * MF] = { 0 }, dx[MT * MC] = { 0 };
    float dW1[MF * MC] = { 0 }, db1[MF] = { 0 }, dW2[MV * MF] = { 0 }, db2[MV] = { 0 };
    LESSON_TRY(tw_cross_entropy_backward(dz, 1.0f, probs, target, MT, MV, TW_IGNORE_INDEX));
    tw_linear_backward(da, dW2, db2, dz, fa, W2, MT, MF, MV);
    tw_silu_backward(dh, da, fh, MT * MF);
    tw_linear_backward(dx, dW1, db1, dh, x, W1, MT, MC, MF);

    printf("  loss: tape %.7f (double), library %.7f (float); %d nodes on the tape, %d visited "
           "by backward\n", t.n[L].val, (double)loss, t.len, visited);
    lesson_print_matrix("dW2 from the tape", gW2, MV, MF);
    lesson_print_matrix("dW2 from tw_linear_backward", dW2, MV, MF);
    const double worst = fmax(fmax(record(0, gx, dx, MT * MC), record(0, gW1, dW1, MF * MC)),
                              fmax(fmax(record(0, gb1, db1, MF), record(0, gW2, dW2, MV * MF)),
                                   record(0, gb2, db2, MV)));
    printf("  largest |tape - library| over x, W1, b1, W2, b2: %.2e\n", worst);
    // 1e-6: the library's forward and backward run in float (relative rounding ~6e-8 per
    // operation, a few dozen operations deep, on gradients of size 0.01 to 1); the tape runs in
    // double on the same float inputs. Measured: 3e-8 with the default seed.
    lesson_expect("every MLP gradient from the tape equals the library's within 1e-6", worst <= 1e-6);

    // Finite differences of the tape's own double-precision loss on three weights.
    lesson_say("And against nudging, now in double: with rounding near 1e-16, a nudge of h = 1e-5 "
               "is off by about 1e-11, where lesson 13's float forward had to settle for 1e-5.");
    double fd_worst = 0.0;
    float *const P[3] = { &W1[0], &b1[2], &W2[7] };          // three weights to nudge
    const double G[3] = { t.n[iW1[0]].grad, t.n[ib1[2]].grad, t.n[iW2[7]].grad };   // their tape gradients
    static const char *const PN[3] = { "W1[0][0]", "b1[2]", "W2[1][1]" };
    for (int i = 0; i < 3; i++) {
        // The leaves are floats, so the nudge is the float step nearest 1e-5, measured exactly.
        const float keep = *P[i];
        *P[i] = (float)(keep + 1e-5);
        const double up = mlp_loss_tape(x, W1, b1, W2, b2, target), hu = (double)*P[i] - keep;
        *P[i] = (float)(keep - 1e-5);
        const double down = mlp_loss_tape(x, W1, b1, W2, b2, target), hd = keep - (double)*P[i];
        *P[i] = keep;
        const double fd = (up - down) / (hu + hd);
        printf("  %-9s tape %+.9f   nudging %+.9f   diff %.1e\n", PN[i], G[i], fd, fabs(fd - G[i]));
        fd_worst = fmax(fd_worst, fabs(fd - G[i]));
    }
    // 1e-7: the nudge is the float step nearest 1e-5 (about 1e-5 +- 6e-8, exactly accounted for),
    // truncation ~h^2 ~ 1e-10, rounding 1e-16 / 1e-5 ~ 1e-11.
    lesson_expect("the tape's gradients agree with double-precision nudging within 1e-7", fd_worst <= 1e-7);
    ag_free(&t);
}

enum { AT = 4, AD = 3 };   // the attention head: T positions, head width D

// 4. One causal attention head.
static void section_attention(uint64_t seed) {
    lesson_section("One causal attention head, differentiated by the tape");
    lesson_say("q, k, v (%d, %d); out[t] = sum over s <= t of softmax_s(q[t] . k[s] / sqrt(D)) v[s]; "
               "the loss is sum r * out for a fixed random r (r is then the gradient arriving from "
               "above). The tape never sees a mask: the keys a query may not see are simply not "
               "in its sum, so they get no gradient from it, which is what the library's backward "
               "gets from the zeros of the saved attention map.", AT, AD);
    float *q = lesson_uniform(AT * AD, -1.5f, 1.5f, seed + 10), *k = lesson_uniform(AT * AD, -1.5f, 1.5f, seed + 11);
    float *v = lesson_uniform(AT * AD, -1.5f, 1.5f, seed + 12), *r = lesson_uniform(AT * AD, -1, 1, seed + 13);
    ag_tape t = { 0 };
    int iq[AT * AD], ik[AT * AD], iv[AT * AD];
    ag_leaves(&t, iq, q, AT * AD); ag_leaves(&t, ik, k, AT * AD); ag_leaves(&t, iv, v, AT * AD);
    int L = ag_leaf(&t, 0.0);
    for (int i = 0; i < AT; i++) {
        int score[AT], e[AT];
        double mx = -INFINITY;
        for (int s = 0; s <= i; s++) {
            int dot = ag_leaf(&t, 0.0);
            for (int d = 0; d < AD; d++) dot = ag_add(&t, dot, ag_mul(&t, iq[i * AD + d], ik[s * AD + d]));
            score[s] = ag_scale(&t, dot, 1.0 / sqrt((double)AD));
            mx = fmax(mx, t.n[score[s]].val);
        }
        const int m = ag_leaf(&t, mx);   // a constant, as in the cross-entropy above
        int Z = ag_leaf(&t, 0.0);
        for (int s = 0; s <= i; s++) { e[s] = ag_exp(&t, ag_sub(&t, score[s], m)); Z = ag_add(&t, Z, e[s]); }
        const int invZ = ag_recip(&t, Z);
        for (int d = 0; d < AD; d++) {
            int o = ag_leaf(&t, 0.0);
            for (int s = 0; s <= i; s++) o = ag_add(&t, o, ag_mul(&t, ag_mul(&t, e[s], invZ), iv[s * AD + d]));
            L = ag_add(&t, L, ag_scale(&t, o, r[i * AD + d]));
        }
    }
    ag_backward(&t, L);
    float gq[AT * AD], gk[AT * AD], gv[AT * AD];
    ag_grads(&t, gq, iq, AT * AD); ag_grads(&t, gk, ik, AT * AD); ag_grads(&t, gv, iv, AT * AD);

    float out[AT * AD], w[AT * AT], dsc[AT * AT];
    float dq[AT * AD] = { 0 }, dk[AT * AD] = { 0 }, dv[AT * AD] = { 0 };
    tw_sdpa_forward(out, NULL, w, q, k, v, NULL, AT, AT, AD, 1, 0);
    tw_sdpa_backward(dq, dk, dv, dsc, r, q, k, v, w, AT, AT, AD);
    lesson_print_matrix("dq from the tape", gq, AT, AD);
    lesson_print_matrix("dq from tw_sdpa_backward", dq, AT, AD);
    const double worst = fmax(record(1, gq, dq, AT * AD), fmax(record(1, gk, dk, AT * AD), record(1, gv, dv, AT * AD)));
    printf("  largest |tape - library| over dq, dk, dv: %.2e (%d nodes on the tape)\n", worst, t.len);
    // 1e-6: as for the MLP, float against double on the same inputs (measured 6e-8).
    lesson_expect("every attention gradient from the tape equals tw_sdpa_backward within 1e-6", worst <= 1e-6);
    lesson_expect("the first query's gradient is exactly 0 (it sees one key: its weight is 1 whatever the score)",
                  gq[0] == 0.0f && gq[1] == 0.0f && gq[2] == 0.0f);
    ag_free(&t);
}

// 5. The cost, and why the library writes its backward by hand.
static void section_cost(void) {
    lesson_section("What it costs");
    lesson_say("Each node holds an operation, two input ids, a value and a gradient: %zu bytes here. "
               "A Linear layer of C_in x C_out weights over T tokens makes 2 T C_in C_out nodes (a "
               "multiply and an add per weight per token), where the hand-written backward keeps "
               "only the layer's input x (T C_in floats) and computes dW = dy^T x in one matrix "
               "product.", sizeof(ag_node));
    const double T = 64, C = 64, F = 172;
    const double nodes = 2 * T * (C * F * 2 + F * C);   // stories260K's SwiGLU FFN: gate, up, down
    printf("  stories260K's FFN on %d tokens: %.2g nodes = %.0f MB of tape, against %.0f KB of saved "
           "activations for the hand-written backward\n", (int)T, nodes, nodes * sizeof(ag_node) / 1e6,
           (T * C + 3 * T * F) * 4 / 1e3);
    lesson_note("PyTorch's autograd records whole tensor operations (one node per matmul, each with a "
                "hand-written backward like the library's), not scalars: the same chain rule and the "
                "same reverse topological walk, over far fewer and bigger nodes");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 20 }, NULL);
    g_cap = 512;
    g_rows = lesson_alloc((long)g_cap * 5);
    section_expression();
    section_order();
    section_mlp(a.seed);
    section_attention(a.seed);
    section_cost();

    lesson_section("Files");
    static const char *const COLS[5] = { "part", "index", "autograd", "library", "abs_diff" };
    lesson_write_columns("gradients.dat", g_rows, g_n, 5, COLS,
                         "lesson 20: every gradient from the scalar autograd beside the library's "
                         "hand-written backward; part 0 the MLP (x, W1, b1, W2, b2), 1 attention (dq, dk, dv)");
    lesson_say("Try it: make exercise28 (the backward walk of a tape)");
    return lesson_finish();
}
