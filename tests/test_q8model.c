// test_q8model.c: quantized models through the one forward pass (quant/model_q8.c, the Linear path
// of quant/q8_0.c), version-2 files to and from tw_model (quant/q8model.c), the error budget on
// stories260K (quant/q8budget.c) and ./generate on a version-2 file.
#define _POSIX_C_SOURCE 200809L   // getpid, mkdtemp
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "nn/model.h"
#include "quant/q8_0.h"
#include "quant/model_q8.h"
#include "formats/llama2c.h"
#include "tokenize/tokenizer.h"
#include "quant/q8model.h"
#include "quant/q8budget.h"
#include "simd/simd.h"

#define MODEL "data/models/stories260K.bin"
#define TOKENIZER "data/models/tok512.bin"

// A llama-style model wide enough for the SIMD int8 kernels (gs 32 divides C, H*D and F).
static void wide_llama(tw_model *m) {
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "llama"), TW_OK);
    c.block.attn.d_model = 64;
    c.block.attn.n_head = 4;
    c.block.attn.n_kv_head = 2;
    c.block.attn.head_dim = 16;
    c.block.ffn_hidden = 128;
    ck_assert_int_eq(tw_model_init(m, &c), TW_OK);
    tw_model_randomize(m, 1717);
}

// Logits (T, V) of one forward pass without a cache, from a state made now.
static float *logits_of(const tw_model *m, const int *tokens, int T) {
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, m, tokens, T, 0), TW_OK);
    float *out = malloc(sizeof(float) * (size_t)T * m->cfg.vocab);
    memcpy(out, s.logits, sizeof(float) * (size_t)T * m->cfg.vocab);
    tw_model_state_free(&s);
    return out;
}

// With Q8_0 copies, a state made afterwards runs the int8 path: the logits move away from fp32,
// but only by the rounding of int8 (bound: 5% of the largest |logit|; Q8_0 rounds each weight and
// each activation by at most half a step, 1/254 of its group's largest value, about 0.4% per
// operand and Linear layer, and a 2-layer model chains 8 of them: 5% leaves a wide margin while
// a wrong scale, group or row would be off by far more). Without copies (tw_model_q8_free) the
// model computes exactly, bit for bit, what it computed before.
static void check_int8_forward(const tw_model_config *cfg_or_null, int gs) {
    tw_model m;
    if (cfg_or_null) {
        ck_assert_int_eq(tw_model_init(&m, cfg_or_null), TW_OK);
        tw_model_randomize(&m, 4242);
    } else {
        wide_llama(&m);
    }
    const int T = 7, V = m.cfg.vocab;
    int tokens[7] = { 1, 5, 9, 2, 33, 17, 60 };
    float *l32 = logits_of(&m, tokens, T);
    ck_assert_int_eq(tw_model_quantize(&m, gs), TW_OK);
    ck_assert_int_eq(m.copies->gs, gs);
    float *l8 = logits_of(&m, tokens, T);
    double max_abs = 0, max_diff = 0;
    for (long i = 0; i < (long)T * V; i++) {
        max_abs = fmax(max_abs, fabs(l32[i]));
        max_diff = fmax(max_diff, fabs((double)l8[i] - l32[i]));
    }
    printf("int8 forward (%s, gs %d): max |logit| %.4g, max |int8 - fp32| %.4g\n",
           m.cfg.style, gs, max_abs, max_diff);
    ck_assert_msg(max_diff > 0, "the int8 copies were not used");
    ck_assert_msg(max_diff <= 0.05 * max_abs, "int8 logits off by %g (max |logit| %g)", max_diff, max_abs);
    // The same at the best SIMD level (the state picks the int8 kernels of tw_simd's level): the
    // integer products are exact at every level, only float sums are reordered, here and in the
    // fp32 kernels around them (softmax, norms): bound 1e-3 of the largest |logit|, far above
    // float reordering (~1e-6 relative) and far below a wrong product.
    const char *level = tw_simd_init("auto");
    float *l8s = logits_of(&m, tokens, T);
    ck_assert_ptr_nonnull(tw_simd_init("naive"));
    double simd_diff = 0;
    for (long i = 0; i < (long)T * V; i++) simd_diff = fmax(simd_diff, fabs((double)l8s[i] - l8[i]));
    printf("int8 forward (%s, gs %d) at level %s vs naive: max difference %.3g\n", m.cfg.style, gs,
           level, simd_diff);
    ck_assert(simd_diff <= 1e-3 * max_abs);
    free(l8s);
    tw_model_q8_free(&m);
    float *again = logits_of(&m, tokens, T);
    ck_assert_mem_eq(again, l32, sizeof(float) * (size_t)T * V);
    free(again); free(l8); free(l32);
    tw_model_free(&m);
}

START_TEST(int8_forward_runs_the_copies_and_without_them_fp32_is_unchanged)
{
    check_int8_forward(NULL, 32);    // SwiGLU, widths for the SIMD kernels (naive level here)
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "gpt2"), TW_OK);   // classic FFN, biases, tied
    check_int8_forward(&c, 8);
}
END_TEST

// tw_linear_forward_q8 is, row by row, tw_q8_linear then the bias: bit for bit (tolerance 0).
START_TEST(int8_linear_is_quantize_matvec_then_bias)
{
    enum { T = 3, K = 64, N = 5, GS = 32 };
    float *W = tt_rand(N * K, -1, 1, 91), *x = tt_rand(T * K, -2, 2, 92), *b = tt_rand(N, -1, 1, 93);
    int8_t Wq[N * K], xq[K], xq2[K];
    float Ws[N * K / GS], xs[K], xs2[K], y[T * N], want[N];
    ck_assert_int_eq(tw_q8_quantize(Wq, Ws, W, N, K, GS), TW_OK);
    tw_q8_matrix mat = { Wq, Ws, N, K, GS };
    tw_q8_work work = { .xq = xq, .xs = xs, .K_max = K, .ops = tw_q8_ops_for("auto") };
    tw_linear_forward_q8(y, &work, x, W, &mat, b, T, K, N);
    for (int t = 0; t < T; t++) {
        tw_q8_linear(work.ops, want, xq2, xs2, Wq, Ws, x + t * K, N, K, GS);
        for (int o = 0; o < N; o++) want[o] += b[o];
        ck_assert_mem_eq(y + t * N, want, sizeof want);
    }
    // without a copy or without working memory: the fp32 Linear layer itself
    float y32[T * N], ref[T * N];
    tw_linear_forward(ref, x, W, b, T, K, N);
    tw_linear_forward_q8(y32, NULL, x, W, &mat, b, T, K, N);
    ck_assert_mem_eq(y32, ref, sizeof ref);
    tw_linear_forward_q8(y32, &work, x, W, NULL, b, T, K, N);
    ck_assert_mem_eq(y32, ref, sizeof ref);
    free(W); free(x); free(b);
}
END_TEST

START_TEST(copies_refuse_a_group_that_does_not_divide_every_width)
{
    tw_model m;
    wide_llama(&m);
    ck_assert_int_eq(tw_model_q8_init(&m, 0), TW_ERR_ARG);
    ck_assert_int_eq(tw_model_q8_init(&m, 48), TW_ERR_SHAPE);   // divides 128? no; 64? no
    ck_assert_ptr_null(m.copies);
    ck_assert_int_eq(tw_model_q8_init(&m, 64), TW_OK);
    ck_assert_int_eq(m.copies->n, 2 * 7 + 1);   // 2 layers x (wq wk wv wo gate up down) + the tied head
    ck_assert_ptr_nonnull(tw_model_q8_find(&m, "layers.1.ffn.down"));
    ck_assert_int_eq(tw_model_q8_find(&m, "layers.1.ffn.down")->cols, 128);
    ck_assert_ptr_eq(tw_model_q8_find(&m, "head"), m.head.q8);
    ck_assert_ptr_null(tw_model_q8_find(&m, "tok_emb"));
    tw_model_free(&m);
}
END_TEST

// stories260K -> version 2 (gs 4) -> file -> tw_llama2c_load_any: the model's int8 copies are the
// file's bytes, its fp32 weights their dequantized values (both exact: tolerance 0).
// m32 written as a version-2 file with groups of gs and read back: every int8 copy holds the
// file's own bytes, every fp32 weight is q * s exactly (tolerance 0), and the model writes the same
// file again. Tied: the embedding's copy is the head's. Untied (a model ./train writes): the
// embedding has no copy (its lookup reads q * s) and the head is the file's last tensor.
static void check_version2_round_trip(const tw_model *m32, int gs) {
    tw_model m8;
    tw_q8file q, back;
    char err[512], path[128];
    snprintf(path, sizeof path, "/tmp/tw_test_q8model_%ld.bin", (long)getpid());
    ck_assert_int_eq(tw_q8file_from_model(&q, m32, gs, err, sizeof err), TW_OK);
    ck_assert_int_eq(q.cfg.shared_classifier, m32->cfg.tied);
    ck_assert_int_eq(tw_q8file_write(path, &q, err, sizeof err), TW_OK);
    int version = -1;
    ck_assert_msg(tw_llama2c_load_any(&m8, &version, path, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(version, 2);
    ck_assert_int_eq(m8.copies->gs, gs);
    char name[64];
    for (int i = 0; i < q.n_tensors; i++) {
        const tw_q8file_tensor *t = &q.tensors[i];
        tw_q8file_model_name(name, sizeof name, &q.cfg, i);
        const long n = (long)t->rows * t->cols;
        const tw_q8_matrix *c = tw_model_q8_find(&m8, i == 0 ? "head" : name);
        if (i > 0 || m32->cfg.tied) {
            ck_assert_ptr_nonnull(c);
            ck_assert_mem_eq(c->q, t->q, (size_t)n);
            ck_assert_mem_eq(c->s, t->s, sizeof(float) * (size_t)(n / gs));
        }
        const float *w = tw_model_param(&m8, name)->data;
        for (long k = 0; k < n; k++) ck_assert(w[k] == (float)t->q[k] * t->s[k / gs]);
    }
    // and the model writes the same file back (quantizing q * s again gives q and s again)
    ck_assert_int_eq(tw_q8file_from_model(&back, &m8, gs, err, sizeof err), TW_OK);
    ck_assert_mem_eq(back.memory, q.memory, (size_t)q.n_bytes);
    tw_q8file_free(&back);
    tw_q8file_free(&q);
    tw_model_free(&m8);
    remove(path);
}

START_TEST(version2_file_loads_into_a_model_with_the_files_own_values)
{
    tw_model m32;
    char err[512];
    ck_assert_int_eq(tw_llama2c_load(&m32, MODEL, err, sizeof err), TW_OK);
    check_version2_round_trip(&m32, 4);   // stories260K: tied head
    tw_model_free(&m32);
    // an untied head, as ./train writes a llama model (that file once failed to load: the reader
    // looked for an int8 copy of the embedding)
    const tw_llama2c_config lc = { 64, 128, 2, 4, 2, 96, 32, 0 };
    tw_model_config mc;
    tw_llama2c_model_config(&mc, &lc);
    ck_assert_int_eq(tw_model_init(&m32, &mc), TW_OK);
    tw_model_randomize(&m32, 99);
    check_version2_round_trip(&m32, 32);
    tw_model_free(&m32);
    int v0 = -1;
    tw_model again;
    ck_assert_int_eq(tw_llama2c_load_any(&again, &v0, MODEL, err, sizeof err), TW_OK);
    ck_assert_int_eq(v0, 0);
    ck_assert_ptr_null(again.copies);
    tw_model_free(&again);
}
END_TEST

// The error budget of stories260K at int8 (what ./generate runs on ./quantize's file: groups of 4,
// activations quantized too), on a held-out text and a greedy story. Bounds: perplexity within 1%
// of fp32 (the goal); mean KL below 0.002 nats and the largest logit error below 1.0 (on
// this machine 0.00029 and 0.29: the margins absorb other compilers and CPUs, whose float sums
// differ in order, while a broken int8 path gives KL and errors orders of magnitude larger); at
// least 64 of 200 greedy tokens agreeing before the first difference (191 here; greedy decoding
// is discontinuous, so one near-tie can end the agreement early on another machine).
START_TEST(int8_budget_on_stories260K_is_within_bounds)
{
    const char *text_str =
        "Tom had a small red boat. Every morning he took it to the pond and watched it float on the "
        "water. One day the wind pushed the boat far away, and Tom ran around the pond to catch it. "
        "When he got it back, he smiled and hugged his mom.";
    tw_model m32, m8;
    tw_tokenizer tok;
    tw_q8file q;
    char err[512];
    ck_assert_int_eq(tw_llama2c_load(&m32, MODEL, err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_tokenizer_load(&tok, TOKENIZER, m32.cfg.vocab, err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_q8file_from_model(&q, &m32, 4, err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_q8file_to_model(&m8, &q, err, sizeof err), TW_OK);
    int text[512], prompt[64], T = 0, n_prompt = 0;
    ck_assert_int_eq(tw_tokenizer_encode(&tok, text, &T, 512, text_str, 1, 0), TW_OK);
    ck_assert_int_eq(tw_tokenizer_encode(&tok, prompt, &n_prompt, 64, "Once upon a time", 1, 0), TW_OK);
    tw_q8_budget b;
    ck_assert_int_eq(tw_q8_budget_measure(&b, &m32, &m8, text, T, prompt, n_prompt, 200), TW_OK);
    printf("stories260K int8 budget: T %d, max|dlogit| %.4g, KL %.4g, ppl %.4f -> %.4f (%+.3f%%), "
           "greedy %d of %d\n", b.T, b.max_logit_err, b.mean_kl, b.ppl_ref, b.ppl_test,
           100 * (b.ppl_test / b.ppl_ref - 1), b.agree, b.steps);
    ck_assert_int_eq(b.T, T);
    ck_assert(fabs(b.ppl_test / b.ppl_ref - 1) < 0.01);
    ck_assert(b.mean_kl >= 0 && b.mean_kl < 0.002);
    ck_assert(b.max_logit_err > 0 && b.max_logit_err < 1.0);   // > 0: the int8 path really ran
    ck_assert_int_ge(b.agree, 64);
    // the budget of a model against itself is exactly zero (the measurement cannot invent error)
    tw_q8_budget z;
    ck_assert_int_eq(tw_q8_budget_measure(&z, &m32, &m32, text, T, prompt, n_prompt, 20), TW_OK);
    ck_assert(z.max_logit_err == 0 && fabs(z.mean_kl) < 1e-12 && z.ppl_ref == z.ppl_test && z.agree == 20);
    tw_q8file_free(&q);
    tw_tokenizer_free(&tok);
    tw_model_free(&m8);
    tw_model_free(&m32);
}
END_TEST

// tw_q8_budget_measure_text cuts a long text into windows of the models' max_seq (32 here) and
// adds up their statistics. A text of one window gives exactly what tw_q8_budget_measure gives
// (the same sums in the same order: tolerance 0). A text of 52 tokens is two windows, of 32 and 20
// tokens, and equals the two single-window budgets combined by hand: the larger max error, KL
// weighted by positions (32 and 20), perplexity from the summed negative log-likelihoods (31 and
// 19 predicted tokens). Tolerance 1e-12 relative: the same double sums grouped differently, then
// one log and one exp, where equal weights per window, or a window left out, would be off by 1e-4
// and more. A text of 65 tokens is two full windows: the 65th token alone predicts nothing.
START_TEST(int8_budget_over_windows_adds_up_the_windows)
{
    tw_model m32, m8;
    wide_llama(&m32);
    wide_llama(&m8);
    ck_assert_int_eq(tw_model_quantize(&m8, 32), TW_OK);
    const int W = m32.cfg.max_seq;
    ck_assert_int_eq(W, 32);
    int text[65];
    for (int i = 0; i < 65; i++) text[i] = (i * 37 + 11) % m32.cfg.vocab;
    tw_q8_budget one, whole, w0, w1;
    ck_assert_int_eq(tw_q8_budget_measure(&one, &m32, &m8, text, W, text, 4, 20), TW_OK);
    ck_assert_int_eq(tw_q8_budget_measure_text(&whole, &m32, &m8, text, W, 4, 20), TW_OK);
    ck_assert(one.T == whole.T && one.max_logit_err == whole.max_logit_err && one.mean_kl == whole.mean_kl &&
              one.ppl_ref == whole.ppl_ref && one.ppl_test == whole.ppl_test && one.agree == whole.agree &&
              one.steps == whole.steps);
    ck_assert(one.max_logit_err > 0);   // the int8 path really ran
    ck_assert_int_eq(tw_q8_budget_measure(&w0, &m32, &m8, text, W, text, 4, 20), TW_OK);
    ck_assert_int_eq(tw_q8_budget_measure(&w1, &m32, &m8, text + W, 20, text, 4, 20), TW_OK);
    ck_assert_int_eq(tw_q8_budget_measure_text(&whole, &m32, &m8, text, W + 20, 4, 20), TW_OK);
    ck_assert_int_eq(whole.T, W + 20);
    ck_assert(whole.max_logit_err == fmax(w0.max_logit_err, w1.max_logit_err));
    const double kl = (W * w0.mean_kl + 20 * w1.mean_kl) / (W + 20);
    const double ppl_ref = exp(((W - 1) * log(w0.ppl_ref) + 19 * log(w1.ppl_ref)) / (W + 18));
    const double ppl_test = exp(((W - 1) * log(w0.ppl_test) + 19 * log(w1.ppl_test)) / (W + 18));
    printf("int8 budget over windows of %d and 20 tokens: KL %.6g (windows %.6g, %.6g), ppl fp32 %.6f "
           "(%.6f, %.6f)\n", W, whole.mean_kl, w0.mean_kl, w1.mean_kl, whole.ppl_ref, w0.ppl_ref, w1.ppl_ref);
    ck_assert_msg(fabs(whole.mean_kl / kl - 1) < 1e-12, "KL %.17g, by hand %.17g", whole.mean_kl, kl);
    ck_assert_msg(fabs(whole.ppl_ref / ppl_ref - 1) < 1e-12, "ppl %.17g, by hand %.17g", whole.ppl_ref, ppl_ref);
    ck_assert_msg(fabs(whole.ppl_test / ppl_test - 1) < 1e-12, "ppl %.17g, by hand %.17g", whole.ppl_test, ppl_test);
    ck_assert_int_eq(tw_q8_budget_measure_text(&whole, &m32, &m8, text, 65, 4, 20), TW_OK);
    ck_assert_int_eq(whole.T, 2 * W);
    ck_assert(whole.agree == w0.agree && whole.steps == 20);   // greedy from the text's first 4 tokens
    // out of range: too short a text, a prompt longer than the text, prompt + steps past a window
    ck_assert_int_eq(tw_q8_budget_measure_text(&whole, &m32, &m8, text, 1, 1, 1), TW_ERR_ARG);
    ck_assert_int_eq(tw_q8_budget_measure_text(&whole, &m32, &m8, text, 3, 4, 1), TW_ERR_ARG);
    ck_assert_int_eq(tw_q8_budget_measure_text(&whole, &m32, &m8, text, 65, 4, W - 3), TW_ERR_ARG);
    tw_model_free(&m8);
    tw_model_free(&m32);
}
END_TEST

// ./generate on ./quantize's file: runs, says which version it loaded, keeps its flags (--dump
// writes the same tensor names as for the fp32 file; --no-cache and --simd naive run).
START_TEST(generate_runs_a_version2_file_and_says_so)
{
    char dir[] = "/tmp/tw_test_q8gen_XXXXXX", cmd[1024];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "./quantize " MODEL " %s/q8.bin", dir);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s: %s", cmd, r.err);
    tt_run_free(&r);
    const char *flags[] = { "", "--no-cache", "--simd naive" };
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "./generate %s/q8.bin -z " TOKENIZER " -t 0 -n 24 -i \"Once upon a time\" %s",
                 dir, flags[i]);
        r = tt_run(cmd);
        ck_assert_msg(r.rc == 0, "%s: exit %d, %s", cmd, r.rc, r.err);
        ck_assert_msg(strstr(r.err, "model: llama2.c version 2 (Q8_0: int8 weights in groups of 4"), "%s: %s", cmd, r.err);
        ck_assert_msg(strncmp(r.out, "Once upon a time", 16) == 0 && strlen(r.out) > 40, "%s: %s", cmd, r.out);
        tt_run_free(&r);
    }
    r = tt_run("./generate " MODEL " -z " TOKENIZER " -t 0 -n 8");
    ck_assert_msg(r.rc == 0 && strstr(r.err, "model: llama2.c version 0 (fp32)"), "%s", r.err);
    tt_run_free(&r);
    // The same tensor names, in the same order, in both dumps' manifests (first column of each line).
    char *names[2] = { NULL, NULL };
    for (int v = 0; v < 2; v++) {
        char path[256];
        if (v == 0) snprintf(cmd, sizeof cmd, "./generate " MODEL " -z " TOKENIZER " -n 8 -i Once --dump %s/d0", dir);
        else snprintf(cmd, sizeof cmd, "./generate %s/q8.bin -z " TOKENIZER " -n 8 -i Once --dump %s/d2", dir, dir);
        r = tt_run(cmd);
        ck_assert_msg(r.rc == 0, "%s: %s", cmd, r.err);
        tt_run_free(&r);
        snprintf(path, sizeof path, "%s/d%d/manifest.tsv", dir, 2 * v);
        names[v] = tt_slurp(path);
        for (char *p = names[v], *q = names[v]; ; ) {   // keep each line up to its first tab
            if (*p == '\t') while (*p && *p != '\n') p++;
            if ((*q++ = *p++) == '\0') break;
        }
    }
    ck_assert_msg(strcmp(names[0], names[1]) == 0, "the two dumps differ in their tensor names:\n%s\n---\n%s",
                  names[0], names[1]);
    ck_assert_int_gt(tt_count_lines(names[1]), 50);
    free(names[0]);
    free(names[1]);
    ck_assert_int_eq(tt_remove_tree(dir), 0);
}
END_TEST

Suite *suite_q8model(void) {
    Suite *s = suite_create("q8model");
    TCase *tc = tcase_create("int8 model");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, int8_forward_runs_the_copies_and_without_them_fp32_is_unchanged);
    tcase_add_test(tc, int8_linear_is_quantize_matvec_then_bias);
    tcase_add_test(tc, copies_refuse_a_group_that_does_not_divide_every_width);
    tcase_add_test(tc, version2_file_loads_into_a_model_with_the_files_own_values);
    tcase_add_test(tc, int8_budget_on_stories260K_is_within_bounds);
    tcase_add_test(tc, int8_budget_over_windows_adds_up_the_windows);
    tcase_add_test(tc, generate_runs_a_version2_file_and_says_so);
    suite_add_tcase(s, tc);
    return s;
}
