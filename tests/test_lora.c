// test_lora.c: LoRA (lib/nn/lora.c, lib/nn/lora_set.c, lib/formats/lora_file.c,
// lib/train/lora_step.c) against PyTorch's float64 autograd (tests/golden/gen_lora.py,
// data/golden/lora/) and finite differences:
//   - the LoRA Linear's forward and backward (dx, dA, dB), and the same dA, dB from the merged
//     weight's gradient (what the trainer uses);
//   - a fresh adapter (B = 0) leaves stories260K's logits bit for bit; merged and unmerged logits
//     agree; merge then unmerge restores W;
//   - the adapters file: written and read back bit for bit, Python's file read, a wrong model refused;
//   - ten steps of LoRA training against PyTorch (losses, rates, gradient norms, final adapters),
//     with the frozen base byte-identical afterwards;
//   - r = 4 on wq, wv of stories260K trains under 2 % of its parameters;
//   - a LoRA step's frozen base: its gradients are not formed, and the adapters' are the same bits.
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "grad_check.h"
#include "nn/lora.h"
#include "nn/lora_set.h"
#include "formats/lora_file.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/lora_step.h"
#include "train/tokens.h"
#include "core/rng.h"
#include "simd/simd.h"

static const char *const LINEAR_CASES[] = { "small_bias", "row_r1", "wide_r4" };

typedef struct {
    tw_npy x, W, b, A, B, dy, y, dx, dA, dB, meta;
    int has_b, T, in, out, r;
    float scale;
} linear_case;

static void load_linear(linear_case *k, const char *name) {
    char rel[256];
#define LOAD(f, file) snprintf(rel, sizeof rel, "lora/linear/%s/%s", name, file); k->f = tt_load(rel, -1)
    LOAD(x, "x"); LOAD(W, "W"); LOAD(A, "A"); LOAD(B, "B"); LOAD(dy, "dy"); LOAD(y, "y");
    LOAD(dx, "d_x"); LOAD(dA, "d_A"); LOAD(dB, "d_B"); LOAD(meta, "meta");
#undef LOAD
    snprintf(rel, sizeof rel, "data/golden/lora/linear/%s/b.npy", name);
    k->has_b = access(rel, R_OK) == 0;
    if (k->has_b) {
        snprintf(rel, sizeof rel, "lora/linear/%s/b", name);
        k->b = tt_load(rel, -1);
    }
    k->r = (int)((const float *)k->meta.data)[0];
    k->scale = ((const float *)k->meta.data)[1];
    k->in = (int)(k->A.count / k->r);
    k->out = (int)(k->B.count / k->r);
    k->T = (int)(k->x.count / k->in);
}

static void free_linear(linear_case *k) {
    tw_npy *all[] = { &k->x, &k->W, &k->A, &k->B, &k->dy, &k->y, &k->dx, &k->dA, &k->dB, &k->meta, &k->b };
    for (int i = 0; i < 11; i++)
        if (i < 10 || k->has_b) tw_npy_free(all[i]);
}

START_TEST(linear_matches_pytorch)
{
    linear_case k;
    load_linear(&k, LINEAR_CASES[_i]);
    const int T = k.T, in = k.in, out = k.out, r = k.r;
    float *y = tt_zeros((long)T * out), *u = tt_zeros((long)T * r), *dx = tt_zeros((long)T * in);
    float *dA = tt_zeros((long)r * in), *dB = tt_zeros((long)out * r);
    tw_lora_linear_forward(y, u, k.x.data, k.W.data, k.has_b ? k.b.data : NULL, k.A.data, k.B.data,
                           k.scale, T, in, out, r);
    // Forward: sums of at most 24 float32 products of order 1 against float64: absolute and
    // relative 1e-5 (measured worst 4e-7); a wrong scale or a transposed B is off by order 1.
    ck_assert_allclose(y, (const float *)k.y.data, (long)T * out, 1e-5, 1e-5);
    tw_lora_linear_backward(dx, dA, dB, k.dy.data, k.x.data, u, k.W.data, k.A.data, k.B.data, k.scale,
                            T, in, out, r);
    // Backward: the same size of sums; grad_check.h's metric at rel 1e-5 (measured worst ~1e-7).
    ck_assert_grad("d_x", dx, (const float *)k.dx.data, (long)T * in, 1e-5, 0);
    ck_assert_grad("d_A", dA, (const float *)k.dA.data, (long)r * in, 1e-5, 0);
    ck_assert_grad("d_B", dB, (const float *)k.dB.data, (long)out * r, 1e-5, 0);
    // The trainer's route: dA, dB from G = dy^T x, the merged weight's gradient.
    float *G = tt_zeros((long)out * in), *dA2 = tt_zeros((long)r * in), *dB2 = tt_zeros((long)out * r);
    tw_linear_backward(NULL, G, NULL, k.dy.data, k.x.data, k.W.data, T, in, out);
    tw_lora_grads_from_weight_grad(dA2, dB2, G, k.A.data, k.B.data, k.scale, in, out, r);
    ck_assert_grad("d_A from G", dA2, (const float *)k.dA.data, (long)r * in, 1e-5, 0);
    ck_assert_grad("d_B from G", dB2, (const float *)k.dB.data, (long)out * r, 1e-5, 0);
    free(y); free(u); free(dx); free(dA); free(dB); free(G); free(dA2); free(dB2);
    free_linear(&k);
}
END_TEST

// sum(y * dy) in double, y = the LoRA Linear of (x, A, B): the scalar whose gradient the backward
// computes.
static double linear_objective(const linear_case *k, const float *x, const float *A, const float *B) {
    float *y = tt_zeros((long)k->T * k->out);
    tw_lora_linear_forward(y, NULL, x, k->W.data, k->has_b ? k->b.data : NULL, A, B, k->scale, k->T,
                           k->in, k->out, k->r);
    double s = 0.0;
    for (long i = 0; i < (long)k->T * k->out; i++) s += (double)y[i] * ((const float *)k->dy.data)[i];
    free(y);
    return s;
}

START_TEST(linear_matches_finite_differences)
{
    linear_case k;
    load_linear(&k, LINEAR_CASES[_i]);
    const int T = k.T, in = k.in, out = k.out, r = k.r;
    float *x = malloc(k.x.count * sizeof(float)), *A = malloc(k.A.count * sizeof(float)),
          *B = malloc(k.B.count * sizeof(float));
    memcpy(x, k.x.data, k.x.count * sizeof(float));
    memcpy(A, k.A.data, k.A.count * sizeof(float));
    memcpy(B, k.B.data, k.B.count * sizeof(float));
    float *u = tt_zeros((long)T * r), *y = tt_zeros((long)T * out), *dx = tt_zeros((long)T * in);
    float *dA = tt_zeros((long)r * in), *dB = tt_zeros((long)out * r);
    tw_lora_linear_forward(y, u, x, k.W.data, k.has_b ? k.b.data : NULL, A, B, k.scale, T, in, out, r);
    tw_lora_linear_backward(dx, dA, dB, k.dy.data, x, u, k.W.data, A, B, k.scale, T, in, out, r);
    float *targets[3] = { x, A, B };
    const float *grads[3] = { dx, dA, dB };
    const long counts[3] = { (long)T * in, (long)r * in, (long)out * r };
    const char *names[3] = { "fd d_x", "fd d_A", "fd d_B" };
    for (int v = 0; v < 3; v++) {
        float *fd = tt_zeros(counts[v]);
        for (long i = 0; i < counts[v]; i++) {
            const float keep = targets[v][i], h = 1e-2f;
            targets[v][i] = keep + h;
            const double up = linear_objective(&k, x, A, B);
            targets[v][i] = keep - h;
            const double down = linear_objective(&k, x, A, B);
            targets[v][i] = keep;
            fd[i] = (float)((up - down) / (2.0 * (double)h));
        }
        // The objective is linear in each single variable (x, A and B each enter y once), so the
        // central difference is exact up to the float32 rounding of y (~1e-7 of terms of order 1,
        // divided by 2h = 0.02): rel 1e-3 of the largest entry (measured worst ~5e-5); a wrong
        // backward (a missing scale, the base path left out of dx) is off by order 1.
        ck_assert_grad(names[v], grads[v], fd, counts[v], 1e-3, 0);
        free(fd);
    }
    free(x); free(A); free(B); free(u); free(y); free(dx); free(dA); free(dB);
    free_linear(&k);
}
END_TEST

static void load_stories(tw_model *m) {
    char err[512] = "";
    ck_assert_msg(tw_model_load_file(m, "data/models/stories260K.bin", err, sizeof err) == TW_OK, "%s", err);
}

static const int WQ_WV[2] = { TW_LORA_WQ, TW_LORA_WV };

START_TEST(fresh_adapter_changes_no_bit)
{
    tw_model m;
    load_stories(&m);
    const int T = 16, V = m.cfg.vocab;
    int tokens[16];
    for (int t = 0; t < T; t++) tokens[t] = (t * 37 + 1) % V;
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    float *base = malloc((size_t)T * V * sizeof(float));
    memcpy(base, s.logits, (size_t)T * V * sizeof(float));
    tw_lora_set ad;
    const int all[7] = { 0, 1, 2, 3, 4, 5, 6 };
    ck_assert_int_eq(tw_lora_set_init(&ad, &m.cfg, 4, 8.0f, all, 7), TW_OK);
    tw_lora_set_randomize(&ad, 5);
    ck_assert_int_eq(tw_lora_attach(&m, &ad), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    ck_assert_msg(memcmp(base, s.logits, (size_t)T * V * sizeof(float)) == 0,
                  "a fresh adapter (B = 0) changed the logits");
    // The attachment is live: a non-zero B must change them (else the check above proves nothing).
    tw_lora_B(&ad, 0, 0)[0] = 0.5f;
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    ck_assert(memcmp(base, s.logits, (size_t)T * V * sizeof(float)) != 0);
    tw_lora_detach(&m);
    tw_lora_set_free(&ad);
    tw_model_state_free(&s);
    free(base);
    tw_model_free(&m);
}
END_TEST

START_TEST(merged_equals_unmerged)
{
    tw_model m;
    load_stories(&m);
    const int T = 24, V = m.cfg.vocab;
    int tokens[24];
    for (int t = 0; t < T; t++) tokens[t] = (t * 53 + 7) % V;
    tw_lora_set ad;
    ck_assert_int_eq(tw_lora_set_init(&ad, &m.cfg, 4, 8.0f, WQ_WV, 2), TW_OK);
    tw_lora_set_randomize(&ad, 9);
    tw_rng rng;
    tw_rng_init(&rng, 10);
    for (int l = 0; l < ad.n_layer; l++)      // a trained-looking adapter: B of order 0.05
        for (int i = 0; i < ad.n_targets; i++)
            tw_rng_fill_normal(&rng, tw_lora_B(&ad, l, i), (long)ad.out[i] * ad.r, 0.05f);
    float *W0 = malloc((size_t)m.n_floats * sizeof(float));
    memcpy(W0, m.memory, (size_t)m.n_floats * sizeof(float));
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_lora_attach(&m, &ad), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    float *unmerged = malloc((size_t)T * V * sizeof(float));
    memcpy(unmerged, s.logits, (size_t)T * V * sizeof(float));
    tw_lora_detach(&m);
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    double moved = 0.0;   // how far the adapter moved the logits: the check below must be finer
    for (long i = 0; i < (long)T * V; i++) moved = fmax(moved, fabs((double)s.logits[i] - unmerged[i]));
    ck_assert_int_eq(tw_lora_merge_model(&m, &ad, +1), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    // Merged (W + s B A rounded once, then one product) against unmerged (two products added):
    // float32 roundings of logits of size ~10 through 5 layers: absolute 1e-4 + relative 1e-5
    // (measured worst ~1e-5), a hundred times finer than the adapter's own effect (moved, ~0.1+).
    ck_assert_allclose(s.logits, unmerged, (long)T * V, 1e-4, 1e-5);
    ck_assert_msg(moved > 1e-2, "the adapter moved the logits by only %g", moved);
    ck_assert_int_eq(tw_lora_merge_model(&m, &ad, -1), TW_OK);
    // Unmerge: W + d - d with d computed identically both times: within one rounding of W's
    // size (2^-23 relative, ~1.2e-7) per element.
    ck_assert_allclose(m.memory, W0, m.n_floats, 1e-7, 2.4e-7);
    free(W0);
    free(unmerged);
    tw_model_state_free(&s);
    tw_lora_set_free(&ad);
    tw_model_free(&m);
}
END_TEST

START_TEST(adapters_file_round_trip)
{
    tw_model m;
    load_stories(&m);
    tw_lora_set ad, back;
    ck_assert_int_eq(tw_lora_set_init(&ad, &m.cfg, 4, 8.0f, WQ_WV, 2), TW_OK);
    tw_lora_set_randomize(&ad, 3);
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "/tmp/tw_test_lora_%ld.lora", (long)getpid());
    ck_assert_msg(tw_lora_file_write(path, &ad, err, sizeof err) == TW_OK, "%s", err);
    long len = 0;
    unsigned char *raw = tt_read_file(path, &len);
    // The layout of the issue: the header, then 5 layers x (wq: A 4x64 + B 64x4, wv: A 4x64 + B 32x4).
    ck_assert_int_eq(len, 20 + 16 + 4L * 5 * (4 * 64 + 64 * 4 + 4 * 64 + 32 * 4));
    ck_assert(memcmp(raw, "lora\1\0\0\0\4\0\0\0", 12) == 0);
    ck_assert(memcmp(raw + 20, "wq\0\0\0\0\0\0wv\0\0\0\0\0\0", 16) == 0);
    free(raw);
    ck_assert_msg(tw_lora_file_load(&back, path, &m.cfg, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(back.n_floats, ad.n_floats);
    ck_assert(memcmp(back.memory, ad.memory, (size_t)ad.n_floats * sizeof(float)) == 0);
    ck_assert(back.r == 4 && back.alpha == 8.0f && back.n_targets == 2);
    tw_lora_set_free(&back);
    // The same file for a model of another shape: one line naming the file and the sizes.
    tw_model_config other;
    ck_assert_int_eq(tw_model_config_preset(&other, "llama"), TW_OK);
    ck_assert_int_ne(tw_lora_file_load(&back, path, &other, err, sizeof err), TW_OK);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_ptr_null(back.memory);
    remove(path);
    tw_lora_set_free(&ad);
    tw_model_free(&m);
}
END_TEST

START_TEST(trainable_share_under_two_percent)
{
    tw_model m;
    load_stories(&m);
    const long lora = tw_lora_set_floats(&m.cfg, 4, WQ_WV, 2), all = tw_model_count_params(&m);
    // 5 layers x (4 (64 + 64) + 4 (64 + 32)) = 4480 of 260,032 parameters: 1.72 %.
    ck_assert_int_eq(lora, 4480);
    ck_assert_msg(100.0 * lora / all < 2.0, "%ld of %ld parameters", lora, all);
    tw_model_free(&m);
}
END_TEST

// ---- ten steps against PyTorch ----

static const char *const TRAIN_CASES[] = { "stories260K", "llama", "gpt2" };
enum { H_B, H_T, H_STEPS, H_LR, H_WARMUP, H_MIN_LR, H_WD, H_BETA1, H_BETA2, H_EPS, H_CLIP, N_H };

START_TEST(ten_lora_steps_match_pytorch)
{
    const char *name = TRAIN_CASES[_i];
    char path[256], rel[256], err[512] = "";
    tw_model base, work;
    if (_i == 0) snprintf(path, sizeof path, "data/models/stories260K.bin");
    else snprintf(path, sizeof path, "data/golden/train/%s/init.bin", name);
    ck_assert_msg(tw_model_load_file(&base, path, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_msg(tw_model_load_file(&work, path, err, sizeof err) == TW_OK, "%s", err);
    float *base_copy = malloc((size_t)base.n_floats * sizeof(float));
    memcpy(base_copy, base.memory, (size_t)base.n_floats * sizeof(float));
    int *tokens;
    long n;
    snprintf(path, sizeof path, "data/golden/train/%s/tokens.bin", name);
    ck_assert_msg(tw_tokens_read(&tokens, &n, path, err, sizeof err) == TW_OK, "%s", err);
    snprintf(rel, sizeof rel, "lora/train/%s/hparams", name);
    tw_npy h = tt_load(rel, N_H);
    const float *hp = h.data;
    const tw_train_config c = { (int)hp[H_B], (int)hp[H_T], (int)hp[H_STEPS], (int)hp[H_WARMUP], hp[H_LR],
                                hp[H_MIN_LR], hp[H_WD], hp[H_BETA1], hp[H_BETA2], hp[H_EPS], hp[H_CLIP] };
    tw_npy_free(&h);
    tw_lora_set ad, want;
    snprintf(path, sizeof path, "data/golden/lora/train/%s/init.lora", name);
    ck_assert_msg(tw_lora_file_load(&ad, path, &base.cfg, err, sizeof err) == TW_OK, "%s", err);
    snprintf(path, sizeof path, "data/golden/lora/train/%s/final.lora", name);
    ck_assert_msg(tw_lora_file_load(&want, path, &base.cfg, err, sizeof err) == TW_OK, "%s", err);
    tw_trainer t;
    tw_lora_trainer lt;
    tw_batcher b;
    ck_assert_int_eq(tw_trainer_init(&t, &work, c.T), TW_OK);
    ck_assert_int_eq(tw_lora_trainer_init(&lt, &ad, &base.cfg), TW_OK);
    ck_assert_int_eq(tw_batcher_init(&b, tokens, n, c.B, c.T, 0, 0), TW_OK);
    int *in = malloc((size_t)c.B * c.T * sizeof *in), *tg = malloc((size_t)c.B * c.T * sizeof *tg);
    tw_train_stats st[10];
    ck_assert_int_eq(c.steps, 10);
    for (int s = 0; s < c.steps; s++) {
        tw_batcher_fill(in, tg, &b, s);
        ck_assert_int_eq(tw_lora_train_step(&st[s], &lt, &t, &work, &base, &ad, in, tg, &c), TW_OK);
    }
    snprintf(rel, sizeof rel, "lora/train/%s/losses", name);
    tw_npy L = tt_load(rel, 10);
    snprintf(rel, sizeof rel, "lora/train/%s/gnorms", name);
    tw_npy G = tt_load(rel, 10);
    snprintf(rel, sizeof rel, "lora/train/%s/lrs", name);
    tw_npy R = tt_load(rel, 10);
    const float *wl = L.data, *wg = G.data, *wr = R.data;
    // As tests/test_train.c: float32 against float64 through ten forward/backward passes:
    // loss and gradient norm relative 1e-5, learning rate 1e-6.
    for (int s = 0; s < 10; s++) {
        if (getenv("TW_VERBOSE"))
            printf("lora %s step %d: loss %.7g / %.7g  gnorm %.7g / %.7g\n", name, s + 1, (double)st[s].loss,
                   (double)wl[s], (double)st[s].gnorm, (double)wg[s]);
        ck_assert_msg(fabs(st[s].loss - wl[s]) <= 1e-5 * fabs(wl[s]), "%s step %d: loss %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].loss, (double)wl[s]);
        ck_assert_msg(fabs(st[s].gnorm - wg[s]) <= 1e-5 * fabs(wg[s]), "%s step %d: gnorm %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].gnorm, (double)wg[s]);
        ck_assert_msg(fabs(st[s].lr - wr[s]) <= 1e-6 * fabs(wr[s]) + 1e-12, "%s step %d: lr", name, s + 1);
    }
    // Final adapters: AdamW moves each float by about lr per step whatever its gradient, so the
    // bound is set against lr (5e-3 .. 1e-2): absolute 1e-4 + relative 1e-4, as tests/test_train.c.
    double worst = 0.0;
    for (long i = 0; i < ad.n_floats; i++) {
        const double d = fabs((double)ad.memory[i] - want.memory[i]);
        if (d > worst) worst = d;
        ck_assert_msg(d <= 1e-4 + 1e-4 * fabs(want.memory[i]), "%s: adapter float %ld is %.7g, PyTorch %.7g",
                      name, i, (double)ad.memory[i], (double)want.memory[i]);
    }
    if (getenv("TW_VERBOSE")) printf("lora %s: largest adapter difference %.3g\n", name, worst);
    // The frozen base: not one bit moved.
    ck_assert(memcmp(base_copy, base.memory, (size_t)base.n_floats * sizeof(float)) == 0);
    // The adapters did move (else the comparison above could pass on an untrained copy).
    tw_lora_set init;
    snprintf(path, sizeof path, "data/golden/lora/train/%s/init.lora", name);
    ck_assert_int_eq(tw_lora_file_load(&init, path, &base.cfg, err, sizeof err), TW_OK);
    double moved = 0.0;
    for (long i = 0; i < ad.n_floats; i++) moved = fmax(moved, fabs((double)ad.memory[i] - init.memory[i]));
    ck_assert_msg(moved > 1e-3, "%s: the adapters moved by only %g", name, moved);
    tw_lora_set_free(&init);
    tw_npy_free(&L); tw_npy_free(&G); tw_npy_free(&R);
    free(in); free(tg); free(tokens); free(base_copy);
    tw_batcher_free(&b);
    tw_lora_trainer_free(&lt);
    tw_trainer_free(&t);
    tw_lora_set_free(&ad);
    tw_lora_set_free(&want);
    tw_model_free(&work);
    tw_model_free(&base);
}
END_TEST


// ---- the frozen base: the backward forms no gradient a LoRA step does not use ----

// The best SIMD level here: the last word of tw_simd_available() ("naive" on a plain build).
static const char *best_level(void) {
    const char *avail = tw_simd_available();
    const char *sp = strrchr(avail, ' ');
    return sp ? sp + 1 : avail;
}

// The targets of each TRAIN_CASES model here: between them every kind the model has (gpt2's
// classic FFN has no w3).
static const char *const FROZEN_TARGETS[] = { "wq,wv", "wk,wo,w1,w2,w3", "wq,wo,w1,w2" };

// A LoRA step's adapter gradients against the same gradients projected from an unfrozen backward
// at the same merged weights: equal bit for bit (memcmp), at the naive level (_i < 3) and at the
// best SIMD level (_i >= 3). Skipping a frozen weight's dW changes no other sum, in the loops
// (dx and dW are separate accumulations) as in the packed products (separate calls), so no
// tolerance is needed. Also: every frozen gradient is left 0, the targets' gradients are the
// unfrozen ones bit for bit, and the unfrozen backward did form non-zero gradients for some
// frozen tensor (so the skip is real work, and the check is not vacuous).
START_TEST(frozen_base_changes_no_adapter_gradient_bit)
{
    const int k = _i % 3;
    const char *name = TRAIN_CASES[k], *level = _i < 3 ? "naive" : best_level();
    ck_assert_str_eq(tw_simd_init(level), level);
    char path[256], err[512] = "";
    tw_model base, work;
    if (k == 0) snprintf(path, sizeof path, "data/models/stories260K.bin");
    else snprintf(path, sizeof path, "data/golden/train/%s/init.bin", name);
    ck_assert_msg(tw_model_load_file(&base, path, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_msg(tw_model_load_file(&work, path, err, sizeof err) == TW_OK, "%s", err);
    int targets[TW_LORA_N_KINDS], n_targets;
    ck_assert_int_eq(tw_lora_targets_parse(targets, &n_targets, FROZEN_TARGETS[k], err, sizeof err), TW_OK);
    tw_lora_set ad, want;
    ck_assert_int_eq(tw_lora_set_init(&ad, &base.cfg, 3, 6.0f, targets, n_targets), TW_OK);
    ck_assert_int_eq(tw_lora_set_init(&want, &base.cfg, 3, 6.0f, targets, n_targets), TW_OK);
    tw_lora_set_randomize(&ad, 11);
    tw_rng r;
    tw_rng_init(&r, 12);
    for (int l = 0; l < ad.n_layer; l++)   // B non-zero, so that dA is too
        for (int i = 0; i < n_targets; i++)
            tw_rng_fill_normal(&r, tw_lora_B(&ad, l, i), (long)ad.out[i] * ad.r, 0.05f);
    int *tokens;
    long n;
    snprintf(path, sizeof path, "data/golden/train/%s/tokens.bin", name);
    ck_assert_msg(tw_tokens_read(&tokens, &n, path, err, sizeof err) == TW_OK, "%s", err);
    const tw_train_config c = { 2, 12, 10, 0, 1e-3f, 1e-3f, 0.0f, 0.9f, 0.95f, 1e-8f, 0.0f };
    tw_batcher b;
    ck_assert_int_eq(tw_batcher_init(&b, tokens, n, c.B, c.T, 0, 0), TW_OK);
    int in[2 * 12], tg[2 * 12];
    tw_batcher_fill(in, tg, &b, 0);

    // The reference: nothing frozen, the adapters' gradients projected from the merged weights'.
    tw_trainer ref, t;
    ck_assert_int_eq(tw_trainer_init(&ref, &work, c.T), TW_OK);
    ck_assert_int_eq(tw_lora_refresh(&work, &base, &ad), TW_OK);
    float loss_ref;
    ck_assert_int_eq(tw_model_forward_backward(&loss_ref, &ref.g, &ref.ds, &ref.s, &work, in, tg, c.B, c.T, 1.0f), TW_OK);
    for (int l = 0; l < ad.n_layer; l++)
        for (int i = 0; i < n_targets; i++) {
            const tw_lora *a = &ad.lin[l * n_targets + i];
            const float *G = tw_model_grad_of(&ref.g, &work, tw_lora_base_weight(&work, l, targets[i]));
            tw_lora_grads_from_weight_grad(tw_lora_A(&want, l, i), tw_lora_B(&want, l, i), G, a->A, a->B,
                                           a->scale, ad.in[i], ad.out[i], ad.r);
        }
    // The LoRA step (clip 0: its gradients are left unscaled in lt.g).
    tw_lora_trainer lt;
    tw_train_stats st;
    ck_assert_int_eq(tw_trainer_init(&t, &work, c.T), TW_OK);
    ck_assert_int_eq(tw_lora_trainer_init(&lt, &ad, &base.cfg), TW_OK);
    ck_assert_int_eq(tw_lora_train_step(&st, &lt, &t, &work, &base, &ad, in, tg, &c), TW_OK);
    ck_assert_msg(memcmp(&st.loss, &loss_ref, sizeof loss_ref) == 0, "%s %s: loss %.9g, unfrozen %.9g",
                  name, level, (double)st.loss, (double)loss_ref);
    ck_assert_msg(memcmp(lt.g.memory, want.memory, (size_t)want.n_floats * sizeof(float)) == 0,
                  "%s %s: the adapters' gradients differ from the unfrozen backward's", name, level);
    int n_frozen = 0, n_trained = 0;
    double skipped = 0.0;   // the largest gradient the unfrozen backward formed for a frozen tensor
    for (int i = 0; i < t.g.n_params; i++) {
        const tw_param *p = &t.g.params[i], *q = &ref.g.params[i];
        if (!p->frozen) {
            n_trained++;
            ck_assert_msg(memcmp(p->data, q->data, (size_t)p->count * sizeof(float)) == 0, "%s %s: %s",
                          name, level, p->name);
            continue;
        }
        n_frozen++;
        for (long j = 0; j < p->count; j++) {
            ck_assert_msg(p->data[j] == 0.0f, "%s %s: frozen %s[%ld] = %g", name, level, p->name, j, (double)p->data[j]);
            skipped = fmax(skipped, fabs((double)q->data[j]));
        }
    }
    ck_assert_int_eq(n_trained, n_targets * base.cfg.n_layer);
    ck_assert_int_eq(n_frozen, base.n_params - n_trained);
    ck_assert_msg(skipped > 0.0, "%s %s: the frozen tensors' gradients were all 0 anyway", name, level);
    tw_simd_init("naive");
    free(tokens);
    tw_batcher_free(&b);
    tw_lora_trainer_free(&lt);
    tw_trainer_free(&t);
    tw_trainer_free(&ref);
    tw_lora_set_free(&ad);
    tw_lora_set_free(&want);
    tw_model_free(&work);
    tw_model_free(&base);
}
END_TEST

Suite *suite_lora(void) {
    Suite *s = suite_create("lora");
    TCase *tc = tcase_create("lora");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, linear_matches_pytorch, 0, 3);
    tcase_add_loop_test(tc, linear_matches_finite_differences, 0, 3);
    tcase_add_test(tc, fresh_adapter_changes_no_bit);
    tcase_add_test(tc, merged_equals_unmerged);
    tcase_add_test(tc, adapters_file_round_trip);
    tcase_add_test(tc, trainable_share_under_two_percent);
    tcase_add_loop_test(tc, ten_lora_steps_match_pytorch, 0, 3);
    suite_add_tcase(s, tc);
    TCase *frozen = tcase_create("lora_frozen");
    tcase_set_timeout(frozen, 60);
    tcase_add_loop_test(frozen, frozen_base_changes_no_adapter_gradient_bit, 0, 6);
    suite_add_tcase(s, frozen);
    return s;
}
