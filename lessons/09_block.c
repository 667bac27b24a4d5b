// Lesson 9: the transformer block, four model styles, and the 2017 encoder-decoder.
//
// Teaches: a block is two sub-layers (attention, FFN), each wrapped in a residual connection and a
// norm, arranged pre-norm (GPT-2, Llama, Qwen: x + f(Norm(x))) or post-norm (2017: Norm(x + f(x))),
// checked against tw_block_forward by composing the library's pieces by hand; how the residual
// stream's size evolves layer by layer in each arrangement (a picture); a tiny model's forward
// pass from tokens to next-token probabilities in the four styles (2017, GPT-2, Llama, Qwen3),
// with every intermediate dumped; and the 2017 encoder-decoder, whose decoder reads the encoder's
// output through cross-attention (its map drawn with source and target tokens).
// Reads as its steps: block_rebuilt_by_hand, measure/print/explain_residual_norms, four_styles
// (run_style per style), encoder_decoder (decoder_forward, print_cross_map).
// Calls: tw_model_config_preset, tw_model_init, tw_model_randomize, tw_model_state_init,
//        tw_model_forward, tw_model_count_params, tw_block_forward, tw_block_acts_init,
//        tw_mha_forward, tw_mha_acts_init, tw_layernorm_forward, tw_ffn_forward,
//        tw_embedding_forward, tw_posenc_sinusoidal, tw_add_inplace, tw_softmax_rows,
//        tw_linear_forward.
// Build & run: make lesson9 && ./lesson9 [--seed N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/09_residual_norms.gp  (reads out/lesson9/residual_norms.dat)
//              gnuplot viz/09_cross_attention.gp (reads out/lesson9/cross_attention.dat)
// Writes: 2017_embed.npy 2017_attn_norm.npy 2017_attn_out.npy 2017_resid_mid.npy 2017_ffn_norm.npy
// Writes: 2017_ffn_out.npy 2017_resid_post.npy 2017_pattern.npy 2017_logits.npy 2017_probs.npy
// Writes: gpt2_embed.npy gpt2_attn_norm.npy gpt2_attn_out.npy gpt2_resid_mid.npy gpt2_ffn_norm.npy
// Writes: gpt2_ffn_out.npy gpt2_resid_post.npy gpt2_pattern.npy gpt2_logits.npy gpt2_probs.npy
// Writes: llama_embed.npy llama_attn_norm.npy llama_attn_out.npy llama_resid_mid.npy
// Writes: llama_ffn_norm.npy llama_ffn_out.npy llama_resid_post.npy llama_pattern.npy
// Writes: llama_logits.npy llama_probs.npy
// Writes: qwen3_embed.npy qwen3_attn_norm.npy qwen3_attn_out.npy qwen3_resid_mid.npy
// Writes: qwen3_ffn_norm.npy qwen3_ffn_out.npy qwen3_resid_post.npy qwen3_pattern.npy
// Writes: qwen3_logits.npy qwen3_probs.npy
// Writes: residual_norms.npy residual_norms.dat encoder_out.npy decoder_out.npy
// Writes: cross_attention.npy cross_attention.dat
// Pictures: residual_norms.png cross_attention.png
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    9, "The transformer block, four styles, and the encoder-decoder",
    "A transformer is a stack of identical blocks. Each block has an attention sub-layer (tokens "
    "exchange information) and an FFN sub-layer (each token computes on its own), each added back "
    "to a residual stream, with a norm either before each sub-layer (pre-norm: GPT-2, Llama, "
    "Qwen) or after each addition (post-norm: the 2017 paper). This lesson rebuilds one block of "
    "each kind from the library's pieces and checks it against tw_block_forward, follows the size "
    "of the residual stream through 12 layers, runs a tiny model of each style (2017, GPT-2, "
    "Llama, Qwen3) from tokens to next-token probabilities with every intermediate saved as .npy, "
    "and builds the 2017 encoder-decoder, whose decoder attends to the encoder's output "
    "(cross-attention)."
};

static const char *const STYLES[4] = { "2017", "gpt2", "llama", "qwen3" };

// The k largest entries of p (n), largest first.
static void top_k(int *idx, int k, const float *p, int n) {
    for (int r = 0; r < k; r++) {
        int best = -1;
        for (int v = 0; v < n; v++) {
            int taken = 0;
            for (int q = 0; q < r; q++) taken |= idx[q] == v;
            if (!taken && (best < 0 || p[v] > p[best])) best = v;
        }
        idx[r] = best;
    }
}

// Mean Euclidean norm of the T rows of x (T, C).
static double mean_row_norm(const float *x, int T, int C) {
    double s = 0.0;
    for (int t = 0; t < T; t++) {
        double ss = 0.0;
        for (int c = 0; c < C; c++) ss += (double)x[t * C + c] * x[t * C + c];
        s += sqrt(ss);
    }
    return s / T;
}

// Prints one step of the block: its formula, then token 0's first values and the row's length.
static void show_step(int show, const char *formula, const float *row, int C) {
    if (!show) return;
    double ss = 0.0;
    for (int c = 0; c < C; c++) ss += (double)row[c] * row[c];
    printf("    %-24s token 0: [%8.4f %8.4f %8.4f %8.4f ...]  length %.4f\n", formula,
           (double)row[0], (double)row[1], (double)row[2], (double)row[3], sqrt(ss));
}

// One LayerNorm/classic-FFN block (the 2017 and GPT-2 styles) composed from the library's
// pieces, following block.h's formulas; show 1 prints each step for token 0.
// out: (T, C)   x: (T, C)
static void block_by_hand(float *out, const float *x, const tw_block_config *cfg,
                          const tw_block_weights *w, int T, int show) {
    const int C = cfg->attn.d_model, F = cfg->ffn_hidden;
    const float eps = cfg->norm_eps;
    float *n1 = lesson_alloc((long)T * C), *a = lesson_alloc((long)T * C);
    float *h = lesson_alloc((long)T * C), *n2 = lesson_alloc((long)T * C);
    float *f = lesson_alloc((long)T * C), *hid = lesson_alloc((long)T * F);
    tw_mha_acts s = { 0 };
    LESSON_TRY(tw_mha_acts_init(&s, &cfg->attn, T, T));
    if (cfg->prenorm) {
        // h = x + Attn(Norm1(x));  y = h + FFN(Norm2(h))
        show_step(show, "x (token + position)", x, C);
        tw_layernorm_forward(n1, NULL, NULL, x, w->norm1_w, w->norm1_b, T, C, eps);
        show_step(show, "Norm1(x)", n1, C);
        tw_mha_forward(a, &s, NULL, n1, NULL, NULL, &cfg->attn, &w->attn, T, T, 0);
        show_step(show, "a = Attn(Norm1(x))", a, C);
        for (long i = 0; i < (long)T * C; i++) h[i] = x[i] + a[i];
        show_step(show, "h = x + a", h, C);
        tw_layernorm_forward(n2, NULL, NULL, h, w->norm2_w, w->norm2_b, T, C, eps);
        show_step(show, "Norm2(h)", n2, C);
        tw_ffn_forward(f, hid, n2, w->ffn_w1, w->ffn_b1, w->ffn_w2, w->ffn_b2, T, C, F, cfg->act);
        show_step(show, "f = FFN(Norm2(h))", f, C);
        for (long i = 0; i < (long)T * C; i++) out[i] = h[i] + f[i];
        show_step(show, "y = h + f", out, C);
    } else {
        // h = Norm1(x + Attn(x));  y = Norm2(h + FFN(h))
        show_step(show, "x (token + position)", x, C);
        tw_mha_forward(a, &s, NULL, x, NULL, NULL, &cfg->attn, &w->attn, T, T, 0);
        show_step(show, "a = Attn(x)", a, C);
        for (long i = 0; i < (long)T * C; i++) n1[i] = x[i] + a[i];
        show_step(show, "x + a", n1, C);
        tw_layernorm_forward(h, NULL, NULL, n1, w->norm1_w, w->norm1_b, T, C, eps);
        show_step(show, "h = Norm1(x + a)", h, C);
        tw_ffn_forward(f, hid, h, w->ffn_w1, w->ffn_b1, w->ffn_w2, w->ffn_b2, T, C, F, cfg->act);
        show_step(show, "f = FFN(h)", f, C);
        for (long i = 0; i < (long)T * C; i++) n2[i] = h[i] + f[i];
        show_step(show, "h + f", n2, C);
        tw_layernorm_forward(out, NULL, NULL, n2, w->norm2_w, w->norm2_b, T, C, eps);
        show_step(show, "y = Norm2(h + f)", out, C);
    }
    tw_mha_acts_free(&s);
}

// Copies one field of every layer's block activations into a (L, T, n) array.
static float *stack_layers(const tw_model_state *s, int L, int T, int n, const tw_tensor_info *t) {
    float *o = lesson_alloc((long)L * T * n);
    for (int l = 0; l < L; l++) {
        const float *src = tw_block_tensor(&s->layers[l], t);
        memcpy(o + (long)l * T * n, src, (size_t)T * n * sizeof(float));
    }
    return o;
}

static void write_stack(const char *style, const char *what, const float *x, long L, long T, long n) {
    char name[64];
    snprintf(name, sizeof name, "%s_%s.npy", style, what);
    long shape[3] = { L, T, n };
    lesson_write_npy(name, x, shape, 3);
}

// A random (rows, cols) weight matrix with the library's N(0, 0.02) init scaled up to `std`.
static float *weights(long rows, long cols, float std, uint64_t seed) {
    return lesson_randn(rows * cols, std, seed);
}

// ---- the toy vocabulary ----
// The tiny models have no tokenizer: they read characters from a 65-symbol toy vocabulary, one id
// per symbol (' ' is 0, 'a'..'z' are 1..26). Their weights are random, so whatever they "predict"
// is noise; the symbols only make the ids readable.
static const char VOCAB[] = " abcdefghijklmnopqrstuvwxyz.,!ABCDEFGHIJKLMNOPQRSTUVWXYZ012345678";
enum { TOY_V = (int)sizeof VOCAB - 1 };

static int char_id(char ch) { return (int)(strchr(VOCAB, ch) - VOCAB); }

// The symbol of an id, quoted, with the space shown as '_' (lesson 1's convention).
static const char *symbol(int id) {
    char s[16];
    if (id < 0 || id >= TOY_V) snprintf(s, sizeof s, "id %d", id);
    else snprintf(s, sizeof s, "'%c'", id == 0 ? '_' : VOCAB[id]);
    return lesson_strdup(s);
}

// ---- 1. one block, both arrangements ----
static void block_rebuilt_by_hand(const int *tokens, int T, const char *text, uint64_t seed) {
    tw_model_config g2;
    LESSON_TRY(tw_model_config_preset(&g2, "gpt2"));
    lesson_say("  pre-norm  (GPT-2, Llama, Qwen):  h = x + Attn(Norm1(x));   y = h + FFN(Norm2(h))\n"
               "  post-norm (2017):                h = Norm1(x + Attn(x));   y = Norm2(h + FFN(h))\n"
               "Both are rebuilt below from tw_layernorm_forward, tw_mha_forward and tw_ffn_forward, "
               "step by step, on the tiny GPT-2 and 2017 models (C = %d, %d heads, F = %d, random "
               "weights) reading the %d characters of \"%s\". Each line is one step: token 0's first "
               "four numbers and the length of its row.",
               g2.block.attn.d_model, g2.block.attn.n_head, g2.block.ffn_hidden, T, text);
    for (int k = 0; k < 2; k++) {
        const char *style = k == 0 ? "gpt2" : "2017";
        tw_model_config c;
        LESSON_TRY(tw_model_config_preset(&c, style));
        tw_model m = { 0 };
        LESSON_TRY(tw_model_init(&m, &c));
        tw_model_randomize(&m, seed);
        tw_model_state st = { 0 };
        LESSON_TRY(tw_model_state_init(&st, &m, T, 0));
        LESSON_TRY(tw_model_forward(&st, &m, tokens, T, 0));
        const int C = c.block.attn.d_model;
        printf("  %s, %s, block 0, token 0 = %s:\n", style, k == 0 ? "pre-norm" : "post-norm",
               symbol(tokens[0]));
        float *y = lesson_alloc((long)T * C);
        block_by_hand(y, st.layers[0].attn_in, &c.block, &m.layers[0], T, 1);
        // layer 0's output is what enters layer 1
        char name[96];
        snprintf(name, sizeof name, "%s block 0 by hand == tw_block_forward", style);
        // same operations in the same order, so the results agree to the last bit
        lesson_expect_close(name, y, st.layers[1].attn_in, (long)T * C, 0.0f);
        tw_model_state_free(&st);
        tw_model_free(&m);
    }
    lesson_note("pre-norm adds each sub-layer's output to x untouched, so the row's length drifts; "
                "post-norm ends each sub-layer with a LayerNorm, which brings the length back to "
                "about sqrt(C) = %.2f times the gains", sqrt((double)g2.block.attn.d_model));
}

// ---- 2. the residual stream, layer by layer ----
enum { DEPTH = 12 };

// norms (DEPTH+1, 3): layer index, the pre-norm (GPT-2) and the post-norm (2017) model's mean row
// length after the embeddings (row 0) and after each block. Returns the width C (both have it).
static int measure_residual_norms(float *norms, const int *tokens, int T, uint64_t seed) {
    for (int k = 0; k < 2; k++) {
        tw_model_config c;
        LESSON_TRY(tw_model_config_preset(&c, k == 0 ? "gpt2" : "2017"));
        c.n_layer = DEPTH;
        tw_model m = { 0 };
        LESSON_TRY(tw_model_init(&m, &c));
        tw_model_randomize(&m, seed);
        tw_model_state st = { 0 };
        LESSON_TRY(tw_model_state_init(&st, &m, T, 0));
        LESSON_TRY(tw_model_forward(&st, &m, tokens, T, 0));
        const int C = c.block.attn.d_model;
        for (int l = 0; l <= DEPTH; l++) {
            const float *stream = l < DEPTH ? st.layers[l].attn_in : st.layers[DEPTH - 1].resid_post;
            norms[l * 3 + 0] = (float)l;
            norms[l * 3 + 1 + k] = (float)mean_row_norm(stream, T, C);
        }
        tw_model_state_free(&st);
        tw_model_free(&m);
        if (k == 1) return C;
    }
    return 0;
}

static void print_residual_norms(const float *norms) {
    printf("  %14s %22s %22s\n", "after layer", "pre-norm (GPT-2)", "post-norm (2017)");
    for (int l = 0; l <= DEPTH; l++)
        if (l == 0) printf("  %14s %22.4f %22.4f\n", "embeddings", (double)norms[1], (double)norms[2]);
        else printf("  %14d %22.4f %22.4f\n", l, (double)norms[l * 3 + 1], (double)norms[l * 3 + 2]);
}

static void explain_residual_norms(const float *norms, int C) {
    const double sqrtC = sqrt((double)C), Cd = C;
    lesson_note("where the 2017 column's first number, %.1f, comes from: its embeddings are drawn "
                "from N(0, 1), so a row has length about sqrt(C) = %.2f; the 2017 model multiplies "
                "them by sqrt(C), which makes it about C = %.0f; the sinusoidal positions add a "
                "vector of length sqrt(C/2) = %.2f (C/2 pairs with sin^2 + cos^2 = 1), on average "
                "at right angles, so sqrt(C^2 + C/2) = %.2f is expected. GPT-2's embeddings and "
                "learned positions are N(0, 0.02^2): sqrt(2 C) x 0.02 = %.3f.", (double)norms[2],
                sqrtC, Cd, sqrt(Cd / 2), sqrt(Cd * Cd + Cd / 2), sqrt(2 * Cd) * 0.02);
    lesson_say("Post-norm ends every block with a LayerNorm, so the stream's size is pinned near "
               "sqrt(C) = %.2f times the gains, whatever happened inside. Pre-norm never "
               "normalises the stream itself: every block adds its outputs, and over many layers "
               "the size grows (here from %.3f after the embeddings to %.3f after layer %d; with "
               "these small random weights the growth is modest, in trained models it is much "
               "larger); the final norm before the output head takes care of it. Pre-norm's "
               "advantage is in training: the residual path from the output back to the input is "
               "a plain sum, so gradients reach early layers without passing through a LayerNorm "
               "in every block.", sqrtC, (double)norms[1], (double)norms[DEPTH * 3 + 1], DEPTH);
    // Growth is a trend, not a rule for every layer: a block's output is not at right angles to
    // the stream, and when it points partly against it the sum is shorter. Name those layers.
    char fell[256] = "";
    int n_fell = 0, len = 0;
    for (int l = 1; l <= DEPTH; l++)
        if (norms[l * 3 + 1] < norms[(l - 1) * 3 + 1] && len < (int)sizeof fell - 8) {
            len += snprintf(fell + len, sizeof fell - (size_t)len, "%s%d", n_fell ? ", " : "", l);
            n_fell++;
        }
    if (n_fell > 0)
        lesson_note("not at every layer: the pre-norm column falls after layer%s %s. A block adds a "
                    "vector that can point partly against the stream, and then the sum is "
                    "shorter; only the trend over many layers is upward.", n_fell > 1 ? "s" : "", fell);
    else
        lesson_note("with this seed the pre-norm column rises at every layer; with other seeds some "
                    "layers fall, since a block's output can point partly against the stream.");
    lesson_expect("pre-norm stream after the last layer is over twice its size after the embeddings",
                  norms[DEPTH * 3 + 1] > 2 * norms[1]);
    int pinned = 1;
    for (int l = 1; l <= DEPTH; l++) if (fabs(norms[l * 3 + 2] - sqrtC) > 0.25 * sqrtC) pinned = 0;
    lesson_expect("post-norm stream stays within 25% of sqrt(C)", pinned);
}

static void write_residual_norms(const float *norms) {
    lesson_write_npy2("residual_norms.npy", norms, DEPTH + 1, 3);
    static const char *const RCOLS[3] = { "layer", "prenorm_gpt2", "postnorm_2017" };
    lesson_write_columns("residual_norms.dat", norms, DEPTH + 1, 3, RCOLS,
                         "lesson 9: mean Euclidean norm of the residual stream rows after each "
                         "layer (0 = embeddings), 12-layer tiny models, random weights");
    lesson_plot("09_residual_norms.gp", "residual_norms.dat", "residual_norms.png");
}

// ---- 3. four styles ----
static void print_style_row(const char *style, const tw_model *m) {
    const tw_model_config *c = &m->cfg;
    const tw_block_config *b = &c->block;
    char heads[16];
    snprintf(heads, sizeof heads, "%d/%d", b->attn.n_head, b->attn.n_kv_head);
    const char *pos = c->pos == TW_POS_SINUSOIDAL ? "sinusoidal" : c->pos == TW_POS_LEARNED
                    ? "learned" : b->attn.rope == TW_ROPE_ADJACENT ? "RoPE adj." : "RoPE halves";
    printf("  %-6s %-9s %-9s %-12s %-9s %-6s %-5s %8ld\n", style,
           b->norm == TW_NORM_LAYER ? "LayerNorm" : "RMSNorm", b->prenorm ? "pre" : "post", pos,
           b->ffn == TW_FFN_SWIGLU ? "SwiGLU" : tw_act_name(b->act), heads, c->tied ? "yes" : "no",
           tw_model_count_params(m));
}

// The head is a Linear on the final hidden states: the last row's logits recomputed by hand.
static void check_head(const char *style, const tw_model *m, const tw_model_state *st, int T) {
    const int C = m->cfg.block.attn.d_model, V = m->cfg.vocab;
    float *last = lesson_alloc(V);
    tw_linear_forward(last, st->final_norm + (long)(T - 1) * C, m->head.f32, NULL, 1, C, V);
    char name[96];
    snprintf(name, sizeof name, "%s logits == final . head^T", style);
    lesson_expect_close(name, last, st->logits + (long)(T - 1) * V, V, 0.0f);
}

// The 3 most likely next symbols after the text, as symbols of the toy vocabulary.
static void show_guesses(const char *style, const float *p, int V, const char *text) {
    int top[3];
    top_k(top, 3, p, V);
    printf("         after \"%s\" the next symbol would be %s (p %.4f), %s (p %.4f) or %s (p %.4f); "
           "uniform: %.4f\n", text, symbol(top[0]), (double)p[top[0]], symbol(top[1]),
           (double)p[top[1]], symbol(top[2]), (double)p[top[2]], 1.0 / V);
    double psum = 0.0;
    for (int v = 0; v < V; v++) psum += p[v];
    char name[96];
    snprintf(name, sizeof name, "%s next-token probabilities sum to 1", style);
    lesson_expect_near(name, psum, 1.0, 1e-5);
}

// Every intermediate of a style's forward pass as <style>_<what>.npy, (layers, T, width).
static void dump_style(const char *style, const tw_model *m, const tw_model_state *st,
                       const float *probs, int T) {
    const int C = m->cfg.block.attn.d_model, H = m->cfg.block.attn.n_head, V = m->cfg.vocab;
    const int nl = m->cfg.n_layer;
    float *embed = lesson_alloc((long)T * C);
    memcpy(embed, st->embed, (size_t)T * C * sizeof(float));
    write_stack(style, "embed", embed, 1, T, C);
    // Every (T, C) tensor of the block's table (attn_in is the previous layer's resid_post),
    // then the attention pattern, under the table's names (the names ./generate --dump uses).
    for (int i = 0; i < tw_block_n_tensors; i++) {
        const tw_tensor_info *t = &tw_block_tensors[i];
        if (strcmp(t->shape, "TC") != 0 || strcmp(t->name, "attn_in") == 0 ||
            (t->flags & (TW_TENSOR_WORK | TW_TENSOR_STATS)) || !tw_block_has(&m->cfg.block, t->has))
            continue;
        write_stack(style, t->name, stack_layers(st, nl, T, C, t), nl, T, C);
    }
    float *aw = lesson_alloc((long)nl * H * T * T);
    for (int l = 0; l < nl; l++)
        memcpy(aw + (long)l * H * T * T, st->layers[l].attn.pattern, (size_t)H * T * T * sizeof(float));
    char nm[64];
    snprintf(nm, sizeof nm, "%s_pattern.npy", style);
    long ash[4] = { nl, H, T, T };
    lesson_write_npy(nm, aw, ash, 4);
    snprintf(nm, sizeof nm, "%s_logits.npy", style);
    lesson_write_npy2(nm, st->logits, T, V);
    snprintf(nm, sizeof nm, "%s_probs.npy", style);
    lesson_write_npy2(nm, probs, T, V);
}

// One style from tokens to next-token probabilities: its row of the table, checks, guesses, dumps.
static void run_style(const char *style, const int *tokens, int T, const char *text, uint64_t seed) {
    tw_model_config c;
    LESSON_TRY(tw_model_config_preset(&c, style));
    tw_model m = { 0 };
    LESSON_TRY(tw_model_init(&m, &c));
    tw_model_randomize(&m, seed);
    print_style_row(style, &m);
    tw_model_state st = { 0 };
    LESSON_TRY(tw_model_state_init(&st, &m, T, 0));
    LESSON_TRY(tw_model_forward(&st, &m, tokens, T, 0));
    const int V = c.vocab;
    if (V != TOY_V) lesson_die("the %s preset has %d symbols, the toy vocabulary %d", style, V, TOY_V);
    float *probs = lesson_alloc((long)T * V);
    tw_softmax_rows(probs, st.logits, T, V, 1.0f);
    check_head(style, &m, &st, T);
    show_guesses(style, probs + (long)(T - 1) * V, V, text);
    dump_style(style, &m, &st, probs, T);
    tw_model_state_free(&st);
    tw_model_free(&m);
}

static void four_styles(const int *tokens, int T, const char *text, uint64_t seed) {
    lesson_say("Each preset is a 2-layer model with random weights over the %d-symbol toy "
               "vocabulary (space, a-z, '.', ',', '!', A-Z, 0-8; the tiny models have no "
               "tokenizer), so the guesses below mean nothing yet: an untrained model's noise, shown as symbols. What matters "
               "is the path the numbers take. Every intermediate is saved as <style>_<what>.npy "
               "with shape (layers, T, width).", TOY_V);
    printf("  %-6s %-9s %-9s %-12s %-9s %-6s %-5s %8s\n", "style", "norm", "place", "positions",
           "FFN", "heads", "tied", "params");
    for (int k = 0; k < 4; k++) run_style(STYLES[k], tokens, T, text, seed + (uint64_t)k);
    lesson_note("the 2017 model is nearly certain of its (meaningless) guess: it has no final "
                "norm, its stream has length about sqrt(C), and its tied output head reuses "
                "embedding rows drawn from N(0, 1), the 2017 scale, so its logits are tens of "
                "units apart. The other three use N(0, 0.02) embeddings and stay near uniform.");
    lesson_note("the four differ only in choices: where the norm sits and which norm, how "
                "positions enter (added tables or rotations inside attention), the FFN, how many "
                "kv heads, biases, tied output head. The skeleton, embed -> blocks -> norm -> "
                "head -> softmax, is the same.");
}

// ---- 4. the 2017 encoder-decoder ----
// A toy translation pair, one token per word. The ids are arbitrary entries of the toy
// vocabulary: the words only label the rows and columns.
static const char *const SRC[] = { "le", "chat", "noir", "dort", "." };
static const char *const TGT[] = { "<s>", "the", "black", "cat", "sleeps" };
enum { SRC_T = 5, TGT_T = 5 };
static const int SRC_IDS[SRC_T] = { 30, 31, 32, 33, 27 }, TGT_IDS[TGT_T] = { 40, 20, 2, 3, 19 };

// x = embedding * sqrt(C) + sinusoidal positions (pe: (n, C)), the 2017 model's input.   x: (n, C)
static void embed_2017(float *x, const int *ids, int n, const tw_model *m, const float *pe) {
    const int C = m->cfg.block.attn.d_model;
    LESSON_TRY(tw_embedding_forward(x, ids, m->tok_emb, n, m->cfg.vocab, C));
    for (long i = 0; i < (long)n * C; i++) x[i] *= sqrtf((float)C);
    tw_add_inplace(x, pe, (long)n * C);
}

typedef struct {
    tw_mha_config   self_cfg, cross_cfg;
    tw_mha_weights  cross_w;    // fresh weights for cross-attention
    const tw_block_weights *w;  // self-attention, norms and FFN: layer 1 of the tiny model
    float          *ones;       // (C) the gain of the norm after cross-attention
    tw_mha_acts  self_s, cross_s;
} decoder_layer;

// One 2017 decoder layer: causal self-attention, cross-attention to enc (S, C), FFN, each followed
// by add & LayerNorm.   out: (T, C)   x: (T, C)   head 0's cross-attention map stays in cross_s
static void decoder_forward(float *out, decoder_layer *d, const float *x, const float *enc, int T,
                            int S, int C, int F) {
    float *sa = lesson_alloc((long)T * C), *h1 = lesson_alloc((long)T * C);
    float *ca = lesson_alloc((long)T * C), *h2 = lesson_alloc((long)T * C);
    float *ff = lesson_alloc((long)T * C), *hid = lesson_alloc((long)T * F);
    tw_mha_forward(sa, &d->self_s, NULL, x, NULL, NULL, &d->self_cfg, &d->w->attn, T, T, 0);
    tw_add_inplace(sa, x, (long)T * C);
    tw_layernorm_forward(h1, NULL, NULL, sa, d->w->norm1_w, d->w->norm1_b, T, C, 1e-5f);
    tw_mha_forward(ca, &d->cross_s, NULL, h1, enc, NULL, &d->cross_cfg, &d->cross_w, T, S, 0);   // x_kv = encoder
    tw_add_inplace(ca, h1, (long)T * C);
    tw_layernorm_forward(h2, NULL, NULL, ca, d->ones, NULL, T, C, 1e-5f);
    tw_ffn_forward(ff, hid, h2, d->w->ffn_w1, d->w->ffn_b1, d->w->ffn_w2, d->w->ffn_b2, T, C, F, TW_ACT_RELU);
    tw_add_inplace(ff, h2, (long)T * C);
    tw_layernorm_forward(out, NULL, NULL, ff, d->w->norm2_w, d->w->norm2_b, T, C, 1e-5f);
}

// The cross-attention map with its sentences: target words down, source words across.
static void print_cross_map(const float *map) {
    printf("  cross-attention weights, head 0: each row is a target word (the query) spreading "
           "weight 1 over the source words\n  %-8s", "");
    for (int s = 0; s < SRC_T; s++) printf(" %8s", SRC[s]);
    printf("\n");
    for (int t = 0; t < TGT_T; t++) {
        printf("  %-8s", TGT[t]);
        for (int s = 0; s < SRC_T; s++) printf(" %8.4f", (double)map[t * SRC_T + s]);
        printf("\n");
    }
}

static void encoder_decoder(uint64_t seed) {
    lesson_say("The original Transformer translates: an encoder reads the whole source sentence "
               "with attention in both directions (no mask), and a decoder writes the target one "
               "token at a time. Each decoder layer has three sub-layers: causal self-attention "
               "over the target so far, cross-attention whose queries come from the decoder and "
               "whose keys and values come from the encoder's output, and the FFN, each followed "
               "by add & LayerNorm (post-norm). Here: one encoder block and one decoder layer of "
               "the tiny 2017 model, random weights, on \"le chat noir dort .\" -> \"<s> the "
               "black cat sleeps\", one token per word.");
    tw_model_config c17;
    LESSON_TRY(tw_model_config_preset(&c17, "2017"));
    tw_model m17 = { 0 };
    LESSON_TRY(tw_model_init(&m17, &c17));
    tw_model_randomize(&m17, seed);
    const int C = c17.block.attn.d_model, F = c17.block.ffn_hidden;
    float *src = lesson_alloc((long)SRC_T * C), *tgt = lesson_alloc((long)TGT_T * C);
    float *pe = lesson_alloc((long)TGT_T * C);
    tw_posenc_sinusoidal(pe, TGT_T, C, 0);
    embed_2017(src, SRC_IDS, SRC_T, &m17, pe);
    embed_2017(tgt, TGT_IDS, TGT_T, &m17, pe);
    // encoder: the 2017 block with the causal mask switched off
    tw_block_config enc_cfg = c17.block;
    enc_cfg.attn.causal = 0;
    tw_block_acts es = { 0 };
    LESSON_TRY(tw_block_acts_init(&es, &enc_cfg, SRC_T, SRC_T));
    float *enc = lesson_alloc((long)SRC_T * C);
    tw_block_forward(enc, &es, NULL, src, &enc_cfg, &m17.layers[0], SRC_T, 0);
    // decoder layer: self-attention (layer 1's weights), cross-attention (fresh weights), FFN
    decoder_layer d = { .self_cfg = c17.block.attn, .cross_cfg = c17.block.attn, .w = &m17.layers[1] };
    d.cross_cfg.causal = 0;
    d.cross_w = (tw_mha_weights){ .wq = tw_weight_fp32(weights(C, C, 0.2f, seed + 10)),
                                  .wk = tw_weight_fp32(weights(C, C, 0.2f, seed + 11)),
                                  .wv = tw_weight_fp32(weights(C, C, 0.2f, seed + 12)),
                                  .wo = tw_weight_fp32(weights(C, C, 0.2f, seed + 13)) };
    d.ones = lesson_alloc(C);
    for (int i = 0; i < C; i++) d.ones[i] = 1.0f;
    LESSON_TRY(tw_mha_acts_init(&d.self_s, &d.self_cfg, TGT_T, TGT_T));
    LESSON_TRY(tw_mha_acts_init(&d.cross_s, &d.cross_cfg, TGT_T, SRC_T));
    float *dec = lesson_alloc((long)TGT_T * C), *cross_map = lesson_alloc((long)TGT_T * SRC_T);
    decoder_forward(dec, &d, tgt, enc, TGT_T, SRC_T, C, F);
    memcpy(cross_map, d.cross_s.pattern, (size_t)TGT_T * SRC_T * sizeof(float));   // head 0: (T, S)
    // the causal mask: changing the last target word must not move the rows before it
    int ids2[TGT_T];
    memcpy(ids2, TGT_IDS, sizeof ids2);
    ids2[TGT_T - 1] = 50;
    float *tgt2 = lesson_alloc((long)TGT_T * C), *dec2 = lesson_alloc((long)TGT_T * C);
    embed_2017(tgt2, ids2, TGT_T, &m17, pe);
    decoder_forward(dec2, &d, tgt2, enc, TGT_T, SRC_T, C, F);
    lesson_expect_close("decoder rows 0..3 ignore a change to target token 4", dec2, dec,
                        (long)(TGT_T - 1) * C, 0.0f);
    printf("  encoder input (%d, %d) -> encoder output (%d, %d); decoder input (%d, %d) -> "
           "decoder output (%d, %d)\n", SRC_T, C, SRC_T, C, TGT_T, C, TGT_T, C);
    print_cross_map(cross_map);
    int all_pos = 1;
    for (long i = 0; i < (long)TGT_T * SRC_T; i++) all_pos &= cross_map[i] > 0.0f;
    lesson_expect("cross-attention has no causal mask: every source token visible", all_pos);
    lesson_note("even the first target token (<s>) attends to the whole source sentence: the "
                "source is fully known before decoding starts, so nothing is hidden. In a trained "
                "translation model the map lines up words with their translations (\"black\" on "
                "\"noir\"); with random weights it is only the mechanism you see here.");
    lesson_write_npy2("encoder_out.npy", enc, SRC_T, C);
    lesson_write_npy2("decoder_out.npy", dec, TGT_T, C);
    lesson_write_npy2("cross_attention.npy", cross_map, TGT_T, SRC_T);
    lesson_write_matrix_dat("cross_attention.dat", cross_map, TGT_T, SRC_T, TGT, SRC,
                            "lesson 9: decoder cross-attention weights, head 0; rows: target "
                            "token (query), columns: source token (key)");
    lesson_plot("09_cross_attention.gp", "cross_attention.dat", "cross_attention.png");
    tw_block_acts_free(&es);
    tw_mha_acts_free(&d.self_s);
    tw_mha_acts_free(&d.cross_s);
    tw_model_free(&m17);
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 9 }, NULL);
    const char *text = "the cat";
    const int T = (int)strlen(text);
    int tokens[16];
    for (int t = 0; t < T; t++) tokens[t] = char_id(text[t]);

    lesson_section("A block, pre-norm and post-norm, rebuilt by hand");
    block_rebuilt_by_hand(tokens, T, text, a.seed);

    lesson_section("The residual stream through 12 layers");
    lesson_say("Give the tiny GPT-2 (pre-norm) and 2017 (post-norm) models %d layers and follow "
               "the average length of a token's vector after each block.", DEPTH);
    float *norms = lesson_alloc((long)(DEPTH + 1) * 3);                      // (DEPTH+1, 3)
    const int C = measure_residual_norms(norms, tokens, T, a.seed + 1);
    print_residual_norms(norms);
    explain_residual_norms(norms, C);
    write_residual_norms(norms);

    lesson_section("Tokens to next-token probabilities in four styles");
    four_styles(tokens, T, text, a.seed + 10);

    lesson_section("The 2017 encoder-decoder and cross-attention");
    encoder_decoder(a.seed + 20);
    lesson_say("Try it: make exercise16 (a pre-norm block's residual wiring)");
    return lesson_finish();
}
