// test_model.c: the four tiny models (lib/nn/model.c). The whole forward of each style against
// float64 PyTorch (data/golden/model/models/<style>/, from tests/golden/gen_model.py, which loads
// the same tensors by their tw_param names), and properties for every style: logits of a prefix
// do not change when tokens are appended, and KV-cache prefill + one-token decode equals the
// cache-free forward.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"

static const char *const STYLES[] = { "2017", "gpt2", "llama", "qwen3" };
#define N_STYLES ((int)(sizeof STYLES / sizeof STYLES[0]))
#define GOLDEN_T 7   // MODEL_T in gen_model.py

// Builds the preset model of a style with every parameter loaded from its golden directory.
static void load_golden_model(tw_model *m, const char *dir, const char *style) {
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, style), TW_OK);
    ck_assert_int_eq(tw_model_init(m, &c), TW_OK);
    // Both sides must agree on the parameter list: same count here, and every C name must exist
    // in the golden directory with the C element count (gc_load fails the test otherwise).
    int *n = gc_load_i32(dir, "n_params", 1);
    ck_assert_int_eq(m->n_params, n[0]);
    free(n);
    for (int i = 0; i < m->n_params; i++) {
        tw_param *p = &m->params[i];
        ck_assert_ptr_eq(tw_model_param(m, p->name), p);
        float *data = gc_load(dir, p->name, p->count);
        memcpy(p->data, data, (size_t)p->count * sizeof(float));
        free(data);
    }
}

START_TEST(model_forward_matches_torch_float64)
{
    const char *style = STYLES[_i];
    char dir[96];
    snprintf(dir, sizeof dir, "model/models/%s", style);
    tw_model m;
    load_golden_model(&m, dir, style);
    const int T = GOLDEN_T, C = m.cfg.block.attn.d_model, V = m.cfg.vocab, H = m.cfg.block.attn.n_head;
    int *tokens = gc_load_i32(dir, "tokens", T);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);

    // Tolerance 1e-4 abs + 1e-4 rel for the whole model: two blocks (each ~10 float32 steps,
    // measured worst 1.5e-6 abs in test_block.c) plus embedding, final norm and a 24-term head,
    // on activations that grow to O(10) along the residual stream; float32 roundings of such
    // values are ~1e-6, and two norms may amplify them by 1/std of a row. Measured worst error:
    // 1.4e-5 abs on the 2017 logits (values up to 18), 1e-6 .. 3e-6 elsewhere, so 1e-4 leaves a
    // margin of 7x or more and is still far below any real bug, which moves logits by O(0.1). Intermediates come first so a failure
    // names the earliest stage that diverged.
    struct { const char *name; const float *got; long n; } steps[] = {
        { "x", s.embed, (long)T * C },
        { "layer0_q_rot", s.layers[0].attn.q_rot, (long)T * H * m.cfg.block.attn.head_dim },
        { "layer0_attn_weights", s.layers[0].attn.pattern, (long)H * T * T },
        { "layer0_out", s.layers[1].attn_in, (long)T * C },
        { "layer1_out", s.layers[1].resid_post, (long)T * C },
        { "final", s.final_norm, (long)T * C },
        { "logits", s.logits, (long)T * V },
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        float *want = gc_load(dir, steps[i].name, steps[i].n);
        long bad = tw_worst_mismatch(steps[i].got, want, steps[i].n, 1e-4, 1e-4);
        ck_assert_msg(bad < 0, "%s: %s differs at [%ld]: got %.9g want %.9g (atol 1e-4, rtol 1e-4)",
                      style, steps[i].name, bad, (double)steps[i].got[bad < 0 ? 0 : bad],
                      (double)want[bad < 0 ? 0 : bad]);
        free(want);
    }
    tw_model_state_free(&s);
    tw_model_free(&m);
    free(tokens);
}
END_TEST

// ---- properties on random models ----

// A model of the style with Linear weights N(0, 1/C_in) and embeddings N(0, 0.25)
// (tt_randomize_strong).
static void make_random_model(tw_model *m, const char *style, uint64_t seed) {
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, style), TW_OK);
    ck_assert_int_eq(tw_model_init(m, &c), TW_OK);
    tt_randomize_strong(m, seed, 0.5f);
}

static void random_tokens(int *tokens, int T, int V, uint64_t seed) {
    tw_rng r;
    tw_rng_init(&r, seed);
    for (int t = 0; t < T; t++) tokens[t] = (int)(tw_rng_next(&r) % (uint64_t)V);
}

START_TEST(prefix_logits_do_not_change_when_tokens_are_appended)
{
    const char *style = STYLES[_i];
    tw_model m;
    make_random_model(&m, style, 40u + (uint64_t)_i);
    const int T = 9, P = 4, V = m.cfg.vocab;
    int tokens[9];
    random_tokens(tokens, T, V, 7);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, P, 0), TW_OK);
    float *prefix = tt_zeros((long)P * V);
    memcpy(prefix, s.logits, (size_t)P * V * sizeof(float));
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    // Rows 0..P-1 see the same tokens and, under the causal mask, nothing after them; hidden keys
    // add exact zeros, so the logits agree to the last bit in practice. Stated tolerance: 1e-6 abs
    // + 1e-5 rel (one-op float32), far below the O(0.1) change any leak from the future makes.
    ck_assert_allclose(s.logits, prefix, (long)P * V, 1e-6, 1e-5);
    // The appended tokens do change the later logits (they are not ignored altogether).
    float *changed = tt_zeros((long)V);
    tokens[P] = (tokens[P] + 1) % V;
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, P + 1, 0), TW_OK);
    memcpy(changed, s.logits + (size_t)P * V, (size_t)V * sizeof(float));
    tokens[P] = (tokens[P] + 1) % V;
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, P + 1, 0), TW_OK);
    ck_assert(gc_max_abs_err(changed, s.logits + (size_t)P * V, V) > 1e-3);
    tw_model_state_free(&s);
    tw_model_free(&m);
    free(prefix); free(changed);
}
END_TEST

START_TEST(kv_cache_decode_equals_full_forward)
{
    const char *style = STYLES[_i];
    tw_model m;
    make_random_model(&m, style, 60u + (uint64_t)_i);
    const int T = 11, P = 4, V = m.cfg.vocab, C = m.cfg.block.attn.d_model;
    int tokens[11];
    random_tokens(tokens, T, V, 8);

    tw_model_state full;
    ck_assert_int_eq(tw_model_state_init(&full, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&full, &m, tokens, T, 0), TW_OK);

    tw_model_state dec;
    ck_assert_int_eq(tw_model_state_init(&dec, &m, P, m.cfg.max_seq), TW_OK);
    float *logits = tt_zeros((long)T * V), *resid = tt_zeros((long)T * C);
    ck_assert_int_eq(tw_model_forward(&dec, &m, tokens, P, 0), TW_OK);          // prefill 0..P-1
    memcpy(logits, dec.logits, (size_t)P * V * sizeof(float));
    memcpy(resid, dec.layers[1].resid_post, (size_t)P * C * sizeof(float));
    for (int p = P; p < T; p++) {                                               // decode P..T-1
        ck_assert_int_eq(tw_model_forward(&dec, &m, tokens + p, 1, p), TW_OK);
        memcpy(logits + (size_t)p * V, dec.logits, (size_t)V * sizeof(float));
        memcpy(resid + (size_t)p * C, dec.layers[1].resid_post, (size_t)C * sizeof(float));
        // The last decode step's attention map over all p + 1 positions equals row p of the
        // full forward's map, head by head.
        const tw_mha_acts *a = &dec.layers[1].attn, *b = &full.layers[1].attn;
        ck_assert_int_eq(a->S, p + 1);
        for (int h = 0; h < a->H; h++)
            ck_assert_allclose(a->pattern + (size_t)h * (p + 1),
                               b->pattern + ((size_t)h * T + p) * T, p + 1, 1e-6, 1e-5);
    }
    // The same arithmetic in the same order on the same values (RoPE at the same positions,
    // cached keys identical to recomputed ones): agreement to the last bit in practice. Stated
    // tolerance: 1e-6 abs + 1e-5 rel (one-op float32) on the residual stream and the logits.
    ck_assert_allclose(resid, full.layers[1].resid_post, (long)T * C, 1e-6, 1e-5);
    ck_assert_allclose(logits, full.logits, (long)T * V, 1e-6, 1e-5);
    tw_model_state_free(&full);
    tw_model_state_free(&dec);
    tw_model_free(&m);
    free(logits); free(resid);
}
END_TEST

// ---- configuration, parameters and errors ----

START_TEST(presets_have_the_documented_shapes)
{
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "gpt3"), TW_ERR_ARG);
    ck_assert_int_eq(tw_model_config_preset(&c, NULL), TW_ERR_ARG);
    // gpt2: V*C + max_seq*C + L*(2 LayerNorms + qkv + proj + FFN, all with biases) + final LN.
    ck_assert_int_eq(tw_model_config_preset(&c, "gpt2"), TW_OK);
    tw_model m;
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    const long C = 24, V = 65, S = 16, F = 96;
    long per_layer = 2 * 2 * C + (3 * C * C + 3 * C) + (C * C + C) + (F * C + F) + (C * F + C);
    ck_assert_int_eq(tw_model_count_params(&m), V * C + S * C + 2 * per_layer + 2 * C);
    ck_assert_ptr_eq(m.head.f32, m.tok_emb);   // tied
    ck_assert_ptr_null(tw_model_param(&m, "head"));
    ck_assert_ptr_nonnull(tw_model_param(&m, "layers.1.attn.bo"));
    tw_model_free(&m);
    // llama: untied head, RMSNorm without beta, GQA 4/2 with D 6, SwiGLU 64, no biases.
    ck_assert_int_eq(tw_model_config_preset(&c, "llama"), TW_OK);
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    const long HD = 4 * 6, GD = 2 * 6, FL = 64;
    per_layer = 2 * C + (HD * C + 2 * GD * C + C * HD) + 3 * FL * C;
    ck_assert_int_eq(tw_model_count_params(&m), 2 * V * C + 2 * per_layer + C);
    ck_assert_ptr_nonnull(tw_model_param(&m, "head"));
    ck_assert_ptr_null(tw_model_param(&m, "layers.0.attn.bq"));
    ck_assert_ptr_null(tw_model_param(&m, "layers.0.norm1.b"));
    tw_model_free(&m);
    // qwen3: explicit head_dim (H*D = 32 != C = 24) and QK-norm gains of size D.
    ck_assert_int_eq(tw_model_config_preset(&c, "qwen3"), TW_OK);
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    tw_param *wq = tw_model_param(&m, "layers.0.attn.wq"), *qn = tw_model_param(&m, "layers.1.attn.q_norm");
    ck_assert_ptr_nonnull(wq);
    ck_assert_ptr_nonnull(qn);
    ck_assert_int_eq(wq->shape[0], 32);
    ck_assert_int_eq(wq->shape[1], 24);
    ck_assert_int_eq(qn->count, 8);
    tw_model_free(&m);
}
END_TEST

START_TEST(randomize_is_deterministic_and_follows_the_kinds)
{
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "gpt2"), TW_OK);
    tw_model a, b;
    ck_assert_int_eq(tw_model_init(&a, &c), TW_OK);
    ck_assert_int_eq(tw_model_init(&b, &c), TW_OK);
    tw_model_randomize(&a, 5);
    tw_model_randomize(&b, 5);
    ck_assert_allclose(a.memory, b.memory, a.n_floats, 0.0, 0.0);
    // Gains scatter around 1 (std 0.1), weights around 0 (std 0.02): check the means.
    tw_param *g = tw_model_param(&a, "layers.0.norm1.w"), *w = tw_model_param(&a, "layers.0.ffn.w1");
    double sg = 0, sw = 0;
    for (long i = 0; i < g->count; i++) sg += g->data[i];
    for (long i = 0; i < w->count; i++) sw += w->data[i];
    ck_assert_double_eq_tol(sg / g->count, 1.0, 0.1);   // 5 sigma of the mean of 24 draws: 0.1
    ck_assert_double_eq_tol(sw / w->count, 0.0, 0.003); // 5 sigma of the mean of 2304: 0.002
    tw_model_free(&a);
    tw_model_free(&b);
}
END_TEST

START_TEST(forward_rejects_bad_tokens_and_sizes)
{
    tw_model m;
    make_random_model(&m, "llama", 1);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, 4, 0), TW_OK);
    int ok[4] = { 1, 2, 3, 64 }, bad[4] = { 1, 65, 3, 4 }, neg[1] = { -1 };
    ck_assert_int_eq(tw_model_forward(&s, &m, ok, 4, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, &m, bad, 4, 0), TW_ERR_SHAPE);
    ck_assert_int_eq(tw_model_forward(&s, &m, neg, 1, 0), TW_ERR_SHAPE);
    ck_assert_int_eq(tw_model_forward(&s, &m, ok, 5, 0), TW_ERR_ARG);      // T > T_max
    ck_assert_int_eq(tw_model_forward(&s, &m, ok, 1, 2), TW_ERR_ARG);      // pos0 without a cache
    tw_model_state_free(&s);
    ck_assert_int_eq(tw_model_state_init(&s, &m, 4, m.cfg.max_seq), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s, &m, ok, 1, m.cfg.max_seq), TW_ERR_ARG);     // past the cache
    tw_model_state_free(&s);
    tw_model_free(&m);
}
END_TEST

// The activations of a forward pass live in one allocation laid out by the tables: every tensor
// the model has points into s.memory, the tensors do not overlap, and together they fill it
// exactly (tw_model_state_floats). This is the layout a gradient state will repeat.
typedef struct { const float *p; long n; } span;
static int by_pointer(const void *a, const void *b) {
    const float *x = ((const span *)a)->p, *y = ((const span *)b)->p;
    return x < y ? -1 : x > y;
}

// Sizes whose parameter count overflows a long (d_model 2e9: 2e9 x 2e9 floats per matrix) or
// passes TW_MODEL_MAX_FLOATS are refused by the counting walk before anything is allocated; the
// count of a valid preset equals what tw_model_init allocates.
START_TEST(model_init_refuses_sizes_whose_count_overflows)
{
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "gpt2"), TW_OK);
    tw_model m;
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    ck_assert_int_eq(tw_model_config_floats(&c), m.n_floats);
    tw_model_free(&m);
    const int dims[][3] = { { 2000000000, 1, 2 }, { 1 << 20, 1024, 1 << 20 }, { 65536, 1024, 65536 } };
    for (int i = 0; i < 3; i++) {
        tw_model_config big = c;
        big.block.attn.d_model = dims[i][0];
        big.n_layer = dims[i][1];
        big.block.ffn_hidden = dims[i][2];
        big.block.attn.n_head = big.block.attn.n_kv_head = 1;
        big.block.attn.head_dim = dims[i][0];
        ck_assert_msg(tw_model_config_floats(&big) == -1, "case %d: %ld", i, tw_model_config_floats(&big));
        ck_assert_int_eq(tw_model_init(&m, &big), TW_ERR_SHAPE);
        ck_assert_ptr_null(m.memory);
    }
}
END_TEST

START_TEST(activations_are_one_allocation_laid_out_by_the_tables)
{
    const char *style = STYLES[_i];
    tw_model m;
    make_random_model(&m, style, 80u + (uint64_t)_i);
    const tw_model_config *c = &m.cfg;
    const int T = 5, S = c->max_seq;
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, S), TW_OK);
    ck_assert_uint_eq(s.n_floats, tw_model_state_floats(c, T, S));
    span *sp = malloc(sizeof(span) * (size_t)(tw_model_n_tensors + c->n_layer * tw_block_n_tensors));
    int n = 0;
    const tw_dims cap = tw_model_dims(c, T, S);
    for (int i = 0; i < tw_model_n_tensors; i++) {
        const tw_tensor_info *t = &tw_model_tensors[i];
        const float *p = tw_model_tensor(&s, t);
        ck_assert_msg((p != NULL) == tw_model_has(c, t), "%s: %s", style, t->name);
        if (p) sp[n++] = (span){ p, tw_dims_count(&cap, t->shape) };
    }
    for (int l = 0; l < c->n_layer; l++)
        for (int i = 0; i < tw_block_n_tensors; i++) {
            const tw_tensor_info *t = &tw_block_tensors[i];
            const float *p = tw_block_tensor(&s.layers[l], t);
            ck_assert_msg((p != NULL) == tw_block_has(&c->block, t->has), "%s: L%d.%s", style, l, t->name);
            if (p) sp[n++] = (span){ p, tw_dims_count(&cap, t->shape) };
        }
    qsort(sp, (size_t)n, sizeof *sp, by_pointer);
    ck_assert_ptr_eq(sp[0].p, s.memory);
    for (int i = 0; i + 1 < n; i++) ck_assert_ptr_eq(sp[i].p + sp[i].n, sp[i + 1].p);   // no gap, no overlap
    ck_assert_ptr_eq(sp[n - 1].p + sp[n - 1].n, s.memory + s.n_floats);
    free(sp);
    tw_model_state_free(&s);
    tw_model_free(&m);
}
END_TEST

// ---- ablation: switching heads off (tw_model_state.head_off, lesson 18) ----

// Exact equality of n floats (== , so -0 equals +0), naming the first difference.
static void assert_same_floats(const char *what, const float *got, const float *want, long n) {
    for (long i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "%s differs at [%ld]: got %.9g want %.9g", what, i,
                      (double)got[i], (double)want[i]);
}

START_TEST(ablating_no_head_is_bit_identical)
{
    const char *style = STYLES[_i];
    tw_model m;
    make_random_model(&m, style, 90u + (uint64_t)_i);
    const int T = 9, V = m.cfg.vocab, C = m.cfg.block.attn.d_model, L = m.cfg.n_layer;
    const int H = m.cfg.block.attn.n_head;
    int tokens[9];
    random_tokens(tokens, T, V, 11);
    tw_model_state a, b;
    ck_assert_int_eq(tw_model_state_init(&a, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&b, &m, T, 0), TW_OK);
    unsigned char *none = calloc((size_t)L * H, 1);   // every head on
    ck_assert_ptr_nonnull(none);
    b.head_off = none;
    ck_assert_int_eq(tw_model_forward(&a, &m, tokens, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&b, &m, tokens, T, 0), TW_OK);
    // Tolerance 0: an all-zero mask must not touch a single value (the same code runs).
    for (int l = 0; l < L; l++)
        assert_same_floats("resid_post", b.layers[l].resid_post, a.layers[l].resid_post, (long)T * C);
    assert_same_floats("logits", b.logits, a.logits, (long)T * V);
    free(none);
    tw_model_state_free(&a);
    tw_model_state_free(&b);
    tw_model_free(&m);
}
END_TEST

// Patching (tw_model_state.head_patch): a switched-off head takes its output from the caller.
// Every head patched with the z it computes itself is the plain forward, bit for bit; one head
// patched with zeros is its ablation, bit for bit (tolerance 0: the same values reach the same
// sums in the same order); patched with another text's z it changes the output (the check can
// fail).
START_TEST(patching_a_head_with_its_own_output_changes_nothing)
{
    const char *style = STYLES[_i];
    tw_model m;
    make_random_model(&m, style, 130u + (uint64_t)_i);
    const int T = 7, V = m.cfg.vocab, L = m.cfg.n_layer;
    const int H = m.cfg.block.attn.n_head, D = m.cfg.block.attn.head_dim;
    int tokens[7], other[7];
    random_tokens(tokens, T, V, 17);
    random_tokens(other, T, V, 19);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    const long per_layer = (long)T * H * D;
    float *own = tt_zeros(L * per_layer), *zeros = tt_zeros(L * per_layer), *base = tt_zeros((long)T * V);
    float *ablated = tt_zeros((long)T * V), *theirs = tt_zeros(L * per_layer);
    unsigned char *all = calloc((size_t)L * H, 1), *one = calloc((size_t)L * H, 1);
    ck_assert_ptr_nonnull(all);
    ck_assert_ptr_nonnull(one);
    ck_assert_int_eq(tw_model_forward(&s, &m, other, T, 0), TW_OK);
    for (int l = 0; l < L; l++) memcpy(theirs + l * per_layer, s.layers[l].attn.z, (size_t)per_layer * sizeof(float));
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    memcpy(base, s.logits, (size_t)T * V * sizeof(float));
    for (int l = 0; l < L; l++) memcpy(own + l * per_layer, s.layers[l].attn.z, (size_t)per_layer * sizeof(float));
    memset(all, 1, (size_t)L * H);
    s.head_off = all;
    s.head_patch = own;
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    assert_same_floats("every head patched with its own output", s.logits, base, (long)T * V);
    const int l = L - 1, h = H - 1;
    one[l * H + h] = 1;
    s.head_off = one;
    s.head_patch = NULL;
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    memcpy(ablated, s.logits, (size_t)T * V * sizeof(float));
    s.head_patch = zeros;
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    assert_same_floats("a head patched with zeros vs switched off", s.logits, ablated, (long)T * V);
    s.head_patch = theirs;
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    int changed = 0;
    for (long i = 0; i < (long)T * V; i++) changed |= s.logits[i] != base[i];
    ck_assert_msg(changed, "%s: patching layer %d head %d with another text's output changed nothing", style, l, h);
    s.head_off = NULL;
    s.head_patch = NULL;
    free(own); free(zeros); free(base); free(ablated); free(theirs); free(all); free(one);
    tw_model_state_free(&s);
    tw_model_free(&m);
}
END_TEST

// Switching head h of layer l off equals zeroing the D columns h*D .. h*D+D-1 of that layer's Wo
// (the rows of Wo's input that the head writes), for every layer and head of the style, with and
// without a KV cache (one-token decode takes the fused attention kernel when one is selected).
START_TEST(ablating_a_head_equals_zeroing_its_columns_of_wo)
{
    const char *style = STYLES[_i];
    tw_model m;
    make_random_model(&m, style, 110u + (uint64_t)_i);
    const int T = 8, V = m.cfg.vocab, L = m.cfg.n_layer;
    const int H = m.cfg.block.attn.n_head, D = m.cfg.block.attn.head_dim;
    const int C = m.cfg.block.attn.d_model;
    int tokens[8];
    random_tokens(tokens, T, V, 13);
    tw_model_state s, dec;
    ck_assert_int_eq(tw_model_state_init(&s, &m, T, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&dec, &m, T, T), TW_OK);
    unsigned char *off = calloc((size_t)L * H, 1);
    float *base = tt_zeros((long)T * V), *ablated = tt_zeros((long)T * V);
    float *saved = tt_zeros((long)C * D);
    ck_assert_ptr_nonnull(off);
    ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
    memcpy(base, s.logits, (size_t)T * V * sizeof(float));
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            // a: the option
            off[l * H + h] = 1;
            s.head_off = off;
            ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
            memcpy(ablated, s.logits, (size_t)T * V * sizeof(float));
            // the same through a KV cache: prefill 3 tokens, then one at a time
            dec.head_off = off;
            ck_assert_int_eq(tw_model_forward(&dec, &m, tokens, 3, 0), TW_OK);
            for (int p = 3; p < T; p++)
                ck_assert_int_eq(tw_model_forward(&dec, &m, tokens + p, 1, p), TW_OK);
            // Decode reorders nothing in Wo; the attention before it agrees to one-op rounding
            // (see kv_cache_decode_equals_full_forward): 1e-6 abs + 1e-5 rel on the last logits.
            ck_assert_allclose(dec.logits, ablated + (size_t)(T - 1) * V, V, 1e-6, 1e-5);
            off[l * H + h] = 0;
            s.head_off = NULL;
            // b: the weights. wo is (C, H*D): column j of row c is wo[c*H*D + j].
            char name[48];
            snprintf(name, sizeof name, "layers.%d.attn.wo", l);
            tw_param *wo_param = tw_model_param(&m, name);
            ck_assert_ptr_nonnull(wo_param);
            float *wo = wo_param->data;
            for (int c = 0; c < C; c++) {
                memcpy(saved + (size_t)c * D, wo + (size_t)c * H * D + (size_t)h * D, (size_t)D * sizeof(float));
                memset(wo + (size_t)c * H * D + (size_t)h * D, 0, (size_t)D * sizeof(float));
            }
            ck_assert_int_eq(tw_model_forward(&s, &m, tokens, T, 0), TW_OK);
            for (int c = 0; c < C; c++)
                memcpy(wo + (size_t)c * H * D + (size_t)h * D, saved + (size_t)c * D, (size_t)D * sizeof(float));
            // Tolerance 0: z*0 and 0*w are both zero, added to the same sums in the same order.
            assert_same_floats("ablated logits vs zeroed Wo columns", ablated, s.logits, (long)T * V);
            // and switching a head off changes the output (the check can fail)
            int changed = 0;
            for (long i = 0; i < (long)T * V; i++) changed |= ablated[i] != base[i];
            ck_assert_msg(changed, "%s: switching off layer %d head %d changed no logit", style, l, h);
        }
    free(off); free(base); free(ablated); free(saved);
    tw_model_state_free(&s);
    tw_model_state_free(&dec);
    tw_model_free(&m);
}
END_TEST

Suite *suite_model(void) {
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("golden");
    tcase_add_loop_test(tc, model_forward_matches_torch_float64, 0, N_STYLES);
    suite_add_tcase(s, tc);
    tc = tcase_create("properties");
    tcase_add_loop_test(tc, prefix_logits_do_not_change_when_tokens_are_appended, 0, N_STYLES);
    tcase_add_loop_test(tc, kv_cache_decode_equals_full_forward, 0, N_STYLES);
    tcase_add_test(tc, presets_have_the_documented_shapes);
    tcase_add_test(tc, randomize_is_deterministic_and_follows_the_kinds);
    tcase_add_test(tc, forward_rejects_bad_tokens_and_sizes);
    tcase_add_test(tc, model_init_refuses_sizes_whose_count_overflows);
    tcase_add_loop_test(tc, activations_are_one_allocation_laid_out_by_the_tables, 0, N_STYLES);
    tcase_add_loop_test(tc, ablating_no_head_is_bit_identical, 0, N_STYLES);
    tcase_add_loop_test(tc, ablating_a_head_equals_zeroing_its_columns_of_wo, 0, N_STYLES);
    tcase_add_loop_test(tc, patching_a_head_with_its_own_output_changes_nothing, 0, N_STYLES);
    suite_add_tcase(s, tc);
    return s;
}
