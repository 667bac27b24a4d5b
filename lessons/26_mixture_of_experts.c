// Lesson 26: mixture of experts: routing, total against active parameters, load balance.
//
// Teaches: a MoE layer replaces one FFN by E expert FFNs and a router; each token goes through
// only k of them. Routing one token by hand (router logits, softmax, the top k, the gate weights
// renormalised over the chosen, the weighted sum of the chosen experts' outputs), checked
// against the library's layer; what "total" and "active" parameters mean for Mixtral-8x7B,
// Qwen3-30B-A3B and DeepSeek-V3 (memory follows the total, FLOPs per token the active); and why
// training adds a load-balancing loss: a small MoE layer trained twice on the same task, without
// and with the auxiliary loss E * sum_i f_i P_i, and the share of tokens each expert receives.
// Calls: tw_linear_forward, tw_router_scores, tw_router_select, tw_router_gates,
// tw_router_counts, tw_router_aux_loss, tw_swiglu_forward, tw_moe_forward, tw_moe_backward,
// tw_hf_moe_from_json, tw_hf_moe_count.
// Build & run: make lesson26 && ./lesson26 [--seed N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/26_load_balance.gp     (reads out/lesson26/load_balance.dat)
// Needs: data/configs/Mixtral-8x7B-v0.1.json data/configs/Qwen3-30B-A3B.json
// Needs: data/configs/DeepSeek-V3.json
// Writes: token.npy router_probs.npy y_token.npy load_balance.dat params.txt
// Pictures: load_balance.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    26, "Mixture of experts: routing, total and active parameters, load balance",
    "Routes one token through a small mixture-of-experts layer by hand and checks it against "
    "lib/nn/moe.c; counts total and activated parameters of Mixtral-8x7B, Qwen3-30B-A3B and "
    "DeepSeek-V3 from their configs and what each means for memory and for FLOPs per token; "
    "then trains a small MoE layer with and without the auxiliary load-balancing loss and "
    "draws how many tokens each expert receives."
};

enum { C = 8, E = 4, F = 8 };

// ---- 1. one token by hand ----

static void route_one_token(const lesson_args *a) {
    lesson_section("Routing one token by hand");
    const int k = 2;
    tw_moe_config cfg = { .router = { .E = E, .k = k, .score = TW_ROUTER_SOFTMAX, .norm_topk = 1,
                                      .scale = 1.0f, .n_group = 1, .topk_group = 1 },
                          .C = C, .F = F, .F_shared = 0 };
    float *x = lesson_randn(C, 1.0f, a->seed);
    float *router = lesson_randn(E * C, 0.6f, a->seed + 1);
    float *gate = lesson_randn(E * F * C, 0.35f, a->seed + 2), *up = lesson_randn(E * F * C, 0.35f, a->seed + 3);
    float *down = lesson_randn(E * C * F, 0.35f, a->seed + 4);
    lesson_say("A token x of width C = %d meets a router, a Linear (E, C) = (%d, %d) without bias, "
               "and E = %d SwiGLU experts of width F = %d. Mixtral's rule: softmax over all E "
               "logits, keep the k = %d largest, divide the kept probabilities by their sum.",
               C, E, C, E, F, k);
    float logits[E], p[E], w[2];
    int sel[2];
    tw_linear_forward(logits, x, router, NULL, 1, C, E);
    tw_softmax_row(p, logits, E);
    lesson_print_vector("router logits", logits, E);
    lesson_print_vector("softmax p", p, E);
    // by hand: the two largest probabilities, lower index first on a tie
    int first = 0;
    for (int e = 1; e < E; e++) if (p[e] > p[first]) first = e;
    int second = first == 0 ? 1 : 0;
    for (int e = 0; e < E; e++) if (e != first && p[e] > p[second]) second = e;
    const float wa = p[first] / (p[first] + p[second]), wb = p[second] / (p[first] + p[second]);
    printf("  by hand: experts %d and %d, weights %.4f / (%.4f + %.4f) = %.4f and %.4f\n", first,
           second, (double)p[first], (double)p[first], (double)p[second], (double)wa, (double)wb);
    tw_router_select(sel, p, NULL, 1, &cfg.router);
    tw_router_gates(w, p, sel, 1, &cfg.router);
    printf("  library: experts %d and %d, weights %.4f and %.4f\n", sel[0], sel[1], (double)w[0], (double)w[1]);
    // the output: the two experts' outputs, weighted
    float ya[C], yb[C], yhand[C], h[3 * F];
    tw_swiglu_forward(ya, h, h + F, h + 2 * F, x, tw_weight_fp32(gate + (long)first * F * C),
                      tw_weight_fp32(up + (long)first * F * C), tw_weight_fp32(down + (long)first * C * F), 1, C, F);
    tw_swiglu_forward(yb, h, h + F, h + 2 * F, x, tw_weight_fp32(gate + (long)second * F * C),
                      tw_weight_fp32(up + (long)second * F * C), tw_weight_fp32(down + (long)second * C * F), 1, C, F);
    for (int i = 0; i < C; i++) yhand[i] = wa * ya[i] + wb * yb[i];
    tw_moe_weights W = { router, NULL, gate, up, down, NULL, NULL, NULL };
    tw_moe_cache cache;
    LESSON_TRY(tw_moe_cache_init(&cache, &cfg, 1));
    float *y = lesson_alloc(C);
    tw_moe_forward(y, &cache, x, &W, &cfg, 1);
    lesson_print_vector("y by hand", yhand, C);
    lesson_print_vector("y = tw_moe_forward", y, C);
    lesson_note("The other %d experts were never run for this token: their weights cost memory, "
                "not time.", E - k);
    lesson_expect("the hand's choice is the library's", first == sel[0] && second == sel[1]);
    lesson_expect_close("gate weights by hand = tw_router_gates", (const float[]){ wa, wb }, w, 2, 1e-6f);
    // same products, the sum in the same order: agreement to float rounding of one addition
    lesson_expect_close("weighted sum by hand = tw_moe_forward", yhand, y, C, 1e-6f);
    lesson_write_npy2("token.npy", x, 1, C);
    lesson_write_npy2("router_probs.npy", p, 1, E);
    lesson_write_npy2("y_token.npy", y, 1, C);
    tw_moe_cache_free(&cache);
}

// ---- 2. total and active ----

static void total_and_active(void) {
    lesson_section("Total and active parameters of three real MoE models");
    lesson_say("Memory must hold every expert (the total); one token's matrix products touch the "
               "router, its k experts, the shared expert and everything outside the MoE layers (the "
               "active count). So a MoE model costs about 2 x active FLOPs per token, like a dense "
               "model of the active size, but needs the memory of the total.");
    static const struct { const char *name, *file; } M[3] = {
        { "Mixtral-8x7B", "data/configs/Mixtral-8x7B-v0.1.json" },
        { "Qwen3-30B-A3B", "data/configs/Qwen3-30B-A3B.json" },
        { "DeepSeek-V3", "data/configs/DeepSeek-V3.json" },
    };
    char text[2048], err[512];
    int n = snprintf(text, sizeof text, "%-14s %18s %18s %8s %12s %14s\n", "model", "total", "active",
                     "active%", "bf16 GB", "GFLOP/token");
    printf("  %s", text);
    int64_t totals[3];
    for (int i = 0; i < 3; i++) {
        tw_json *root;
        if (tw_json_read_file(&root, M[i].file, err, sizeof err) != TW_OK) lesson_die("%s", err);
        tw_hf_moe_config c;
        tw_status st = tw_hf_moe_from_json(&c, root, err, sizeof err);
        tw_json_free(root);
        if (st != TW_OK) lesson_die("%s: %s", M[i].file, err);
        tw_moe_param_counts p;
        LESSON_TRY(tw_hf_moe_count(&p, &c));
        totals[i] = p.total;
        char line[256];
        snprintf(line, sizeof line, "%-14s %18lld %18lld %7.1f%% %12.1f %14.1f\n", M[i].name,
                 (long long)p.total, (long long)p.active, 100.0 * (double)p.active / (double)p.main_total,
                 2.0 * (double)p.total / 1e9, 2.0 * (double)p.active_no_embed / 1e9);
        printf("  %s", line);
        n += snprintf(text + n, sizeof text - (size_t)n, "%s", line);
    }
    lesson_write_text("params.txt", text);
    lesson_note("GFLOP/token counts 2 per multiply-add of every weight a token uses except the "
                "embedding lookup; attention's own score and value work, which grows with the "
                "context, comes on top. DeepSeek-V3's total includes its multi-token-prediction "
                "module as stored in the checkpoint.");
    lesson_expect("Mixtral-8x7B's total is the published 46,702,792,704", totals[0] == 46702792704LL);
    lesson_expect("Qwen3-30B-A3B's total is the published 30,532,122,624", totals[1] == 30532122624LL);
}

// ---- 3. load balance ----

// Trains a k = 1 MoE layer by SGD on a regression task (targets from a fixed random teacher
// SwiGLU); aux_coef weighs the load-balancing loss. Writes the share of tokens of each expert,
// measured every `every` steps, into share (n_rec, E).
static void train_router(float *share, int steps, int every, float aux_coef, uint64_t seed) {
    const int T = 64, k = 1;
    tw_moe_config cfg = { .router = { .E = E, .k = k, .score = TW_ROUTER_SOFTMAX, .norm_topk = 0,
                                      .scale = 1.0f, .n_group = 1, .topk_group = 1 },
                          .C = C, .F = F, .F_shared = 0 };
    const long nr = E * C, ng = (long)E * F * C;
    float *router = lesson_randn(nr, 0.3f, seed), *gate = lesson_randn(ng, 0.35f, seed + 1);
    float *up = lesson_randn(ng, 0.35f, seed + 2), *down = lesson_randn(ng, 0.35f, seed + 3);
    float *tg = lesson_randn((long)4 * F * C, 0.5f, seed + 4), *tu = lesson_randn((long)4 * F * C, 0.5f, seed + 5);
    float *td = lesson_randn((long)4 * F * C, 0.5f, seed + 6);
    float *dr = lesson_alloc(nr), *dg = lesson_alloc(ng), *du = lesson_alloc(ng), *dd = lesson_alloc(ng);
    float *x = lesson_alloc((long)T * C), *y = lesson_alloc((long)T * C), *target = lesson_alloc((long)T * C);
    float *dy = lesson_alloc((long)T * C), *h = lesson_alloc(3L * T * 4 * F);
    tw_moe_weights W = { router, NULL, gate, up, down, NULL, NULL, NULL };
    tw_moe_grads G = { dr, dg, du, dd, NULL, NULL, NULL };
    tw_moe_cache cache;
    LESSON_TRY(tw_moe_cache_init(&cache, &cfg, T));
    tw_rng rng;
    tw_rng_init(&rng, seed + 7);
    const float lr = 0.05f;
    int rec = 0;
    for (int step = 0; step < steps; step++) {
        tw_rng_fill_normal(&rng, x, (long)T * C, 1.0f);
        tw_swiglu_forward(target, h, h + (long)T * 4 * F, h + 2L * T * 4 * F, x, tw_weight_fp32(tg),
                          tw_weight_fp32(tu), tw_weight_fp32(td), T, C, 4 * F);
        tw_moe_forward(y, &cache, x, &W, &cfg, T);
        for (long i = 0; i < (long)T * C; i++) dy[i] = 2.0f * (y[i] - target[i]) / (float)(T * C);
        memset(dr, 0, sizeof(float) * nr); memset(dg, 0, sizeof(float) * ng);
        memset(du, 0, sizeof(float) * ng); memset(dd, 0, sizeof(float) * ng);
        tw_moe_backward(NULL, &G, &cache, dy, x, &W, &cfg, T, aux_coef);
        for (long i = 0; i < nr; i++) router[i] -= lr * dr[i];
        for (long i = 0; i < ng; i++) { gate[i] -= lr * dg[i]; up[i] -= lr * du[i]; down[i] -= lr * dd[i]; }
        if (step % every == every - 1) {
            int count[E];
            tw_router_counts(count, cache.sel, T, &cfg.router);
            for (int e = 0; e < E; e++) share[rec * E + e] = (float)count[e] / (float)(T * k);
            rec++;
        }
    }
    tw_moe_cache_free(&cache);
}

// Each expert's mean share over the last `last` records of share (n_rec, E): into mean (E).
static void mean_share(float *mean, const float *share, int n_rec, int last) {
    for (int e = 0; e < E; e++) {
        mean[e] = 0.0f;
        for (int r = n_rec - last; r < n_rec; r++) mean[e] += share[r * E + e] / (float)last;
    }
}

static void load_balance(const lesson_args *a) {
    lesson_section("Load balance, with and without the auxiliary loss");
    enum { STEPS = 600, EVERY = 20, NREC = STEPS / EVERY };
    const float alpha = 3.0f;   // see the note below the table
    lesson_say("A MoE layer with E = %d experts and k = 1 (Switch) is trained by SGD to copy a fixed "
               "random SwiGLU teacher on fresh random tokens, %d steps of 64 tokens, twice from the "
               "same start: once on the squared error alone, once adding %.2f x the load-balancing "
               "loss E * sum_i f_i P_i (f_i: share of tokens sent to expert i, P_i: its mean router "
               "probability). The loss is 1 when both are uniform; its gradient reaches the router "
               "through P only, pushing probability away from the experts that get too many tokens.",
               E, STEPS, (double)alpha);
    float *without = lesson_alloc(NREC * E), *with = lesson_alloc(NREC * E);
    train_router(without, STEPS, EVERY, 0.0f, a->seed + 100);
    train_router(with, STEPS, EVERY, alpha, a->seed + 100);
    float *cols = lesson_alloc((long)NREC * (1 + 2 * E));
    printf("  %-6s %-30s %-30s\n", "step", "share per expert, no aux", "share per expert, aux");
    for (int r = 0; r < NREC; r++) {
        cols[r * (1 + 2 * E)] = (float)((r + 1) * EVERY);
        for (int e = 0; e < E; e++) {
            cols[r * (1 + 2 * E) + 1 + e] = without[r * E + e];
            cols[r * (1 + 2 * E) + 1 + E + e] = with[r * E + e];
        }
        if (r % 5 == 4 || r == 0) {
            printf("  %-6d", (r + 1) * EVERY);
            for (int e = 0; e < E; e++) printf(" %6.3f", (double)without[r * E + e]);
            printf("  ");
            for (int e = 0; e < E; e++) printf(" %6.3f", (double)with[r * E + e]);
            printf("\n");
        }
    }
    const char *names[1 + 2 * E] = { "step", "no_aux_e0", "no_aux_e1", "no_aux_e2", "no_aux_e3",
                                     "aux_e0", "aux_e1", "aux_e2", "aux_e3" };
    lesson_write_columns("load_balance.dat", cols, NREC, 1 + 2 * E, names,
                         "share of the 64 tokens of a step routed to each expert (lesson 26)");
    lesson_plot("26_load_balance.gp", "load_balance.dat", "load_balance.png");
    float mw[E], ma[E], max_w = 0, max_a = 0, min_w = 1, min_a = 1;
    mean_share(mw, without, NREC, 10);
    mean_share(ma, with, NREC, 10);
    lesson_print_vector("mean share, last 200 steps, no aux", mw, E);
    lesson_print_vector("mean share, last 200 steps, aux", ma, E);
    for (int e = 0; e < E; e++) {
        max_w = fmaxf(max_w, mw[e]); min_w = fminf(min_w, mw[e]);
        max_a = fmaxf(max_a, ma[e]); min_a = fminf(min_a, ma[e]);
    }
    lesson_note("Without the aux loss the experts that win early get better, win more tokens and "
                "the least used one gets %.3f of the tokens; with it the busiest expert has "
                "%.3f instead of %.3f and the least used %.3f (uniform: %.3f). The coefficient %.0f "
                "suits this toy's small squared error; the real configs use router_aux_loss_coef "
                "0.02 (Mixtral) and 0.001 (Qwen3-30B-A3B) beside a cross-entropy loss.",
                (double)min_w, (double)max_a, (double)max_w, (double)min_a, 1.0 / E, (double)alpha);
    lesson_expect("the aux loss leaves the busiest expert a smaller mean share", max_a < max_w);
    lesson_expect("the aux loss leaves the least used expert a larger mean share", min_a > min_w);
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 26 }, NULL);
    route_one_token(&a);
    total_and_active();
    load_balance(&a);
    lesson_say("Try it: make exercise37 (top-k routing)");
    return lesson_finish();
}
