// test_block.c: one transformer block (lib/nn/block.c), pre-norm and post-norm, against float64
// PyTorch goldens (data/golden/model/block/, from tests/golden/gen_model.py); every intermediate
// of tw_block_acts is compared, in the order they are computed.
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"

// Case directories; cfg.npy holds the attention fields (C H G D T S causal rope qk_norm bias pos0
// cross has_mask) then prenorm, rms, swiglu, act, F; fcfg.npy holds theta, qk eps, norm eps.
//   prenorm_llama       RMSNorm, GQA 4/2, RoPE adjacent, SwiGLU, no biases
//   prenorm_gpt2        LayerNorm with bias, MHA, tanh GELU, F = 65, biases
//   postnorm_2017       LayerNorm post-norm, ReLU, biases
//   prenorm_qwen3_pos3  RMSNorm, QK-norm, RoPE halves base 1e6, GQA, head_dim 6 (H*D != C), pos0 3
static const char *const BLOCK_CASES[] = {
    "prenorm_llama", "prenorm_gpt2", "postnorm_2017", "prenorm_qwen3_pos3",
};

#define N_TENSORS 18
typedef struct { float *p[N_TENSORS]; int n; } owned;

static float *keep(owned *o, float *p) { o->p[o->n++] = p; return p; }
static void free_all(owned *o) { for (int i = 0; i < o->n; i++) free(o->p[i]); o->n = 0; }

START_TEST(block_matches_torch_float64)
{
    char dir[96];
    snprintf(dir, sizeof dir, "model/block/%s", BLOCK_CASES[_i]);
    int *c = gc_load_i32(dir, "cfg", 18);
    float *fc = gc_load(dir, "fcfg", 3);
    const int C = c[0], H = c[1], G = c[2], D = c[3], T = c[4], bias = c[9], pos0 = c[10];
    const int rms = c[14], swiglu = c[15], F = c[17];
    tw_block_config cfg = {
        .attn = { .d_model = C, .n_head = H, .n_kv_head = G, .head_dim = D, .causal = c[6],
                  .rope = (tw_rope_kind)c[7], .rope_theta = fc[0], .qk_norm = c[8],
                  .norm_eps = fc[1] },
        .prenorm = c[13], .norm = rms ? TW_NORM_RMS : TW_NORM_LAYER, .norm_eps = fc[2],
        .ffn = swiglu ? TW_FFN_SWIGLU : TW_FFN_CLASSIC, .act = (tw_act)c[16], .ffn_hidden = F,
    };
    ck_assert_int_eq(tw_block_config_check(&cfg), TW_OK);
    owned o = { .n = 0 };
    tw_block_weights w;
    memset(&w, 0, sizeof w);
    const int beta = bias && !rms;
    w.norm1_w = keep(&o, gc_load(dir, "norm1.w", C));
    w.norm2_w = keep(&o, gc_load(dir, "norm2.w", C));
    if (beta) {
        w.norm1_b = keep(&o, gc_load(dir, "norm1.b", C));
        w.norm2_b = keep(&o, gc_load(dir, "norm2.b", C));
    }
    w.attn.wq = tw_weight_fp32(keep(&o, gc_load(dir, "attn.wq", (long)H * D * C)));
    w.attn.wk = tw_weight_fp32(keep(&o, gc_load(dir, "attn.wk", (long)G * D * C)));
    w.attn.wv = tw_weight_fp32(keep(&o, gc_load(dir, "attn.wv", (long)G * D * C)));
    w.attn.wo = tw_weight_fp32(keep(&o, gc_load(dir, "attn.wo", (long)C * H * D)));
    if (bias) {
        w.attn.bq = keep(&o, gc_load(dir, "attn.bq", (long)H * D));
        w.attn.bk = keep(&o, gc_load(dir, "attn.bk", (long)G * D));
        w.attn.bv = keep(&o, gc_load(dir, "attn.bv", (long)G * D));
        w.attn.bo = keep(&o, gc_load(dir, "attn.bo", C));
    }
    if (cfg.attn.qk_norm) {
        w.attn.q_norm = keep(&o, gc_load(dir, "attn.q_norm", D));
        w.attn.k_norm = keep(&o, gc_load(dir, "attn.k_norm", D));
    }
    if (swiglu) {
        w.ffn_gate = tw_weight_fp32(keep(&o, gc_load(dir, "ffn.gate", (long)F * C)));
        w.ffn_up   = tw_weight_fp32(keep(&o, gc_load(dir, "ffn.up", (long)F * C)));
        w.ffn_down = tw_weight_fp32(keep(&o, gc_load(dir, "ffn.down", (long)C * F)));
    } else {
        w.ffn_w1 = tw_weight_fp32(keep(&o, gc_load(dir, "ffn.w1", (long)F * C)));
        w.ffn_w2 = tw_weight_fp32(keep(&o, gc_load(dir, "ffn.w2", (long)C * F)));
        if (bias) {
            w.ffn_b1 = keep(&o, gc_load(dir, "ffn.b1", F));
            w.ffn_b2 = keep(&o, gc_load(dir, "ffn.b2", C));
        }
    }
    const long TC = (long)T * C, TF = (long)T * F;
    float *x = gc_load(dir, "x", TC), *out = tt_zeros(TC);
    tw_block_acts s;
    ck_assert_int_eq(tw_block_acts_init(&s, &cfg, T, T), TW_OK);
    tw_block_forward(out, &s, NULL, x, &cfg, &w, T, pos0);

    // Tolerance 2e-5 abs + 1e-4 rel: a block chains about ten float32 steps (norm, four
    // projections, softmax, mix, two FFN products, activation, norm, residual adds) on values of
    // O(1..5); each adds ~1e-7 relative error, and norms can amplify an input error by 1/std of
    // their row. Measured worst errors are 1.5e-6 abs. Intermediates are checked in the order
    // the block computes them, so a failure names the first stage that diverged.
    struct { const char *name; const float *got; long n; } steps[] = {
        // (the golden files keep their first names: norm1 = attn_norm, norm2 = ffn_norm,
        // attn_weights = pattern; out is also left in s.resid_post)
        { "attn_weights", s.attn.pattern, (long)H * T * T },
        { "attn_out", s.attn_out, TC }, { "norm1", s.attn_norm, TC }, { "resid_mid", s.resid_mid, TC },
        { "norm2", s.ffn_norm, TC },
        { swiglu ? "ffn_gate" : "ffn_hidden", swiglu ? s.ffn_gate : s.ffn_hidden, TF },
        { swiglu ? "ffn_up" : NULL, s.ffn_up, TF }, { swiglu ? "ffn_act" : NULL, s.ffn_act, TF },
        { "ffn_out", s.ffn_out, TC }, { "out", out, TC }, { "out", s.resid_post, TC },
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (!steps[i].name) continue;
        float *want = gc_load(dir, steps[i].name, steps[i].n);
        long bad = tw_worst_mismatch(steps[i].got, want, steps[i].n, 2e-5, 1e-4);
        ck_assert_msg(bad < 0, "%s: %s differs at [%ld]: got %.9g want %.9g (atol 2e-5, rtol 1e-4)",
                      dir, steps[i].name, bad, (double)steps[i].got[bad < 0 ? 0 : bad],
                      (double)want[bad < 0 ? 0 : bad]);
        free(want);
    }
    // The block's input is kept as it entered.
    ck_assert_allclose(s.attn_in, x, TC, 0.0, 0.0);

    // out may alias x: running in place gives the same result (tolerance 0, same arithmetic).
    tw_block_forward(x, &s, NULL, x, &cfg, &w, T, pos0);
    ck_assert_allclose(x, out, TC, 0.0, 0.0);

    tw_block_acts_free(&s);
    free_all(&o);
    free(c); free(fc); free(x); free(out);
}
END_TEST

START_TEST(block_config_check_rejects_bad_values)
{
    tw_block_config cfg = {
        .attn = { .d_model = 8, .n_head = 2, .n_kv_head = 2, .head_dim = 4, .causal = 1 },
        .prenorm = 1, .norm = TW_NORM_RMS, .norm_eps = 1e-5f, .ffn = TW_FFN_SWIGLU,
        .ffn_hidden = 16,
    };
    ck_assert_int_eq(tw_block_config_check(&cfg), TW_OK);
    cfg.ffn_hidden = 0;
    ck_assert_int_eq(tw_block_config_check(&cfg), TW_ERR_SHAPE);
    cfg.ffn_hidden = 16;
    cfg.attn.n_kv_head = 0;
    ck_assert_int_eq(tw_block_config_check(&cfg), TW_ERR_SHAPE);
    tw_block_acts s;
    ck_assert_int_eq(tw_block_acts_init(&s, &cfg, 4, 4), TW_ERR_SHAPE);
    tw_block_acts_free(&s);   // safe on the zeroed struct a failed init leaves
}
END_TEST

Suite *suite_block(void) {
    Suite *s = suite_create("block");
    TCase *tc = tcase_create("block");
    tcase_add_loop_test(tc, block_matches_torch_float64, 0,
                        (int)(sizeof BLOCK_CASES / sizeof BLOCK_CASES[0]));
    tcase_add_test(tc, block_config_check_rejects_bad_values);
    suite_add_tcase(s, tc);
    return s;
}
