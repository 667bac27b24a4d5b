// test_dpo.c: direct preference optimisation (lib/train/seq_logprob.c, lib/train/dpo.c,
// lib/train/pairs.c, lib/train/dpo_step.c, ./train --dpo) against PyTorch
// (tests/golden/gen_dpo.py, data/golden/dpo/) and finite differences:
//   log pi(y|x) of a completion and its backward; the pair loss, its margin and its gradient;
//   ten steps of full, --ref and LoRA training, losses, margins, accuracies, gradient norms and
//   final weights, in the library and through ./train's flags; the pairs file written and read
//   back; bad flags and files get one line; make_pref's pairs, for the instruction set's prompts,
//   plain (tok512) and in the chat template (a tokenizer grown with <|user|>, <|assistant|>, <|end|>).
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/lora_file.h"
#include "train/chat_template.h"
#include "train/checkpoint.h"
#include "train/dpo.h"
#include "train/dpo_step.h"
#include "train/loss.h"
#include "train/pairs.h"
#include "train/seq_logprob.h"
#include "tokenize/tokenizer.h"
#include <ctype.h>

enum { H_B, H_T, H_STEPS, H_LR, H_WARMUP, H_MIN_LR, H_WD, H_BETA1, H_BETA2, H_EPS, H_CLIP, N_H };

// ---- log pi(y | x) ----

static const char *const SEQ_CASES[] = { "one_row", "ignored_prompt", "wide", "big_logits" };

START_TEST(seq_logprob_matches_pytorch)
{
    char rel[128];
    snprintf(rel, sizeof rel, "dpo/seq/%s/meta", SEQ_CASES[_i]);
    tw_npy meta = tt_load(rel, 3);
    const int T = (int)((float *)meta.data)[0], V = (int)((float *)meta.data)[1];
    const float dlogp = ((float *)meta.data)[2];
    snprintf(rel, sizeof rel, "dpo/seq/%s/logits", SEQ_CASES[_i]);
    tw_npy Z = tt_load(rel, (long)T * V);
    snprintf(rel, sizeof rel, "dpo/seq/%s/targets", SEQ_CASES[_i]);
    tw_npy Y = tt_load(rel, T);
    snprintf(rel, sizeof rel, "dpo/seq/%s/logp", SEQ_CASES[_i]);
    tw_npy L = tt_load(rel, 1);
    snprintf(rel, sizeof rel, "dpo/seq/%s/dlogits", SEQ_CASES[_i]);
    tw_npy D = tt_load(rel, (long)T * V);
    float *probs = tt_zeros((long)T * V), *d = tt_zeros((long)T * V);
    double logp;
    ck_assert_int_eq(tw_seq_logprob_forward(&logp, probs, Z.data, Y.data, T, V), TW_OK);
    // log pi sums T log-softmax values, each from float exponentials summed in double: relative
    // 1e-6 of the golden (itself rounded to float32, 6e-8) with 1e-6 absolute for a sum near 0.
    const double want = ((float *)L.data)[0];
    ck_assert_msg(fabs(logp - want) <= 1e-6 + 1e-6 * fabs(want), "logp %.9g, PyTorch %.9g", logp, want);
    ck_assert_int_eq(tw_seq_logprob_backward(d, dlogp, probs, Y.data, T, V), TW_OK);
    // dlogits = dlogp (onehot - p): one float rounding of p and of the product, |dlogp| <= 2.
    ck_assert_allclose(d, (const float *)D.data, (long)T * V, 1e-6f, 1e-5f);
    free(probs); free(d);
    tw_npy_free(&meta); tw_npy_free(&Z); tw_npy_free(&Y); tw_npy_free(&L); tw_npy_free(&D);
}
END_TEST

// Central differences of log pi in the logits. h = 2^-10: z +- h is exact in float for |z| < 2^13,
// so the only error is the forward's own rounding (float exponentials, ~1e-7 relative of each
// row's sum, times the |log pi| < 100 here) over 2h, about 1e-4, and the h^2 term (~1e-7).
START_TEST(seq_logprob_backward_matches_finite_differences)
{
    const int T = 6, V = 11;
    float *z = tt_rand((long)T * V, -3.0f, 3.0f, 77), *probs = tt_zeros((long)T * V), *d = tt_zeros((long)T * V);
    const int targets[6] = { TW_IGNORE_INDEX, TW_IGNORE_INDEX, 4, 0, 10, 7 };
    double logp;
    ck_assert_int_eq(tw_seq_logprob_forward(&logp, probs, z, targets, T, V), TW_OK);
    ck_assert_int_eq(tw_seq_logprob_backward(d, 1.0f, probs, targets, T, V), TW_OK);
    const float h = 1.0f / 1024.0f;
    for (int i = 0; i < T * V; i++) {
        const float keep = z[i];
        double up, dn;
        z[i] = keep + h;
        tw_seq_logprob_forward(&up, probs, z, targets, T, V);
        z[i] = keep - h;
        tw_seq_logprob_forward(&dn, probs, z, targets, T, V);
        z[i] = keep;
        const double fd = (up - dn) / (2.0 * h);
        ck_assert_msg(fabs(fd - d[i]) <= 5e-4, "dlogits[%d]: backward %.7g, finite differences %.7g", i, (double)d[i], fd);
        if (i < 2 * V) ck_assert_msg(d[i] == 0.0f, "a prompt position got a gradient");
    }
    free(z); free(probs); free(d);
}
END_TEST

START_TEST(seq_targets_count_only_the_completion)
{
    const int x[3] = { 1, 20, 21 }, y[2] = { 30, 31 };
    int in[4], tg[4];
    ck_assert_int_eq(tw_seq_targets(in, tg, x, 3, y, 2), 4);
    const int want_in[4] = { 1, 20, 21, 30 }, want_tg[4] = { TW_IGNORE_INDEX, TW_IGNORE_INDEX, 30, 31 };
    for (int t = 0; t < 4; t++) {
        ck_assert_int_eq(in[t], want_in[t]);
        ck_assert_int_eq(tg[t], want_tg[t]);
    }
    ck_assert_int_eq(tw_seq_targets(in, tg, y, 1, x, 1), 1);   // one prompt token, one answer token
    ck_assert_int_eq(in[0], 30);
    ck_assert_int_eq(tg[0], 1);
}
END_TEST

// ---- the pair loss ----

START_TEST(dpo_loss_matches_pytorch)
{
    tw_npy in = tt_load("dpo/loss/inputs", -1), out = tt_load("dpo/loss/outputs", -1);
    const long n = in.count / 5;
    ck_assert_int_eq(out.count, 4 * n);
    const float *x = in.data, *w = out.data;
    for (long i = 0; i < n; i++) {
        tw_dpo_result r;
        tw_dpo_pair_loss(&r, x[5 * i], x[5 * i + 1], x[5 * i + 2], x[5 * i + 3], x[5 * i + 4]);
        const double got[4] = { r.loss, r.margin, r.d_chosen, r.d_rejected };
        for (int k = 0; k < 4; k++) {
            // Both in double from the same float32 inputs; the golden is rounded to float32 once:
            // relative 1e-6 (8 ulps of float), absolute 1e-30 for a loss that underflows to ~0.
            const double want = w[4 * i + k];
            ck_assert_msg(isfinite(got[k]) && fabs(got[k] - want) <= 1e-30 + 1e-6 * fabs(want),
                          "row %ld, output %d: %.9g, PyTorch %.9g", i, k, got[k], want);
        }
    }
    tw_npy_free(&in); tw_npy_free(&out);
}
END_TEST

static double pair_loss_at(double pw, double pl, double rw, double rl, double beta) {
    tw_dpo_result r;
    tw_dpo_pair_loss(&r, pw, pl, rw, rl, beta);
    return r.loss;
}

// In double, h = 1e-5: truncation ~h^2 |f'''| < 1e-9, rounding ~1e-16 / h = 1e-11.
START_TEST(dpo_loss_gradient_matches_finite_differences)
{
    const double cases[][5] = { { -10, -12, -10, -12, 0.1 }, { -5, -9, -7, -6, 0.5 }, { -3, -1, -8, -2, 3.0 },
                                { -30, -20, -25, -25, 2.0 }, { -1, -2, -1.5, -1.5, 1.0 } };
    const double h = 1e-5;
    for (int i = 0; i < 5; i++) {
        const double *c = cases[i];
        tw_dpo_result r;
        tw_dpo_pair_loss(&r, c[0], c[1], c[2], c[3], c[4]);
        const double dw = (pair_loss_at(c[0] + h, c[1], c[2], c[3], c[4]) - pair_loss_at(c[0] - h, c[1], c[2], c[3], c[4])) / (2 * h);
        const double dl = (pair_loss_at(c[0], c[1] + h, c[2], c[3], c[4]) - pair_loss_at(c[0], c[1] - h, c[2], c[3], c[4])) / (2 * h);
        ck_assert_msg(fabs(dw - r.d_chosen) <= 1e-8 && fabs(dl - r.d_rejected) <= 1e-8,
                      "case %d: (%.10g, %.10g) vs finite differences (%.10g, %.10g)", i, r.d_chosen, r.d_rejected, dw, dl);
    }
}
END_TEST

START_TEST(dpo_loss_is_log_2_at_the_reference_and_finite_far_from_it)
{
    tw_dpo_result r;
    tw_dpo_pair_loss(&r, -7.5, -3.25, -7.5, -3.25, 0.3);
    ck_assert(r.margin == 0.0 && fabs(r.loss - log(2.0)) < 1e-15 && fabs(r.d_chosen + 0.15) < 1e-15);
    tw_dpo_pair_loss(&r, 0, -1e6, 0, 0, 1.0);   // z = 1e6: e^{-z} underflows, nothing overflows
    ck_assert(r.loss == 0.0 && r.d_chosen == 0.0 && r.d_rejected == 0.0);
    tw_dpo_pair_loss(&r, -1e6, 0, 0, 0, 1.0);   // z = -1e6: loss = -z, gradient -beta
    ck_assert(r.loss == 1e6 && r.d_chosen == -1.0 && r.d_rejected == 1.0);
}
END_TEST

// ---- ten steps ----

static const char *const TRAIN_CASES[] = { "llama", "llama_ref", "llama_lora" };

static tw_train_config case_config(const char *name, float *beta) {
    char rel[128];
    snprintf(rel, sizeof rel, "dpo/train/%s/hparams", name);
    tw_npy h = tt_load(rel, N_H);
    const float *hp = h.data;
    const tw_train_config c = { (int)hp[H_B], 1, (int)hp[H_STEPS], (int)hp[H_WARMUP], hp[H_LR], hp[H_MIN_LR],
                                hp[H_WD], hp[H_BETA1], hp[H_BETA2], hp[H_EPS], hp[H_CLIP] };
    tw_npy_free(&h);
    snprintf(rel, sizeof rel, "dpo/train/%s/beta", name);
    tw_npy b = tt_load(rel, 1);
    *beta = ((float *)b.data)[0];
    tw_npy_free(&b);
    return c;
}

// Each step's printed or returned numbers against the goldens. Tolerances: a log-probability of
// up to ~40 nats summed from float32 logits is good to ~1e-6 relative (4e-5 absolute), so the
// worst case for z is beta * 4e-5 * 2 (beta <= 2: 2e-4), and the loss softplus(-z) moves by
// sigma(-z) |dz| <= loss * |dz|. The errors seen are 50 times smaller than that worst case (loss
// 1.5e-6 relative, margin 3.9e-6, gradient norm 4e-6 relative, printed values included), so the
// bounds are 5e-5 relative for the loss and the gradient norm and 5e-5 + 1e-5 relative for the
// margin: 10 times what was seen, under the worst case. Accuracy is exact except where PyTorch's
// margin is within 1e-4 of 0 (a tie either way).
static void check_step(const char *name, int s, double loss, double margin, double acc, double gnorm) {
    char rel[128];
    const char *what[4] = { "losses", "margins", "accuracies", "gnorms" };
    const double got[4] = { loss, margin, acc, gnorm };
    double want[4];
    for (int k = 0; k < 4; k++) {
        snprintf(rel, sizeof rel, "dpo/train/%s/%s", name, what[k]);
        tw_npy a = tt_load(rel, 10);
        want[k] = ((float *)a.data)[s];
        tw_npy_free(&a);
    }
    ck_assert_msg(fabs(got[0] - want[0]) <= 5e-5 * fabs(want[0]), "%s step %d: loss %.7g, PyTorch %.7g", name, s + 1, got[0], want[0]);
    ck_assert_msg(fabs(got[1] - want[1]) <= 5e-5 + 1e-5 * fabs(want[1]), "%s step %d: margin %.7g, PyTorch %.7g",
                  name, s + 1, got[1], want[1]);
    if (fabs(want[1]) > 1e-4)
        ck_assert_msg(fabs(got[2] - want[2]) < 1e-6, "%s step %d: accuracy %g, PyTorch %g", name, s + 1, got[2], want[2]);
    ck_assert_msg(fabs(got[3] - want[3]) <= 5e-5 * fabs(want[3]), "%s step %d: gnorm %.7g, PyTorch %.7g", name, s + 1,
                  got[3], want[3]);
}

START_TEST(ten_dpo_steps_match_pytorch)
{
    const char *name = TRAIN_CASES[_i];
    const int lora = strstr(name, "lora") != NULL;
    char path[256], rel[256], err[512] = "";
    float beta;
    const tw_train_config c = case_config(name, &beta);
    tw_model m, ref, base;
    memset(&ref, 0, sizeof ref);
    memset(&base, 0, sizeof base);
    ck_assert_msg(tw_model_load_file(&m, "data/golden/train/llama/init.bin", err, sizeof err) == TW_OK, "%s", err);
    snprintf(path, sizeof path, "data/golden/dpo/train/%s/ref.bin", name);
    const int with_ref = tt_exists(path);
    if (with_ref) ck_assert_msg(tw_model_load_file(&ref, path, err, sizeof err) == TW_OK, "%s", err);
    tw_pairs p;
    snprintf(path, sizeof path, "data/golden/dpo/train/%s/pairs.bin", name);
    ck_assert_msg(tw_pairs_read(&p, path, m.cfg.vocab, m.cfg.max_seq, err, sizeof err) == TW_OK, "%s", err);
    tw_dpo_scratch d;
    tw_trainer t;
    ck_assert_int_eq(tw_dpo_scratch_init(&d, &m, m.cfg.max_seq), TW_OK);
    ck_assert_int_eq(tw_trainer_init(&t, &m, m.cfg.max_seq), TW_OK);
    double *ref_logp = malloc((size_t)p.n * 2 * sizeof *ref_logp);
    ck_assert_int_eq(tw_dpo_reference(ref_logp, &d, with_ref ? &ref : &m, &p), TW_OK);
    tw_lora_set ad;
    tw_lora_trainer lt;
    memset(&ad, 0, sizeof ad);
    memset(&lt, 0, sizeof lt);
    if (lora) {
        ck_assert_int_eq(tw_model_load_file(&base, "data/golden/train/llama/init.bin", err, sizeof err), TW_OK);
        ck_assert_msg(tw_lora_file_load(&ad, "data/golden/lora/train/llama/init.lora", &m.cfg, err, sizeof err) == TW_OK,
                      "%s", err);
        ck_assert_int_eq(tw_lora_trainer_init(&lt, &ad, &m.cfg), TW_OK);
    }
    for (int s = 0; s < 10; s++) {
        long idx[8];
        for (int r = 0; r < c.B; r++) idx[r] = ((long)s * c.B + r) % p.n;   // --no-shuffle's order
        tw_dpo_stats st;
        ck_assert_int_eq(lora ? tw_dpo_lora_train_step(&st, &lt, &t, &d, &m, &base, &ad, &p, idx, c.B, ref_logp, beta, &c)
                              : tw_dpo_train_step(&st, &t, &d, &m, &p, idx, c.B, ref_logp, beta, &c), TW_OK);
        check_step(name, s, st.loss, st.margin, st.accuracy, st.gnorm);
    }
    // Final weights: absolute 1e-4 + relative 1e-4, as tests/test_train.c (AdamW moves a weight by
    // ~lr a step whatever its gradient's size, so float rounding in a tiny gradient shows at ~lr).
    if (lora) {
        tw_lora_set want;
        ck_assert_msg(tw_lora_file_load(&want, "data/golden/dpo/train/llama_lora/final.lora", &m.cfg, err, sizeof err) == TW_OK,
                      "%s", err);
        ck_assert_allclose(ad.memory, want.memory, ad.n_floats, 1e-4, 1e-4);
        tw_lora_set_free(&want);
    } else {
        for (int i = 0; i < m.n_params; i++) {
            const tw_param *q = &m.params[i];
            snprintf(rel, sizeof rel, "dpo/train/%s/final/%s", name, q->name);
            tw_npy W = tt_load(rel, q->count);
            ck_assert_allclose(q->data, (const float *)W.data, q->count, 1e-4, 1e-4);
            tw_npy_free(&W);
        }
    }
    free(ref_logp);
    tw_lora_trainer_free(&lt);
    tw_lora_set_free(&ad);
    tw_trainer_free(&t);
    tw_dpo_scratch_free(&d);
    tw_pairs_free(&p);
    tw_model_free(&base);
    tw_model_free(&ref);
    tw_model_free(&m);
}
END_TEST

// ---- through ./train ----

#define DPO_INIT "./train --init data/golden/train/llama/init.bin --no-shuffle --steps 10 --beta1 0.9 --eps 1e-8 "

static const char *const CLI[] = {
    DPO_INIT "--dpo data/golden/dpo/train/llama/pairs.bin --dpo-beta 0.5 --batch 3 --lr 5e-3 --warmup 0 "
             "--min-lr 5e-3 --weight-decay 0.1 --beta2 0.99 --clip 1",
    DPO_INIT "--dpo data/golden/dpo/train/llama_ref/pairs.bin --ref data/golden/dpo/train/llama_ref/ref.bin "
             "--dpo-beta 2 --batch 2 --lr 1e-2 --warmup 2 --min-lr 1e-3 --weight-decay 0 --beta2 0.95 --clip 0",
    DPO_INIT "--dpo data/golden/dpo/train/llama_lora/pairs.bin --lora-init data/golden/lora/train/llama/init.lora "
             "--dpo-beta 1 --batch 2 --lr 1e-2 --warmup 0 --min-lr 1e-3 --weight-decay 0.1 --beta2 0.95 --clip 1",
};

START_TEST(train_dpo_prints_pytorch_steps)
{
    const char *name = TRAIN_CASES[_i];
    char out[512], cmd[2048], err[512] = "";
    tt_tmp_path(out, sizeof out, "dpo", name);
    snprintf(cmd, sizeof cmd, "%s --out %s", CLI[_i], out);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    int n = 0;
    for (const char *q = r.out; (q = strstr(q, "step ")) != NULL; q++) {
        int s, k;
        double loss, margin, acc, lr, gnorm;
        if ((q == r.out || q[-1] == '\n') &&
            sscanf(q, "step %d/%d loss %lf margin %lf accuracy %lf lr %lf gnorm %lf", &s, &k, &loss, &margin, &acc,
                   &lr, &gnorm) == 7) {
            check_step(name, s - 1, loss, margin, acc, gnorm);   // 6 printed digits: 5e-6 relative
            n++;
        }
    }
    ck_assert_int_eq(n, 10);
    // The weights written are the library's (held to PyTorch above): compare with the goldens.
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, "data/golden/train/llama/init.bin", err, sizeof err) == TW_OK, "%s", err);
    if (_i == 2) {
        tw_lora_set got, want;
        ck_assert_msg(tw_lora_file_load(&got, out, &m.cfg, err, sizeof err) == TW_OK, "%s", err);
        ck_assert_int_eq(tw_lora_file_load(&want, "data/golden/dpo/train/llama_lora/final.lora", &m.cfg, err, sizeof err), TW_OK);
        ck_assert_allclose(got.memory, want.memory, got.n_floats, 1e-4, 1e-4);
        tw_lora_set_free(&got);
        tw_lora_set_free(&want);
    } else {
        tw_model got;
        ck_assert_msg(tw_model_load_file(&got, out, err, sizeof err) == TW_OK, "%s", err);
        for (int i = 0; i < got.n_params; i++) {
            char rel[256];
            snprintf(rel, sizeof rel, "dpo/train/%s/final/%s", name, got.params[i].name);
            tw_npy W = tt_load(rel, got.params[i].count);
            ck_assert_allclose(got.params[i].data, (const float *)W.data, got.params[i].count, 1e-4, 1e-4);
            tw_npy_free(&W);
        }
        tw_model_free(&got);
    }
    tw_model_free(&m);
    remove(out);
    tt_run_free(&r);
}
END_TEST

// ---- the pairs file ----

START_TEST(pairs_written_read_back_the_same)
{
    char path[512], err[512] = "";
    tt_tmp_path(path, sizeof path, "dpo", "pairs.bin");
    tw_pairs p;
    memset(&p, 0, sizeof p);
    const int x[3] = { 1, 300, 511 }, yw[4] = { 5, 6, 7, 65535 % 512 }, yl[1] = { 2 };
    for (int i = 0; i < 40; i++)   // enough to grow the arrays past their first size
        ck_assert_int_eq(tw_pairs_add(&p, x, 1 + i % 3, yw, 1 + i % 4, yl, 1), TW_OK);
    ck_assert_int_eq(tw_pairs_add(&p, x, 0, yw, 1, yl, 1), TW_ERR_ARG);
    ck_assert_int_eq(tw_pairs_write(path, &p, err, sizeof err), TW_OK);
    tw_pairs q;
    ck_assert_msg(tw_pairs_read(&q, path, 512, 6, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(q.n, p.n);
    ck_assert_int_eq(q.n_tok, p.n_tok);
    ck_assert(memcmp(q.len, p.len, (size_t)p.n * 3 * sizeof *p.len) == 0);
    ck_assert(memcmp(q.tok, p.tok, (size_t)p.n_tok * sizeof *p.tok) == 0);
    ck_assert_int_eq(tw_pairs_rejected(&q, 39)[0], 2);
    tw_pairs_free(&q);
    // The longest pair, prompt 3 + chosen 4, reads 6 positions: a context of 5 refuses it.
    ck_assert_int_eq(tw_pairs_read(&q, path, 512, 5, err, sizeof err), TW_ERR_SHAPE);
    ck_assert_msg(strstr(err, "context") && strstr(err, path), "%s", err);
    ck_assert_int_eq(tw_pairs_read(&q, path, 511, 6, err, sizeof err), TW_ERR_SHAPE);   // token 511
    ck_assert_msg(strstr(err, "vocabulary"), "%s", err);
    tw_pairs_free(&p);
    remove(path);
}
END_TEST

START_TEST(bad_dpo_runs_get_one_line)
{
    const struct { const char *cmd; int rc; const char *says; } bad[] = {
        { "./train --dpo data/golden/dpo/train/llama/pairs.bin", 2, "--init" },
        { "./train --init data/golden/train/llama/init.bin --dpo data/golden/dpo/train/llama/pairs.bin --dpo-beta 0", 2,
          "--dpo-beta" },
        { "./train --init data/golden/train/llama/init.bin --dpo data/golden/dpo/train/llama/pairs.bin --tokens x.bin", 2,
          "--tokens" },
        { "./train --init data/golden/train/llama/init.bin --dpo data/golden/dpo/train/llama/pairs.bin "
          "--out data/golden/train/llama/init.bin", 2, "same file" },
        { "./train --init data/golden/train/llama/init.bin --dpo data/golden/dpo/train/llama/pairs.bin --lora 2 "
          "--ref data/golden/dpo/train/llama_ref/ref.bin", 2, "--ref" },
        { "./train --init data/golden/train/llama/init.bin --dpo data/golden/train/llama/tokens.bin", 1, "pref" },
        { "./train --init data/models/stories260K.bin --dpo data/golden/dpo/train/llama/pairs.bin --steps 1", 0, NULL },
    };
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        run_result r = tt_run(bad[i].cmd);
        ck_assert_msg(r.rc == bad[i].rc, "%s: rc %d: %s", bad[i].cmd, r.rc, r.err);
        if (bad[i].says)
            ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, bad[i].says), "%s: '%s'", bad[i].cmd, r.err);
        tt_run_free(&r);
    }
}
END_TEST

// ---- the preference set (tools/make_pref.c) ----

// The text of ids (n) after prev, lower-cased.   out: (len)
static void decoded_lower(char *out, size_t len, const tw_tokenizer *tok, int prev, const int *ids, int n) {
    size_t k = 0;
    for (int i = 0; i < n; i++)
        for (const char *c = tw_tokenizer_decode(tok, i ? ids[i - 1] : prev, ids[i]); *c && k + 1 < len; c++)
            out[k++] = (char)tolower((unsigned char)*c);
    out[k] = '\0';
}

// The rule, written again here: word occurs in text with no letter on either side.
static int has_whole_word(const char *text, const char *word) {
    const size_t n = strlen(word);
    for (size_t i = 0; text[i]; i++)
        if (strncmp(text + i, word, n) == 0 && (i == 0 || !isalpha((unsigned char)text[i - 1])) &&
            !isalpha((unsigned char)text[i + n]))
            return 1;
    return 0;
}

// 1 if word is one of the instruction set's train words (the words make_pref makes pairs for).
static int is_train_word(const char *word) {
    for (int w = 0; w < tw_sft_n_train_words; w++)
        if (strcmp(word, tw_sft_train_words[w]) == 0) return 1;
    return 0;
}

// Pair i's prompt is exactly BOS + the encoding of text (the encoder cuts special tokens itself).
static void assert_prompt_is(const tw_pairs *p, long i, const tw_tokenizer *tok, const char *text) {
    int want[256], n = 0;
    ck_assert_int_eq(tw_tokenizer_encode(tok, want, &n, 256, text, 1, 0), TW_OK);
    ck_assert_msg(p->len[3 * i] == n, "pair %ld: prompt of %d tokens, '%s' encodes to %d", i, p->len[3 * i], text, n);
    for (int t = 0; t < n; t++) ck_assert_int_eq(tw_pairs_prompt(p, i)[t], want[t]);
}

START_TEST(make_pref_pairs_follow_the_rule)
{
    char path[512], cmd[1024], err[512] = "";
    tt_tmp_path(path, sizeof path, "dpo", "pref.bin");
    snprintf(cmd, sizeof cmd, "./build/tools/make_pref data/models/stories260K.bin data/models/tok512.bin %s "
             "--samples 12 --pairs 2 --len 24 --seed 5", path);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    tw_tokenizer tok;
    ck_assert_int_eq(tw_tokenizer_load(&tok, "data/models/tok512.bin", 512, err, sizeof err), TW_OK);
    tw_pairs p;
    ck_assert_msg(tw_pairs_read(&p, path, 512, 512, err, sizeof err) == TW_OK, "%s", err);
    ck_assert(p.n >= 4);   // 16 words, up to 2 pairs each: a few words have both kinds in 12 samples
    for (long i = 0; i < p.n; i++) {
        const int *len = p.len + 3 * i;
        char prompt[256], chosen[1024], rejected[1024];
        decoded_lower(prompt, sizeof prompt, &tok, 1, tw_pairs_prompt(&p, i) + 1, len[0] - 1);
        const char *about = strstr(prompt, "a story about ");
        ck_assert_msg(about && tw_pairs_prompt(&p, i)[0] == 1, "pair %ld: prompt '%s'", i, prompt);
        const char *word = about + strlen("a story about ");
        ck_assert_msg(is_train_word(word), "pair %ld: '%s' is not one of tw_sft_train_words", i, word);
        assert_prompt_is(&p, i, &tok, about);   // plain text after BOS: no template
        const int last = tw_pairs_prompt(&p, i)[len[0] - 1];
        decoded_lower(chosen, sizeof chosen, &tok, last, tw_pairs_chosen(&p, i), len[1]);
        decoded_lower(rejected, sizeof rejected, &tok, last, tw_pairs_rejected(&p, i), len[2]);
        ck_assert_msg(has_whole_word(chosen, word), "pair %ld: chosen '%s' lacks '%s'", i, chosen, word);
        ck_assert_msg(!has_whole_word(rejected, word), "pair %ld: rejected '%s' has '%s'", i, rejected, word);
    }
    tw_pairs_free(&p);
    tw_tokenizer_free(&tok);
    tt_run_free(&r);
    remove(path);
}
END_TEST

// With a tokenizer that holds <|user|>, <|assistant|>, <|end|> (stories260K grown by ./add-tokens,
// as make sft-data grows it), the prompts are the chat template's: BOS <|user|>a story about
// WORD<|assistant|>, so the pairs file's completions start after <|assistant|>; a completion
// stops at <|end|> (kept as its last token) and the rule still splits chosen from rejected.
START_TEST(make_pref_with_a_chat_tokenizer_asks_in_the_template)
{
    char dir[512], cmd[2048], model[600], tokp[600], path[600], err[512] = "";
    ck_assert_msg(tt_make_chat_model(dir, model, tokp, "dpo_chat", err, sizeof err) == 0, "%s", err);
    snprintf(path, sizeof path, "%s/pref.bin", dir);
    snprintf(cmd, sizeof cmd, "./build/tools/make_pref %s %s %s --samples 12 --pairs 2 --len 24 --seed 5", model, tokp, path);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "the chat template"));
    tw_tokenizer tok;
    ck_assert_int_eq(tw_tokenizer_load(&tok, tokp, 515, err, sizeof err), TW_OK);
    const int user = tw_tokenizer_lookup(&tok, TW_CHAT_USER), assistant = tw_tokenizer_lookup(&tok, TW_CHAT_ASSISTANT),
              end = tw_tokenizer_lookup(&tok, TW_CHAT_END);
    ck_assert(user == 512 && assistant == 513 && end == 514);
    tw_pairs p;
    ck_assert_msg(tw_pairs_read(&p, path, 515, 512, err, sizeof err) == TW_OK, "%s", err);
    ck_assert(p.n >= 4);
    for (long i = 0; i < p.n; i++) {
        const int *len = p.len + 3 * i, *x = tw_pairs_prompt(&p, i);
        ck_assert_msg(len[0] >= 4 && x[0] == 1 && x[1] == user && x[len[0] - 1] == assistant,
                      "pair %ld: the prompt is not BOS <|user|> ... <|assistant|>", i);
        char prompt[256], chosen[1024], rejected[1024], text[300];
        decoded_lower(prompt, sizeof prompt, &tok, user, x + 2, len[0] - 3);
        const char *about = "a story about ";
        ck_assert_msg(strncmp(prompt, about, strlen(about)) == 0, "pair %ld: prompt '%s'", i, prompt);
        const char *word = prompt + strlen(about);
        ck_assert_msg(is_train_word(word), "pair %ld: '%s' is not one of tw_sft_train_words", i, word);
        ck_assert_int_eq(tw_chat_format(text, sizeof text, prompt, NULL) > 0, 1);
        assert_prompt_is(&p, i, &tok, text);
        const int *ys[2] = { tw_pairs_chosen(&p, i), tw_pairs_rejected(&p, i) };
        for (int k = 0; k < 2; k++)   // <|end|> ends a completion: never inside one
            for (int t = 0; t + 1 < len[1 + k]; t++) ck_assert_int_ne(ys[k][t], end);
        decoded_lower(chosen, sizeof chosen, &tok, assistant, ys[0], len[1]);
        decoded_lower(rejected, sizeof rejected, &tok, assistant, ys[1], len[2]);
        ck_assert_msg(has_whole_word(chosen, word), "pair %ld: chosen '%s' lacks '%s'", i, chosen, word);
        ck_assert_msg(!has_whole_word(rejected, word), "pair %ld: rejected '%s' has '%s'", i, rejected, word);
    }
    tw_pairs_free(&p);
    tw_tokenizer_free(&tok);
    tt_run_free(&r);
    ck_assert_int_eq(tt_remove_tree(dir), 0);
}
END_TEST

Suite *suite_dpo(void) {
    Suite *s = suite_create("dpo");
    TCase *tc = tcase_create("dpo");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, seq_logprob_matches_pytorch, 0, 4);
    tcase_add_test(tc, seq_logprob_backward_matches_finite_differences);
    tcase_add_test(tc, seq_targets_count_only_the_completion);
    tcase_add_test(tc, dpo_loss_matches_pytorch);
    tcase_add_test(tc, dpo_loss_gradient_matches_finite_differences);
    tcase_add_test(tc, dpo_loss_is_log_2_at_the_reference_and_finite_far_from_it);
    tcase_add_loop_test(tc, ten_dpo_steps_match_pytorch, 0, 3);
    tcase_add_loop_test(tc, train_dpo_prints_pytorch_steps, 0, 3);
    tcase_add_test(tc, pairs_written_read_back_the_same);
    tcase_add_test(tc, bad_dpo_runs_get_one_line);
    tcase_add_test(tc, make_pref_pairs_follow_the_rule);
    tcase_add_test(tc, make_pref_with_a_chat_tokenizer_asks_in_the_template);
    suite_add_tcase(s, tc);
    return s;
}
