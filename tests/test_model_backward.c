// test_model_backward.c: the whole model's loss and backward pass (tw_model_loss,
// tw_model_forward_backward in lib/nn/model.c, tw_block_backward in lib/nn/block.c):
//   - every parameter's gradient, named as the parameter table names it, against PyTorch autograd
//     in float64 for the four styles and for stories260K (data/golden/backward/model/, from
//     tests/golden/gen_model_backward.py);
//   - the same gradients against central finite differences of the library's own loss, with no
//     PyTorch involved, on a few coordinates of every parameter of each style;
//   - properties: the loss of a fresh model is about ln V, one AdamW step lowers the batch's loss,
//     repeated steps on one batch drive its loss towards 0, and k micro-batches accumulate to the
//     gradient of one batch k times larger.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"
#include "grad_check.h"
#include "formats/llama2c.h"

static const char *const CASES[] = { "2017", "gpt2", "llama", "qwen3", "stories260K" };
#define N_CASES  ((int)(sizeof CASES / sizeof CASES[0]))
#define N_STYLES 4   // the first four cases are the tiny presets
#define STORIES_PATH "data/models/stories260K.bin"

// The model of a golden case: a preset with the forward goldens' parameters (the generator reads
// the same files), or the stories260K checkpoint.
static void load_case_model(tw_model *m, const char *name) {
    if (strcmp(name, "stories260K") == 0) {
        char err[512] = "";
        ck_assert_msg(tw_llama2c_load(m, STORIES_PATH, err, sizeof err) == TW_OK,
                      "%s (run `make model`)", err);
        return;
    }
    char dir[96];
    snprintf(dir, sizeof dir, "model/models/%s", name);
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, name), TW_OK);
    ck_assert_int_eq(tw_model_init(m, &c), TW_OK);
    for (int i = 0; i < m->n_params; i++) {
        float *data = gc_load(dir, m->params[i].name, m->params[i].count);
        memcpy(m->params[i].data, data, (size_t)m->params[i].count * sizeof(float));
        free(data);
    }
}

// One loss + backward over the batch; g is zeroed first. ds_out, if not NULL, receives the state
// of activation gradients (the caller frees it); otherwise it is freed here.
static float loss_and_grads_keep(tw_model_grads *g, tw_model_state *ds_out, const tw_model *m,
                                 const int *tokens, const int *targets, int B, int T) {
    tw_model_state s, ds;
    ck_assert_int_eq(tw_model_state_init(&s, m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&ds, m, T, 0), TW_OK);
    tw_model_grads_zero(g);
    float loss = -1.0f;
    ck_assert_int_eq(tw_model_forward_backward(&loss, g, &ds, &s, m, tokens, targets, B, T, 1.0f), TW_OK);
    tw_model_state_free(&s);
    if (ds_out) *ds_out = ds;
    else tw_model_state_free(&ds);
    return loss;
}

static float loss_and_grads(tw_model_grads *g, const tw_model *m, const int *tokens,
                            const int *targets, int B, int T) {
    return loss_and_grads_keep(g, NULL, m, tokens, targets, B, T);
}

START_TEST(model_gradients_match_torch_float64)
{
    const char *name = CASES[_i];
    char dir[96];
    snprintf(dir, sizeof dir, "backward/model/%s", name);
    tw_model m;
    load_case_model(&m, name);
    int *n_params = gc_load_i32(dir, "n_params", 1);
    ck_assert_int_eq(m.n_params, n_params[0]);   // the same parameter list on both sides
    const int B = 2;                             // BATCH in the generator; T follows from the file
    int *tokens = gc_load_i32(dir, "tokens", -1), *targets = gc_load_i32(dir, "targets", -1);
    float *want_loss = gc_load(dir, "loss", 1);
    const int T = (int)(strcmp(name, "stories260K") == 0 ? 16 : 7);   // T_STORIES, T_STYLE
    free(gc_load_i32(dir, "tokens", (long)B * T));                   // and the file agrees

    tw_model_grads g;
    ck_assert_int_eq(tw_model_grads_init(&g, &m), TW_OK);
    tw_model_state ds;
    const float loss = loss_and_grads_keep(&g, &ds, &m, tokens, targets, B, T);
    // The loss: float32 logits of a few units, log-sum-exp in double: 1e-5 relative is ~100
    // float32 roundings of the loss; measured worst 9.4e-8 relative (llama), 0 for the others.
    ck_assert_msg(fabs(loss - want_loss[0]) <= 1e-5 * fabs(want_loss[0]),
                  "%s: loss %.9g, torch %.9g", name, (double)loss, (double)want_loss[0]);

    // Tolerance (grad_check.h's metric): |got - want| <= rel * (max|want of the model| + |want|),
    // rel = 2e-4. A parameter's gradient here is the end of a chain of ~20 float32 steps (head,
    // final norm, two to five blocks of ~10 steps each, embedding) whose sums run over up to
    // B*T*V = 1024 or B*T*F terms; each step adds ~1e-7 relative of its terms, and norms and
    // softmaxes amplify by their condition numbers (1/std of a row, up to ~10 here), so a bound
    // of ~20 steps * 10 * 1e-7 * sqrt(terms ~ 1000) ~ 6e-4 at worst, 1e-5 typically. The scale
    // is the largest gradient entry of the whole model (case_scale), because a small parameter
    // gradient (a norm gain, a bias) is a sum of terms as large as the model's others. Measured
    // worst ratio (TW_GRAD_REPORT=1, against each tensor's own largest entry, so stricter than the
    // test): 7.8e-6 (stories260K layers.1.attn.wq; 7.4e-6 for 2017, 1.1e-6 or less for the
    // others), a margin of 25x; the key biases' gradients are 0 in exact arithmetic (1e-17 in
    // torch, 1e-9 here) and pass through case_scale. A real bug (a missing term, a wrong
    // transpose) moves gradients by O(1) of their size.
    const double rel = 2e-4;
    double case_scale = 0.0;
    float **want = calloc((size_t)m.n_params, sizeof *want);
    for (int i = 0; i < m.n_params; i++) {
        char gname[64];
        snprintf(gname, sizeof gname, "grad.%s", g.params[i].name);
        want[i] = gc_load(dir, gname, g.params[i].count);
        const double mi = gc_maxabs(want[i], g.params[i].count);
        if (mi > case_scale) case_scale = mi;
    }
    for (int i = 0; i < m.n_params; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s %s", name, g.params[i].name);
        ck_assert_str_eq(g.params[i].name, m.params[i].name);
        ck_assert_grad(what, g.params[i].data, want[i], g.params[i].count, rel, case_scale);
        free(want[i]);
    }
    free(want);

    // The state of activation gradients holds, under the activations' own names, the gradients
    // of the last sequence's activations (the batch is a loop over sequences): the embeddings,
    // every layer's output and the logits, same tolerance and reasoning (case scale: the
    // tensor's own largest entry). Measured worst ratio: 6.7e-6 (2017 embed), 6.1e-6 (stories260K
    // L0.resid_post).
    const int C = m.cfg.block.attn.d_model, V = m.cfg.vocab;
    for (int l = -1; l <= m.cfg.n_layer; l++) {
        char aname[48], what[96];
        const float *got;
        long n = (long)T * C;
        if (l < 0) { snprintf(aname, sizeof aname, "dact.embed"); got = ds.embed; }
        else if (l == m.cfg.n_layer) { snprintf(aname, sizeof aname, "dact.logits"); got = ds.logits; n = (long)T * V; }
        else { snprintf(aname, sizeof aname, "dact.L%d.resid_post", l); got = ds.layers[l].resid_post; }
        float *w = gc_load(dir, aname, n);
        snprintf(what, sizeof what, "%s %s", name, aname);
        ck_assert_grad(what, got, w, n, rel, 0.0);
        free(w);
    }
    tw_model_state_free(&ds);
    tw_model_grads_free(&g);
    tw_model_free(&m);
    free(n_params); free(tokens); free(targets); free(want_loss);
}
END_TEST

// ---- finite differences (no PyTorch) ----

static void random_batch(int *tokens, int *targets, int n, int V, uint64_t seed) {
    tw_rng r;
    tw_rng_init(&r, seed);
    for (int i = 0; i < n; i++) {
        tokens[i] = (int)(tw_rng_next(&r) % (uint64_t)V);
        targets[i] = (int)(tw_rng_next(&r) % (uint64_t)V);
    }
}

// tw_model_randomize, then Linear weights N(0, 1/C_in) and embeddings N(0, 0.5) (N(0, 0.25/C)
// for the 2017 style, which scales them by sqrt(C)): activations and gradients of order 1
// everywhere, so every parameter's gradient is measurable.
static void make_strong_model(tw_model *m, const char *style, uint64_t seed) {
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, style), TW_OK);
    ck_assert_int_eq(tw_model_init(m, &c), TW_OK);
    // the 2017 style multiplies its embeddings by sqrt(C) itself
    tt_randomize_strong(m, seed, m->cfg.embed_scale ? 0.5f / sqrtf((float)c.block.attn.d_model) : 0.5f);
}

static double batch_loss(tw_model_state *s, const tw_model *m, const int *tokens,
                         const int *targets, int B, int T) {
    float loss;
    ck_assert_int_eq(tw_model_loss(&loss, s, m, tokens, targets, B, T), TW_OK);
    return loss;
}

START_TEST(model_gradients_match_finite_differences)
{
    const char *style = CASES[_i];
    tw_model m;
    make_strong_model(&m, style, 900u + (uint64_t)_i);
    enum { B = 2, T = 5 };
    int tokens[B * T], targets[B * T];
    random_batch(tokens, targets, B * T, m.cfg.vocab, 77u + (uint64_t)_i);
    targets[3] = TW_IGNORE_INDEX;
    tw_model_grads g;
    ck_assert_int_eq(tw_model_grads_init(&g, &m), TW_OK);
    loss_and_grads(&g, &m, tokens, targets, B, T);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);

    // Central differences of the float32 loss, D(h) = (L(p + h) - L(p - h)) / 2h with h = 5e-3,
    // extrapolated (Richardson): (4 D(h) - D(2h)) / 3 cancels the h^2 term of the truncation
    // error, leaving O(h^4) ~ 1e-9 for derivatives of O(1). Rounding: the loss (~4 .. 8) carries
    // ~1e-6 relative float32 noise from the logits, ~5e-6 absolute, divided by 2h = 1e-2 and
    // multiplied by at most 1.5 by the extrapolation: ~8e-4 at worst. A ReLU (2017) adds one more
    // error: a pre-activation within 2h of its kink makes the loss non-smooth there. An element
    // passes when |fd - g| <= 2e-3 + 2e-2 |fd|; measured worst (TW_GRAD_REPORT=1): 0.22 of that
    // bound (2017 layers.0.attn.wv, a ReLU kink), 0.05 or less for the other styles. The checked
    // gradients are each parameter's largest entry (O(0.1 .. 1)) and two fixed others (first
    // and middle), so a wrong sign or a missing term fails by far more than the bound.
    const float h = 5e-3f;
    for (int i = 0; i < m.n_params; i++) {
        tw_param *p = &m.params[i];
        const float *gp = g.params[i].data;
        long best = 0;
        for (long j = 1; j < p->count; j++) if (fabsf(gp[j]) > fabsf(gp[best])) best = j;
        const long coords[3] = { best, 0, p->count / 2 };
        for (int k = 0; k < 3; k++) {
            const long j = coords[k];
            const float keep = p->data[j];
            double d[2];   // D(h), D(2h)
            for (int e = 0; e < 2; e++) {
                const float step = e == 0 ? h : 2.0f * h;
                p->data[j] = keep + step;
                const double up = batch_loss(&s, &m, tokens, targets, B, T);
                p->data[j] = keep - step;
                const double down = batch_loss(&s, &m, tokens, targets, B, T);
                d[e] = (up - down) / ((double)(keep + step) - (double)(keep - step));
            }
            p->data[j] = keep;
            const double fd = (4.0 * d[0] - d[1]) / 3.0;
            if (getenv("TW_GRAD_REPORT"))
                fprintf(stderr, "fd-report %s %s[%ld] backward %.6g fd %.6g ratio to bound %.3g\n",
                        style, p->name, j, (double)gp[j], fd,
                        fabs(fd - gp[j]) / (2e-3 + 2e-2 * fabs(fd)));
            ck_assert_msg(fabs(fd - gp[j]) <= 2e-3 + 2e-2 * fabs(fd),
                          "%s %s[%ld]: backward %.6g, finite difference %.6g", style, p->name, j,
                          (double)gp[j], fd);
        }
    }
    tw_model_state_free(&s);
    tw_model_grads_free(&g);
    tw_model_free(&m);
}
END_TEST

// ---- properties ----

START_TEST(fresh_model_loss_is_about_ln_V)
{
    const char *style = CASES[_i];
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, style), TW_OK);
    tw_model m;
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    tw_model_randomize(&m, 5u + (uint64_t)_i);
    enum { B = 4, T = 8 };
    int tokens[B * T], targets[B * T];
    random_batch(tokens, targets, B * T, c.vocab, 11u);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    const double loss = batch_loss(&s, &m, tokens, targets, B, T), lnV = log((double)c.vocab);
    // With N(0, 0.02) weights (tw_model_randomize) the logits have a spread sigma of about
    // 0.02 * sqrt(C) * |gain| ~ 0.15, and the expected loss exceeds ln V by about sigma^2 / 2
    // ~ 0.01 (plus sampling noise of the same order over 32 targets): band ln V +- 0.1.
    // Measured: gpt2 4.149, llama 4.172, qwen3 4.172 against ln 65 = 4.174; 2017: 21.5.
    // The 2017 style is the exception, by design of its initialisation: its tied table is
    // N(0, 1) (Vaswani et al. scale embeddings by sqrt(C) because of it), so its logits have a
    // spread of sqrt(C) ~ 5 and a fresh model is confidently wrong: loss well above ln V.
    if (c.embed_init == TW_EMBED_INIT_UNIT)
        ck_assert_msg(loss > lnV + 1.0, "2017: loss %.4f, ln V %.4f", loss, lnV);
    else
        ck_assert_msg(fabs(loss - lnV) < 0.1, "%s: loss %.4f, ln V %.4f", style, loss, lnV);
    tw_model_state_free(&s);
    tw_model_free(&m);
}
END_TEST

// One AdamW step on every parameter (decay on matrices only, tw_adamw_decays).
static void adamw_step(tw_model *m, float *mom1, float *mom2, const tw_model_grads *g, int step,
                       float lr) {
    for (int i = 0; i < m->n_params; i++) {
        tw_param *p = &m->params[i];
        const long off = p->data - m->memory;
        tw_adamw_hparams hp = { .lr = lr, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                                .weight_decay = tw_adamw_decays(p->ndim) ? 0.1f : 0.0f };
        tw_adamw_step(p->data, mom1 + off, mom2 + off, g->params[i].data, p->count, step, &hp);
    }
}

START_TEST(adamw_steps_on_one_batch_drive_its_loss_down)
{
    const char *style = CASES[_i];
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, style), TW_OK);
    tw_model m;
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    tw_model_randomize(&m, 21u + (uint64_t)_i);
    enum { B = 2, T = 8, STEPS = 60 };
    int tokens[B * T], targets[B * T];
    random_batch(tokens, targets, B * T, c.vocab, 31u + (uint64_t)_i);
    tw_model_grads g;
    ck_assert_int_eq(tw_model_grads_init(&g, &m), TW_OK);
    float *mom1 = tt_zeros(m.n_floats), *mom2 = tt_zeros(m.n_floats);
    float first = 0.0f, last = 0.0f;
    for (int step = 1; step <= STEPS; step++) {
        const float loss = loss_and_grads(&g, &m, tokens, targets, B, T);
        if (step == 1) first = loss;
        if (step == 2)   // one step lowered this batch's loss
            ck_assert_msg(loss < first, "%s: loss %.6f after one step, %.6f before", style,
                          (double)loss, (double)first);
        last = loss;
        adamw_step(&m, mom1, mom2, &g, step, 1e-2f);
    }
    // 16 random targets from 65 tokens can be memorised by any of these models: after 60 steps
    // at lr 1e-2 the loss must be below a tenth of where it started (measured: 4e-5 (2017) to
    // 1.1e-3 (qwen3) of it; a wrong gradient sign or a dropped term stalls or diverges instead).
    ck_assert_msg(last < 0.1f * first, "%s: loss %.4f after %d steps, started at %.4f", style,
                  (double)last, STEPS, (double)first);
    free(mom1); free(mom2);
    tw_model_grads_free(&g);
    tw_model_free(&m);
}
END_TEST

START_TEST(micro_batches_accumulate_to_the_big_batch_gradient)
{
    const char *style = CASES[_i];
    tw_model m;
    make_strong_model(&m, style, 60u + (uint64_t)_i);
    enum { K = 3, T = 6 };
    int tokens[K * T], targets[K * T];
    random_batch(tokens, targets, K * T, m.cfg.vocab, 5u);
    tw_model_grads big, acc;
    ck_assert_int_eq(tw_model_grads_init(&big, &m), TW_OK);
    ck_assert_int_eq(tw_model_grads_init(&acc, &m), TW_OK);
    const float loss_big = loss_and_grads(&big, &m, tokens, targets, K, T);
    tw_model_state s, ds;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&ds, &m, T, 0), TW_OK);
    double loss_sum = 0.0;
    for (int k = 0; k < K; k++) {   // k micro-batches of one sequence, each scaled by 1/K
        float loss;
        ck_assert_int_eq(tw_model_forward_backward(&loss, &acc, &ds, &s, &m, tokens + k * T,
                                           targets + k * T, 1, T, 1.0f / K), TW_OK);
        loss_sum += loss;
    }
    // Every sequence has T targets, so the big batch's mean is the mean of the micro-batches'
    // means, and both runs add the same per-sequence gradients in the same order; they differ only
    // by the rounding of the scale (1/K * T/T vs T/(K T), each one float rounding) carried through
    // the backward: 1e-6 relative to the largest gradient (a few float32 ulps) bounds it.
    // Measured: identical, bit for bit, for every style (the two scales round to the same float).
    ck_assert_msg(fabs(loss_sum / K - loss_big) <= 1e-6 * fabs(loss_big), "%s: losses %.9g %.9g",
                  style, loss_sum / K, (double)loss_big);
    const double scale = gc_maxabs(big.memory, big.n_floats);
    ck_assert_allclose(acc.memory, big.memory, big.n_floats, 1e-6 * scale, 1e-6);
    tw_model_state_free(&s);
    tw_model_state_free(&ds);
    tw_model_grads_free(&big);
    tw_model_grads_free(&acc);
    tw_model_free(&m);
}
END_TEST

START_TEST(bad_batches_are_refused)
{
    tw_model m;
    make_strong_model(&m, "llama", 3u);
    tw_model_state s, cached;
    ck_assert_int_eq(tw_model_state_init(&s, &m, 4, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&cached, &m, 4, 8), TW_OK);
    int tokens[4] = { 1, 2, 3, 4 }, targets[4] = { 2, 3, 4, 5 };
    float loss;
    ck_assert_int_eq(tw_model_loss(&loss, &s, &m, tokens, targets, 1, 5), TW_ERR_ARG);   // T > T_max
    ck_assert_int_eq(tw_model_loss(&loss, &s, &m, tokens, targets, 0, 4), TW_ERR_ARG);
    ck_assert_int_eq(tw_model_loss(&loss, &cached, &m, tokens, targets, 1, 4), TW_ERR_ARG);
    targets[2] = m.cfg.vocab;
    ck_assert_int_eq(tw_model_loss(&loss, &s, &m, tokens, targets, 1, 4), TW_ERR_SHAPE);
    targets[2] = TW_IGNORE_INDEX;
    ck_assert_int_eq(tw_model_loss(&loss, &s, &m, tokens, targets, 1, 4), TW_OK);
    tokens[0] = -1;
    ck_assert_int_eq(tw_model_loss(&loss, &s, &m, tokens, targets, 1, 4), TW_ERR_SHAPE);
    // a state with heads switched off (lesson 18's ablation) is refused by the backward
    tokens[0] = 1;
    tw_model_state ds;
    tw_model_grads g;
    ck_assert_int_eq(tw_model_state_init(&ds, &m, 4, 0), TW_OK);
    ck_assert_int_eq(tw_model_grads_init(&g, &m), TW_OK);
    unsigned char *off = calloc((size_t)m.cfg.n_layer * m.cfg.block.attn.n_head, 1);
    ck_assert_ptr_nonnull(off);
    ck_assert_int_eq(tw_model_forward_backward(&loss, &g, &ds, &s, &m, tokens, targets, 1, 4, 1.0f), TW_OK);
    s.head_off = off;
    ck_assert_int_eq(tw_model_forward_backward(&loss, &g, &ds, &s, &m, tokens, targets, 1, 4, 1.0f), TW_ERR_ARG);
    s.head_off = NULL;
    free(off);
    tw_model_grads_free(&g);
    tw_model_state_free(&ds);
    tw_model_state_free(&s);
    tw_model_state_free(&cached);
    tw_model_free(&m);
}
END_TEST

Suite *suite_model_backward(void) {
    Suite *s = suite_create("model_backward");
    TCase *tg = tcase_create("torch");
    tcase_set_timeout(tg, 60);
    tcase_add_loop_test(tg, model_gradients_match_torch_float64, 0, N_CASES);
    suite_add_tcase(s, tg);
    TCase *tf = tcase_create("finite_differences");
    tcase_set_timeout(tf, 60);
    tcase_add_loop_test(tf, model_gradients_match_finite_differences, 0, N_STYLES);
    suite_add_tcase(s, tf);
    TCase *tp = tcase_create("properties");
    tcase_set_timeout(tp, 60);
    tcase_add_loop_test(tp, fresh_model_loss_is_about_ln_V, 0, N_STYLES);
    tcase_add_loop_test(tp, adamw_steps_on_one_batch_drive_its_loss_down, 0, N_STYLES);
    tcase_add_loop_test(tp, micro_batches_accumulate_to_the_big_batch_gradient, 0, N_STYLES);
    tcase_add_test(tp, bad_batches_are_refused);
    suite_add_tcase(s, tp);
    return s;
}
