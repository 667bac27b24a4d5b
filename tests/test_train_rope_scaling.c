// test_train_rope_scaling.c: training past the trained context with a scaled RoPE
// (./train --rope-scaling KIND --rope-factor F --seq T, or --rope-config FILE), ten steps against
// PyTorch (tests/golden/gen_train_rope_scaling.py, float64, data/golden/train_rope/<case>/):
// gen_train.py's loop and model with RoPE's frequencies and attention factor taken from the
// published formulas. Cases: llama (adjacent pairs, D 6) with YaRN x2 at T 48 and linear x2 at
// T 40; qwen3 (halves, QK-norm, theta 1e6, D 8) with NTK x2 at T 48 and YaRN x4 at T 100; the
// trained context L is the models' max_seq, 32.
//   - the library (tw_model_config_set_rope_scaling, then tw_train_step as ./train runs it): every
//     step's loss and gradient norm, every weight after the last step;
//   - the same model trained with plain RoPE at the same T differs from the goldens by far more
//     than the tolerance (the comparison sees the scaling);
//   - ./train with the flags (llama, YaRN x2) and with --rope-config (qwen3, YaRN x4): the printed
//     losses and the weights it writes.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "nn/long_context.h"
#include "train/step.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/tokens.h"

static const char *const CASES[] = { "llama_yarn", "llama_linear", "qwen3_ntk", "qwen3_yarn" };
enum { N_CASES = 4 };
enum { H_B, H_T, H_STEPS, H_LR, H_WARMUP, H_MIN_LR, H_WD, H_BETA1, H_BETA2, H_EPS, H_CLIP, N_H };

// The base case of gen_train.py: "llama" or "qwen3", the text before '_'.
static void base_of(char *base, size_t n, const char *name) {
    snprintf(base, n, "%.*s", (int)strcspn(name, "_"), name);
}

typedef struct {
    tw_model m;
    int *tokens;
    long n;
    tw_train_config c;
    tw_rope_scaling_kind kind;
    float factor;
    int L;
} scaled_case;

static void load_case(scaled_case *k, const char *name) {
    char base[32], path[256], err[512] = "";
    base_of(base, sizeof base, name);
    snprintf(path, sizeof path, "data/golden/train/%s/init.bin", base);
    ck_assert_msg(tw_model_load_file(&k->m, path, err, sizeof err) == TW_OK, "%s", err);
    snprintf(path, sizeof path, "data/golden/train/%s/tokens.bin", base);
    ck_assert_msg(tw_tokens_read(&k->tokens, &k->n, path, err, sizeof err) == TW_OK, "%s", err);
    snprintf(path, sizeof path, "train_rope/%s/hparams", name);
    tw_npy h = tt_load(path, N_H);
    const float *hp = h.data;
    const tw_train_config c = { (int)hp[H_B], (int)hp[H_T], (int)hp[H_STEPS], (int)hp[H_WARMUP],
                                hp[H_LR], hp[H_MIN_LR], hp[H_WD], hp[H_BETA1], hp[H_BETA2],
                                hp[H_EPS], hp[H_CLIP] };
    k->c = c;
    tw_npy_free(&h);
    snprintf(path, sizeof path, "train_rope/%s/scaling", name);
    tw_npy s = tt_load(path, 3);
    const float *sv = s.data;
    k->kind = (tw_rope_scaling_kind)sv[0];
    k->factor = sv[1];
    k->L = (int)sv[2];
    tw_npy_free(&s);
    ck_assert_int_eq(k->L, k->m.cfg.max_seq);   // the goldens scale from the model's own context
    ck_assert_int_gt(k->c.T, k->L);              // and train past it
}

// Ten --no-shuffle steps of k (scaled when scaled is 1); stats (steps).
static void run_ten(tw_train_stats *st, scaled_case *k, int scaled) {
    if (scaled)
        ck_assert_int_eq(tw_model_config_set_rope_scaling(&k->m.cfg, k->kind, k->factor, 0, 1 << 20), TW_OK);
    else
        k->m.cfg.max_seq = k->c.T;   // plain RoPE let run past its context, for the negative check
    tw_trainer t;
    tw_batcher b;
    ck_assert_int_eq(tw_trainer_init(&t, &k->m, k->c.T), TW_OK);
    ck_assert_int_eq(tw_batcher_init(&b, k->tokens, k->n, k->c.B, k->c.T, 0, 0), TW_OK);
    int *in = malloc((size_t)k->c.B * k->c.T * sizeof *in), *tg = malloc((size_t)k->c.B * k->c.T * sizeof *tg);
    ck_assert(in && tg && k->c.steps <= 16);
    for (int s = 0; s < k->c.steps; s++) {
        tw_batcher_fill(in, tg, &b, s);
        ck_assert_int_eq(tw_train_step(&st[s], &t, &k->m, in, tg, &k->c), TW_OK);
    }
    free(in);
    free(tg);
    tw_batcher_free(&b);
    tw_trainer_free(&t);
}

// The largest |weight - PyTorch's| over m's parameters; fails at the first beyond abs + rel |w|.
static double check_weights(const tw_model *m, const char *name, double abs_tol, double rel_tol,
                            const char **worst_name) {
    double worst = 0.0;
    char rel[256];
    for (int i = 0; i < m->n_params; i++) {
        const tw_param *p = &m->params[i];
        snprintf(rel, sizeof rel, "train_rope/%s/final/%s", name, p->name);
        tw_npy W = tt_load(rel, p->count);
        const float *w = W.data;
        for (long j = 0; j < p->count; j++) {
            const double d = fabs((double)p->data[j] - w[j]);
            if (d > worst) { worst = d; *worst_name = p->name; }
            ck_assert_msg(d <= abs_tol + rel_tol * fabs(w[j]), "%s: %s[%ld] is %.7g, PyTorch %.7g",
                          name, p->name, j, (double)p->data[j], (double)w[j]);
        }
        tw_npy_free(&W);
    }
    return worst;
}

// Tolerances, test_train.c's and its reasoning: loss and gradient norm relative 1e-5 (float32
// against float64 through one forward and backward a step, compounded over ten updates; a wrong
// frequency or attention factor moves them by 1e-3 or more, as the plain-RoPE check below shows);
// learning rate relative 1e-6; final weights absolute 1e-4 + relative 1e-4 (AdamW moves a weight
// by ~lr = 5e-3 .. 1e-2 a step whatever its gradient, so a near-zero gradient's rounding can move
// an update by a fraction of lr). Measured (TW_VERBOSE=1): losses within 1.2e-7, gradient norms
// within 9.2e-7, weights within 3.0e-5 (llama_yarn's layers.1.ffn.down; qwen3_yarn 1.4e-5).
START_TEST(ten_scaled_steps_match_pytorch)
{
    const char *name = CASES[_i];
    scaled_case k;
    load_case(&k, name);
    tw_train_stats st[16];
    run_ten(st, &k, 1);
    char rel[256];
    snprintf(rel, sizeof rel, "train_rope/%s/losses", name);
    tw_npy L = tt_load(rel, k.c.steps);
    snprintf(rel, sizeof rel, "train_rope/%s/gnorms", name);
    tw_npy G = tt_load(rel, k.c.steps);
    snprintf(rel, sizeof rel, "train_rope/%s/lrs", name);
    tw_npy R = tt_load(rel, k.c.steps);
    const float *wl = L.data, *wg = G.data, *wr = R.data;
    double worst_loss = 0.0, worst_gn = 0.0;
    for (int s = 0; s < k.c.steps; s++) {
        worst_loss = fmax(worst_loss, fabs(st[s].loss - wl[s]) / fabs(wl[s]));
        worst_gn = fmax(worst_gn, fabs(st[s].gnorm - wg[s]) / fabs(wg[s]));
        ck_assert_msg(fabs(st[s].loss - wl[s]) <= 1e-5 * fabs(wl[s]), "%s step %d: loss %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].loss, (double)wl[s]);
        ck_assert_msg(fabs(st[s].gnorm - wg[s]) <= 1e-5 * fabs(wg[s]), "%s step %d: gnorm %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].gnorm, (double)wg[s]);
        ck_assert_msg(fabs(st[s].lr - wr[s]) <= 1e-6 * fabs(wr[s]) + 1e-12, "%s step %d: lr %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].lr, (double)wr[s]);
    }
    const char *wn = "";
    const double worst = check_weights(&k.m, name, 1e-4, 1e-4, &wn);
    if (getenv("TW_VERBOSE"))
        printf("%s: losses rel %.2e, gnorms rel %.2e, largest weight difference %.3g (%s)\n", name,
               worst_loss, worst_gn, worst, wn);
    ck_assert_msg(st[k.c.steps - 1].loss < st[0].loss, "%s: the loss did not fall", name);
    tw_npy_free(&L); tw_npy_free(&G); tw_npy_free(&R);
    tw_model_free(&k.m);
    free(k.tokens);
}
END_TEST

START_TEST(plain_rope_misses_the_goldens)
{
    // The same ten steps with plain RoPE must fail the checks the scaled run passes (a loss or a
    // gradient norm beyond relative 1e-5, or a weight beyond 1e-4 + 1e-4 |w|), or the goldens
    // could not tell a scaled RoPE from a plain one. The initial weights are small (std 0.02),
    // so attention is nearly uniform and positions move the loss only a little: measured, the
    // losses differ by 7.5e-5 .. 3.8e-3 relative, the weights by more.
    const char *name = CASES[_i];
    scaled_case k;
    load_case(&k, name);
    tw_train_stats st[16];
    run_ten(st, &k, 0);
    char rel[256];
    snprintf(rel, sizeof rel, "train_rope/%s/losses", name);
    tw_npy L = tt_load(rel, k.c.steps);
    snprintf(rel, sizeof rel, "train_rope/%s/gnorms", name);
    tw_npy G = tt_load(rel, k.c.steps);
    const float *wl = L.data, *wg = G.data;
    double loss_off = 0.0, gn_off = 0.0, w_off = 0.0;   // each as a multiple of its tolerance
    for (int s = 0; s < k.c.steps; s++) {
        loss_off = fmax(loss_off, fabs(st[s].loss - wl[s]) / (1e-5 * fabs(wl[s])));
        gn_off = fmax(gn_off, fabs(st[s].gnorm - wg[s]) / (1e-5 * fabs(wg[s])));
    }
    for (int i = 0; i < k.m.n_params; i++) {
        const tw_param *p = &k.m.params[i];
        snprintf(rel, sizeof rel, "train_rope/%s/final/%s", name, p->name);
        tw_npy W = tt_load(rel, p->count);
        const float *w = W.data;
        for (long j = 0; j < p->count; j++)
            w_off = fmax(w_off, fabs((double)p->data[j] - w[j]) / (1e-4 + 1e-4 * fabs(w[j])));
        tw_npy_free(&W);
    }
    if (getenv("TW_VERBOSE"))
        printf("%s with plain RoPE: off by %.1fx (losses), %.1fx (gnorms), %.1fx (weights) the tolerance\n",
               name, loss_off, gn_off, w_off);
    ck_assert_msg(loss_off > 1 || gn_off > 1 || w_off > 1,
                  "%s: plain RoPE's run passes the scaled goldens' checks", name);
    tw_npy_free(&L); tw_npy_free(&G);
    tw_model_free(&k.m);
    free(k.tokens);
}
END_TEST

static int parse_losses(double *loss, int max, const char *out) {
    int n = 0;
    for (const char *p = out; (p = strstr(p, "step ")) != NULL && n < max; p++) {
        int s, m;
        double x;
        if ((p == out || p[-1] == '\n') && sscanf(p, "step %d/%d loss %lf", &s, &m, &x) == 3 && s == n + 1)
            loss[n++] = x;
    }
    return n;
}

// Loop 0: llama_yarn through --rope-scaling yarn --rope-factor 2; loop 1: qwen3_yarn through
// --rope-config with a config.json holding YaRN x4 from 32 positions.
START_TEST(train_tool_matches_pytorch)
{
    const char *name = _i == 0 ? "llama_yarn" : "qwen3_yarn";
    scaled_case k;
    load_case(&k, name);
    char base[32], out[256], cfg[256], scaling[320], cmd[2048], err[512] = "";
    base_of(base, sizeof base, name);
    snprintf(out, sizeof out, "/tmp/tw-train-rope-%ld-%d.bin", (long)getpid(), _i);
    snprintf(cfg, sizeof cfg, "/tmp/tw-train-rope-%ld-%d.json", (long)getpid(), _i);
    if (_i == 0) {
        snprintf(scaling, sizeof scaling, "--rope-scaling yarn --rope-factor 2");
    } else {
        ck_assert_int_eq(tt_write_text(cfg, "{\"max_position_embeddings\": 32, \"rope_scaling\": "
                                            "{\"rope_type\": \"yarn\", \"factor\": 4.0}}"), 0);
        snprintf(scaling, sizeof scaling, "--rope-config %s", cfg);
    }
    snprintf(cmd, sizeof cmd, "./train --init data/golden/train/%s/init.bin --tokens "
             "data/golden/train/%s/tokens.bin --no-shuffle --batch %d --seq %d --steps %d --lr %.9g "
             "--warmup %d --min-lr %.9g --weight-decay %.9g --beta1 %.9g --beta2 %.9g --eps %.9g "
             "--clip %.9g --curve none %s --out %s", base, base, k.c.B, k.c.T, k.c.steps,
             (double)k.c.lr, k.c.warmup, (double)k.c.min_lr, (double)k.c.weight_decay,
             (double)k.c.beta1, (double)k.c.beta2, (double)k.c.eps, (double)k.c.clip, scaling, out);
    run_result r = tt_run(cmd);
    remove(cfg);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    double got[10];
    ck_assert_int_eq(parse_losses(got, 10, r.out), 10);
    char rel[256];
    snprintf(rel, sizeof rel, "train_rope/%s/losses", name);
    tw_npy want = tt_load(rel, 10);
    const float *w = want.data;
    // Printed with 6 significant digits: 5e-6 relative from the print, so 1e-5 (test_train_cli.c).
    for (int s = 0; s < 10; s++)
        ck_assert_msg(fabs(got[s] - w[s]) <= 1e-5 * fabs(w[s]), "%s step %d: printed %.7g, PyTorch %.7g",
                      name, s + 1, got[s], (double)w[s]);
    tw_npy_free(&want);
    tt_run_free(&r);
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, out, err, sizeof err) == TW_OK, "%s", err);
    remove(out);
    const char *wn = "";
    check_weights(&m, name, 1e-4, 1e-4, &wn);   // the library test's tolerance
    tw_model_free(&m);
    tw_model_free(&k.m);
    free(k.tokens);
}
END_TEST

Suite *suite_train_rope_scaling(void) {
    Suite *s = suite_create("train_rope_scaling");
    TCase *tc = tcase_create("train_rope_scaling");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, ten_scaled_steps_match_pytorch, 0, N_CASES);
    tcase_add_loop_test(tc, plain_rope_misses_the_goldens, 0, N_CASES);
    tcase_add_loop_test(tc, train_tool_matches_pytorch, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
