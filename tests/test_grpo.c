// test_grpo.c: GRPO (lib/train/grpo.c, ./train --grpo) against PyTorch's float64 autograd
// (tests/golden/gen_grpo.py, data/golden/grpo/) and finite differences: the group advantages, the
// clipped objective with its k3 KL and its gradient for fixed samples (some ratios clipped); the
// completion log-probs at a temperature and their backward; the two special cases (no
// signal: only the KL term is left; beta 0, one sample, ratio 1: the plain policy gradient, down to
// the model's weights); ten updates on replayed samples against PyTorch's, in the library and
// through ./train --grpo-replay; sampling that is reproducible and a dump that replays to the same
// bits; the prompts, plain and in the chat template; the reward functions; bad flags and bad
// replay files get one line.
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "testrun.h"
#include "grad_check.h"
#include "train/chat_template.h"
#include "train/checkpoint.h"
#include "formats/npy.h"
#include "tokenize/tokenizer.h"
#include "formats/lora_file.h"
#include "train/forward_backward.h"
#include "train/grpo.h"
#include "train/grpo_replay.h"
#include "train/loss.h"
#include "train/reward.h"

typedef struct { tw_npy lp, lp_old, lp_ref, rewards, lens, meta, adv, loss, kl, dlp; int G; float eps, beta, eps_adv; } objective_case;

static void load_objective(objective_case *k) {
    k->lp = tt_load("grpo/objective/lp", -1);
    k->lp_old = tt_load("grpo/objective/lp_old", k->lp.count);
    k->lp_ref = tt_load("grpo/objective/lp_ref", k->lp.count);
    k->rewards = tt_load("grpo/objective/rewards", -1);
    k->lens = tt_load("grpo/objective/lens", k->rewards.count);
    k->meta = tt_load("grpo/objective/meta", 4);
    k->adv = tt_load("grpo/objective/adv", k->rewards.count);
    k->loss = tt_load("grpo/objective/loss", 1);
    k->kl = tt_load("grpo/objective/kl", 1);
    k->dlp = tt_load("grpo/objective/dlp", k->lp.count);
    const float *m = k->meta.data;
    k->G = (int)m[0]; k->eps = m[1]; k->beta = m[2]; k->eps_adv = m[3];
}

static void free_objective(objective_case *k) {
    tw_npy *all[] = { &k->lp, &k->lp_old, &k->lp_ref, &k->rewards, &k->lens, &k->meta, &k->adv, &k->loss, &k->kl, &k->dlp };
    for (int i = 0; i < 10; i++) tw_npy_free(all[i]);
}

START_TEST(advantages_and_objective_match_pytorch)
{
    objective_case k;
    load_objective(&k);
    const int n = (int)k.rewards.count;
    float *adv = tt_zeros(n), *dlp = tt_zeros(k.lp.count), loss, kl;
    ck_assert_int_eq(tw_grpo_advantages(adv, k.rewards.data, n / k.G, k.G, k.eps_adv), TW_OK);
    // Sums in double, rounded to float once: the advantages (of order 1) within 1e-6; a sample
    // standard deviation instead of the population one is off by sqrt(3/2), 22 %.
    ck_assert_allclose(adv, (const float *)k.adv.data, n, 1e-6, 1e-6);
    ck_assert_int_eq(tw_grpo_loss(&loss, &kl, dlp, k.lp.data, k.lp_old.data, k.lp_ref.data, k.adv.data,
                                  k.lens.data, n, k.eps, k.beta), TW_OK);
    // The same sums of ~17 terms in double: relative 1e-6 on the loss and KL (float's rounding of
    // the result, ~6e-8, with margin); the gradient by grad_check.h's metric at rel 1e-6.
    const float wl = ((const float *)k.loss.data)[0], wk = ((const float *)k.kl.data)[0];
    ck_assert_msg(fabs(loss - wl) <= 1e-6 * fabs(wl), "loss %.9g, PyTorch %.9g", (double)loss, (double)wl);
    ck_assert_msg(fabs(kl - wk) <= 1e-6 * fabs(wk), "kl %.9g, PyTorch %.9g", (double)kl, (double)wk);
    ck_assert_grad("grpo dlp", dlp, (const float *)k.dlp.data, k.lp.count, 1e-6, 0);
    // The case clips: some gradients are exactly 0 apart from the KL term. Without the clip (a
    // huge eps) the loss changes, so the golden tests the clip.
    float loss_noclip, kl2;
    tw_grpo_loss(&loss_noclip, &kl2, NULL, k.lp.data, k.lp_old.data, k.lp_ref.data, k.adv.data, k.lens.data, n, 1e9f, k.beta);
    ck_assert_msg(fabs(loss_noclip - wl) > 1e-3, "the golden case does not exercise the clip");
    free(adv); free(dlp);
    free_objective(&k);
}
END_TEST

START_TEST(objective_gradient_matches_finite_differences)
{
    objective_case k;
    load_objective(&k);
    const int n = (int)k.rewards.count;
    const long N = k.lp.count;
    float *lp = malloc((size_t)N * sizeof *lp), *dlp = tt_zeros(N), *fd = tt_zeros(N), *got = tt_zeros(N);
    memcpy(lp, k.lp.data, (size_t)N * sizeof *lp);
    float loss, kl, up, down;
    ck_assert_int_eq(tw_grpo_loss(&loss, &kl, dlp, lp, k.lp_old.data, k.lp_ref.data, k.adv.data, k.lens.data,
                                  n, k.eps, k.beta), TW_OK);
    const float h = 1e-3f;
    long compared = 0;
    for (long i = 0; i < N; i++) {
        // The clip makes the objective kinked where rho = 1 +- eps: a difference across the kink
        // measures neither side. Positions within 2h of it are left out (none in this case).
        const double rho = exp((double)lp[i] - ((const float *)k.lp_old.data)[i]);
        if (fabs(rho - (1.0 + k.eps)) < 2.0 * h * rho || fabs(rho - (1.0 - k.eps)) < 2.0 * h * rho) continue;
        const float keep = lp[i];
        lp[i] = keep + h;
        tw_grpo_loss(&up, &kl, NULL, lp, k.lp_old.data, k.lp_ref.data, k.adv.data, k.lens.data, n, k.eps, k.beta);
        lp[i] = keep - h;
        tw_grpo_loss(&down, &kl, NULL, lp, k.lp_old.data, k.lp_ref.data, k.adv.data, k.lens.data, n, k.eps, k.beta);
        lp[i] = keep;
        fd[compared] = (up - down) / (2.0f * h);
        got[compared++] = dlp[i];
    }
    ck_assert_int_eq(compared, N);
    // Central differences, h = 1e-3: truncation h^2 |f'''| / 6 < 1e-6 (each term is a sum of
    // exponentials of lp of order 1, times 1/(n L) <= 1/6) plus the float rounding of the loss
    // (~1e-8 / 2h = 5e-6): rel 1e-3 of the largest entry (~0.1).
    ck_assert_grad("grpo fd", got, fd, compared, 1e-3, 0);
    free(lp); free(dlp); free(fd); free(got);
    free_objective(&k);
}
END_TEST

START_TEST(completion_logprobs_match_pytorch_and_finite_differences)
{
    tw_npy z = tt_load("grpo/logprobs/logits", -1), tk = tt_load("grpo/logprobs/tokens", -1),
           w = tt_load("grpo/logprobs/w", -1), meta = tt_load("grpo/logprobs/meta", 2),
           lpw = tt_load("grpo/logprobs/lp", -1), dzw = tt_load("grpo/logprobs/dlogits", z.count);
    const int T = (int)tk.count, V = (int)(z.count / T), start = (int)((const float *)meta.data)[0];
    const float tau = ((const float *)meta.data)[1];
    float *lp = tt_zeros(T), *dz = tt_zeros(z.count), *zz = malloc((size_t)z.count * sizeof *zz);
    ck_assert_int_eq(tw_completion_logprobs(lp, z.data, tk.data, T, V, start, tau), TW_OK);
    // log-softmax in double, rounded once: log-probs of order 1 within 1e-6.
    ck_assert_allclose(lp, (const float *)lpw.data, T - start, 1e-6, 1e-6);
    ck_assert_int_eq(tw_completion_logprobs_backward(dz, w.data, z.data, tk.data, T, V, start, tau), TW_OK);
    ck_assert_grad("logprobs dlogits", dz, (const float *)dzw.data, z.count, 1e-6, 0);
    // The rows before start - 1 and the last row predict no completion token: no gradient.
    for (long i = 0; i < (long)(start - 1) * V; i++) ck_assert(dz[i] == 0.0f);
    for (long i = (long)(T - 1) * V; i < z.count; i++) ck_assert(dz[i] == 0.0f);
    // Finite differences of sum_t w_t lp_t, h = 1e-2: truncation ~h^2 / (6 tau^3) ~ 5e-5, float
    // rounding of the sum ~1e-6 / 2h; rel 1e-3 of the largest entry.
    memcpy(zz, z.data, (size_t)z.count * sizeof *zz);
    float *fd = tt_zeros(z.count);
    for (long i = 0; i < z.count; i++) {
        const float keep = zz[i], h = 1e-2f;
        double f[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            zz[i] = keep + (sgn ? -h : h);
            tw_completion_logprobs(lp, zz, tk.data, T, V, start, tau);
            f[sgn] = 0.0;
            for (int t = 0; t < T - start; t++) f[sgn] += (double)((const float *)w.data)[t] * lp[t];
        }
        zz[i] = keep;
        fd[i] = (float)((f[0] - f[1]) / (2.0 * h));
    }
    ck_assert_grad("logprobs fd", dz, fd, z.count, 1e-3, 0);
    ck_assert_int_eq(tw_completion_logprobs(lp, z.data, tk.data, T, V, 0, tau), TW_ERR_ARG);   // no prompt
    ck_assert_int_eq(tw_completion_logprobs(lp, z.data, tk.data, T, V, start, 0.0f), TW_ERR_ARG);
    free(lp); free(dz); free(zz); free(fd);
    tw_npy_free(&z); tw_npy_free(&tk); tw_npy_free(&w); tw_npy_free(&meta); tw_npy_free(&lpw); tw_npy_free(&dzw);
}
END_TEST

START_TEST(no_signal_leaves_only_the_kl_term)
{
    objective_case k;
    load_objective(&k);
    const int n = (int)k.rewards.count;
    const long N = k.lp.count;
    // G = 1: every advantage is 0 (the population deviation of one reward is 0, not 0/0);
    // a group of equal rewards: 0 too.
    float adv[6], equal[6] = { 0.5f, 0.5f, 0.5f, -2.0f, -2.0f, -2.0f };
    ck_assert_int_eq(tw_grpo_advantages(adv, k.rewards.data, n, 1, k.eps_adv), TW_OK);
    for (int i = 0; i < n; i++) ck_assert(adv[i] == 0.0f);
    ck_assert_int_eq(tw_grpo_advantages(adv, equal, 2, 3, k.eps_adv), TW_OK);
    for (int i = 0; i < n; i++) ck_assert(adv[i] == 0.0f);
    // Then the gradient is the KL term's alone: d loss / d lp = beta (1 - exp(lp_ref - lp)) / (n L_i),
    // written out here from the formula (double, then rounded: within 1e-7 relative).
    float *dlp = tt_zeros(N), *want = tt_zeros(N), loss, kl;
    ck_assert_int_eq(tw_grpo_loss(&loss, &kl, dlp, k.lp.data, k.lp_old.data, k.lp_ref.data, adv, k.lens.data,
                                  n, k.eps, k.beta), TW_OK);
    const float *lp = k.lp.data, *lr = k.lp_ref.data;
    const int *lens = k.lens.data;
    double kl_sum = 0.0;
    for (int i = 0, off = 0; i < n; off += lens[i++])
        for (int t = off; t < off + lens[i]; t++) {
            const double x = (double)lr[t] - lp[t];
            want[t] = (float)(k.beta * (1.0 - exp(x)) / ((double)n * lens[i]));
            kl_sum += (exp(x) - x - 1.0) / ((double)n * lens[i]);
        }
    ck_assert_allclose(dlp, want, N, 0.0, 1e-6);
    ck_assert_msg(fabs(loss - k.beta * kl_sum) <= 1e-6 * k.beta * kl_sum, "loss %g, beta KL %g", (double)loss, k.beta * kl_sum);
    // And with beta = 0 as well: no gradient at all.
    ck_assert_int_eq(tw_grpo_loss(&loss, &kl, dlp, k.lp.data, k.lp_old.data, k.lp_ref.data, adv, k.lens.data,
                                  n, k.eps, 0.0f), TW_OK);
    for (long i = 0; i < N; i++) ck_assert(dlp[i] == 0.0f);
    free(dlp); free(want);
    free_objective(&k);
}
END_TEST

// beta = 0, one sample per group (its advantage given), ratio 1: the clipped objective's gradient
// is the plain policy gradient A grad lp. On the objective: d loss / d lp_t = -A / L exactly. On
// a model: the GRPO gradient of one completion equals A times the gradient of its mean
// cross-entropy over the completion tokens (prompt targets ignored), which is -(1/L) sum_t lp_t.
START_TEST(beta_zero_one_sample_is_the_policy_gradient)
{
    const float lp[5] = { -1.0f, -0.3f, -2.5f, -0.7f, -4.0f }, lp_ref[5] = { -1.2f, -0.1f, -2.0f, -0.9f, -3.0f };
    const float A[2] = { 0.7f, -1.3f };
    const int lens[2] = { 3, 2 };
    float dlp[5], loss, kl;
    ck_assert_int_eq(tw_grpo_loss(&loss, &kl, dlp, lp, lp, lp_ref, A, lens, 2, 0.2f, 0.0f), TW_OK);
    for (int t = 0; t < 5; t++) {
        const int i = t < 3 ? 0 : 1;
        ck_assert_msg(fabsf(dlp[t] - (-A[i] / (2.0f * lens[i]))) <= 1e-7f, "token %d: %g", t, (double)dlp[t]);
    }
    // On stories260K: prompt of 3 tokens, completion of 5.
    char err[512];
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, "data/models/stories260K.bin", err, sizeof err) == TW_OK, "%s", err);
    const int T = 8, start = 3;
    const int tokens[8] = { 1, 403, 261, 300, 29, 350, 410, 46 };
    tw_model_state s, ds;
    tw_model_grads g1, g2;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&ds, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_grads_init(&g1, &m), TW_OK);
    ck_assert_int_eq(tw_model_grads_init(&g2, &m), TW_OK);
    float lpm[7], dl[7];
    const float a = 0.7f;
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    ck_assert_int_eq(tw_completion_logprobs(lpm, s.logits, tokens, T, m.cfg.vocab, start, 1.0f), TW_OK);
    const int L = T - start;
    ck_assert_int_eq(tw_grpo_loss(&loss, &kl, dl, lpm, lpm, lpm, &a, &L, 1, 0.2f, 0.0f), TW_OK);
    tw_model_grad_state_zero(&ds, &m);
    ck_assert_int_eq(tw_completion_logprobs_backward(ds.logits, dl, s.logits, tokens, T, m.cfg.vocab, start, 1.0f), TW_OK);
    ck_assert_int_eq(tw_model_backward(&g1, &ds, &s, &m, tokens, T), TW_OK);
    int targets[8];
    for (int t = 0; t < T; t++) targets[t] = t + 1 < start || t == T - 1 ? TW_IGNORE_INDEX : tokens[t + 1];
    float ce;
    ck_assert_int_eq(tw_model_forward_backward(&ce, &g2, &ds, &s, &m, tokens, targets, 1, T, a), TW_OK);
    // The cross-entropy is -mean lp: the same number (relative 1e-6: two float paths).
    double mean_lp = 0.0;
    for (int t = 0; t < L; t++) mean_lp += lpm[t];
    ck_assert_msg(fabs(ce + mean_lp / L) <= 1e-6 * fabs(ce), "ce %g, -mean lp %g", (double)ce, -mean_lp / L);
    // Two float routes to the same logit gradient (double softmax here, the fused cross-entropy
    // there) through the same backward: rel 1e-5 of the largest entry.
    ck_assert_grad("policy gradient", g1.memory, g2.memory, m.n_floats, 1e-5, 0);
    tw_model_grads_free(&g1); tw_model_grads_free(&g2);
    tw_model_state_free(&s); tw_model_state_free(&ds);
    tw_model_free(&m);
}
END_TEST

enum { H_B, H_T, H_STEPS, H_LR, H_WARMUP, H_MIN_LR, H_WD, H_BETA1, H_BETA2, H_EPS, H_CLIP,
       H_G, H_CLIP_EPS, H_BETA, H_TAU, H_EPS_ADV, N_H };

// Compares ten steps' losses, KLs and norms and the final weights with the PyTorch goldens.
// Tolerances: the loss at ratio 1 is beta KL plus a sum of advantages that cancels to 0 in exact
// arithmetic (terms of order 1/n): absolute 1e-6 plus relative 1e-4. KL and gradient norm
// relative 1e-4 (float forward passes of 12 tokens; measured ~1e-6); the weights absolute and
// relative 1e-4 (AdamW moves each by ~lr = 5e-3 a step), as tests/test_train.c.
static void check_losses_n(const char *dir, const float *loss, const float *kl, const float *gnorm, int steps) {
    char rel[3][128];
    snprintf(rel[0], sizeof rel[0], "grpo/%s/losses", dir);
    snprintf(rel[1], sizeof rel[1], "grpo/%s/kls", dir);
    snprintf(rel[2], sizeof rel[2], "grpo/%s/gnorms", dir);
    tw_npy L = tt_load(rel[0], steps), K = tt_load(rel[1], steps), G = tt_load(rel[2], steps);
    const float *wl = L.data, *wk = K.data, *wg = G.data;
    for (int s = 0; s < steps; s++) {
        ck_assert_msg(fabs(loss[s] - wl[s]) <= 1e-6 + 1e-4 * fabs(wl[s]), "step %d: loss %.7g, PyTorch %.7g", s + 1, (double)loss[s], (double)wl[s]);
        if (kl) ck_assert_msg(fabs(kl[s] - wk[s]) <= 1e-7 + 1e-4 * fabs(wk[s]), "step %d: kl %.7g, PyTorch %.7g", s + 1, (double)kl[s], (double)wk[s]);
        if (gnorm) ck_assert_msg(fabs(gnorm[s] - wg[s]) <= 1e-4 * fabs(wg[s]), "step %d: gnorm %.7g, PyTorch %.7g", s + 1, (double)gnorm[s], (double)wg[s]);
    }
    tw_npy_free(&L); tw_npy_free(&K); tw_npy_free(&G);
}

static void check_losses(const char *dir, const float *loss, const float *kl, const float *gnorm) {
    check_losses_n(dir, loss, kl, gnorm, 10);
}

static void check_weights_in(const char *dir, const tw_model *m) {
    char rel[256];
    for (int i = 0; i < m->n_params; i++) {
        const tw_param *p = &m->params[i];
        snprintf(rel, sizeof rel, "grpo/%s/final/%s", dir, p->name);
        tw_npy W = tt_load(rel, p->count);
        ck_assert_allclose(p->data, (const float *)W.data, p->count, 1e-4, 1e-4);
        tw_npy_free(&W);
    }
}

// Loads the model ./train wrote at path and compares its weights with grpo/<dir>/final/.
static void check_weights_file(const char *path, const char *dir) {
    char err[512];
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, path, err, sizeof err) == TW_OK, "%s", err);
    check_weights_in(dir, &m);
    tw_model_free(&m);
}

// The golden run of gen_grpo.py (grpo/train/): the llama model twice (m, to train, and other: the
// reference, or LoRA's frozen base), the optimiser's and GRPO's settings from its hparams, and
// the replayed samples of its ten steps (2 prompts x G completions a step).
static void load_golden_run(tw_model *m, tw_model *other, tw_train_config *c, tw_grpo_config *gc,
                            tw_grpo_replay *rp) {
    char err[512];
    ck_assert_msg(tw_model_load_file(m, "data/golden/train/llama/init.bin", err, sizeof err) == TW_OK, "%s", err);
    ck_assert_msg(tw_model_load_file(other, "data/golden/train/llama/init.bin", err, sizeof err) == TW_OK, "%s", err);
    tw_npy h = tt_load("grpo/train/hparams", N_H);
    const float *hp = h.data;
    *c = (tw_train_config){ 0, 0, (int)hp[H_STEPS], (int)hp[H_WARMUP], hp[H_LR], hp[H_MIN_LR], hp[H_WD],
                            hp[H_BETA1], hp[H_BETA2], hp[H_EPS], hp[H_CLIP] };
    *gc = (tw_grpo_config){ (int)hp[H_G], hp[H_CLIP_EPS], hp[H_BETA], hp[H_TAU], hp[H_EPS_ADV] };
    tw_npy_free(&h);
    ck_assert_msg(tw_grpo_replay_read(rp, "data/golden/grpo/train/samples", 2 * gc->G, m->cfg.vocab, m->cfg.max_seq,
                                      err, sizeof err) == TW_OK, "%s", err);
}

START_TEST(ten_grpo_steps_match_pytorch)
{
    tw_model m, ref;
    tw_train_config c;
    tw_grpo_config gc;
    tw_grpo_replay rp;
    load_golden_run(&m, &ref, &c, &gc, &rp);
    ck_assert_int_eq(rp.steps, 10);
    const int n = rp.n, T_max = rp.T_max;
    tw_trainer t;
    tw_model_state rs;
    ck_assert_int_eq(tw_trainer_init(&t, &m, T_max), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&rs, &ref, T_max, 0), TW_OK);
    float loss[10], kl[10], gnorm[10];
    for (int s = 0; s < 10; s++) {
        const tw_grpo_batch b = tw_grpo_replay_batch(&rp, s);
        tw_grpo_stats st;
        ck_assert_int_eq(tw_grpo_train_step(&st, &t, &m, &rs, &ref, &b, &gc, &c), TW_OK);
        loss[s] = st.loss; kl[s] = st.kl; gnorm[s] = st.gnorm;
        // Step 3's first group has equal rewards (gen_grpo.py): half the groups carry a signal.
        if (s == 2) ck_assert(st.signal == 0.5f);
    }
    check_losses("train", loss, kl, gnorm);
    check_weights_in("train", &m);
    // A batch that does not split into groups of G, or a completion of no token: refused.
    tw_grpo_batch bad = tw_grpo_replay_batch(&rp, 0);
    bad.n = n - 1;
    tw_grpo_stats st;
    ck_assert_int_eq(tw_grpo_train_step(&st, &t, &m, &rs, &ref, &bad, &gc, &c), TW_ERR_ARG);
    tw_grpo_replay_free(&rp);
    tw_model_state_free(&rs);
    tw_trainer_free(&t);
    tw_model_free(&ref);
    tw_model_free(&m);
}
END_TEST

#define REPLAY_FLAGS "--grpo --grpo-prompts 2 --grpo-group 3 --grpo-clip 0.2 --grpo-beta 0.05 --grpo-temp 0.8 " \
    "--steps 10 --lr 5e-3 --weight-decay 0.1 --beta1 0.9 --beta2 0.99 --eps 1e-8 --clip 1"

// The printed "step N/M loss X ... kl K" lines, parsed.
static int parse_steps(const char *out, float *loss, float *kl, int max) {
    int n = 0;
    for (const char *p = out; (p = strstr(p, "step ")) != NULL && n < max; p++) {
        int s, k;
        double x, r, y;
        if ((p == out || p[-1] == '\n') && sscanf(p, "step %d/%d loss %lf reward %lf kl %lf", &s, &k, &x, &r, &y) == 5) {
            loss[n] = (float)x;
            kl[n++] = (float)y;
        }
    }
    return n;
}

// Runs cmd (./train replaying samples, writing into out/test_grpo/): exit 0, and the losses and
// KLs of the `steps` steps it prints.
static void run_replay(const char *cmd, float *loss, float *kl, int steps) {
    tt_mkdir_p("out/test_grpo");
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_int_eq(parse_steps(r.out, loss, kl, steps), steps);
    tt_run_free(&r);
}

START_TEST(train_grpo_replay_prints_pytorch_losses)
{
    float loss[10], kl[10];
    run_replay("./train --init data/golden/train/llama/init.bin --grpo-replay data/golden/grpo/train/samples "
               REPLAY_FLAGS " --out out/test_grpo/replay.bin", loss, kl, 10);
    // Six printed digits: the library test's tolerances hold (1e-6 absolute covers the loss's 0).
    check_losses("train", loss, kl, NULL);
    check_weights_file("out/test_grpo/replay.bin", "train");
}
END_TEST

// Samples that ./train --grpo drew from stories260K itself (length reward; gen_grpo.py, part 5),
// replayed: three updates against PyTorch's, with the tolerances of check_losses (the KL reaches
// 0.54 here, the losses 0.02) and the weights 1e-4.
START_TEST(train_grpo_replays_its_own_samples_as_pytorch_does)
{
    float loss[3], kl[3];
    run_replay("./train --init data/models/stories260K.bin --grpo --grpo-replay data/golden/grpo/sampled/samples "
               "--grpo-prompts 2 --grpo-group 3 --steps 3 --lr 1e-3 --out out/test_grpo/sampled.bin", loss, kl, 3);
    check_losses_n("sampled", loss, kl, NULL, 3);
    check_weights_file("out/test_grpo/sampled.bin", "sampled");
}
END_TEST

// The adapters after ten LoRA updates against PyTorch's final.lora: absolute and relative 1e-4
// (AdamW moves each by ~lr = 5e-3 a step), as tests/test_lora.c.
static void check_adapters(const tw_lora_set *ad, const tw_model_config *c) {
    char err[512];
    tw_lora_set want;
    ck_assert_msg(tw_lora_file_load(&want, "data/golden/grpo/lora/final.lora", c, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(want.n_floats, ad->n_floats);
    ck_assert_allclose(ad->memory, want.memory, ad->n_floats, 1e-4, 1e-4);
    tw_lora_set_free(&want);
}

START_TEST(ten_grpo_lora_steps_match_pytorch)
{
    char err[512];
    tw_model m, base;
    tw_train_config c;
    tw_grpo_config gc;
    tw_grpo_replay rp;
    load_golden_run(&m, &base, &c, &gc, &rp);
    tw_lora_set ad;
    ck_assert_msg(tw_lora_file_load(&ad, "data/golden/lora/train/llama/init.lora", &base.cfg, err, sizeof err) == TW_OK, "%s", err);
    float *before = malloc((size_t)base.n_floats * sizeof(float));
    memcpy(before, base.memory, (size_t)base.n_floats * sizeof(float));
    tw_trainer t;
    tw_lora_trainer lt;
    tw_model_state rs;
    ck_assert_int_eq(tw_trainer_init(&t, &m, rp.T_max), TW_OK);
    ck_assert_int_eq(tw_lora_trainer_init(&lt, &ad, &base.cfg), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&rs, &base, rp.T_max, 0), TW_OK);
    float loss[10], kl[10], gnorm[10];
    for (int s = 0; s < 10; s++) {
        const tw_grpo_batch b = tw_grpo_replay_batch(&rp, s);
        tw_grpo_stats st;
        ck_assert_int_eq(tw_grpo_lora_train_step(&st, &lt, &t, &m, &base, &ad, &rs, &base, &b, &gc, &c), TW_OK);
        loss[s] = st.loss; kl[s] = st.kl; gnorm[s] = st.gnorm;
    }
    check_losses("lora", loss, kl, gnorm);
    check_adapters(&ad, &base.cfg);
    // The base (and reference) is only read: not one bit of it moved.
    ck_assert(memcmp(before, base.memory, (size_t)base.n_floats * sizeof(float)) == 0);
    free(before);
    tw_grpo_replay_free(&rp);
    tw_model_state_free(&rs);
    tw_lora_trainer_free(&lt);
    tw_trainer_free(&t);
    tw_lora_set_free(&ad);
    tw_model_free(&base);
    tw_model_free(&m);
}
END_TEST

START_TEST(train_grpo_lora_replay_matches_pytorch)
{
    float loss[10], kl[10];
    run_replay("./train --init data/golden/train/llama/init.bin --grpo-replay data/golden/grpo/train/samples "
               "--lora-init data/golden/lora/train/llama/init.lora " REPLAY_FLAGS " --out out/test_grpo/lora.lora",
               loss, kl, 10);
    check_losses("lora", loss, kl, NULL);
    char err[512];
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, "data/golden/train/llama/init.bin", err, sizeof err) == TW_OK, "%s", err);
    tw_lora_set ad;
    ck_assert_msg(tw_lora_file_load(&ad, "out/test_grpo/lora.lora", &m.cfg, err, sizeof err) == TW_OK, "%s", err);
    check_adapters(&ad, &m.cfg);
    tw_lora_set_free(&ad);
    tw_model_free(&m);
}
END_TEST

// Sampling is seeded: two runs with the same flags draw the same samples (dumped files equal), and
// replaying the dump trains to the same printed lines and the same weights, byte for byte.
START_TEST(sampling_is_reproducible_and_its_dump_replays_exactly)
{
    tt_mkdir_p("out/test_grpo");
    const char *common = "./train --init data/models/stories260K.bin --grpo --grpo-prompts 1 --grpo-group 3 "
                         "--grpo-len 12 --steps 2 --lr 1e-3 --seed 7";
    char cmd[1024];
    run_result a[3];
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s -z data/models/tok512.bin --grpo-dump out/test_grpo/dump%d --out out/test_grpo/s%d.bin", common, i, i);
        a[i] = tt_run(cmd);
        ck_assert_msg(a[i].rc == 0, "rc %d: %s", a[i].rc, a[i].err);
    }
    const char *files[] = { "tokens.npy", "prompt_len.npy", "len.npy", "rewards.npy" };
    for (int f = 0; f < 4; f++) {
        char p0[256], p1[256];
        long n0, n1;
        snprintf(p0, sizeof p0, "out/test_grpo/dump0/%s", files[f]);
        snprintf(p1, sizeof p1, "out/test_grpo/dump1/%s", files[f]);
        unsigned char *b0 = tt_read_file(p0, &n0), *b1 = tt_read_file(p1, &n1);
        ck_assert_msg(n0 == n1 && memcmp(b0, b1, (size_t)n0) == 0, "%s differs between two seeded runs", files[f]);
        free(b0); free(b1);
    }
    snprintf(cmd, sizeof cmd, "%s --grpo-replay out/test_grpo/dump0 --out out/test_grpo/r.bin", common);
    a[2] = tt_run(cmd);
    ck_assert_msg(a[2].rc == 0, "rc %d: %s", a[2].rc, a[2].err);
    float l0[2], k0[2], l2[2], k2[2];
    ck_assert_int_eq(parse_steps(a[0].out, l0, k0, 2), 2);
    ck_assert_int_eq(parse_steps(a[2].out, l2, k2, 2), 2);
    for (int s = 0; s < 2; s++) ck_assert(l0[s] == l2[s] && k0[s] == k2[s]);
    long n0, n2;
    unsigned char *w0 = tt_read_file("out/test_grpo/s0.bin", &n0), *w2 = tt_read_file("out/test_grpo/r.bin", &n2);
    ck_assert_msg(n0 == n2 && memcmp(w0, w2, (size_t)n0) == 0, "the replayed run's weights differ from the sampled run's");
    free(w0); free(w2);
    for (int i = 0; i < 3; i++) tt_run_free(&a[i]);
}
END_TEST

// The prompts: prompt 0 is the instruction set's, "a story about WORD". With tok512 it is the
// plain text after BOS; with a tokenizer grown by <|user|>, <|assistant|>, <|end|> (./add-tokens,
// as make sft-data grows it) every prompt is BOS <|user|>TEXT<|assistant|>, the completion starts
// after <|assistant|>, and <|end|> ends it (never inside one).
START_TEST(train_grpo_prompts_use_the_chat_template_when_the_tokenizer_has_it)
{
    char dir[512], cmd[4096], model[600], tokp[600], dump[600], path[700], err[512] = "";
    ck_assert_msg(tt_make_chat_model(dir, model, tokp, "grpo_chat", err, sizeof err) == 0, "%s", err);
    run_result r;
    for (int chat = 0; chat < 2; chat++) {
        const char *m = chat ? model : "data/models/stories260K.bin", *z = chat ? tokp : "data/models/tok512.bin";
        const int V = chat ? 515 : 512, G = 3, n = 4 * G;
        snprintf(dump, sizeof dump, "%s/dump%d", dir, chat);
        snprintf(cmd, sizeof cmd, "./train --init %s -z %s --grpo --grpo-prompts 4 --grpo-group %d --grpo-len 16 "
                 "--steps 1 --lr 1e-3 --seed 7 --grpo-dump %s --out %s/s%d.bin", m, z, G, dump, dir, chat);
        r = tt_run(cmd);
        ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
        tt_run_free(&r);
        tw_tokenizer tok;
        ck_assert_msg(tw_tokenizer_load(&tok, z, V, err, sizeof err) == TW_OK, "%s", err);
        tw_npy tk, pl, ln;
        snprintf(path, sizeof path, "%s/tokens.npy", dump);
        ck_assert_msg(tw_npy_read(&tk, path, err, sizeof err) == TW_OK, "%s", err);
        snprintf(path, sizeof path, "%s/prompt_len.npy", dump);
        ck_assert_msg(tw_npy_read(&pl, path, err, sizeof err) == TW_OK, "%s", err);
        snprintf(path, sizeof path, "%s/len.npy", dump);
        ck_assert_msg(tw_npy_read(&ln, path, err, sizeof err) == TW_OK, "%s", err);
        ck_assert(tk.ndim == 3 && tk.shape[1] == n && pl.count == n && ln.count == n);
        const int T = (int)tk.shape[2];
        const int user = tw_tokenizer_lookup(&tok, TW_CHAT_USER), assistant = tw_tokenizer_lookup(&tok, TW_CHAT_ASSISTANT),
                  end = tw_tokenizer_lookup(&tok, TW_CHAT_END);
        ck_assert(chat ? user == 512 && assistant == 513 && end == 514 : user < 0 && assistant < 0 && end < 0);
        // Prompt 0 exactly: BOS + "a story about dog", in the template or not.
        char text[256];
        int want[256], nw = 0;
        if (chat) ck_assert_int_gt(tw_chat_format(text, sizeof text, "a story about dog", NULL), 0);
        else snprintf(text, sizeof text, "a story about dog");
        ck_assert_int_eq(tw_tokenizer_encode(&tok, want, &nw, 256, text, 1, 0), TW_OK);
        for (int i = 0; i < n; i++) {
            const int32_t *x = (const int32_t *)tk.data + (size_t)i * T;
            const int p = ((const int32_t *)pl.data)[i], len = ((const int32_t *)ln.data)[i];
            ck_assert(p >= 2 && p < len && len <= T && x[0] == 1);
            if (i < G) {   // the first group answers prompt 0
                ck_assert_int_eq(p, nw);
                for (int t = 0; t < nw; t++) ck_assert_int_eq(x[t], want[t]);
            }
            if (chat) ck_assert_msg(x[1] == user && x[p - 1] == assistant, "sample %d: not BOS <|user|> ... <|assistant|>", i);
            for (int t = 1; t < p; t++) ck_assert(x[t] < 512 || (chat && (t == 1 || t == p - 1)));   // no other special
            for (int t = p; t + 1 < len; t++) ck_assert_int_ne(x[t], chat ? end : 1);   // a stop ends a completion
        }
        tw_npy_free(&tk); tw_npy_free(&pl); tw_npy_free(&ln);
        tw_tokenizer_free(&tok);
    }
    ck_assert_int_eq(tt_remove_tree(dir), 0);
}
END_TEST

START_TEST(rewards_count_whole_words)
{
    ck_assert(tw_reward_contains("The Dog ran.", "dog") == 1.0f);
    ck_assert(tw_reward_contains("a hotdog and dogs", "dog") == 0.0f);   // whole words only
    ck_assert(tw_reward_contains("", "dog") == 0.0f);
    ck_assert(tw_reward_count("dog, dog dog! doggy dog", "dog") == 4.0f);
    ck_assert(tw_reward_count("dog dog", "") == 0.0f);
    ck_assert(tw_reward_length("one two three four", 4) == 1.0f);
    ck_assert(tw_reward_length("  one two  ", 4) == 0.5f);
    ck_assert(tw_reward_length("a b c d e f g h i", 4) == 0.0f);
    ck_assert_int_eq(tw_reward_from_name("count"), TW_REWARD_COUNT);
    ck_assert_int_eq(tw_reward_from_name("bogus"), -1);
}
END_TEST

// A replay folder written here: one step of 2 samples of 4 tokens, then one file spoiled.
static void write_folder(const char *dir, int spoil) {
    char path[256];
    const int32_t tk[8] = { 1, 5, 6, 0, 1, 7, 8, 9 };
    int32_t pl[2] = { 1, 2 }, ln[2] = { 3, 4 };
    float rw[2] = { 1.0f, 0.0f };
    const long s3[3] = { 1, 2, 4 }, s2[2] = { 1, 2 }, s1[1] = { 2 };
    if (spoil == 1) pl[1] = 4;              // prompt as long as its sample: no completion
    if (spoil == 2) ln[0] = 5;              // longer than the row
    if (spoil == 3) rw[1] = NAN;
    tt_mkdir_p(dir);
    snprintf(path, sizeof path, "%s/tokens.npy", dir);
    ck_assert_int_eq(tw_npy_write_i32(path, tk, s3, spoil == 4 ? 2 : 3), TW_OK);   // 4: a (1, 2) token array
    snprintf(path, sizeof path, "%s/prompt_len.npy", dir);
    ck_assert_int_eq(tw_npy_write_i32(path, pl, spoil == 5 ? s1 : s2, spoil == 5 ? 1 : 2), TW_OK);
    snprintf(path, sizeof path, "%s/len.npy", dir);
    ck_assert_int_eq(tw_npy_write_i32(path, ln, s2, 2), TW_OK);
    snprintf(path, sizeof path, "%s/rewards.npy", dir);
    if (spoil == 6) ck_assert_int_eq(tw_npy_write_i32(path, ln, s2, 2), TW_OK);   // int32 rewards
    else ck_assert_int_eq(tw_npy_write_f32(path, rw, s2, 2), TW_OK);
    if (spoil == 7) {   // truncated rewards.npy
        long n;
        unsigned char *b = tt_read_file(path, &n);
        FILE *f = fopen(path, "wb");
        ck_assert(f && fwrite(b, 1, (size_t)n - 3, f) == (size_t)n - 3 && fclose(f) == 0);
        free(b);
    }
    if (spoil == 8) { snprintf(path, sizeof path, "%s/len.npy", dir); remove(path); }
}

START_TEST(replay_reader_refuses_bad_folders)
{
    const struct { int spoil; tw_status status; const char *says; } cases[] = {
        { 1, TW_ERR_FORMAT, "1 <= prompt < length" }, { 2, TW_ERR_FORMAT, "1 <= prompt < length" },
        { 3, TW_ERR_FORMAT, "not finite" }, { 4, TW_ERR_FORMAT, "tokens.npy: shape" },
        { 5, TW_ERR_FORMAT, "prompt_len.npy: shape" }, { 6, TW_ERR_FORMAT, "expected float32" },
        { 7, TW_ERR_FORMAT, "rewards.npy" }, { 8, TW_ERR_IO, "len.npy" },
    };
    char dir[64], err[512];
    tw_grpo_replay r;
    write_folder("out/test_grpo/folder0", 0);
    ck_assert_msg(tw_grpo_replay_read(&r, "out/test_grpo/folder0", 2, 65, 16, err, sizeof err) == TW_OK, "%s", err);
    const tw_grpo_batch b = tw_grpo_replay_batch(&r, 0);
    ck_assert(b.n == 2 && b.T_max == 4 && b.tokens[5] == 7 && b.prompt_len[1] == 2 && b.len[1] == 4 && b.rewards[0] == 1.0f);
    tw_grpo_replay_free(&r);
    // The same good folder for another n, a smaller vocabulary or context: refused.
    ck_assert_int_eq(tw_grpo_replay_read(&r, "out/test_grpo/folder0", 3, 65, 16, err, sizeof err), TW_ERR_FORMAT);
    ck_assert_int_eq(tw_grpo_replay_read(&r, "out/test_grpo/folder0", 2, 9, 16, err, sizeof err), TW_ERR_FORMAT);
    ck_assert(strstr(err, "vocabulary") != NULL);
    ck_assert_int_eq(tw_grpo_replay_read(&r, "out/test_grpo/folder0", 2, 65, 3, err, sizeof err), TW_ERR_FORMAT);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(dir, sizeof dir, "out/test_grpo/folder%d", cases[i].spoil);
        write_folder(dir, cases[i].spoil);
        err[0] = '\0';
        const tw_status st = tw_grpo_replay_read(&r, dir, 2, 65, 16, err, sizeof err);
        ck_assert_msg(st == cases[i].status && strstr(err, dir) && strstr(err, cases[i].says) && !strchr(err, '\n'),
                      "spoil %d: status %d, err '%s'", cases[i].spoil, st, err);
        ck_assert(r.tokens.data == NULL && r.rewards.data == NULL);
    }
}
END_TEST

START_TEST(train_grpo_refuses_bad_flags_and_replays)
{
    tt_mkdir_p("out/test_grpo/badrep");
    const struct { const char *cmd; int rc; const char *says; } bad[] = {
        { "./train --grpo -z data/models/tok512.bin", 2, "--init" },
        { "./train --grpo --init data/models/stories260K.bin", 2, "-z" },
        { "./train --grpo --init data/models/stories260K.bin -z data/models/tok512.bin --grpo-group 0", 2, "--grpo-group" },
        { "./train --grpo --init data/models/stories260K.bin -z data/models/tok512.bin --reward bogus", 2, "--reward" },
        { "./train --grpo --init data/models/stories260K.bin -z data/models/tok512.bin --reward length --reward-word cat", 2, "--reward-word" },
        { "./train --grpo --init data/models/stories260K.bin -z data/models/tok512.bin --batch 3", 2, "--batch" },
        { "./train --grpo --init data/models/stories260K.bin -z data/models/tok512.bin --out data/models/stories260K.bin", 2, "--out" },
        { "./train --grpo --init data/models/stories260K.bin -z data/models/tok512.bin --lora-alpha 2", 2, "--lora" },
        { "./train --grpo --init data/models/stories260K.bin -z data/models/tok512.bin --lora-init data/golden/lora/train/llama/init.lora", 1, "--lora-init" },
        { "./train --grpo --init data/golden/train/llama/init.bin --grpo-replay out/test_grpo/none", 1, "tokens.npy" },
        { "./train --grpo --init data/golden/train/llama/init.bin --grpo-replay data/golden/grpo/train/samples --grpo-group 4", 1, "(steps, 8, T)" },
        { "./train --grpo --init data/golden/train/llama/init.bin --grpo-replay data/golden/grpo/train/samples --grpo-group 3 --steps 11", 2, "holds 10 steps" },
        { "./train --grpo --init data/golden/train/llama/init.bin --grpo-replay out/test_grpo/badrep --grpo-group 3", 1, "outside the model's vocabulary" },
    };
    // A replay folder whose tokens overrun the tiny model's vocabulary of 65.
    const int32_t tk[6 * 4] = { 1, 2, 3, 0, 1, 70, 3, 0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2, 0, 0, 1, 2, 0, 0 };
    const int32_t pl[6] = { 1, 1, 1, 1, 1, 1 }, ln[6] = { 3, 3, 2, 2, 2, 2 };
    const float rw[6] = { 0 };
    const long s3[3] = { 1, 6, 4 }, s2[2] = { 1, 6 };
    ck_assert_int_eq(tw_npy_write_i32("out/test_grpo/badrep/tokens.npy", tk, s3, 3), TW_OK);
    ck_assert_int_eq(tw_npy_write_i32("out/test_grpo/badrep/prompt_len.npy", pl, s2, 2), TW_OK);
    ck_assert_int_eq(tw_npy_write_i32("out/test_grpo/badrep/len.npy", ln, s2, 2), TW_OK);
    ck_assert_int_eq(tw_npy_write_f32("out/test_grpo/badrep/rewards.npy", rw, s2, 2), TW_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r = tt_run(bad[i].cmd);
        ck_assert_msg(r.rc == bad[i].rc, "%s: rc %d, expected %d (%s)", bad[i].cmd, r.rc, bad[i].rc, r.err);
        ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, bad[i].says), "%s: stderr '%s' should be one line naming '%s'",
                      bad[i].cmd, r.err, bad[i].says);
        tt_run_free(&r);
    }
}
END_TEST

Suite *suite_grpo(void) {
    Suite *s = suite_create("grpo");
    TCase *tc = tcase_create("grpo");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, advantages_and_objective_match_pytorch);
    tcase_add_test(tc, objective_gradient_matches_finite_differences);
    tcase_add_test(tc, completion_logprobs_match_pytorch_and_finite_differences);
    tcase_add_test(tc, no_signal_leaves_only_the_kl_term);
    tcase_add_test(tc, beta_zero_one_sample_is_the_policy_gradient);
    tcase_add_test(tc, ten_grpo_steps_match_pytorch);
    tcase_add_test(tc, train_grpo_replay_prints_pytorch_losses);
    tcase_add_test(tc, train_grpo_replays_its_own_samples_as_pytorch_does);
    tcase_add_test(tc, ten_grpo_lora_steps_match_pytorch);
    tcase_add_test(tc, train_grpo_lora_replay_matches_pytorch);
    tcase_add_test(tc, sampling_is_reproducible_and_its_dump_replays_exactly);
    tcase_add_test(tc, train_grpo_prompts_use_the_chat_template_when_the_tokenizer_has_it);
    tcase_add_test(tc, rewards_count_whole_words);
    tcase_add_test(tc, replay_reader_refuses_bad_folders);
    tcase_add_test(tc, train_grpo_refuses_bad_flags_and_replays);
    suite_add_tcase(s, tc);
    return s;
}
