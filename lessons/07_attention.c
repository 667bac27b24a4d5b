// Lesson 7: scaled dot-product attention, step by step.
//
// Teaches: Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V, one step at a time on a labelled
// sentence: scores, the division by sqrt(d_k), the causal mask, the softmax, the weighted sum of
// values, each compared with the library. Why divide by sqrt(d_k): the measured variance of q.k
// grows like d_k, and without the division the softmax becomes nearly one-hot (measured).
// The attention map is written with token labels and drawn as a heatmap.
// Calls: tw_sdpa_scores, tw_softmax_rows, tw_sdpa_mix, tw_sdpa_forward,
//        tw_linear_forward, tw_embedding_forward, tw_print_matrix, tw_write_labelled_matrix,
//        tw_mha_forward, tw_mha_acts_init/_free, tw_mha_config_check.
// Build & run: make lesson7 && ./lesson7 [--seed N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/07_attention.gp       (reads out/lesson7/attention.dat)
//              gnuplot viz/07_scaling.gp         (reads out/lesson7/scaling.dat)
// Writes: q.npy k.npy v.npy scores.npy weights.npy out.npy attention.dat scaling.npy
// Writes: scaling.dat mha_out.npy gqa_out.npy mqa_out.npy
// Pictures: attention.png scaling.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    7, "Scaled dot-product attention",
    "Attention lets each position gather information from the others: it scores every (query, "
    "key) pair with a dot product, turns each row of scores into weights with a softmax, and "
    "averages the value vectors with those weights. This lesson does each step by hand on the "
    "sentence \"the cat sat on the mat .\" and checks it against the library, measures why the "
    "scores are divided by sqrt(d_k) (the variance of q.k for d_k from 4 to 1024, and how peaked "
    "the softmax gets without the division), applies the causal mask, draws the attention "
    "map with the tokens on its axes, and finally runs lesson 4's heads: multi-head attention one "
    "head at a time, and grouped-query attention as MHA with shared keys and values."
};

static const char *const WORDS[] = { "the", "cat", "sat", "on", "the", "mat", "." };
enum { T = 7, C = 16, D = 16, V = 6 };
static const int IDS[T] = { 0, 1, 2, 3, 0, 4, 5 };

// Variance of q.k over n pairs of N(0, 1) vectors of size d, raw and divided by sqrt(d).
static void dot_variance(int d, int n, uint64_t seed, double *var_raw, double *frac_out20) {
    tw_rng r;
    tw_rng_init(&r, seed);
    double s = 0.0, ss = 0.0;
    int out20 = 0;
    for (int i = 0; i < n; i++) {
        double dot = 0.0;
        for (int j = 0; j < d; j++) dot += (double)tw_rng_normal(&r) * tw_rng_normal(&r);
        s += dot;
        ss += dot * dot;
        out20 += fabs(dot) > 20.0;
    }
    double m = s / n;
    *var_raw = ss / n - m * m;
    *frac_out20 = (double)out20 / n;
}

// Average largest softmax weight over `trials` rows of S random keys, with and without scaling.
static void peakedness(int d, int S, int trials, uint64_t seed, double *max_scaled,
                       double *max_raw) {
    float *q = lesson_alloc(d), *k = lesson_alloc((long)S * d), *sc = lesson_alloc(S),
          *w = lesson_alloc(S);
    tw_rng r;
    tw_rng_init(&r, seed);
    double a = 0.0, b = 0.0;
    for (int i = 0; i < trials; i++) {
        tw_rng_fill_normal(&r, q, d, 1.0f);
        tw_rng_fill_normal(&r, k, (long)S * d, 1.0f);
        tw_sdpa_scores(sc, q, k, NULL, 1, S, d, 0, 0);     // divided by sqrt(d)
        tw_softmax_rows(w, sc, 1, S, 1.0f);
        float mx = 0.0f;
        for (int s = 0; s < S; s++) mx = fmaxf(mx, w[s]);
        a += mx;
        for (int s = 0; s < S; s++) sc[s] *= sqrtf((float)d);  // undo the division
        tw_softmax_rows(w, sc, 1, S, 1.0f);
        mx = 0.0f;
        for (int s = 0; s < S; s++) mx = fmaxf(mx, w[s]);
        b += mx;
    }
    *max_scaled = a / trials;
    *max_raw = b / trials;
}

// Columns [h*D, h*D + D) of a (T, n*D) matrix, as a contiguous (T, D) copy.
static float *head_of(const float *m, int n, int d, int h) {
    float *o = lesson_alloc((long)T * d);
    for (int t = 0; t < T; t++) memcpy(o + t * d, m + ((long)t * n + h) * d, (size_t)d * sizeof(float));
    return o;
}

// A toy attention configuration, from lesson 4: C = 16, H = 4 query heads of D = 4, G kv heads.
static tw_mha_config heads_config(int G) {
    tw_mha_config c = { 0 };
    c.d_model = C; c.n_head = 4; c.n_kv_head = G; c.head_dim = 4;
    c.causal = 1; c.rope = TW_ROPE_NONE;
    return c;
}

// tw_mha_forward (self-attention, no cache) on x (T, C); returns the output (T, C).
static float *run_mha(const tw_mha_config *cfg, const tw_mha_weights *w, const float *x) {
    float *out = lesson_alloc((long)T * C);
    tw_mha_acts s = { 0 };
    LESSON_TRY(tw_mha_config_check(cfg));
    LESSON_TRY(tw_mha_acts_init(&s, cfg, T, T));
    tw_mha_forward(out, &s, NULL, x, NULL, NULL, cfg, w, T, T, 0);
    tw_mha_acts_free(&s);
    return out;
}

// Lesson 4's heads, now that attention is known: multi-head attention one head at a time against
// tw_mha_forward, and GQA checked equal to MHA with each kv head repeated for its group.
// x: (T, C). Writes mha_out.npy, gqa_out.npy, mqa_out.npy.
static void many_heads(const float *x, uint64_t seed) {
    enum { H = 4, HD = 4 };
    lesson_say("Lesson 4 cut q, k and v into H = %d heads of D = %d. Each head runs the attention "
               "above on its own slice, giving a (T, D) result; the H results are laid side by "
               "side into z (T, H*D) and the output projection Wo (C, H*D) mixes them back to "
               "width C.", H, HD);
    float *wq = lesson_randn((long)H * HD * C, 0.3f, seed), *wk = lesson_randn((long)H * HD * C, 0.3f, seed + 1);
    float *wv = lesson_randn((long)H * HD * C, 0.3f, seed + 2), *wo = lesson_randn((long)C * H * HD, 0.3f, seed + 3);
    float *q = lesson_alloc((long)T * H * HD), *k = lesson_alloc((long)T * H * HD), *v = lesson_alloc((long)T * H * HD);
    tw_linear_forward(q, x, wq, NULL, T, C, H * HD);
    tw_linear_forward(k, x, wk, NULL, T, C, H * HD);
    tw_linear_forward(v, x, wv, NULL, T, C, H * HD);
    float *z = lesson_alloc((long)T * H * HD), *by_hand = lesson_alloc((long)T * C);   // (T, H*D), (T, C)
    float *w_h = lesson_alloc((long)T * T), *z_h = lesson_alloc((long)T * HD);
    for (int h = 0; h < H; h++) {
        float *qh = head_of(q, H, HD, h), *kh = head_of(k, H, HD, h), *vh = head_of(v, H, HD, h);
        tw_sdpa_forward(z_h, NULL, w_h, qh, kh, vh, NULL, T, T, HD, 1, 0);
        for (int t = 0; t < T; t++) memcpy(z + ((long)t * H + h) * HD, z_h + t * HD, (size_t)HD * sizeof(float));
    }
    tw_linear_forward(by_hand, z, wo, NULL, T, H * HD, C);
    tw_mha_config mha = heads_config(H), gqa = heads_config(2), mqa = heads_config(1);
    tw_mha_weights w = { .wq = tw_weight_fp32(wq), .wk = tw_weight_fp32(wk), .wv = tw_weight_fp32(wv),
                         .wo = tw_weight_fp32(wo) };
    float *out_mha = run_mha(&mha, &w, x);
    lesson_print_matrix("MHA out = z Wo^T", out_mha, T, C);
    // the same sums in the same order (per head sdpa, then one Linear): 1e-6 allows for a
    // different accumulation order inside tw_mha_forward's kernels
    lesson_expect_close("head-by-head == tw_mha_forward (MHA)", out_mha, by_hand, (long)T * C, 1e-6f);

    lesson_say("GQA and MQA (lesson 4) use the first G*D rows of Wk and Wv: G = 2 and G = 1 kv "
               "heads, read by query head h as kv head h / (H/G). Building MHA weights in which "
               "each kv head's rows are repeated for its group must give exactly the same output.");
    float *out_gqa = run_mha(&gqa, &w, x), *out_mqa = run_mha(&mqa, &w, x);
    float *wk_rep = lesson_alloc((long)H * HD * C), *wv_rep = lesson_alloc((long)H * HD * C);
    for (int h = 0; h < H; h++) {
        memcpy(wk_rep + (long)h * HD * C, wk + (long)(h / 2) * HD * C, (size_t)HD * C * sizeof(float));
        memcpy(wv_rep + (long)h * HD * C, wv + (long)(h / 2) * HD * C, (size_t)HD * C * sizeof(float));
    }
    tw_mha_weights w_rep = { .wq = tw_weight_fp32(wq), .wk = tw_weight_fp32(wk_rep),
                             .wv = tw_weight_fp32(wv_rep), .wo = tw_weight_fp32(wo) };
    float *out_rep = run_mha(&mha, &w_rep, x);
    lesson_expect_close("GQA (G=2) == MHA with kv heads repeated", out_gqa, out_rep, (long)T * C, 0.0f);
    lesson_write_npy2("mha_out.npy", out_mha, T, C);
    lesson_write_npy2("gqa_out.npy", out_gqa, T, C);
    lesson_write_npy2("mqa_out.npy", out_mqa, T, C);
}

enum { ND = 5 };   // head sizes d_k measured in section 3

// What the sections share: one head's tensors on the sentence (tracked memory).
typedef struct {
    float *x;                    // (T, C) the embedded sentence
    float *q, *k, *v;            // (T, D) each
    float *by_hand;              // (T, T) unmasked scores from two loops
    float *scores, *weights;     // (T, T) causal scores and their softmax
    float *out;                  // (T, D) the weighted sum of values
    float *scaling;              // (ND, 6) the sqrt(d_k) measurements
} head;

// 1. One head's queries, keys and values for "the cat sat on the mat .".
static void project_sentence(head *h, uint64_t seed) {
    lesson_section("Queries, keys and values for a sentence");
    lesson_say("We embed the %d tokens of \"the cat sat on the mat .\" (width C = %d, random "
               "table) and project them with random Wq, Wk, Wv into one head of size d_k = D = %d "
               "(lesson 4 shows where these come from). The weights are untrained, so the map "
               "below has no linguistic meaning yet; lesson 11 shows maps of a trained model.",
               T, C, D);
    float *table = lesson_randn((long)V * C, 1.0f, seed);
    float *x = lesson_alloc((long)T * C);                                    // (T, C)
    LESSON_TRY(tw_embedding_forward(x, IDS, table, T, V, C));
    float *wq = lesson_randn((long)D * C, 0.3f, seed + 1), *wk = lesson_randn((long)D * C, 0.3f, seed + 2);
    float *wv = lesson_randn((long)D * C, 0.3f, seed + 3);
    float *q = lesson_alloc((long)T * D), *k = lesson_alloc((long)T * D), *v = lesson_alloc((long)T * D);
    tw_linear_forward(q, x, wq, NULL, T, C, D);
    tw_linear_forward(k, x, wk, NULL, T, C, D);
    tw_linear_forward(v, x, wv, NULL, T, C, D);
    printf("  q, k, v: (T, D) = (%d, %d) each\n", T, D);
    h->x = x;
    h->q = q;
    h->k = k;
    h->v = v;
}

// 2. Scores q.k / sqrt(d_k) by hand and by tw_sdpa_scores.
static void match_scores(head *h) {
    const float *q = h->q, *k = h->k;
    lesson_section("Scores: how well each query matches each key");
    lesson_say("score[t][s] = q[t] . k[s] / sqrt(d_k): one number per (query t, key s) pair, a "
               "(T, T) matrix. Computed here with two loops, then by tw_sdpa_scores.");
    float *by_hand = lesson_alloc((long)T * T);                              // (T, T)
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            float dot = 0.0f;
            for (int j = 0; j < D; j++) dot += q[t * D + j] * k[s * D + j];
            by_hand[t * T + s] = dot / sqrtf((float)D);
        }
    float *scores_nomask = lesson_alloc((long)T * T);
    tw_sdpa_scores(scores_nomask, q, k, NULL, T, T, D, 0, 0);
    lesson_print_matrix("scores (no mask)", scores_nomask, T, T);
    // float sums in a possibly different order: a few ulps of values of order 1
    lesson_expect_close("tw_sdpa_scores == two loops", scores_nomask, by_hand, (long)T * T, 1e-5f);
    lesson_note("\"the\" appears at positions 0 and 4 with the same vector, so rows 0 and 4 (and "
                "columns 0 and 4) of the unmasked scores are identical: without positions, "
                "attention cannot tell the two apart.");
    lesson_expect_close("rows 0 and 4 identical (no positions)", scores_nomask, scores_nomask + 4 * T, T, 0.0f);
    h->by_hand = by_hand;
}

// 3. Why divide by sqrt(d_k): the variance of q.k, and how peaked the softmax gets without it.
static void why_sqrt_dk(head *h, uint64_t seed) {
    lesson_section("Why divide by sqrt(d_k)");
    lesson_say("If the entries of q and k are independent with mean 0 and variance 1, q.k is a sum "
               "of d_k products of variance 1, so its variance is d_k and its typical size "
               "sqrt(d_k). Measured over 2000 random pairs each:");
    static const int DK[ND] = { 4, 16, 64, 128, 1024 };
    float *scaling = lesson_alloc(ND * 6);                                   // (ND, 6)
    printf("  %6s %12s %14s %16s %18s %16s\n", "d_k", "var(q.k)", "var(q.k)/d_k", "|q.k| > 20",
           "max weight scaled", "max weight raw");
    int var_ok = 1;
    for (int i = 0; i < ND; i++) {
        double var, out20, mx_s, mx_r;
        dot_variance(DK[i], 2000, seed + 100 + i, &var, &out20);
        peakedness(DK[i], 16, 60, seed + 200 + i, &mx_s, &mx_r);
        printf("  %6d %12.2f %14.3f %15.1f%% %18.3f %16.3f\n", DK[i], var, var / DK[i],
               100 * out20, mx_s, mx_r);
        float row[6] = { (float)DK[i], (float)var, (float)(var / DK[i]), (float)out20,
                         (float)mx_s, (float)mx_r };
        memcpy(scaling + i * 6, row, sizeof row);
        // the sample variance of 2000 draws is within about 3 * sqrt(2/2000) = 10% of the truth
        if (fabs(var / DK[i] - 1.0) > 0.15) var_ok = 0;
    }
    lesson_expect("var(q.k) / d_k within 15% of 1 for every d_k", var_ok);
    lesson_say("The \"max weight\" columns average, over 60 rows of 16 random keys, the largest "
               "softmax weight in the row: 1/16 = 0.0625 would be uniform, 1 is one-hot. Divided "
               "by sqrt(d_k) the rows look the same at every d_k. Without the division, the scores "
               "of a 128-wide head spread over tens of units and the softmax puts nearly all the "
               "weight on one key: its gradient vanishes for all the others, and training stalls.");
    lesson_expect("unscaled softmax at d_k = 1024 is nearly one-hot (max weight > 0.9)",
                  scaling[4 * 6 + 5] > 0.9f);
    lesson_expect("scaled softmax at d_k = 1024 stays spread (max weight < 0.5)",
                  scaling[4 * 6 + 4] < 0.5f);
    lesson_say("A claim you may meet: for d_k = 128 \"dot products can lie in [-20, 20]\". "
               "The standard deviation is sqrt(128) = 11.3, so [-20, 20] is about +-1.8 standard "
               "deviations: the measurement above finds %.1f%% of the values outside it. The range "
               "is typical, not a bound.", 100.0 * scaling[3 * 6 + 3]);
    h->scaling = scaling;
}

// 4. The causal mask, then the softmax of each row.
static void mask_and_softmax(head *h) {
    const float *q = h->q, *k = h->k, *by_hand = h->by_hand;
    lesson_section("Causal mask, then softmax");
    lesson_say("A decoder must not read the future, so scores with s > t become -inf (lesson 6) "
               "before the softmax turns each row into weights that sum to 1.");
    float *scores = lesson_alloc((long)T * T), *weights = lesson_alloc((long)T * T);
    tw_sdpa_scores(scores, q, k, NULL, T, T, D, 1, 0);
    tw_softmax_rows(weights, scores, T, T, 1.0f);
    lesson_print_matrix("masked scores", scores, T, T);
    lesson_print_causal("weights = softmax(masked scores)", weights, T, T);
    float *masked_hand = lesson_alloc((long)T * T);
    memcpy(masked_hand, by_hand, (size_t)T * T * sizeof(float));
    for (int t = 0; t < T; t++)
        for (int s = t + 1; s < T; s++) masked_hand[t * T + s] = -INFINITY;
    lesson_expect_close("causal scores == hand scores with -inf above the diagonal", scores,
                        masked_hand, (long)T * T, 1e-5f);
    h->scores = scores;
    h->weights = weights;
}

// 5. The output: each row a weighted average of the values.
static void weighted_sum(head *h) {
    const float *q = h->q, *k = h->k, *v = h->v, *weights = h->weights;
    lesson_section("The output: a weighted average of values");
    lesson_say("out[t] = sum over s of weights[t][s] * v[s]. Row 0 can only see itself, so out[0] "
               "is exactly v[0]; later rows blend everything up to their own position.");
    float *out = lesson_alloc((long)T * D), *mix_hand = lesson_alloc((long)T * D);
    tw_sdpa_mix(out, weights, v, T, T, D);
    for (int t = 0; t < T; t++)
        for (int j = 0; j < D; j++) {
            float acc = 0.0f;
            for (int s = 0; s < T; s++) acc += weights[t * T + s] * v[s * D + j];
            mix_hand[t * D + j] = acc;
        }
    lesson_print_matrix("out = weights v", out, T, D);
    lesson_expect_close("tw_sdpa_mix == hand loop", out, mix_hand, (long)T * D, 1e-6f);
    lesson_expect_close("out[0] == v[0]", out, v, D, 1e-7f);
    float *fused = lesson_alloc((long)T * D), *fw = lesson_alloc((long)T * T);
    tw_sdpa_forward(fused, NULL, fw, q, k, v, NULL, T, T, D, 1, 0);
    lesson_expect_close("tw_sdpa_forward == the three steps", fused, out, (long)T * D, 0.0f);
    h->out = out;
}

// The head's tensors as .npy; its map and the sqrt(d_k) measurements for gnuplot.
static void write_files(const head *h) {
    const float *q = h->q, *k = h->k, *v = h->v, *scores = h->scores, *weights = h->weights,
                *out = h->out, *scaling = h->scaling;
    lesson_section("Files");
    lesson_write_npy2("q.npy", q, T, D);
    lesson_write_npy2("k.npy", k, T, D);
    lesson_write_npy2("v.npy", v, T, D);
    lesson_write_npy2("scores.npy", scores, T, T);
    lesson_write_npy2("weights.npy", weights, T, T);
    lesson_write_npy2("out.npy", out, T, D);
    lesson_write_matrix_dat("attention.dat", weights, T, T, WORDS, WORDS,
                            "lesson 7: causal attention weights of one random head; rows: query "
                            "token, columns: key token");
    lesson_write_npy2("scaling.npy", scaling, ND, 6);
    static const char *const SCOLS[6] = { "d_k", "var_qk", "var_over_dk", "frac_abs_over_20",
                                          "max_weight_scaled", "max_weight_raw" };
    lesson_write_columns("scaling.dat", scaling, ND, 6, SCOLS,
                         "lesson 7: q.k of N(0,1) vectors: variance over 2000 pairs; mean largest "
                         "softmax weight over 60 rows of 16 keys, with and without / sqrt(d_k)");
    lesson_plot("07_attention.gp", "attention.dat", "attention.png");
    lesson_plot("07_scaling.gp", "scaling.dat", "scaling.png");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 7 }, NULL);
    head h = { 0 };
    project_sentence(&h, a.seed);
    match_scores(&h);
    why_sqrt_dk(&h, a.seed);
    mask_and_softmax(&h);
    weighted_sum(&h);
    lesson_section("Many heads: MHA, GQA and MQA");
    many_heads(h.x, a.seed + 40);
    write_files(&h);
    lesson_say("Try it: make exercise8 (causal scaled dot-product attention)");
    return lesson_finish();
}
