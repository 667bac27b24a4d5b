// test_train.c: ten steps of our trainer (lib/train/step.c on the batches of lib/train/batches.c)
// against PyTorch's (tests/golden/gen_train.py, float64, data/golden/train/<case>/): the same
// initial weights, the same --no-shuffle batches, AdamW with decay on 2+-dim parameters, global
// norm clipping and the warm-up + cosine schedule. Checked at every step: the loss, the learning
// rate and the gradient norm; after the last step: every parameter, named as the table names it.
// Also: a run stopped and resumed through the training-state file ends bit-identical.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "train/step.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/tokens.h"
#include "simd/simd.h"

static const char *const CASES[] = { "2017", "gpt2", "llama", "qwen3", "stories260K" };
enum { N_CASES = 5 };
enum { H_B, H_T, H_STEPS, H_LR, H_WARMUP, H_MIN_LR, H_WD, H_BETA1, H_BETA2, H_EPS, H_CLIP, N_H };

typedef struct {
    tw_model m;
    int *tokens;
    long n;
    tw_train_config c;
} train_case;

static void load_case(train_case *k, const char *name) {
    char path[256], err[512] = "";
    if (strcmp(name, "stories260K") == 0) snprintf(path, sizeof path, "data/models/stories260K.bin");
    else snprintf(path, sizeof path, "data/golden/train/%s/init.bin", name);
    ck_assert_msg(tw_model_load_file(&k->m, path, err, sizeof err) == TW_OK, "%s", err);
    snprintf(path, sizeof path, "data/golden/train/%s/tokens.bin", name);
    ck_assert_msg(tw_tokens_read(&k->tokens, &k->n, path, err, sizeof err) == TW_OK, "%s", err);
    snprintf(path, sizeof path, "train/%s/hparams", name);
    tw_npy h = tt_load(path, N_H);
    const float *hp = h.data;
    tw_train_config c = { (int)hp[H_B], (int)hp[H_T], (int)hp[H_STEPS], (int)hp[H_WARMUP], hp[H_LR],
                          hp[H_MIN_LR], hp[H_WD], hp[H_BETA1], hp[H_BETA2], hp[H_EPS], hp[H_CLIP] };
    k->c = c;
    tw_npy_free(&h);
}

static void free_case(train_case *k) {
    tw_model_free(&k->m);
    free(k->tokens);
}

// Runs steps [from, to) of the --no-shuffle schedule; stats (to) receives each step's numbers.
static void run_steps(tw_train_stats *stats, tw_trainer *t, tw_model *m, tw_batcher *b,
                      const tw_train_config *c, long from, long to) {
    int *in = malloc((size_t)c->B * c->T * sizeof *in), *tg = malloc((size_t)c->B * c->T * sizeof *tg);
    for (long s = from; s < to; s++) {
        tw_batcher_fill(in, tg, b, s);
        ck_assert_int_eq(tw_train_step(&stats[s], t, m, in, tg, c), TW_OK);
    }
    free(in);
    free(tg);
}

// Loop indices [0, N_CASES): the whole batch at once (tw_trainer_init), as ./train --threads 1;
// [N_CASES, 2 N_CASES): the batch split into 2 parts on 2 threads (tw_trainer_init_split; two
// OpenMP threads in a `make OMP=1` build, one after the other otherwise), as ./train --threads 2.
// Both are held to the same tolerances against PyTorch below, so the two agree with each other
// within twice them: the split changes only the grouping of the per-sequence gradient sums (one
// extra float32 rounding per element, ~6e-8 relative), far inside what float32 vs float64 allows.
// Measured (TW_VERBOSE=1) with 2 parts: losses within 1.2e-7 and gradient norms within 7.3e-7 of
// PyTorch's, largest weight difference 5.5e-5 (2017's key bias, as unsplit: 4.0e-5), else 1.7e-5.
START_TEST(ten_steps_match_pytorch)
{
    const char *name = CASES[_i % N_CASES];
    const int parts = 1 + _i / N_CASES;
    train_case k;
    load_case(&k, name);
    tw_trainer t;
    tw_batcher b;
    tw_matmul_set_threads(parts);
    ck_assert_int_eq(tw_trainer_init_split(&t, &k.m, k.c.T, parts), TW_OK);
    ck_assert_int_eq(tw_batcher_init(&b, k.tokens, k.n, k.c.B, k.c.T, 0, 0), TW_OK);
    tw_train_stats st[16];
    ck_assert_int_le(k.c.steps, 16);
    run_steps(st, &t, &k.m, &b, &k.c, 0, k.c.steps);
    char rel[256];
    snprintf(rel, sizeof rel, "train/%s/losses", name);
    tw_npy L = tt_load(rel, k.c.steps);
    snprintf(rel, sizeof rel, "train/%s/lrs", name);
    tw_npy R = tt_load(rel, k.c.steps);
    snprintf(rel, sizeof rel, "train/%s/gnorms", name);
    tw_npy G = tt_load(rel, k.c.steps);
    const float *wl = L.data, *wr = R.data, *wg = G.data;
    // Loss and gradient norm: float32 against float64 through one forward and backward per
    // step, compounded over up to ten updates: relative 1e-5. Measured (TW_VERBOSE=1 prints
    // them): at most 2.5e-7 for the losses and 1.4e-6 for the gradient norms (stories260K);
    // a wrong gradient or update rule moves them by 1e-3 or more.
    // Learning rate: the same formula in float32 and double: relative 1e-6.
    for (int s = 0; s < k.c.steps; s++) {
        if (getenv("TW_VERBOSE"))
            printf("%s step %d: loss %.7g / %.7g (rel %.2e)  gnorm %.7g / %.7g (rel %.2e)  lr %.6g / %.6g\n",
                   name, s + 1, (double)st[s].loss, (double)wl[s], fabs(st[s].loss - wl[s]) / fabs(wl[s]),
                   (double)st[s].gnorm, (double)wg[s], fabs(st[s].gnorm - wg[s]) / fabs(wg[s]),
                   (double)st[s].lr, (double)wr[s]);
        ck_assert_msg(fabs(st[s].loss - wl[s]) <= 1e-5 * fabs(wl[s]), "%s step %d: loss %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].loss, (double)wl[s]);
        ck_assert_msg(fabs(st[s].gnorm - wg[s]) <= 1e-5 * fabs(wg[s]), "%s step %d: gnorm %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].gnorm, (double)wg[s]);
        ck_assert_msg(fabs(st[s].lr - wr[s]) <= 1e-6 * fabs(wr[s]) + 1e-12, "%s step %d: lr %.7g, PyTorch %.7g",
                      name, s + 1, (double)st[s].lr, (double)wr[s]);
    }
    // Final weights: AdamW moves each weight by about lr per step whatever the gradient's size,
    // so a float32 rounding in a gradient near zero can change an update by up to ~lr; ten such
    // steps bound the difference by 10 lr in theory. The worst case here is the attention key
    // bias, whose gradient is exactly zero in exact arithmetic (adding a constant to every score
    // of a row leaves its softmax unchanged): PyTorch's is ~1e-17, ours float32 noise ~1e-9,
    // which AdamW (eps 1e-8) turns into updates of ~0.1 lr. Measured: 4.0e-5 (2017's
    // layers.0.attn.bk), else at most 1.8e-5 (stories260K). Tolerance: absolute 1e-4 + relative
    // 1e-4, far below lr (1e-3 .. 1e-2), so a wrong update rule still fails.
    double worst = 0.0;
    const char *worst_name = "";
    for (int i = 0; i < k.m.n_params; i++) {
        const tw_param *p = &k.m.params[i];
        snprintf(rel, sizeof rel, "train/%s/final/%s", name, p->name);
        tw_npy W = tt_load(rel, p->count);
        const float *w = W.data;
        for (long j = 0; j < p->count; j++) {
            const double d = fabs((double)p->data[j] - w[j]);
            if (d > worst) { worst = d; worst_name = p->name; }
            ck_assert_msg(d <= 1e-4 + 1e-4 * fabs(w[j]), "%s: %s[%ld] is %.7g after %d steps, PyTorch %.7g",
                          name, p->name, j, (double)p->data[j], k.c.steps, (double)w[j]);
        }
        tw_npy_free(&W);
    }
    if (getenv("TW_VERBOSE")) printf("%s, %d part(s): largest weight difference %.3g (%s)\n", name, parts, worst, worst_name);
    ck_assert_msg(st[k.c.steps - 1].loss < st[0].loss, "%s: the loss did not fall", name);
    tw_npy_free(&L); tw_npy_free(&R); tw_npy_free(&G);
    tw_batcher_free(&b);
    tw_trainer_free(&t);
    tw_matmul_set_threads(1);
    free_case(&k);
}
END_TEST

START_TEST(a_resumed_run_ends_bit_identical)
{
    // 10 steps straight, against 4 steps, the state written and read back into fresh objects,
    // then 6 more. Shuffled batches, so the data position and seed must survive too.
    train_case k;
    load_case(&k, CASES[_i]);
    tw_model straight;
    char err[512] = "", path[512];
    snprintf(path, sizeof path, "/tmp/tw_test_train_%ld_%d.state", (long)getpid(), _i);
    ck_assert_int_eq(tw_model_init(&straight, &k.m.cfg), TW_OK);
    memcpy(straight.memory, k.m.memory, (size_t)k.m.n_floats * sizeof(float));
    tw_trainer t;
    tw_batcher b;
    tw_train_stats st[10];
    ck_assert_int_eq(tw_trainer_init(&t, &straight, k.c.T), TW_OK);
    ck_assert_int_eq(tw_batcher_init(&b, k.tokens, k.n, k.c.B, k.c.T, 1, 77), TW_OK);
    run_steps(st, &t, &straight, &b, &k.c, 0, 10);
    tw_trainer_free(&t);
    tw_batcher_free(&b);

    ck_assert_int_eq(tw_trainer_init(&t, &k.m, k.c.T), TW_OK);
    ck_assert_int_eq(tw_batcher_init(&b, k.tokens, k.n, k.c.B, k.c.T, 1, 77), TW_OK);
    run_steps(st, &t, &k.m, &b, &k.c, 0, 4);
    const tw_train_progress pr = { t.step, t.step * k.c.B, 77, 1, k.c.B, k.c.T };
    ck_assert_msg(tw_train_state_write(path, &pr, &k.m, t.adam_m, t.adam_v, err, sizeof err) == TW_OK, "%s", err);
    tw_trainer_free(&t);
    tw_batcher_free(&b);
    tw_model_free(&k.m);

    tw_train_progress got;
    float *am, *av;
    ck_assert_msg(tw_train_state_load(&got, &k.m, &am, &av, path, err, sizeof err) == TW_OK, "%s", err);
    remove(path);
    ck_assert_int_eq(tw_trainer_init(&t, &k.m, k.c.T), TW_OK);
    memcpy(t.adam_m, am, (size_t)k.m.n_floats * sizeof(float));
    memcpy(t.adam_v, av, (size_t)k.m.n_floats * sizeof(float));
    t.step = got.step;
    ck_assert_int_eq(tw_batcher_init(&b, k.tokens, k.n, got.B, got.T, 1, got.shuffle_seed), TW_OK);
    run_steps(st, &t, &k.m, &b, &k.c, got.step, 10);
    ck_assert_msg(memcmp(straight.memory, k.m.memory, (size_t)k.m.n_floats * sizeof(float)) == 0,
                  "%s: resumed weights differ from the uninterrupted run's", CASES[_i]);
    ck_assert(memcmp(t.adam_v, av, (size_t)k.m.n_floats * sizeof(float)) != 0);   // it did train on
    free(am);
    free(av);
    tw_trainer_free(&t);
    tw_batcher_free(&b);
    tw_model_free(&straight);
    free_case(&k);
}
END_TEST

Suite *suite_train(void) {
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("loop");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, ten_steps_match_pytorch, 0, 2 * N_CASES);
    tcase_add_loop_test(tc, a_resumed_run_ends_bit_identical, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}
