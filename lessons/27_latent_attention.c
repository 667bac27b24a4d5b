// Lesson 27: multi-head latent attention: a KV cache of one small latent per token.
//
// Teaches: how much a decoder caches per token for Llama-2-7B (MHA), Qwen3-8B (GQA) and
// DeepSeek-V3 (MLA), read from their config.json files; that MLA's keys and values are
// up-projections of one normed latent, so caching the latent (and one shared RoPE key) is
// enough; the absorbed decoding form, which folds the key up-projection into the query and the
// value up-projection into the output and never expands a key or value, computed token by token
// and checked against the expanded training form; and what the decoupled RoPE part is for: a
// rotation that depends on the key's position cannot be folded into one fixed matrix.
// Calls: tw_hf_config_from_json, tw_hf_kv_bytes, tw_hf_moe_from_json, tw_hf_moe_kv_per_token,
// tw_mla_forward, tw_mla_decode_absorbed, tw_mla_cache_per_token, tw_rope_adjacent_forward.
// Build & run: make lesson27 && ./lesson27 [--seed N] [-T N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/27_kv_per_token.gp    (reads out/lesson27/kv_per_token.dat)
// Needs: data/configs/Llama-2-7b.json data/configs/Qwen3-8B.json data/configs/DeepSeek-V3.json
// Writes: kv_per_token.dat x.npy y_expanded.npy y_absorbed.npy latent.npy rope_key.npy
// Writes: fold_error.dat
// Pictures: kv_per_token.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    27, "Multi-head latent attention: caching a latent instead of keys and values",
    "Compares the KV cache per token of Llama-2-7B, Qwen3-8B and DeepSeek-V3 from their configs, "
    "runs a small multi-head latent attention layer (DeepSeek-V2/V3) in its training form and, "
    "token by token, in the absorbed decoding form over a cache that holds only the latent and "
    "the shared RoPE key, checks that both give the same outputs, and shows why the RoPE part "
    "of each key is kept apart from the latent."
};

// ---- 1. the KV cache per token of three real models ----

static tw_json *read_config(const char *path) {
    char err[512];
    tw_json *root;
    if (tw_json_read_file(&root, path, err, sizeof err) != TW_OK) lesson_die("%s", err);
    return root;
}

// Bytes per token in bf16 of a dense config (K and V of every kv head in every layer).
static int64_t dense_kv_bytes(const char *path) {
    char err[512];
    tw_json *root = read_config(path);
    tw_hf_config c;
    tw_status st = tw_hf_config_from_json(&c, root, err, sizeof err);
    tw_json_free(root);
    if (st != TW_OK) lesson_die("%s: %s", path, err);
    return tw_hf_kv_bytes(&c, 1, 2);
}

static void kv_per_token_of_three_models(void) {
    lesson_section("The KV cache per token: MHA, GQA, MLA");
    lesson_say("A decoder keeps, for every earlier token, what attention will read again: the keys "
               "and values of every layer. Llama-2-7B (MHA) keeps 32 heads of 128 for K and for V; "
               "Qwen3-8B (GQA) shares 8 kv heads among its 32 query heads; DeepSeek-V3 (MLA) keeps "
               "one latent of kv_lora_rank numbers and one RoPE key of qk_rope_head_dim numbers per "
               "layer, whatever its 128 heads. The numbers below come from the config.json files.");
    const int64_t llama = dense_kv_bytes("data/configs/Llama-2-7b.json");
    const int64_t qwen = dense_kv_bytes("data/configs/Qwen3-8B.json");
    char err[512];
    tw_json *root = read_config("data/configs/DeepSeek-V3.json");
    tw_hf_moe_config ds;
    tw_status st = tw_hf_moe_from_json(&ds, root, err, sizeof err);
    tw_json_free(root);
    if (st != TW_OK) lesson_die("data/configs/DeepSeek-V3.json: %s", err);
    const tw_kv_per_token k = tw_hf_moe_kv_per_token(&ds, 8);
    const int64_t mla = 2 * k.latent, mha_same = 2 * k.mha;
    printf("  %-34s %12s %14s\n", "model (attention)", "bytes/token", "GiB at 32768");
    const struct { const char *name; int64_t b; } rows[4] = {
        { "Llama-2-7B (MHA, 32 layers)", llama }, { "Qwen3-8B (GQA 32/8, 36 layers)", qwen },
        { "DeepSeek-V3 (MLA, 61 layers)", mla },
        { "DeepSeek-V3 if it cached MHA k, v", mha_same },
    };
    char text[1024];
    int n = snprintf(text, sizeof text, "# KV cache per token in bf16 (lesson 27)\n"
                     "# name bytes_per_token KiB_per_token\n");
    for (int i = 0; i < 4; i++) {
        printf("  %-34s %12lld %14.2f\n", rows[i].name, (long long)rows[i].b,
               (double)rows[i].b * 32768 / (1024.0 * 1024 * 1024));
        n += snprintf(text + n, sizeof text - (size_t)n, "\"%s\" %lld %.3f\n",
                      i == 0 ? "Llama-2-7B MHA" : i == 1 ? "Qwen3-8B GQA" : i == 2 ? "DeepSeek-V3 MLA"
                                                                               : "DeepSeek-V3 as MHA",
                      (long long)rows[i].b, (double)rows[i].b / 1024.0);
    }
    lesson_write_text("kv_per_token.dat", text);
    lesson_plot("27_kv_per_token.gp", "kv_per_token.dat", "kv_per_token.png");
    lesson_note("DeepSeek-V3 has nearly twice Llama-2-7B's layers and 4x its heads, yet caches %.1fx less "
                "per token than Llama-2-7B and %.1fx less than Qwen3-8B.",
                (double)llama / (double)mla, (double)qwen / (double)mla);
    lesson_expect("Llama-2-7B: 2 (K, V) x 32 layers x 32 heads x 128 x 2 bytes", llama == 2LL * 32 * 32 * 128 * 2);
    lesson_expect("Qwen3-8B: 2 x 36 layers x 8 kv heads x 128 x 2 bytes", qwen == 2LL * 36 * 8 * 128 * 2);
    lesson_expect("DeepSeek-V3: 61 layers x (512 latent + 64 RoPE key) x 2 bytes", mla == 61LL * 576 * 2);
    lesson_expect("the MLA row is the smallest of the table", mla < qwen && qwen < llama && llama < mha_same);
}

// ---- 2. one small layer: expanded and absorbed ----

static void absorbed_equals_expanded(const lesson_args *a) {
    lesson_section("One layer two ways: expanded for training, absorbed for decoding");
    const tw_mla_config g = { .C = 16, .H = 4, .q_rank = 8, .kv_rank = 6, .d_nope = 4, .d_rope = 4,
                              .d_v = 4, .eps = 1e-6f, .theta = 10000.0f };
    const int T = a->T, C = g.C, H = g.H, dkv = g.d_nope + g.d_v;
    lesson_say("A layer with C = %d, H = %d heads, q_lora_rank %d, kv_lora_rank %d, and per head "
               "d_nope = %d, d_rope = %d, d_v = %d. In training all keys and values are expanded: "
               "[k_nope ; v] = c W_kvb^T for every head and token, k = [k_nope ; k_pe]. In decoding "
               "only c (%d numbers) and k_pe (%d) are cached per token, and each head h folds its "
               "rows of W_kvb into its query (q~ = W_uk,h^T q_nope, width %d) and into its output "
               "(o_h = W_uv,h (sum_s p_s c_s)).", C, H, g.q_rank, g.kv_rank, g.d_nope, g.d_rope,
               g.d_v, g.kv_rank, g.d_rope, g.kv_rank);
    float *x = lesson_randn((long)T * C, 1.0f, a->seed);
    const float s = 0.35f;
    float *q_a = lesson_randn((long)g.q_rank * C, s, a->seed + 1);
    float *q_an = lesson_uniform(g.q_rank, 0.5f, 1.5f, a->seed + 2);
    float *q_b = lesson_randn((long)H * (g.d_nope + g.d_rope) * g.q_rank, s, a->seed + 3);
    float *kv_a = lesson_randn((long)(g.kv_rank + g.d_rope) * C, s, a->seed + 4);
    float *kv_an = lesson_uniform(g.kv_rank, 0.5f, 1.5f, a->seed + 5);
    float *kv_b = lesson_randn((long)H * dkv * g.kv_rank, s, a->seed + 6);
    float *o = lesson_randn((long)C * H * g.d_v, s, a->seed + 7);
    const tw_mla_weights W = { q_a, q_an, q_b, kv_a, kv_an, kv_b, o };
    tw_mla_cache cache;
    LESSON_TRY(tw_mla_cache_init(&cache, &g, T));
    float *y = lesson_alloc((long)T * C), *yd = lesson_alloc((long)T * C);
    tw_mla_forward(y, &cache, x, &W, &g, T);
    float *cc = lesson_alloc((long)T * g.kv_rank), *kc = lesson_alloc((long)T * g.d_rope);
    float *work = lesson_alloc(tw_mla_decode_work_floats(&g, T));
    for (int t = 0; t < T; t++)
        tw_mla_decode_absorbed(yd + (long)t * C, cc, kc, work, x + (long)t * C, t, &W, &g);
    lesson_print_matrix_n("latent cache c (T, kv_lora_rank)", cc, T, g.kv_rank, 8, 8);
    lesson_print_matrix_n("shared RoPE keys k_pe (T, d_rope)", kc, T, g.d_rope, 8, 8);
    lesson_print_matrix_n("y, expanded form (T, C)", y, T, C, 8, 8);
    lesson_print_matrix_n("y, absorbed decoding (T, C)", yd, T, C, 8, 8);
    printf("  numbers cached per token: %d (latent + RoPE key); MHA would cache %d (%d heads x "
           "(%d + %d key + %d value))\n", tw_mla_cache_per_token(&g),
           H * (g.d_nope + g.d_rope + g.d_v), H, g.d_nope, g.d_rope, g.d_v);
    lesson_write_npy2("x.npy", x, T, C);
    lesson_write_npy2("y_expanded.npy", y, T, C);
    lesson_write_npy2("y_absorbed.npy", yd, T, C);
    lesson_write_npy2("latent.npy", cc, T, g.kv_rank);
    lesson_write_npy2("rope_key.npy", kc, T, g.d_rope);
    lesson_note("The two forms add the same products in another order, so they agree to float "
                "rounding, not bit for bit: the bound below is 1e-5 on outputs of order 1.");
    lesson_expect_close("absorbed decoding = expanded form", yd, y, (long)T * C, 1e-5f);
    lesson_expect_close("the decoder's latent cache = the training form's latent", cc, cache.c,
                        (long)T * g.kv_rank, 1e-6f);
    tw_mla_cache_free(&cache);
}

// ---- 3. what the decoupled RoPE is for ----

static float dotf(const float *a, const float *b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static void why_decoupled_rope(const lesson_args *a) {
    lesson_section("Why the RoPE part of the key is kept apart");
    lesson_say("A claim you may meet: \"MLA just caches compressed keys; RoPE is applied to them as "
               "usual.\" Suppose it were: the key of token s would be k_s = R_s W_uk c_s, with R_s the "
               "rotation at position s, and the score of query q_t would be q_t^T R_t^T R_s W_uk c_s "
               "= q_t^T R_(s-t) W_uk c_s. The matrix between q and c now changes with the distance "
               "s - t, so no single q~ = (fixed matrix) q works for all cached tokens. Below, q~ is "
               "folded once (at distance 0) and used for every distance: it is exact at distance 0 and wrong at every other "
               "distance. With the decoupled form the rotated part is a separate, shared key "
               "cached as it is, and the folded q~ is exact at every distance (section 2).");
    enum { D = 8, R = 6, S = 12 };
    float *Wuk = lesson_randn((long)D * R, 0.5f, a->seed + 20);   // (D, R) one head's key rows
    float *q = lesson_randn(D, 1.0f, a->seed + 21), *c = lesson_randn(R, 1.0f, a->seed + 22);
    float qt[R], k[D], qr[D];
    // fold at distance 0: q~ = Wuk^T q (no rotation difference)
    for (int j = 0; j < R; j++) { qt[j] = 0.0f; for (int i = 0; i < D; i++) qt[j] += q[i] * Wuk[i * R + j]; }
    float rows[S * 3];
    float worst_rope_on_latent = 0.0f;
    printf("  %-9s %14s %14s %12s\n", "distance", "true score", "folded score", "error");
    for (int d = 0; d < S; d++) {
        // the true score with RoPE on the expanded key: rotate q at 0 and k at distance d
        for (int i = 0; i < D; i++) { k[i] = 0.0f; for (int j = 0; j < R; j++) k[i] += Wuk[i * R + j] * c[j]; }
        memcpy(qr, q, sizeof qr);
        tw_rope_adjacent_forward(k, 1, 1, D, d, 100.0f);
        tw_rope_adjacent_forward(qr, 1, 1, D, 0, 100.0f);
        const float truth = dotf(qr, k, D), folded = dotf(qt, c, R);
        rows[d * 3 + 0] = (float)d; rows[d * 3 + 1] = truth; rows[d * 3 + 2] = fabsf(truth - folded);
        if (d > 0 && fabsf(truth - folded) > worst_rope_on_latent) worst_rope_on_latent = fabsf(truth - folded);
        printf("  %-9d %14.5f %14.5f %12.2e\n", d, (double)truth, (double)folded, (double)fabsf(truth - folded));
    }
    const char *names[3] = { "distance", "true_score", "abs_error" };
    lesson_write_columns("fold_error.dat", rows, S, 3, names,
                         "RoPE on keys expanded from a latent: a query folded at distance 0 (lesson 27)");
    lesson_expect("folding is exact at distance 0", rows[2] < 1e-5f);
    lesson_expect("with RoPE on the expanded key, folding fails at other distances (error > 0.01)",
                  worst_rope_on_latent > 0.01f);
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 27, .T = 6 }, NULL);
    if (a.T < 1 || a.T > 64) lesson_die("-T %d: choose 1 .. 64 tokens", a.T);
    kv_per_token_of_three_models();
    absorbed_equals_expanded(&a);
    why_decoupled_rope(&a);
    lesson_say("Try it: make exercise38 (scores over a latent KV cache)");
    return lesson_finish();
}
