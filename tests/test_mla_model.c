// test_mla_model.c: models whose attention is multi-head latent attention (block.mla_*,
// nn/block.h; the layer is nn/mla.h), alone and with experts (DeepSeek-V3's arrangement), through
// the one model forward and backward (nn/model.c) and the TWMX file version 2 (train/moe_file.h):
//   - ten training steps against PyTorch (tests/golden/gen_train_mla.py), losses, gradient
//     norms and weights, with and without experts
//   - the model's gradient through latent attention against central differences
//   - the TWMX file: PyTorch's version 2 file read and written back gives the same bytes; a model
//     with experts alone is still written as version 1
//   - the dump and the NaN check see latent attention's tensors (the block's table)
//   - no KV cache for it: a state with one is refused, ./generate says so in one line and runs
//     with --no-cache
//   - ./train with latent attention: PyTorch's losses printed, TWMX written with its weights;
//     --init-mla makes a fresh one; bad flags answered with one line
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
#include "train/forward_backward.h"
#include "train/checkpoint.h"
#include "train/moe_file.h"

static const char *const CASES[] = { "llama_mla", "llama_mla_e4k2s1" };

static void load_init(tw_model *m, const char *name) {
    mt_load_init(m, "train_mla", name);
    ck_assert_int_gt(m->cfg.block.mla_kv_rank, 0);
}

// The rule of tests/test_train.c (--no-shuffle batches, AdamW, clipping, the schedule) on the
// objective of tests/golden/train_variants.py (gen_train_mla.py's cases): mean cross-entropy
// (+ aux_coef x the load-balancing loss).
// Loss: relative 1e-5, as tests/test_moe_model.c (float32 against float64 through ten steps;
// measured, TW_VERBOSE=1: at most 1.1e-7 without experts, 2.1e-6 with). Gradient norm:
// relative 3e-5 (measured at most 2.5e-6 without experts), but 3e-4 after the first step
// with experts: there the float32 norm drifts from float64's by up to 9.1e-5 (step 5) while
// the losses agree within 2.1e-6 and the weights within 4.4e-6 (a drift, not a wrong
// term: at step 1, before any update, it agrees within 1.1e-7, and is held to 3e-5 there).
// The norms at step 1 are 25.4 and 18.2, much of it latent attention's (weights of std 0.2),
// so a missing or wrong term in its backward moves the first step's by far more than 3e-5.
// Final weights: absolute 1e-4 + relative 1e-4, as tests/test_train.c (AdamW moves a weight
// by about lr = 5e-3 / 1e-2 a step whatever its gradient's size, so a wrong update fails).
// Measured: at most 6.3e-7 without experts, 4.4e-6 with (tok_emb).
START_TEST(ten_steps_with_latent_attention_match_pytorch)
{
    tw_model m;
    load_init(&m, CASES[_i]);
    ck_assert_int_eq(m.cfg.block.moe_experts, _i == 0 ? 0 : 4);
    const mt_golden_run run = { .group = "train_mla", .name = CASES[_i], .with_aux = 1, .gnorm_first = 3e-5,
                                .gnorm_later = _i == 1 ? 3e-4 : 3e-5, .weight_atol = 1e-4 };
    tw_train_stats st[16];
    const int steps = mt_train_matches_golden(st, &m, &run);
    int seen_mla = 0;
    for (int i = 0; i < m.n_params; i++) seen_mla += strstr(m.params[i].name, ".attn.kv_b") != NULL;
    ck_assert_int_eq(seen_mla, m.cfg.n_layer);
    ck_assert_msg(st[steps - 1].loss < st[0].loss, "%s: the loss did not fall", CASES[_i]);
    tw_model_free(&m);
}
END_TEST

// The gradient tw_model_forward_backward gives through latent attention, against central
// differences of the float32 cross-entropy (the llama_mla model, weights of std 0.2, no experts:
// nothing discrete, so no perturbation is skipped): every element of both latent norms' gains
// and about 40 spread elements of each projection in both layers. h = 1e-2, as
// tests/test_moe_model.c: truncation (h^2 / 6 times J's third derivative) and float32's rounding
// of J both near 1e-5 against entries up to ~0.5. Tolerance: grad_check.h's metric, rel 1e-2,
// with a floor: J ~ 4.5 is a float32 whose ulp is 4.8e-7, so each difference quotient carries
// up to ~2.4e-5 of rounding (4.8e-7 / 2h); case_scale 5e-3 makes the atol 5e-5, twice that. It
// matters only for layer 1's query norm gain, whose entries are ~4e-4 (the others are 3e-3 and
// up). Measured (TW_GRAD_REPORT=1): worst ratio 6.4e-3 for layer 1's q_a and q_b (entries up to
// 3.5e-3, near that noise), at most 4.4e-4 for every tensor whose entries reach 0.04.
START_TEST(the_gradient_through_latent_attention_matches_finite_differences)
{
    tw_model m;
    load_init(&m, CASES[0]);
    const int T = 7, tok[7] = { 5, 9, 2, 60, 17, 17, 40 }, tg[7] = { 9, 2, 60, 17, 17, 40, 3 };
    mt_model_grad fb;
    mt_model_grad_init(&fb, &m, tok, tg, T);
    static const char *const leaves[] = { "q_a", "q_a_norm", "q_b", "kv_a", "kv_a_norm", "kv_b", "o" };
    for (int l = 0; l < m.cfg.n_layer; l++)
        for (size_t q = 0; q < sizeof leaves / sizeof leaves[0]; q++) {
            char name[64];
            snprintf(name, sizeof name, "layers.%d.attn.%s", l, leaves[q]);
            tw_param *p = tw_model_param(&m, name);
            ck_assert_ptr_nonnull(p);
            const float *gp = tw_model_grad_of(&fb.g, &m, p->data);
            const long step = p->count <= 40 ? 1 : p->count / 40;
            const long n = (p->count + step - 1) / step;
            float *fd = tt_zeros(n), *an = tt_zeros(n);
            long used = 0;
            for (long j = 0; j < p->count; j += step) {
                const float keep = p->data[j], h = 1e-2f;
                float jp, jm;
                p->data[j] = keep + h;
                ck_assert_int_eq(tw_model_loss(&jp, &fb.s, &m, tok, tg, 1, T), TW_OK);
                p->data[j] = keep - h;
                ck_assert_int_eq(tw_model_loss(&jm, &fb.s, &m, tok, tg, 1, T), TW_OK);
                p->data[j] = keep;
                fd[used] = (float)(((double)jp - jm) / (2.0 * (double)h));
                an[used] = gp[j];
                used++;
            }
            ck_assert_grad(name, an, fd, used, 1e-2, 5e-3);
            free(fd);
            free(an);
        }
    mt_model_grad_free(&fb);
    tw_model_free(&m);
}
END_TEST

// 1 if the two files hold the same bytes.
static int same_bytes(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        const int x = fgetc(fa), y = fgetc(fb);
        if (x != y) same = 0;
        if (x == EOF || y == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

// The generator's version 2 file (written by Python from the format's description) read and
// written back by the C writer: the same bytes. A model with experts alone keeps version 1
// (gen_train_moe.py's file, read and written back, the same bytes too). TWMODEL refuses MLA.
START_TEST(the_twmx_file_carries_latent_attention)
{
    char out[256], err[512] = "";
    snprintf(out, sizeof out, "/tmp/tw_test_mla_%ld.bin", (long)getpid());
    for (int i = 0; i < 2; i++) {
        tw_model m;
        char in[256];
        snprintf(in, sizeof in, "data/golden/train_mla/%s/init.bin", CASES[i]);
        load_init(&m, CASES[i]);
        ck_assert_int_eq(m.cfg.block.mla_q_rank, i == 0 ? 5 : 8);
        ck_assert_int_eq(m.cfg.block.mla_d_rope, i == 0 ? 4 : 2);
        ck_assert_msg(tw_moe_file_write(out, &m, err, sizeof err) == TW_OK, "%s", err);
        ck_assert_msg(same_bytes(in, out), "%s: written back differs", in);
        ck_assert_int_eq(tw_checkpoint_write(out, &m, err, sizeof err), TW_ERR_ARG);
        ck_assert_msg(strstr(err, "TWMX") != NULL, "%s", err);
        tw_model_free(&m);
    }
    tw_model e;
    const char *v1 = "data/golden/train_moe/llama_e4k2s1/init.bin";
    ck_assert_msg(tw_model_load_file(&e, v1, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(e.cfg.block.mla_kv_rank, 0);
    ck_assert_msg(tw_moe_file_write(out, &e, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_msg(same_bytes(v1, out), "a version 1 file written back differs");
    tw_model_free(&e);
    remove(out);
}
END_TEST

// The dump and the NaN check read the block's table: the latent (T, kv_rank) is dumped, mha's
// q is not (the block has none), and a NaN planted in W_kva is first seen in L0.mla_c_raw.
START_TEST(dump_and_nan_check_see_latent_attention)
{
    tw_model m;
    load_init(&m, CASES[0]);
    const int T = 6, tokens[6] = { 3, 1, 4, 1, 5, 9 };
    char dir[256], err[512] = "";
    mt_dump_into_fresh_folder(dir, sizeof dir, "mla_dump", &m, tokens, T);
    tw_npy a;
    ck_assert_msg(mt_read_dumped(&a, dir, "L1.mla_c", err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(a.ndim, 2);
    ck_assert_int_eq(a.shape[0], T);
    ck_assert_int_eq(a.shape[1], m.cfg.block.mla_kv_rank);
    tw_npy_free(&a);
    // L0.mla_pattern: (H, T, T), every row sums to 1.
    ck_assert_msg(mt_read_dumped(&a, dir, "L0.mla_pattern", err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(a.ndim, 3);
    for (int r = 0; r < m.cfg.block.attn.n_head * T; r++) {
        double sum = 0.0;
        for (int s = 0; s < T; s++) sum += ((const float *)a.data)[r * T + s];
        ck_assert_msg(fabs(sum - 1.0) <= 1e-6, "row %d sums to %.9g", r, sum);   // 6 terms' rounding
    }
    tw_npy_free(&a);
    ck_assert(mt_read_dumped(&a, dir, "L0.q", err, sizeof err) != TW_OK);
    tt_remove_tree(dir);
    mt_nan_is_first_seen_in(&m, tokens, T, "layers.0.attn.kv_a", "L0.mla_c_raw");
    tw_model_free(&m);
}
END_TEST

// No latent KV cache in a model state yet: a state with a cache is refused; ./generate says so
// in one line (exit 1) and decodes with --no-cache (the full forward for every token) a model
// that ./train --init-mla made.
START_TEST(decoding_without_a_cache_only)
{
    tw_model m;
    load_init(&m, CASES[0]);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, 4, 16), TW_ERR_ARG);
    tw_model_free(&m);
    char out[256], cmd[1024];
    snprintf(out, sizeof out, "/tmp/tw_test_mla_gen_%ld.bin", (long)getpid());
    snprintf(cmd, sizeof cmd, "./train --tokens data/golden/train_mla/llama_mla/tokens.bin --vocab 512 "
             "--dim 16 --layers 1 --heads 2 --kv-heads 2 --hidden 16 --init-mla 4,4,2,2,3 --seq 8 "
             "--batch 2 --steps 2 --curve none --sample-every 0 --out %s", out);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "(TWMX format)"));
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "./generate %s -z data/models/tok512.bin -n 6 -t 0", out);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 1, "rc %d: %s", r.rc, r.err);
    ck_assert_msg(strstr(r.err, "--no-cache") != NULL, "%s", r.err);
    ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "not one line: %s", r.err);
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, "./generate %s -z data/models/tok512.bin -n 6 -t 0 --no-cache", out);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "rc %d: %s", r.rc, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "latent attention"));
    tt_run_free(&r);
    remove(out);
}
END_TEST

// The llama_mla case's flags through ./train: the printed losses are PyTorch's and the TWMX file
// --out writes holds PyTorch's final weights (tolerances as ten_steps_with_latent_attention_...).
START_TEST(train_cli_with_latent_attention_matches_pytorch)
{
    char out[256], err[512] = "";
    snprintf(out, sizeof out, "/tmp/tw_test_mla_cli_%ld.bin", (long)getpid());
    // Printed losses: within 1.1e-7 of PyTorch's (ten_steps_with_latent_attention_match_pytorch).
    run_result r = mt_train_cli_matches_golden("train_mla", "llama_mla", "--eval-every 0", out);
    tt_run_free(&r);
    tw_model m;
    ck_assert_msg(tw_model_load_file(&m, out, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(m.cfg.block.mla_kv_rank, 6);
    mt_weights_match_golden(&m, "train_mla", "llama_mla", "./train --out", 10, 1e-4);
    tw_model_free(&m);
    remove(out);
}
END_TEST

// Flags that cannot work get one line on stderr and exit 2, before anything is written.
static const char *const BAD_FLAGS[][2] = {
    { "--init-mla 8,6,4,3,6", "--init-mla" },              // d_rope odd
    { "--init-mla 8,6,4,4", "--init-mla" },                // four fields
    { "--init-mla 8,0,4,4,6", "--init-mla" },              // no latent
    { "--init-mla 8,6,4,4,6 --style qwen3", "--style llama" },   // QK-norm
    { "--init-mla 8,6,4,4,6 --state /tmp/tw_never_written.state", "--state" },
    { "--init-mla 8,6,4,4,6 --init data/golden/train_mla/llama_mla/init.bin", "--init-mla" },
    { "--init data/golden/train_mla/llama_mla/init.bin --attn flash", "--attn flash" },
};

START_TEST(bad_latent_attention_flags_get_one_line)
{
    mt_train_refuses_in_one_line("data/golden/train_mla/llama_mla/tokens.bin", BAD_FLAGS[_i][0], BAD_FLAGS[_i][1]);
}
END_TEST

Suite *suite_mla_model(void) {
    Suite *s = suite_create("mla_model");
    TCase *tc = tcase_create("model");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, ten_steps_with_latent_attention_match_pytorch, 0, 2);
    tcase_add_test(tc, the_gradient_through_latent_attention_matches_finite_differences);
    tcase_add_test(tc, the_twmx_file_carries_latent_attention);
    tcase_add_test(tc, dump_and_nan_check_see_latent_attention);
    tcase_add_test(tc, decoding_without_a_cache_only);
    tcase_add_test(tc, train_cli_with_latent_attention_matches_pytorch);
    tcase_add_loop_test(tc, bad_latent_attention_flags_get_one_line, 0, (int)(sizeof BAD_FLAGS / sizeof BAD_FLAGS[0]));
    suite_add_tcase(s, tc);
    return s;
}
