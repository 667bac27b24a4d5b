// test_distill.c: the distillation loss (lib/train/distill.c) against PyTorch's float64 autograd
// (tests/golden/gen_distill.py, data/golden/distill/) and finite differences: the loss
// a tau^2 KL(teacher_tau || student_tau) + (1 - a) CE and its gradient for several a, tau and
// ignored positions; ten steps of a student distilled from a teacher of another architecture
// against PyTorch's (losses, gradient norms, final weights), in the library and through
// ./train --teacher; a teacher with another vocabulary gets one line.
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "testrun.h"
#include "grad_check.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/distill.h"
#include "train/tokens.h"

static const char *const LOSS_CASES[] = { "soft_only_tau2", "hard_only", "mixed_tau4_ignored", "mixed_tau_half" };

typedef struct { tw_npy zs, zt, tg, meta, loss, dzs; int T, V; float a, tau, dloss; } loss_case;

static void load_loss(loss_case *k, const char *name) {
    char rel[256];
#define LOAD(f, file) snprintf(rel, sizeof rel, "distill/loss/%s/%s", name, file); k->f = tt_load(rel, -1)
    LOAD(zs, "zs"); LOAD(zt, "zt"); LOAD(tg, "targets"); LOAD(meta, "meta"); LOAD(loss, "loss"); LOAD(dzs, "d_zs");
#undef LOAD
    const float *m = k->meta.data;
    k->a = m[0]; k->tau = m[1]; k->dloss = m[2];
    k->T = (int)k->tg.count;
    k->V = (int)(k->zs.count / k->T);
}

static void free_loss(loss_case *k) {
    tw_npy_free(&k->zs); tw_npy_free(&k->zt); tw_npy_free(&k->tg); tw_npy_free(&k->meta);
    tw_npy_free(&k->loss); tw_npy_free(&k->dzs);
}

START_TEST(loss_matches_pytorch)
{
    loss_case k;
    load_loss(&k, LOSS_CASES[_i]);
    float loss, *d = tt_zeros(k.zs.count);
    ck_assert_int_eq(tw_distill_loss(&loss, d, k.dloss, k.zs.data, k.zt.data, k.tg.data, k.T, k.V, k.a, k.tau), TW_OK);
    // Everything in double inside, rounded to float once: relative 1e-6 on the loss (measured
    // ~1e-8), and grad_check.h's metric at rel 1e-6 on the gradient; a missing tau or tau^2 is
    // off by a factor of tau.
    const float want = ((const float *)k.loss.data)[0];
    ck_assert_msg(fabs(loss - want) <= 1e-6 * fabs(want), "%s: loss %.9g, PyTorch %.9g", LOSS_CASES[_i],
                  (double)loss, (double)want);
    ck_assert_grad(LOSS_CASES[_i], d, (const float *)k.dzs.data, k.zs.count, 1e-6, 0);
    free(d);
    free_loss(&k);
}
END_TEST

START_TEST(gradient_matches_finite_differences)
{
    loss_case k;
    load_loss(&k, LOSS_CASES[_i]);
    const long n = k.zs.count;
    float *z = malloc((size_t)n * sizeof *z), *d = tt_zeros(n), *fd = tt_zeros(n), loss;
    memcpy(z, k.zs.data, (size_t)n * sizeof *z);
    ck_assert_int_eq(tw_distill_loss(&loss, d, 1.0f, z, k.zt.data, k.tg.data, k.T, k.V, k.a, k.tau), TW_OK);
    for (long i = 0; i < n; i++) {
        const float keep = z[i], h = 1e-2f;
        float up, down;
        z[i] = keep + h;
        tw_distill_loss(&up, NULL, 1.0f, z, k.zt.data, k.tg.data, k.T, k.V, k.a, k.tau);
        z[i] = keep - h;
        tw_distill_loss(&down, NULL, 1.0f, z, k.zt.data, k.tg.data, k.T, k.V, k.a, k.tau);
        z[i] = keep;
        fd[i] = (up - down) / (2.0f * h);
    }
    // Central differences with h = 1e-2: truncation error ~h^2 |f'''| / 6 (the loss's third
    // derivative is of order 1/tau^3 per position, at most 8 for tau = 0.5) plus the float32
    // rounding of the loss (~1e-7 / 2h = 5e-6): rel 1e-3 of the largest entry (grad_check.h).
    ck_assert_grad(LOSS_CASES[_i], d, fd, n, 1e-3, 0);
    free(z); free(d); free(fd);
    free_loss(&k);
}
END_TEST

enum { H_B, H_T, H_STEPS, H_LR, H_WARMUP, H_MIN_LR, H_WD, H_BETA1, H_BETA2, H_EPS, H_CLIP, H_A, H_TAU, N_H };

START_TEST(ten_distill_steps_match_pytorch)
{
    char err[512] = "", rel[256];
    tw_model m, teacher;
    ck_assert_msg(tw_model_load_file(&m, "data/golden/train/llama/init.bin", err, sizeof err) == TW_OK, "%s", err);
    ck_assert_msg(tw_model_load_file(&teacher, "data/golden/train/gpt2/init.bin", err, sizeof err) == TW_OK, "%s", err);
    int *tokens;
    long n;
    ck_assert_int_eq(tw_tokens_read(&tokens, &n, "data/golden/train/llama/tokens.bin", err, sizeof err), TW_OK);
    tw_npy h = tt_load("distill/train/hparams", N_H);
    const float *hp = h.data;
    const tw_train_config c = { (int)hp[H_B], (int)hp[H_T], (int)hp[H_STEPS], (int)hp[H_WARMUP], hp[H_LR],
                                hp[H_MIN_LR], hp[H_WD], hp[H_BETA1], hp[H_BETA2], hp[H_EPS], hp[H_CLIP] };
    const float a = hp[H_A], tau = hp[H_TAU];
    tw_npy_free(&h);
    float *teacher_before = malloc((size_t)teacher.n_floats * sizeof(float));
    memcpy(teacher_before, teacher.memory, (size_t)teacher.n_floats * sizeof(float));
    tw_trainer t;
    tw_model_state ts;
    tw_batcher b;
    ck_assert_int_eq(tw_trainer_init(&t, &m, c.T), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&ts, &teacher, c.T, 0), TW_OK);
    ck_assert_int_eq(tw_batcher_init(&b, tokens, n, c.B, c.T, 0, 0), TW_OK);
    int *in = malloc((size_t)c.B * c.T * sizeof *in), *tg = malloc((size_t)c.B * c.T * sizeof *tg);
    tw_train_stats st[10];
    for (int s = 0; s < 10; s++) {
        tw_batcher_fill(in, tg, &b, s);
        ck_assert_int_eq(tw_distill_train_step(&st[s], &t, &m, &ts, &teacher, in, tg, &c, a, tau), TW_OK);
    }
    tw_npy L = tt_load("distill/train/losses", 10), G = tt_load("distill/train/gnorms", 10);
    const float *wl = L.data, *wg = G.data;
    // As tests/test_train.c: relative 1e-5 on the loss and gradient norm; final weights absolute
    // 1e-4 + relative 1e-4 (AdamW moves a weight by ~lr = 5e-3 per step whatever its gradient).
    for (int s = 0; s < 10; s++) {
        ck_assert_msg(fabs(st[s].loss - wl[s]) <= 1e-5 * fabs(wl[s]), "step %d: loss %.7g, PyTorch %.7g",
                      s + 1, (double)st[s].loss, (double)wl[s]);
        ck_assert_msg(fabs(st[s].gnorm - wg[s]) <= 1e-5 * fabs(wg[s]), "step %d: gnorm %.7g, PyTorch %.7g",
                      s + 1, (double)st[s].gnorm, (double)wg[s]);
    }
    for (int i = 0; i < m.n_params; i++) {
        const tw_param *p = &m.params[i];
        snprintf(rel, sizeof rel, "distill/train/final/%s", p->name);
        tw_npy W = tt_load(rel, p->count);
        ck_assert_allclose(p->data, (const float *)W.data, p->count, 1e-4, 1e-4);
        tw_npy_free(&W);
    }
    // The teacher runs without gradients: not one bit of it moved.
    ck_assert(memcmp(teacher_before, teacher.memory, (size_t)teacher.n_floats * sizeof(float)) == 0);
    // Another vocabulary: refused.
    tw_model other;
    ck_assert_int_eq(tw_model_load_file(&other, "data/models/stories260K.bin", err, sizeof err), TW_OK);
    tw_model_state os;
    ck_assert_int_eq(tw_model_state_init(&os, &other, c.T, 0), TW_OK);
    ck_assert_int_eq(tw_distill_train_step(&st[0], &t, &m, &os, &other, in, tg, &c, a, tau), TW_ERR_SHAPE);
    tw_model_state_free(&os);
    tw_model_free(&other);
    tw_npy_free(&L); tw_npy_free(&G);
    free(in); free(tg); free(tokens); free(teacher_before);
    tw_batcher_free(&b);
    tw_model_state_free(&ts);
    tw_trainer_free(&t);
    tw_model_free(&teacher);
    tw_model_free(&m);
}
END_TEST

START_TEST(train_teacher_prints_pytorch_losses_and_refuses_bad_teachers)
{
    run_result r = tt_run("./train --init data/golden/train/llama/init.bin --tokens data/golden/train/llama/tokens.bin "
                          "--teacher data/golden/train/gpt2/init.bin --distill-alpha 0.7 --distill-temp 2 --no-shuffle "
                          "--batch 3 --seq 12 --steps 10 --lr 5e-3 --warmup 1 --min-lr 1e-3 --weight-decay 0.1 "
                          "--beta1 0.9 --beta2 0.99 --eps 1e-8 --clip 1 --curve none");
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    tw_npy want = tt_load("distill/train/losses", 10);
    char why[4096];
    // 6 printed digits: relative 1e-5 (as tests/test_train_cli.c).
    ck_assert_msg(tt_losses_printed(r.out, want.data, 10, 1e-5, why, sizeof why), "%s", why);
    tw_npy_free(&want);
    tt_run_free(&r);
    const struct { const char *cmd; int rc; const char *says; } bad[] = {
        { "./train --init data/golden/train/llama/init.bin --tokens data/golden/train/llama/tokens.bin --seq 12 "
          "--teacher data/models/stories260K.bin", 1, "vocabulary has 512 tokens, the student's 65" },
        { "./train --init data/golden/train/llama/init.bin --tokens data/golden/train/llama/tokens.bin --seq 12 "
          "--teacher data/golden/train/llama/tokens.bin", 1, "--teacher" },
        { "./train --tokens data/golden/train/llama/tokens.bin --distill-temp 2", 2, "--teacher" },
        { "./train --tokens data/golden/train/llama/tokens.bin --teacher data/golden/train/gpt2/init.bin "
          "--distill-alpha 1.5", 2, "--distill-alpha" },
    };
    for (int i = 0; i < 4; i++) {
        r = tt_run(bad[i].cmd);
        ck_assert_msg(r.rc == bad[i].rc && strstr(r.err, bad[i].says) && tt_count_lines(r.err) == 1,
                      "%s: rc %d: '%s'", bad[i].cmd, r.rc, r.err);
        tt_run_free(&r);
    }
}
END_TEST

Suite *suite_distill(void) {
    Suite *s = suite_create("distill");
    TCase *tc = tcase_create("distill");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, loss_matches_pytorch, 0, 4);
    tcase_add_loop_test(tc, gradient_matches_finite_differences, 0, 4);
    tcase_add_test(tc, ten_distill_steps_match_pytorch);
    tcase_add_test(tc, train_teacher_prints_pytorch_losses_and_refuses_bad_teachers);
    suite_add_tcase(s, tc);
    return s;
}
