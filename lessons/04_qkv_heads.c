// Lesson 4: queries, keys, values and heads: MHA, GQA and MQA.
//
// Teaches: three Linear projections turn each token into a query (what it looks for), a key
// (what it offers) and a value (what it hands over); the projected width is cut into H heads of
// D numbers that will attend independently (attention itself is lesson 7, after softmax in 6);
// keys and values may have fewer heads (G) than queries: MHA (G = H), GQA (1 < G < H), MQA
// (G = 1), where query head h reads kv head h / (H/G). The point of GQA is the KV cache:
// bytes per token for each, for GPT-2, Llama-2-7B and Qwen3-8B (32 query / 8 kv heads).
// Calls: tw_linear_forward, tw_kv_cache_bytes, tw_linear_params, tw_print_matrix.
// Build & run: make lesson4 && ./lesson4 [--seed N] [-T N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/04_kv_cache.gp        (reads out/lesson4/kv_cache.dat)
// Writes: x.npy q.npy k_mha.npy v_mha.npy k_gqa.npy k_mqa.npy kv_cache.dat
// Pictures: kv_cache.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    4, "Queries, keys, values and heads: MHA, GQA, MQA",
    "Attention starts with three projections of the same input: queries, keys and values. This "
    "lesson projects 5 tokens of width 16 with tw_linear_forward, cuts the results into 4 heads "
    "of size 4, then shares keys and values between query heads (grouped-query attention "
    "with 2 kv heads, multi-query with 1) and works out the KV-cache bytes per token for MHA, GQA and MQA, including Qwen3-8B's 32 query "
    "heads and 8 kv heads over 36 layers."
};

// Columns [h*D, h*D + D) of a (T, n*D) matrix, as a contiguous (T, D) copy.
static float *head_of(const float *m, int T, int n, int D, int h) {
    float *o = lesson_alloc((long)T * D);
    for (int t = 0; t < T; t++) memcpy(o + t * D, m + ((long)t * n + h) * D, (size_t)D * sizeof(float));
    return o;
}

// What the sections share: the tokens, the projection weights and their outputs (tracked).
typedef struct {
    int T, C, H, D;
    float *x;                 // (T, C)
    float *wq, *wk, *wv;      // (H*D, C) each
    float *q, *k, *v;         // (T, H*D) each
    float *k_gqa, *k_mqa;     // (T, 2*D), (T, D)
} projections;

// 1. q, k and v: three Linear projections of the same tokens.
static void three_projections(projections *p, uint64_t seed) {
    const int T = p->T, C = p->C, H = p->H, D = p->D;
    lesson_section("Three projections of the same tokens");
    lesson_say("Each token's vector x[t] (width C = %d) is projected three times: q = x Wq^T (what "
               "this token is looking for), k = x Wk^T (what it can be found by), v = x Wv^T (what "
               "it passes on when found). With H = %d heads of D = %d numbers, Wq is (H*D, C) = "
               "(%d, %d).", C, H, D, H * D, C);
    float *x = lesson_randn((long)T * C, 1.0f, seed);                        // (T, C)
    float *wq = lesson_randn((long)H * D * C, 0.25f, seed + 1);              // (H*D, C)
    float *wk = lesson_randn((long)H * D * C, 0.25f, seed + 2);              // (H*D, C) for MHA
    float *wv = lesson_randn((long)H * D * C, 0.25f, seed + 3);
    float *q = lesson_alloc((long)T * H * D), *k = lesson_alloc((long)T * H * D);
    float *v = lesson_alloc((long)T * H * D);
    tw_linear_forward(q, x, wq, NULL, T, C, H * D);
    tw_linear_forward(k, x, wk, NULL, T, C, H * D);
    tw_linear_forward(v, x, wv, NULL, T, C, H * D);
    printf("  x (%d, %d) -> q, k, v (%d, %d) each\n", T, C, T, H * D);
    lesson_print_matrix_n("q", q, T, H * D, 8, 16);
    *p = (projections){ T, C, H, D, x, wq, wk, wv, q, k, v, NULL, NULL };
}

// 2. Heads are a change of view: (T, H*D) read as (T, H, D).
static void cut_into_heads(const projections *p) {
    const int T = p->T, H = p->H, D = p->D;
    const float *q = p->q;
    lesson_section("Cutting the width into heads");
    lesson_say("Splitting into heads is only a change of view: row t of q, %d numbers, is read "
               "as %d heads of %d, shape (T, H, D) = (%d, %d, %d). Head h owns columns h*D .. "
               "h*D+%d. Each head attends on its own, with its own queries and keys, so different "
               "heads can look for different things (the previous word, the subject, a bracket).",
               H * D, H, D, T, H, D, D - 1);
    float *q0 = head_of(q, T, H, D, 0), *q1 = head_of(q, T, H, D, 1);
    lesson_print_matrix("head 0 of q (columns 0..3)", q0, T, D);
    lesson_print_matrix("head 1 of q (columns 4..7)", q1, T, D);
}

// 3. Fewer key/value heads: GQA and MQA, and the weights they save.
static void share_keys_and_values(projections *p) {
    const int T = p->T, C = p->C, H = p->H, D = p->D;
    const float *x = p->x, *wk = p->wk, *k = p->k;
    lesson_section("Fewer key/value heads: GQA and MQA");
    lesson_say("Each head will later compare its queries with its keys and mix its values "
               "(softmax is lesson 6, attention itself lesson 7; this lesson stops at the "
               "projections). Grouped-query attention keeps H = %d query heads but computes only "
               "G key/value heads; query head h will read kv head h / (H/G). Wk and Wv shrink to "
               "(G*D, C), and so do k and v:\n"
               "  MHA  G = 4: query heads 0 1 2 3 -> kv heads 0 1 2 3\n"
               "  GQA  G = 2: query heads 0 1 2 3 -> kv heads 0 0 1 1\n"
               "  MQA  G = 1: query heads 0 1 2 3 -> kv heads 0 0 0 0", H);
    // GQA/MQA weights: the first G*D rows of the MHA matrices (any (G*D, C) matrix would do)
    float *k_gqa = lesson_alloc((long)T * 2 * D), *k_mqa = lesson_alloc((long)T * D);
    tw_linear_forward(k_gqa, x, wk, NULL, T, C, 2 * D);                       // (T, 2*D)
    tw_linear_forward(k_mqa, x, wk, NULL, T, C, D);                           // (T, D)
    printf("  k shapes: MHA (%d, %d)   GQA (%d, %d)   MQA (%d, %d)\n", T, 4 * D, T, 2 * D, T, D);
    lesson_print_matrix("GQA k (2 kv heads)", k_gqa, T, 2 * D);
    int same = 1;
    for (int t = 0; t < T; t++)
        for (int j = 0; j < 2 * D; j++) same &= k_gqa[t * 2 * D + j] == k[t * H * D + j];
    lesson_expect("GQA k == the first 2 heads of MHA k (its Wk is MHA's first 2*D rows)", same);
    lesson_note("so GQA is not a new kind of attention: it is MHA with groups of query heads "
                "forced to share keys and values (Hugging Face's repeat_kv copies each kv head "
                "for its group). Lesson 7 runs all three and checks that GQA equals MHA with "
                "repeated kv heads. It costs a little quality and saves memory, as the next "
                "section counts.");
    long long pq = tw_linear_params(C, H * D, 0);
    printf("  projection weights: Wq %lld, Wk + Wv: MHA %lld, GQA %lld, MQA %lld, Wo %lld\n", pq,
           2 * tw_linear_params(C, 4 * D, 0), 2 * tw_linear_params(C, 2 * D, 0),
           2 * tw_linear_params(C, D, 0), tw_linear_params(H * D, C, 0));
    lesson_say("Wo (C, H*D) is the output projection: after attention each head hands back D "
               "numbers per token, the H results are laid side by side (width H*D) and Wo mixes "
               "them back to width C.");
    p->k_gqa = k_gqa;
    p->k_mqa = k_mqa;
}

// 4. The KV cache's bytes per token for real models. Returns the table kv (6, 4), tracked:
// index, kv heads, KiB per token, GiB at 32768 tokens.
static float *kv_cache_bytes(void) {
    lesson_section("The KV cache: bytes per token");
    lesson_say("When a model generates text one token at a time, the keys and values of every "
               "earlier token are kept (lesson 11 shows the cache growing) so they are not "
               "recomputed. Per token and layer the cache holds 2 (k and v) x G x D numbers; "
               "queries are never cached. Per token over the whole model, in bf16 (2 bytes):\n"
               "  bytes/token = 2 x n_layer x G x D x 2");
    struct { const char *name; int L, H, G, D; } M[] = {
        { "this toy (MHA, 1 layer)", 1, 4, 4, 4 },
        { "GPT-2 small (MHA)", 12, 12, 12, 64 },
        { "Llama-2-7B (MHA)", 32, 32, 32, 128 },
        { "Qwen3-8B as MHA (G = 32)", 36, 32, 32, 128 },
        { "Qwen3-8B GQA (G = 8, real)", 36, 32, 8, 128 },
        { "Qwen3-8B as MQA (G = 1)", 36, 32, 1, 128 },
    };
    enum { NM = 6 };
    float *kv = lesson_alloc(NM * 4);                                        // (NM, 4)
    printf("  %-28s %6s %4s %4s %5s %16s %18s\n", "model", "layers", "H", "G", "D",
           "bytes/token bf16", "GiB at 32768 tok");
    for (int i = 0; i < NM; i++) {
        // tw_kv_cache_bytes counts float32 (4 bytes) for one layer; bf16 halves it
        double per_tok = (double)tw_kv_cache_bytes(1, M[i].G, M[i].D) / 2.0 * M[i].L;
        double gib = per_tok * 32768.0 / (1024.0 * 1024.0 * 1024.0);
        printf("  %-28s %6d %4d %4d %5d %16.0f %18.3f\n", M[i].name, M[i].L, M[i].H, M[i].G,
               M[i].D, per_tok, gib);
        kv[i * 4 + 0] = (float)i;
        kv[i * 4 + 1] = (float)M[i].G;
        kv[i * 4 + 2] = (float)(per_tok / 1024.0);
        kv[i * 4 + 3] = (float)gib;
    }
    printf("  (GPT-2 and Llama 2 only read 1024 and 4096 tokens; their 32768 column is for comparison)\n");
    double qwen = (double)tw_kv_cache_bytes(1, 8, 128) / 2.0 * 36;
    lesson_say("Qwen3-8B's 8 kv heads need %.0f bytes = %.0f KiB per token: a quarter of the "
               "%.0f KiB that 32 kv heads would need, and at a 32768-token context %.2f GiB instead "
               "of %.2f GiB. Its weights in bf16 take about 16.4 GB (8.19e9 x 2 bytes): with full MHA "
               "a single conversation of that length would need more memory for its cache than "
               "for the whole model.",
               qwen, qwen / 1024, 4 * qwen / 1024, qwen * 32768 / 1073741824.0,
               4 * qwen * 32768 / 1073741824.0);
    lesson_expect_near("Qwen3-8B KV cache = 147456 bytes/token in bf16", qwen, 147456.0, 0.0);
    return kv;
}

// The projections as .npy; Qwen3-8B's three cache sizes for a bar chart.
static void write_files(const projections *p, const float *kv) {
    const int T = p->T, C = p->C, H = p->H, D = p->D;
    lesson_section("Files");
    lesson_write_npy2("x.npy", p->x, T, C);
    lesson_write_npy2("q.npy", p->q, T, H * D);
    lesson_write_npy2("k_mha.npy", p->k, T, H * D);
    lesson_write_npy2("v_mha.npy", p->v, T, H * D);
    lesson_write_npy2("k_gqa.npy", p->k_gqa, T, 2 * D);
    lesson_write_npy2("k_mqa.npy", p->k_mqa, T, D);
    // the three Qwen3-8B rows, labelled, for a bar chart
    const char *labels[3] = { "MHA (G=32)", "GQA (G=8, Qwen3-8B)", "MQA (G=1)" };
    char text[1024];
    int n = snprintf(text, sizeof text,
                     "# lesson 4: KV cache of a Qwen3-8B-shaped model (36 layers, 32 query heads, "
                     "head size 128) in bf16\n# variant kv_heads KiB_per_token GiB_at_32768_tokens\n");
    for (int i = 0; i < 3; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "\"%s\" %d %.3f %.4f\n", labels[i],
                      (int)kv[(3 + i) * 4 + 1], (double)kv[(3 + i) * 4 + 2], (double)kv[(3 + i) * 4 + 3]);
    lesson_write_text("kv_cache.dat", text);
    lesson_plot("04_kv_cache.gp", "kv_cache.dat", "kv_cache.png");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 4, .T = 5 }, NULL);
    projections p = { .T = a.T, .C = 16, .H = 4, .D = 4 };
    three_projections(&p, a.seed);
    cut_into_heads(&p);
    share_keys_and_values(&p);
    float *kv = kv_cache_bytes();
    write_files(&p, kv);
    lesson_say("Try it: make exercise15 (grouped-query attention over all heads)");
    return lesson_finish();
}
