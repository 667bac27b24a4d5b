// test_moe_model.c: models whose FFNs are mixtures of experts (block.moe_experts, nn/block.h),
// through the one model forward and backward (nn/model.c) and the TWMX file (train/moe_file.h):
//   - one expert chosen of one, no shared expert: the dense SwiGLU model's logits, bit for bit
//   - the TWMX file written and read back gives the same bits; tw_model_load_file finds it
//   - ten training steps against PyTorch (tests/golden/gen_train_moe.py), losses and weights,
//     with the load-balancing loss on
//   - the model's gradient, load-balancing loss included, against finite differences (with and
//     without renormalised gates)
//   - ./train with experts: PyTorch's losses printed, the per-expert counts, TWMX written;
//     bad expert flags answered with one line
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "grad_check.h"
#include "model_test_common.h"
#include "train/checkpoint.h"
#include "train/forward_backward.h"
#include "train/moe_file.h"
#include "nn/router.h"

// The llama preset with experts: E routed of width F = ffn_hidden, k chosen, n_shared shared.
static tw_model_config moe_config(int E, int k, int shared, int norm_topk) {
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "llama"), TW_OK);
    c.block.moe_experts = E;
    c.block.moe_top_k = k;
    c.block.moe_shared = shared;
    c.block.moe_norm_topk = norm_topk;
    return c;
}

// Copies every parameter of the dense model into the one with experts where the names say they
// are the same weight; the expert's matrices from the dense FFN's (E = 1).
static void copy_dense_into_moe(tw_model *moe, tw_model *dense) {
    for (int i = 0; i < moe->n_params; i++) {
        tw_param *p = &moe->params[i];
        char name[64];
        int l;
        char leaf[32];
        if (sscanf(p->name, "layers.%d.moe.%31s", &l, leaf) == 2) {
            if (strcmp(leaf, "router") == 0) continue;   // stays random: one expert, any logit
            snprintf(name, sizeof name, "layers.%d.ffn.%s", l, leaf);
        } else {
            snprintf(name, sizeof name, "%s", p->name);
        }
        tw_param *q = tw_model_param(dense, name);
        ck_assert_msg(q != NULL && q->count == p->count, "%s has no dense twin", p->name);
        memcpy(p->data, q->data, (size_t)p->count * sizeof(float));
    }
}

// One expert of one, gate weight softmax(one logit) = 1 (renormalised or not), no shared
// expert: the layer is tw_swiglu_forward on the same rows (moe.h), so every logit must be the
// same float, for the whole sequence and for decoding with a cache.
START_TEST(one_expert_of_one_gives_the_dense_logits_bit_for_bit)
{
    const int norm_topk = _i;
    tw_model dense, moe;
    tw_model_config dc = moe_config(0, 0, 0, 0), mc = moe_config(1, 1, 0, norm_topk);
    ck_assert_int_eq(tw_model_init(&dense, &dc), TW_OK);
    ck_assert_int_eq(tw_model_init(&moe, &mc), TW_OK);
    tt_randomize_strong(&dense, 31, 1.0f);
    tw_model_randomize(&moe, 32);
    copy_dense_into_moe(&moe, &dense);
    const int T = 9, V = dc.vocab;
    const int tokens[9] = { 1, 17, 4, 64, 0, 33, 33, 2, 50 };
    tw_model_state sd, sm;
    ck_assert_int_eq(tw_model_state_init(&sd, &dense, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&sm, &moe, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&sd, &dense, tokens, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&sm, &moe, tokens, T, 0), TW_OK);
    ck_assert_msg(memcmp(sd.logits, sm.logits, (size_t)T * V * sizeof(float)) == 0,
                  "E = k = 1 logits differ from the dense model's");
    tw_model_state_free(&sd);
    tw_model_state_free(&sm);
    // Decoding one token at a time through the KV cache.
    ck_assert_int_eq(tw_model_state_init(&sd, &dense, 1, T), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&sm, &moe, 1, T), TW_OK);
    for (int p = 0; p < T; p++) {
        ck_assert_int_eq(tw_model_forward_next(&sd, &dense, tokens + p, 1, p), TW_OK);
        ck_assert_int_eq(tw_model_forward_next(&sm, &moe, tokens + p, 1, p), TW_OK);
        ck_assert_msg(memcmp(sd.logits, sm.logits, (size_t)V * sizeof(float)) == 0,
                      "decode step %d differs", p);
    }
    tw_model_state_free(&sd);
    tw_model_state_free(&sm);
    tw_model_free(&dense);
    tw_model_free(&moe);
}
END_TEST

START_TEST(the_twmx_file_round_trips_and_loads_as_any_model)
{
    tw_model m, got;
    tw_model_config c = moe_config(4, 2, 1, 1);
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    tw_model_randomize(&m, 5);
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "/tmp/tw_test_moe_%ld.bin", (long)getpid());
    ck_assert_msg(tw_moe_file_write(path, &m, err, sizeof err) == TW_OK, "%s", err);
    ck_assert(tw_moe_file_is_moe(path));
    ck_assert_msg(tw_model_load_file(&got, path, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(got.cfg.block.moe_experts, 4);
    ck_assert_int_eq(got.cfg.block.moe_top_k, 2);
    ck_assert_int_eq(got.cfg.block.moe_shared, 1);
    ck_assert_int_eq(got.cfg.block.moe_norm_topk, 1);
    ck_assert_int_eq(got.n_floats, m.n_floats);
    ck_assert(memcmp(got.memory, m.memory, (size_t)m.n_floats * sizeof(float)) == 0);
    // TWMODEL and the training state cannot hold experts: refused, not written without them.
    ck_assert_int_eq(tw_checkpoint_write(path, &m, err, sizeof err), TW_ERR_ARG);
    ck_assert(tw_moe_file_is_moe(path));   // the TWMX file is still there, whole
    tw_model_free(&got);
    remove(path);
    // A dense model is not written as TWMX.
    tw_model d;
    tw_model_config dc = moe_config(0, 0, 0, 0);
    ck_assert_int_eq(tw_model_init(&d, &dc), TW_OK);
    ck_assert_int_eq(tw_moe_file_write(path, &d, err, sizeof err), TW_ERR_ARG);
    tw_model_free(&d);
    tw_model_free(&m);
}
END_TEST

// The dump and the NaN check read the block's table, so the router's tensors appear in both
// with no change to either: the dump writes L{l}.router_probs (T, E) whose rows sum to 1 (to
// float rounding: 1e-6 for 4 terms) and the gate weights (T, k); a NaN planted in a router
// weight is first seen in L0.router_logits.
START_TEST(dump_and_nan_check_see_the_router)
{
    tw_model m;
    tw_model_config c = moe_config(4, 2, 1, 1);
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    tw_model_randomize(&m, 9);
    const int T = 6, tokens[6] = { 3, 1, 4, 1, 5, 9 };
    char dir[256], err[512] = "";
    mt_dump_into_fresh_folder(dir, sizeof dir, "moe_dump", &m, tokens, T);
    tw_npy a;
    ck_assert_msg(mt_read_dumped(&a, dir, "L1.router_probs", err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(a.ndim, 2);
    ck_assert_int_eq(a.shape[0], T);
    ck_assert_int_eq(a.shape[1], 4);
    for (int t = 0; t < T; t++) {
        double sum = 0.0;
        for (int e = 0; e < 4; e++) sum += ((const float *)a.data)[t * 4 + e];
        ck_assert_msg(fabs(sum - 1.0) <= 1e-6, "row %d sums to %.9g", t, sum);
    }
    tw_npy_free(&a);
    ck_assert_msg(mt_read_dumped(&a, dir, "L0.moe_gates", err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(a.shape[1], 2);
    tw_npy_free(&a);
    ck_assert(mt_read_dumped(&a, dir, "L0.moe_sel", err, sizeof err) != TW_OK);   // ints: a working row, not dumped
    tt_remove_tree(dir);
    mt_nan_is_first_seen_in(&m, tokens, T, "layers.0.moe.router", "L0.router_logits");
    tw_model_free(&m);
}
END_TEST

// ---- the gradient against finite differences ----

// J = cross-entropy of one sequence + a * sum over the layers of E sum_i f_i P_i, in float32
// through the model forward. sel receives every layer's choices (to see whether a perturbation
// changed one: J is not differentiable there).
static double objective(int *sel, tw_model_state *s, const tw_model *m, const int *tok, const int *tg,
                        int T, float a) {
    float ce;
    ck_assert_int_eq(tw_model_loss(&ce, s, m, tok, tg, 1, T), TW_OK);
    const tw_moe_config mc = tw_block_moe_config(&m->cfg.block);
    const int k = mc.router.k;
    double J = ce;
    for (int l = 0; l < m->cfg.n_layer; l++) {
        J += (double)a * tw_router_aux_loss(s->layers[l].moe.probs, s->layers[l].moe.sel, T, &mc.router);
        memcpy(sel + (size_t)l * T * k, s->layers[l].moe.sel, (size_t)T * k * sizeof(int));
    }
    return J;
}

// The gradient tw_model_forward_backward gives (cross-entropy + the load-balancing term with
// weight a, through the one backward) against central differences of J, for every router weight
// and a spread of expert, shared-expert and attention weights. h = 1e-2 on weights of order
// 0.1 .. 1: the truncation error (h^2 J''' / 6) and float32's rounding of J (~4e-7 / 2h) both
// stay near 1e-5, against gradient entries up to ~0.1. Tolerance: grad_check.h's metric with
// rel 1e-2 (atol 1e-2 x the largest entry); a perturbation that changes a router choice is
// skipped (J jumps there), and at most a tenth may be.
START_TEST(the_gradient_with_the_load_balancing_loss_matches_finite_differences)
{
    tw_model m;
    tw_model_config c = moe_config(4, 2, 1, _i);
    c.block.moe_aux_coef = 0.3f;
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    tt_randomize_strong(&m, 77 + (uint64_t)_i, 1.0f);
    const int T = 7, tok[7] = { 5, 9, 2, 60, 17, 17, 40 }, tg[7] = { 9, 2, 60, 17, 17, 40, 3 };
    const int k = 2;
    mt_model_grad fb;
    mt_model_grad_init(&fb, &m, tok, tg, T);
    int *sel0 = malloc(sizeof(int) * 2 * T * k), *sel1 = malloc(sizeof(int) * 2 * T * k);
    objective(sel0, &fb.s, &m, tok, tg, T, c.block.moe_aux_coef);
    static const char *const names[] = { "layers.0.moe.router", "layers.1.moe.router", "layers.0.moe.gate",
                                         "layers.1.moe.up", "layers.0.moe.down", "layers.1.moe.shared_gate",
                                         "layers.0.attn.wq" };
    int tried = 0, skipped = 0;
    for (size_t q = 0; q < sizeof names / sizeof names[0]; q++) {
        tw_param *p = tw_model_param(&m, names[q]);
        ck_assert_ptr_nonnull(p);
        const float *gp = tw_model_grad_of(&fb.g, &m, p->data);
        const long step = p->count <= 96 ? 1 : p->count / 40;   // every router weight, else 40
        const long n = (p->count + step - 1) / step;
        float *fd = tt_zeros(n), *an = tt_zeros(n);
        long used = 0;
        for (long j = 0; j < p->count; j += step) {
            const float keep = p->data[j], h = 1e-2f;
            p->data[j] = keep + h;
            const double jp = objective(sel1, &fb.s, &m, tok, tg, T, c.block.moe_aux_coef);
            int same = memcmp(sel0, sel1, sizeof(int) * 2 * T * k) == 0;
            p->data[j] = keep - h;
            const double jm = objective(sel1, &fb.s, &m, tok, tg, T, c.block.moe_aux_coef);
            same = same && memcmp(sel0, sel1, sizeof(int) * 2 * T * k) == 0;
            p->data[j] = keep;
            tried++;
            if (!same) { skipped++; continue; }
            fd[used] = (float)((jp - jm) / (2.0 * (double)h));
            an[used] = gp[j];
            used++;
        }
        ck_assert_grad(names[q], an, fd, used, 1e-2, 0.0);
        free(fd);
        free(an);
    }
    if (getenv("TW_GRAD_REPORT")) fprintf(stderr, "grad-report %d of %d perturbations changed a choice\n", skipped, tried);
    ck_assert_msg(skipped * 10 <= tried, "%d of %d perturbations changed a router choice", skipped, tried);
    free(sel0);
    free(sel1);
    mt_model_grad_free(&fb);
    tw_model_free(&m);
}
END_TEST

// ---- ten steps against PyTorch ----

static const char *const TRAIN_CASES[] = { "llama_e4k2s1", "qwen3_e5k2" };

// The same rule as tests/test_train.c (--no-shuffle batches, AdamW, clipping, the schedule), on
// the objective of tests/golden/train_variants.py (gen_train_moe.py's cases): mean cross-entropy
// + aux_coef * the mean over the batch's sequences of the layers' summed load-balancing losses.
// Loss (the cross-entropy) and gradient norm (of the whole objective, load-balancing term
// included): float32 against float64 through ten steps. Loss: relative 1e-5, as
// tests/test_train.c (measured, TW_VERBOSE=1: at most 1.2e-7). Gradient norm: relative 3e-5;
// measured at most 1.0e-6 in the llama case and 5.3e-6 at the qwen3 case's tenth step (the
// same at the naive SIMD level), where the load-balancing term (aux_coef 0.5) is most of the
// gradient (its norm at step 1 is 11.29 with it and 2.18 without: gen_train_moe.py), so a
// wrong router or aux gradient moves it by far more than the tolerance. The learning rate is
// compared too. Final weights: absolute 1e-4 + relative 1e-4, as tests/test_train.c (lr here
// is 5e-3 and 1e-2); measured at most 3.6e-7 (llama case) and 1.6e-6 (qwen3 case, tok_emb).
START_TEST(ten_steps_with_experts_match_pytorch)
{
    tw_model m;
    mt_load_init(&m, "train_moe", TRAIN_CASES[_i]);
    ck_assert_int_gt(m.cfg.block.moe_experts, 1);
    const mt_golden_run run = { .group = "train_moe", .name = TRAIN_CASES[_i], .with_aux = 1, .gnorm_first = 3e-5,
                                .gnorm_later = 3e-5, .check_lr = 1, .weight_atol = 1e-4 };
    tw_train_stats st[16];
    const int steps = mt_train_matches_golden(st, &m, &run);
    ck_assert(m.cfg.block.moe_aux_coef > 0.0f);   // the case's aux_coef, set for training
    ck_assert_msg(st[steps - 1].loss < st[0].loss, "%s: the loss did not fall", TRAIN_CASES[_i]);
    tw_model_free(&m);
}
END_TEST

// ---- ./train with experts ----

// The llama case's flags through ./train: the printed losses are PyTorch's, the TWMX file --out
// writes holds PyTorch's final weights, and the per-expert counts printed every --eval-every
// steps add up to the tokens routed (steps x B x T x k per layer).
START_TEST(train_cli_with_experts_matches_pytorch_and_prints_the_counts)
{
    char out[256], err[512] = "";
    snprintf(out, sizeof out, "/tmp/tw_test_moe_cli_%ld.bin", (long)getpid());
    // Printed losses: within 1.2e-7 of PyTorch's (ten_steps_with_experts_match_pytorch).
    run_result r = mt_train_cli_matches_golden("train_moe", "llama_e4k2s1", "--aux-coef 0.01 --eval-every 5", out);
    // Two intervals of 5 steps x 3 rows x 12 tokens x k = 2 choices, per layer.
    int lines = 0;
    for (const char *p = r.out; (p = strstr(p, "experts steps ")) != NULL; p++) {
        long a, b, c[4], total = 0;
        int from, to, l;
        ck_assert(sscanf(p, "experts steps %d-%d layer %d: tokens per expert %ld %ld %ld %ld", &from, &to, &l,
                         &c[0], &c[1], &c[2], &c[3]) == 7);
        for (int e = 0; e < 4; e++) total += c[e];
        a = to - from + 1;
        b = a * 3 * 12 * 2;
        ck_assert_msg(total == b, "steps %d-%d layer %d: %ld tokens counted, expected %ld", from, to, l, total, b);
        ck_assert_int_eq(from, lines < 2 ? 1 : 6);
        lines++;
    }
    ck_assert_int_eq(lines, 4);
    tt_run_free(&r);
    // --out's weights against PyTorch's final ones (as ten_steps_with_experts_match_pytorch).
    tw_model m;
    ck_assert_msg(tw_moe_file_is_moe(out), "%s is not a TWMX file", out);
    ck_assert_msg(tw_model_load_file(&m, out, err, sizeof err) == TW_OK, "%s", err);
    mt_weights_match_golden(&m, "train_moe", "llama_e4k2s1", "./train --out", 10, 1e-4);
    tw_model_free(&m);
    remove(out);
}
END_TEST

// Flags that cannot work get one line on stderr and exit 2, before anything is written.
static const char *const BAD_FLAGS[][2] = {
    { "--init-moe 4,5", "--init-moe" },                    // k > E
    { "--init-moe 4", "--init-moe" },                      // no k
    { "--init-moe 4,2,1,7", "--init-moe" },                // too many fields
    { "--init-moe 4,2 --style gpt2", "SwiGLU" },           // the experts are SwiGLU
    { "--aux-coef 0.1", "no experts" },                    // a dense model
    { "--init-moe 4,2 --aux-coef -1", "--aux-coef" },
    { "--init-moe 4,2 --state /tmp/tw_never_written.state", "--state" },
    { "--moe-norm-topk 1", "--init-moe" },
    { "--init-moe 4,2 --init data/golden/train_moe/llama_e4k2s1/init.bin", "--init-moe" },
};

START_TEST(bad_expert_flags_get_one_line)
{
    mt_train_refuses_in_one_line("data/golden/train_moe/llama_e4k2s1/tokens.bin", BAD_FLAGS[_i][0], BAD_FLAGS[_i][1]);
}
END_TEST

Suite *suite_moe_model(void) {
    Suite *s = suite_create("moe_model");
    TCase *tc = tcase_create("model");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, one_expert_of_one_gives_the_dense_logits_bit_for_bit, 0, 2);
    tcase_add_test(tc, the_twmx_file_round_trips_and_loads_as_any_model);
    tcase_add_test(tc, dump_and_nan_check_see_the_router);
    tcase_add_loop_test(tc, the_gradient_with_the_load_balancing_loss_matches_finite_differences, 0, 2);
    tcase_add_loop_test(tc, ten_steps_with_experts_match_pytorch, 0, 2);
    tcase_add_test(tc, train_cli_with_experts_matches_pytorch_and_prints_the_counts);
    tcase_add_loop_test(tc, bad_expert_flags_get_one_line, 0, (int)(sizeof BAD_FLAGS / sizeof BAD_FLAGS[0]));
    suite_add_tcase(s, tc);
    return s;
}
