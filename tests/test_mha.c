// test_mha.c: multi-head, grouped-query and multi-query attention (lib/nn/mha.c) against float64
// PyTorch goldens (data/golden/model/mha/, from tests/golden/gen_model.py), and properties that
// need no golden: GQA equals MHA with repeated key/value heads, G = H equals per-head attention,
// causality, and KV-cache prefill + one-token decode equal the cache-free forward.
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"

// Case directories; sizes and options come from each case's cfg.npy (fields as ATTN_FIELDS in
// gen_model.py: C H G D T S causal rope qk_norm bias pos0 cross has_mask) and fcfg.npy
// (theta, qk-norm eps). Together they cover G = H, group sizes 2, 4, 8, MQA, biases on and off,
// head_dim != C/H, QK-norm, both RoPE pairings, both bases, non-zero pos0, T = 1, cross-attention
// with and without a padding mask, and non-causal self-attention.
static const char *const MHA_CASES[] = {
    "mha_g1", "gqa2_adj", "gqa4_halves", "gqa8", "mqa", "qwen_headdim", "qknorm_adj_T1",
    "cross_mask", "cross_gqa", "noncausal",
};

// Weights loaded from a case directory (NULL where the case has no such tensor).
typedef struct {
    float *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo, *q_norm, *k_norm;
} owned_weights;

static tw_mha_weights load_attn(owned_weights *o, const char *dir, int C, int H, int G, int D,
                                 int bias, int qk_norm) {
    memset(o, 0, sizeof *o);
    o->wq = gc_load(dir, "attn.wq", (long)H * D * C);
    o->wk = gc_load(dir, "attn.wk", (long)G * D * C);
    o->wv = gc_load(dir, "attn.wv", (long)G * D * C);
    o->wo = gc_load(dir, "attn.wo", (long)C * H * D);
    if (bias) {
        o->bq = gc_load(dir, "attn.bq", (long)H * D);
        o->bk = gc_load(dir, "attn.bk", (long)G * D);
        o->bv = gc_load(dir, "attn.bv", (long)G * D);
        o->bo = gc_load(dir, "attn.bo", C);
    }
    if (qk_norm) {
        o->q_norm = gc_load(dir, "attn.q_norm", D);
        o->k_norm = gc_load(dir, "attn.k_norm", D);
    }
    tw_mha_weights w = { tw_weight_fp32(o->wq), o->bq, tw_weight_fp32(o->wk), o->bk,
                         tw_weight_fp32(o->wv), o->bv, tw_weight_fp32(o->wo), o->bo,
                         o->q_norm, o->k_norm };
    return w;
}

static void free_owned(owned_weights *o) {
    free(o->wq); free(o->bq); free(o->wk); free(o->bk); free(o->wv); free(o->bv);
    free(o->wo); free(o->bo); free(o->q_norm); free(o->k_norm);
}

START_TEST(mha_matches_torch_float64)
{
    char dir[96];
    snprintf(dir, sizeof dir, "model/mha/%s", MHA_CASES[_i]);
    int *c = gc_load_i32(dir, "cfg", 13);
    float *fc = gc_load(dir, "fcfg", 2);
    const int C = c[0], H = c[1], G = c[2], D = c[3], T = c[4], S = c[5], pos0 = c[10];
    const int cross = c[11];
    tw_mha_config cfg = { .d_model = C, .n_head = H, .n_kv_head = G, .head_dim = D,
                           .causal = c[6], .rope = (tw_rope_kind)c[7], .rope_theta = fc[0],
                           .qk_norm = c[8], .norm_eps = fc[1] };
    ck_assert_int_eq(tw_mha_config_check(&cfg), TW_OK);
    owned_weights o;
    tw_mha_weights w = load_attn(&o, dir, C, H, G, D, c[9], c[8]);
    float *x = gc_load(dir, "x", (long)T * C);
    float *x_kv = cross ? gc_load(dir, "x_kv", (long)S * C) : NULL;
    float *mask = c[12] ? gc_load(dir, "mask", (long)T * S) : NULL;
    float *out = tt_zeros((long)T * C);
    tw_mha_acts s;
    ck_assert_int_eq(tw_mha_acts_init(&s, &cfg, T, S), TW_OK);

    tw_mha_forward(out, &s, NULL, x, x_kv, mask, &cfg, &w, T, S, pos0);
    ck_assert_int_eq(s.T, T);
    ck_assert_int_eq(s.S, S);

    // Tolerance 1e-5 abs + 1e-4 rel: a chain of about six float32 steps (projection with C <= 32
    // terms, QK-norm, RoPE, dot products, softmax, mix, output projection) on O(1) values, each
    // adding ~1e-7 relative error that the next step can amplify by its condition number; measured
    // worst error is 7e-7 abs. Steps are checked in order so a failure names the
    // first stage that went wrong.
    float *want;
    want = gc_load(dir, "q_rot", (long)T * H * D);
    ck_assert_allclose(s.q_rot, want, (long)T * H * D, 1e-5, 1e-4);
    free(want);
    want = gc_load(dir, "k_rot", (long)S * G * D);
    ck_assert_allclose(s.k_rot, want, (long)S * G * D, 1e-5, 1e-4);
    free(want);
    want = gc_load(dir, "v", (long)S * G * D);
    ck_assert_allclose(s.v, want, (long)S * G * D, 1e-5, 1e-4);
    free(want);
    want = gc_load(dir, "weights", (long)H * T * S);
    ck_assert_allclose(s.pattern, want, (long)H * T * S, 1e-5, 1e-4);
    free(want);
    want = gc_load(dir, "z", (long)T * H * D);
    ck_assert_allclose(s.z, want, (long)T * H * D, 1e-5, 1e-4);
    free(want);
    want = gc_load(dir, "out", (long)T * C);
    ck_assert_allclose(out, want, (long)T * C, 1e-5, 1e-4);
    free(want);

    tw_mha_acts_free(&s);
    free_owned(&o);
    free(c); free(fc); free(x); free(x_kv); free(mask); free(out);
}
END_TEST

// ---- properties without goldens ----

// Random weights for an attention layer; the caller frees o.
static tw_mha_weights random_attn(owned_weights *o, const tw_mha_config *cfg, uint64_t seed) {
    const long C = cfg->d_model, HD = (long)cfg->n_head * cfg->head_dim;
    const long GD = (long)cfg->n_kv_head * cfg->head_dim;
    memset(o, 0, sizeof *o);
    o->wq = tt_rand(HD * C, -0.5f, 0.5f, seed + 1);
    o->wk = tt_rand(GD * C, -0.5f, 0.5f, seed + 2);
    o->wv = tt_rand(GD * C, -0.5f, 0.5f, seed + 3);
    o->wo = tt_rand(C * HD, -0.5f, 0.5f, seed + 4);
    o->bq = tt_rand(HD, -0.2f, 0.2f, seed + 5);
    o->bk = tt_rand(GD, -0.2f, 0.2f, seed + 6);
    o->bv = tt_rand(GD, -0.2f, 0.2f, seed + 7);
    o->bo = tt_rand(C, -0.2f, 0.2f, seed + 8);
    if (cfg->qk_norm) {
        o->q_norm = tt_rand(cfg->head_dim, 0.5f, 1.5f, seed + 9);
        o->k_norm = tt_rand(cfg->head_dim, 0.5f, 1.5f, seed + 10);
    }
    tw_mha_weights w = { tw_weight_fp32(o->wq), o->bq, tw_weight_fp32(o->wk), o->bk,
                         tw_weight_fp32(o->wv), o->bv, tw_weight_fp32(o->wo), o->bo,
                         o->q_norm, o->k_norm };
    return w;
}

// Runs self-attention without a cache: out (T, C).
static void run_mha(float *out, const tw_mha_config *cfg, const tw_mha_weights *w,
                    const float *x, int T, int pos0) {
    tw_mha_acts s;
    ck_assert_int_eq(tw_mha_acts_init(&s, cfg, T, T), TW_OK);
    tw_mha_forward(out, &s, NULL, x, NULL, NULL, cfg, w, T, T, pos0);
    tw_mha_acts_free(&s);
}

static const int GROUPS[] = { 1, 2, 4, 8 };   // G for H = 8: MQA, group sizes 4, 2 and 1 (MHA)

START_TEST(gqa_equals_mha_with_repeated_kv_heads)
{
    const int C = 12, H = 8, G = GROUPS[_i], D = 4, T = 5;
    tw_mha_config gqa = { .d_model = C, .n_head = H, .n_kv_head = G, .head_dim = D, .causal = 1,
                           .rope = TW_ROPE_HALVES, .rope_theta = 10000.0f, .qk_norm = 1,
                           .norm_eps = 1e-6f };
    owned_weights o;
    tw_mha_weights w = random_attn(&o, &gqa, 100u + (uint64_t)_i);
    // The same layer as plain MHA: kv head h / (H / G) copied to serve query head h.
    tw_mha_config mha = gqa;
    mha.n_kv_head = H;
    float *wk = tt_zeros((long)H * D * C), *wv = tt_zeros((long)H * D * C);
    float *bk = tt_zeros((long)H * D), *bv = tt_zeros((long)H * D);
    for (int h = 0; h < H; h++) {
        const int g = h / (H / G);
        memcpy(wk + (size_t)h * D * C, w.wk.f32 + (size_t)g * D * C, (size_t)D * C * sizeof(float));
        memcpy(wv + (size_t)h * D * C, w.wv.f32 + (size_t)g * D * C, (size_t)D * C * sizeof(float));
        memcpy(bk + h * D, w.bk + g * D, (size_t)D * sizeof(float));
        memcpy(bv + h * D, w.bv + g * D, (size_t)D * sizeof(float));
    }
    tw_mha_weights wm = w;
    wm.wk = tw_weight_fp32(wk); wm.wv = tw_weight_fp32(wv); wm.bk = bk; wm.bv = bv;
    float *x = tt_rand((long)T * C, -1, 1, 7), *y_gqa = tt_zeros((long)T * C);
    float *y_mha = tt_zeros((long)T * C);
    run_mha(y_gqa, &gqa, &w, x, T, 2);
    run_mha(y_mha, &mha, &wm, x, T, 2);
    // Both compute the same float operations on the same values: identical (tolerance 0).
    ck_assert_allclose(y_gqa, y_mha, (long)T * C, 0.0, 0.0);
    free_owned(&o);
    free(wk); free(wv); free(bk); free(bv); free(x); free(y_gqa); free(y_mha);
}
END_TEST

START_TEST(mha_with_g_equal_h_is_attention_per_head)
{
    // Recompute MHA by hand: per head h, project with rows h*D.. of Wq/Wk/Wv, attend, concatenate,
    // then project with Wo. No RoPE, so nothing but the head split is under test.
    const int C = 10, H = 2, D = 5, T = 4;
    tw_mha_config cfg = { .d_model = C, .n_head = H, .n_kv_head = H, .head_dim = D, .causal = 1 };
    owned_weights o;
    tw_mha_weights w = random_attn(&o, &cfg, 300);
    float *x = tt_rand((long)T * C, -1, 1, 8), *got = tt_zeros((long)T * C);
    run_mha(got, &cfg, &w, x, T, 0);

    float *qh = tt_zeros(T * D), *kh = tt_zeros(T * D), *vh = tt_zeros(T * D), *zh = tt_zeros(T * D);
    float *z = tt_zeros(T * H * D), *att = tt_zeros(T * T), *want = tt_zeros((long)T * C);
    for (int h = 0; h < H; h++) {
        tw_linear_forward(qh, x, w.wq.f32 + h * D * C, w.bq + h * D, T, C, D);
        tw_linear_forward(kh, x, w.wk.f32 + h * D * C, w.bk + h * D, T, C, D);
        tw_linear_forward(vh, x, w.wv.f32 + h * D * C, w.bv + h * D, T, C, D);
        tw_sdpa_forward(zh, NULL, att, qh, kh, vh, NULL, T, T, D, 1, 0);
        for (int t = 0; t < T; t++)
            for (int d = 0; d < D; d++) z[(t * H + h) * D + d] = zh[t * D + d];
    }
    tw_linear_forward(want, z, w.wo.f32, w.bo, T, H * D, C);
    // The same sums in the same order: identical (tolerance 0).
    ck_assert_allclose(got, want, (long)T * C, 0.0, 0.0);
    free_owned(&o);
    free(x); free(got); free(qh); free(kh); free(vh); free(zh); free(z); free(att); free(want);
}
END_TEST

START_TEST(causal_mha_output_at_t_ignores_later_inputs)
{
    const int C = 12, H = 4, G = 2, D = 4, T = 7, t = 2;
    tw_mha_config cfg = { .d_model = C, .n_head = H, .n_kv_head = G, .head_dim = D, .causal = 1,
                           .rope = TW_ROPE_ADJACENT, .rope_theta = 10000.0f };
    owned_weights o;
    tw_mha_weights w = random_attn(&o, &cfg, 400);
    float *x = tt_rand((long)T * C, -1, 1, 9), *y1 = tt_zeros((long)T * C), *y2 = tt_zeros((long)T * C);
    run_mha(y1, &cfg, &w, x, T, 0);
    for (int i = (t + 1) * C; i < T * C; i++) x[i] = 3.0f - 2.0f * x[i];
    run_mha(y2, &cfg, &w, x, T, 0);
    // Hidden keys contribute exact zeros: rows 0..t are identical (tolerance 0); later rows moved.
    ck_assert_allclose(y2, y1, (long)(t + 1) * C, 0.0, 0.0);
    ck_assert(gc_max_abs_err(y2 + (t + 1) * C, y1 + (t + 1) * C, (long)(T - t - 1) * C) > 1e-3);
    free_owned(&o);
    free(x); free(y1); free(y2);
}
END_TEST

// Prefill lengths for the cache test: 1 (decode from the first token), 3, and 7 (all at once).
static const int PREFILL[] = { 1, 3, 7 };

START_TEST(kv_cache_prefill_then_decode_equals_no_cache)
{
    const int C = 16, H = 4, G = 2, D = 6, T = 7, P = PREFILL[_i];
    tw_mha_config cfg = { .d_model = C, .n_head = H, .n_kv_head = G, .head_dim = D, .causal = 1,
                           .rope = TW_ROPE_HALVES, .rope_theta = 1e6f, .qk_norm = 1,
                           .norm_eps = 1e-6f };
    owned_weights o;
    tw_mha_weights w = random_attn(&o, &cfg, 500);
    float *x = tt_rand((long)T * C, -1, 1, 10), *want = tt_zeros((long)T * C);
    float *got = tt_zeros((long)T * C);
    run_mha(want, &cfg, &w, x, T, 0);

    tw_kv_cache cache;
    tw_mha_acts s;
    ck_assert_int_eq(tw_kv_cache_init(&cache, 16, G, D), TW_OK);
    ck_assert_int_eq(tw_mha_acts_init(&s, &cfg, T, 16), TW_OK);
    tw_mha_forward(got, &s, &cache, x, NULL, NULL, &cfg, &w, P, P, 0);      // prefill rows 0..P-1
    for (int p = P; p < T; p++) {                                           // then one at a time
        tw_mha_forward(got + p * C, &s, &cache, x + p * C, NULL, NULL, &cfg, &w, 1, 1, p);
        ck_assert_int_eq(s.S, p + 1);
    }
    // Each row is computed from the same values in the same order with or without the cache
    // (hidden keys add exact zeros), so they agree to the last bit in practice; the stated
    // tolerance, 1e-6 abs + 1e-5 rel, is the one-op float32 tolerance.
    ck_assert_allclose(got, want, (long)T * C, 1e-6, 1e-5);
    tw_mha_acts_free(&s);
    tw_kv_cache_free(&cache);
    free_owned(&o);
    free(x); free(want); free(got);
}
END_TEST

START_TEST(config_check_rejects_bad_shapes)
{
    tw_mha_config c = { .d_model = 16, .n_head = 4, .n_kv_head = 3, .head_dim = 4 };
    ck_assert_int_eq(tw_mha_config_check(&c), TW_ERR_SHAPE);          // 4 % 3 != 0
    c.n_kv_head = 2;
    ck_assert_int_eq(tw_mha_config_check(&c), TW_OK);
    c.head_dim = 5;
    c.rope = TW_ROPE_ADJACENT;
    c.rope_theta = 10000.0f;
    ck_assert_int_eq(tw_mha_config_check(&c), TW_ERR_SHAPE);          // odd D cannot be rotated
    c.rope = TW_ROPE_NONE;
    ck_assert_int_eq(tw_mha_config_check(&c), TW_OK);
    // Bytes of a cache: keys and values, S_max * G * D floats each.
    ck_assert_uint_eq(tw_kv_cache_bytes(512, 4, 8), 2u * 512 * 4 * 8 * 4);
}
END_TEST

Suite *suite_mha(void) {
    Suite *s = suite_create("mha");
    TCase *tc = tcase_create("golden");
    tcase_add_loop_test(tc, mha_matches_torch_float64, 0,
                        (int)(sizeof MHA_CASES / sizeof MHA_CASES[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("properties");
    tcase_add_loop_test(tc, gqa_equals_mha_with_repeated_kv_heads, 0,
                        (int)(sizeof GROUPS / sizeof GROUPS[0]));
    tcase_add_test(tc, mha_with_g_equal_h_is_attention_per_head);
    tcase_add_test(tc, causal_mha_output_at_t_ignores_later_inputs);
    tcase_add_loop_test(tc, kv_cache_prefill_then_decode_equals_no_cache, 0,
                        (int)(sizeof PREFILL / sizeof PREFILL[0]));
    tcase_add_test(tc, config_check_rejects_bad_shapes);
    suite_add_tcase(s, tc);
    return s;
}
