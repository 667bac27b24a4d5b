// Lesson 2: embeddings and the Linear layer.
//
// Teaches: a token id becomes a vector by looking up one row of a table (V, C); that lookup is the
// same as multiplying a one-hot vector by the table, but costs no arithmetic; a Linear layer
// computes y = x W^T + b with W stored (C_out, C_in) as torch.nn.Linear does, worked through on a
// tiny example with every shape printed; and what a projection costs: parameters C_in*C_out (+C_out)
// and 2*C_in*C_out FLOPs per token, for the toy and for real layers of GPT-2 and Qwen3-8B.
// Calls: tw_embedding_forward, tw_linear_forward, tw_linear_params, tw_linear_flops,
//        tw_rng (via lesson_randn), tw_print_matrix, tw_npy_write_*, tw_write_labelled_matrix.
// Build & run: make lesson2 && ./lesson2 [--seed N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/02_embeddings.gp     (reads out/lesson2/embedded.dat)
// Writes: table.npy ids.npy embedded.npy embedded.dat linear_x.npy linear_W.npy linear_b.npy
// Writes: linear_y.npy
// Pictures: embedded.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    2, "Embeddings and the Linear layer",
    "A language model never sees text, only token ids. Its first layer, the embedding, turns each "
    "id into a vector by reading one row of a learned table of shape (V, C): V rows, one per token "
    "of the vocabulary, C numbers per row. This lesson looks up a sentence of 6 tokens, shows that "
    "a repeated token gets the identical vector, and checks that the lookup equals a one-hot "
    "vector times the table. Then it works through the Linear layer y = x W^T + b by hand on a "
    "2x3 input, prints every shape, compares the hand computation with tw_linear_forward, and "
    "counts the parameters and FLOPs of projections in real models (GPT-2, Qwen3-8B)."
};

// The toy vocabulary: 8 words, one id each.
static const char *const VOCAB[] = { "the", "cat", "sat", "on", "mat", "dog", "a", "." };
enum { V = 8, C = 4 };

static const int IDS[] = { 0, 1, 2, 3, 0, 4 };    // "the cat sat on the mat"
enum { T = (int)(sizeof IDS / sizeof IDS[0]) };
// The Linear layer of section 4: small binary fractions, so every sum is exact.
enum { Tl = 2, Ci = 3, Co = 4 };
static const float X[] = { 1.0f, 2.0f, 3.0f,                               // (2, 3)
                           -1.0f, 0.5f, 4.0f };
static const float W[] = { 0.5f, -1.0f, 0.25f,                             // (4, 3)
                           1.0f, 1.0f, 1.0f,
                           0.0f, 2.0f, -0.5f,
                           -0.25f, 0.0f, 0.75f };
static const float B[] = { 0.125f, 0.0f, -1.0f, 2.0f };                    // (4)

// 1. The embedding table: random N(0, 1) rows, one per word. Returns it (V, C), tracked.
static float *embedding_table(uint64_t seed) {
    lesson_section("The embedding table: one row per token");
    lesson_say("Our toy vocabulary has V = %d words. The embedding table has one row of C = %d "
               "numbers per word. In a trained model these rows are learned; here they are random "
               "draws from N(0, 1) with seed %llu.", V, C, (unsigned long long)seed);
    float *table = lesson_randn((long)V * C, 1.0f, seed);              // (V, C)
    lesson_print_matrix("table", table, V, C);
    for (int v = 0; v < V; v++) printf("  row %d is the vector of \"%s\"\n", v, VOCAB[v]);
    return table;
}

// 2. Looking up "the cat sat on the mat" (IDS) in table (V, C). Returns the rows (T, C), tracked.
static float *look_up_sentence(const float *table) {
    lesson_section("Looking up a sentence");
    const int *ids = IDS;
    lesson_say("The tokenizer (lesson 1) turned \"the cat sat on the mat\" into T = %d ids: "
               "[%d %d %d %d %d %d]. tw_embedding_forward copies row ids[t] of the table into "
               "row t of the output, so the output has shape (T, C) = (%d, %d).",
               T, ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], T, C);
    float *emb = lesson_alloc((long)T * C);                            // (T, C)
    LESSON_TRY(tw_embedding_forward(emb, ids, table, T, V, C));
    lesson_print_matrix("embedded", emb, T, C);
    lesson_note("rows 0 and 4 are both \"the\", so they are the same vector: an embedding knows "
                "nothing about position. Lesson 5 adds the position.");
    lesson_expect_close("row 0 == row 4 (both \"the\")", emb, emb + 4 * C, C, 0.0f);
    int bad_ids[] = { 0, 8 };
    tw_status bad = tw_embedding_forward(lesson_alloc(2 * C), bad_ids, table, 2, V, C);
    lesson_say("An id outside 0..V-1 is a data error: for ids [0 8] the function returns \"%s\" "
               "and writes nothing.", tw_status_str(bad));
    lesson_expect("an out-of-range id is refused", bad == TW_ERR_SHAPE);
    return emb;
}

// 3. The lookup as a product: one-hot rows (T, V) times the table (V, C) give emb (T, C).
static void lookup_is_a_product(const float *table, const float *emb) {
    const int *ids = IDS;
    lesson_section("A lookup is a matrix product with a one-hot vector");
    lesson_say("Write token t as a one-hot row: V numbers, all 0 except a 1 at position ids[t]. "
               "Multiplying that (T, V) matrix by the (V, C) table picks out exactly one row per "
               "token. In Linear-layer terms, y = onehot W^T with W = table^T of shape (C, V). "
               "The product spends 2*T*V*C = %lld FLOPs to do what the lookup does with none.",
               tw_linear_flops(T, V, C));
    float *onehot = lesson_alloc((long)T * V);                          // (T, V)
    for (int t = 0; t < T; t++) onehot[t * V + ids[t]] = 1.0f;
    float *table_T = lesson_alloc((long)C * V);                         // (C, V)
    for (int v = 0; v < V; v++)
        for (int c = 0; c < C; c++) table_T[c * V + v] = table[v * C + c];
    float *via_matmul = lesson_alloc((long)T * C);                      // (T, C)
    tw_linear_forward(via_matmul, onehot, table_T, NULL, T, V, C);
    lesson_print_matrix("onehot", onehot, T, V);
    lesson_expect_close("one-hot x table == lookup", via_matmul, emb, (long)T * C, 0.0f);
    lesson_note("the match is exact (difference 0): each output is one weight times 1.0 plus "
                "zeros. This is also why the output head of a model can reuse the embedding "
                "table (\"tied\" weights): it is the same matrix used the other way round.");
}

// 4. y = x W^T + b by hand and with tw_linear_forward. Returns y (Tl, Co), tracked.
static float *linear_by_hand(void) {
    const float *x = X, *W_ = W, *b = B;
    lesson_section("The Linear layer, y = x W^T + b, by hand");
    lesson_say("torch.nn.Linear(C_in=3, C_out=4) stores W with shape (C_out, C_in) = (4, 3): one "
               "row per output. Each output y[t][o] is the dot product of input row x[t] with "
               "weight row W[o], plus b[o]. The numbers below are small binary fractions so every "
               "sum is exact and you can check it on paper.");
    lesson_print_matrix("x", x, Tl, Ci);
    lesson_print_matrix("W", W_, Co, Ci);
    lesson_print_vector("b", b, Co);
    float *by_hand = lesson_alloc((long)Tl * Co);                       // (2, 4)
    for (int t = 0; t < Tl; t++)
        for (int o = 0; o < Co; o++) {
            float s = b[o];
            for (int c = 0; c < Ci; c++) s += x[t * Ci + c] * W_[o * Ci + c];
            by_hand[t * Co + o] = s;
        }
    lesson_say("For example y[0][0] = x[0].W[0] + b[0] = 1*0.5 + 2*(-1) + 3*0.25 + 0.125 = %.3f, "
               "and y[1][3] = (-1)*(-0.25) + 0.5*0 + 4*0.75 + 2 = %.3f.",
               (double)by_hand[0], (double)by_hand[1 * Co + 3]);
    float *y = lesson_alloc((long)Tl * Co);                             // (2, 4)
    tw_linear_forward(y, x, W_, b, Tl, Ci, Co);
    printf("shapes: x (%d, %d) . W^T (%d, %d) + b (%d) -> y (%d, %d)\n",
           Tl, Ci, Ci, Co, Co, Tl, Co);
    lesson_print_matrix("y = tw_linear_forward(x, W, b)", y, Tl, Co);
    // exact inputs and the same summation order: the two must agree to the last bit
    lesson_expect_close("tw_linear_forward == hand loop", y, by_hand, (long)Tl * Co, 0.0f);
    lesson_note("the inner dimension (C_in = 3) is summed away; the outer ones (T rows, C_out "
                "columns) remain. Every row of x is transformed independently.");
    return y;
}

// 5. Parameters and FLOPs of real projections.
static void projection_costs(void) {
    lesson_section("Parameters and FLOPs of a projection");
    lesson_say("A Linear layer holds C_in*C_out weights plus C_out biases, and applying it to one "
               "token costs C_in*C_out multiply-adds, that is 2*C_in*C_out FLOPs (a multiply and an "
               "add each). A claim you may meet: a 4096x4096 projection costs \"16.7M FLOPs\": that is the "
               "number of multiply-adds (and of weights), half the FLOP count.");
    printf("  %-34s %6s %6s %5s %15s %17s\n", "layer", "C_in", "C_out", "bias", "parameters",
           "FLOPs per token");
    struct { const char *name; int ci, co, bias; } L[] = {
        { "this toy (above)", 3, 4, 1 },
        { "GPT-2 small attn c_attn (q,k,v)", 768, 2304, 1 },
        { "GPT-2 small mlp c_fc", 768, 3072, 1 },
        { "Qwen3-8B q_proj", 4096, 4096, 0 },
        { "Qwen3-8B k_proj (8 kv heads x 128)", 4096, 1024, 0 },
        { "Qwen3-8B lm_head (V = 151936)", 4096, 151936, 0 },
    };
    for (size_t i = 0; i < sizeof L / sizeof L[0]; i++)
        printf("  %-34s %6d %6d %5s %15lld %17lld\n", L[i].name, L[i].ci, L[i].co,
               L[i].bias ? "yes" : "no", tw_linear_params(L[i].ci, L[i].co, L[i].bias),
               tw_linear_flops(1, L[i].ci, L[i].co));
    long long q_params = tw_linear_params(4096, 4096, 0);
    long long emb_params = tw_linear_params(4096, 151936, 0);
    lesson_say("Qwen3-8B's embedding table is V x C = 151936 x 4096 = %lld parameters, %.1f%% of "
               "its published 8,190,735,360. Looking a token up costs nothing; its output head "
               "(not tied: tie_word_embeddings is false, so a second matrix of the same size) "
               "costs %.2f GFLOPs for every generated token.",
               emb_params, 100.0 * (double)emb_params / 8190735360.0,
               1e-9 * (double)tw_linear_flops(1, 4096, 151936));
    lesson_expect("q_proj of Qwen3-8B has 16,777,216 weights", q_params == 16777216LL);
    lesson_expect("GPT-2 c_fc has 2,362,368 parameters (768*3072 + 3072)",
                  tw_linear_params(768, 3072, 1) == 2362368LL);
}

// The tensors above as .npy, and the embedded sentence as a labelled matrix for gnuplot.
static void write_files(const float *table, const float *emb, const float *y) {
    const int *ids = IDS;
    const char *words[T];
    for (int t = 0; t < T; t++) words[t] = VOCAB[ids[t]];
    lesson_section("Files");
    lesson_say("Every tensor above is saved as .npy (numpy.load reads it) and the embedded "
               "sentence also as a labelled matrix for gnuplot.");
    int32_t ids32[6];
    for (int t = 0; t < T; t++) ids32[t] = ids[t];
    long tshape[1] = { T };
    lesson_write_npy2("table.npy", table, V, C);
    lesson_write_npy_i32("ids.npy", ids32, tshape, 1);
    lesson_write_npy2("embedded.npy", emb, T, C);
    lesson_write_npy2("linear_x.npy", X, Tl, Ci);
    lesson_write_npy2("linear_W.npy", W, Co, Ci);
    lesson_write_npy2("linear_b.npy", B, Co, 0);
    lesson_write_npy2("linear_y.npy", y, Tl, Co);
    const char *dims[C] = { "c0", "c1", "c2", "c3" };
    lesson_write_matrix_dat("embedded.dat", emb, T, C, words, dims,
                            "lesson 2: embedded sentence; rows: tokens, columns: embedding "
                            "dimensions, values: table[ids[t]][c]");
    lesson_plot("02_embeddings.gp", "embedded.dat", "embedded.png");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 2 }, NULL);
    float *table = embedding_table(a.seed);
    float *emb = look_up_sentence(table);
    lookup_is_a_product(table, emb);
    float *y = linear_by_hand();
    projection_costs();
    write_files(table, emb, y);
    lesson_say("Try it: make exercise14 (the embedding backward: a scatter-add)");
    return lesson_finish();
}
