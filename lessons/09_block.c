// Lesson 9: the transformer block, four model styles, and the 2017 encoder-decoder.
//
// Teaches: a block is two sub-layers (attention, FFN), each wrapped in a residual connection and a
// norm, arranged pre-norm (GPT-2, Llama, Qwen: x + f(Norm(x))) or post-norm (2017: Norm(x + f(x))),
// checked against tw_block_forward by composing the library's pieces by hand; how the residual
// stream's size evolves layer by layer in each arrangement (a picture); a tiny model's forward
// pass from tokens to next-token probabilities in the four styles (2017, GPT-2, Llama, Qwen3),
// with every intermediate dumped; and the 2017 encoder-decoder, whose decoder reads the encoder's
// output through cross-attention (its map drawn with source and target tokens).
// Calls: tw_model_config_preset, tw_model_init, tw_model_randomize, tw_model_state_init,
//        tw_model_forward, tw_model_count_params, tw_block_forward, tw_block_scratch_init,
//        tw_mha_forward, tw_mha_scratch_init, tw_layernorm_forward, tw_ffn_forward,
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

// Characters of the toy text as token ids: 'a'..'z' -> 1..26, ' ' -> 0.
static int char_id(char ch) { return ch == ' ' ? 0 : ch - 'a' + 1; }

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

// One LayerNorm/classic-FFN block (the 2017 and GPT-2 styles) composed from the library's
// pieces, following block.h's formulas. out: (T, C)   x: (T, C)
static void block_by_hand(float *out, const float *x, const tw_block_config *cfg,
                          const tw_block_weights *w, int T) {
    const int C = cfg->attn.d_model, F = cfg->ffn_hidden;
    const float eps = cfg->norm_eps;
    float *n1 = lesson_alloc((long)T * C), *a = lesson_alloc((long)T * C);
    float *h = lesson_alloc((long)T * C), *n2 = lesson_alloc((long)T * C);
    float *f = lesson_alloc((long)T * C), *hid = lesson_alloc((long)T * F);
    tw_mha_scratch s = { 0 };
    LESSON_TRY(tw_mha_scratch_init(&s, &cfg->attn, T, T));
    if (cfg->prenorm) {
        // h = x + Attn(Norm1(x));  y = h + FFN(Norm2(h))
        tw_layernorm_forward(n1, NULL, NULL, x, w->norm1_w, w->norm1_b, T, C, eps);
        tw_mha_forward(a, &s, NULL, n1, NULL, NULL, &cfg->attn, &w->attn, T, T, 0);
        for (long i = 0; i < (long)T * C; i++) h[i] = x[i] + a[i];
        tw_layernorm_forward(n2, NULL, NULL, h, w->norm2_w, w->norm2_b, T, C, eps);
        tw_ffn_forward(f, hid, n2, w->ffn_w1, w->ffn_b1, w->ffn_w2, w->ffn_b2, T, C, F, cfg->act);
        for (long i = 0; i < (long)T * C; i++) out[i] = h[i] + f[i];
    } else {
        // h = Norm1(x + Attn(x));  y = Norm2(h + FFN(h))
        tw_mha_forward(a, &s, NULL, x, NULL, NULL, &cfg->attn, &w->attn, T, T, 0);
        for (long i = 0; i < (long)T * C; i++) n1[i] = x[i] + a[i];
        tw_layernorm_forward(h, NULL, NULL, n1, w->norm1_w, w->norm1_b, T, C, eps);
        tw_ffn_forward(f, hid, h, w->ffn_w1, w->ffn_b1, w->ffn_w2, w->ffn_b2, T, C, F, cfg->act);
        for (long i = 0; i < (long)T * C; i++) n2[i] = h[i] + f[i];
        tw_layernorm_forward(out, NULL, NULL, n2, w->norm2_w, w->norm2_b, T, C, eps);
    }
    tw_mha_scratch_free(&s);
}

// Copies one field of every layer's block scratch into a (L, T, n) array.
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

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 9 }, NULL);
    const char *text = "the cat";
    const int T = (int)strlen(text);
    int tokens[16];
    for (int t = 0; t < T; t++) tokens[t] = char_id(text[t]);

    // ---- 1. one block, both arrangements ----
    lesson_section("A block, pre-norm and post-norm, rebuilt by hand");
    tw_model_config g2;
    LESSON_TRY(tw_model_config_preset(&g2, "gpt2"));
    lesson_say("  pre-norm  (GPT-2, Llama, Qwen):  h = x + Attn(Norm1(x));   y = h + FFN(Norm2(h))\n"
               "  post-norm (2017):                h = Norm1(x + Attn(x));   y = Norm2(h + FFN(h))\n"
               "Both are rebuilt below from tw_layernorm_forward, tw_mha_forward and tw_ffn_forward "
               "and compared with tw_block_forward, on the tiny GPT-2 and 2017 models (C = %d, %d "
               "heads, F = %d, random weights) reading the %d characters of \"%s\".",
               g2.block.attn.d_model, g2.block.attn.n_head, g2.block.ffn_hidden, T, text);
    for (int k = 0; k < 2; k++) {
        const char *style = k == 0 ? "gpt2" : "2017";
        tw_model_config c;
        LESSON_TRY(tw_model_config_preset(&c, style));
        tw_model m = { 0 };
        LESSON_TRY(tw_model_init(&m, &c));
        tw_model_randomize(&m, a.seed);
        tw_model_state st = { 0 };
        LESSON_TRY(tw_model_state_init(&st, &m, T, 0));
        LESSON_TRY(tw_model_forward(&st, &m, tokens, T, 0));
        const int C = c.block.attn.d_model;
        float *y = lesson_alloc((long)T * C);
        block_by_hand(y, st.layers[0].attn_in, &c.block, &m.layers[0], T);
        // layer 0's output is what enters layer 1
        char name[96];
        snprintf(name, sizeof name, "%s block 0 by hand == tw_block_forward", style);
        // same operations in the same order, so the results agree to the last bit
        lesson_expect_close(name, y, st.layers[1].attn_in, (long)T * C, 0.0f);
        tw_model_state_free(&st);
        tw_model_free(&m);
    }

    // ---- 2. the residual stream, layer by layer ----
    lesson_section("The residual stream through 12 layers");
    const int L = 12;
    lesson_say("Give the tiny GPT-2 (pre-norm) and 2017 (post-norm) models %d layers and follow "
               "the average length of a token's vector after each block.", L);
    float *norms = lesson_alloc((long)(L + 1) * 3);                          // (L+1, 3)
    for (int k = 0; k < 2; k++) {
        tw_model_config c;
        LESSON_TRY(tw_model_config_preset(&c, k == 0 ? "gpt2" : "2017"));
        c.n_layer = L;
        tw_model m = { 0 };
        LESSON_TRY(tw_model_init(&m, &c));
        tw_model_randomize(&m, a.seed + 1);
        tw_model_state st = { 0 };
        LESSON_TRY(tw_model_state_init(&st, &m, T, 0));
        LESSON_TRY(tw_model_forward(&st, &m, tokens, T, 0));
        const int C = c.block.attn.d_model;
        for (int l = 0; l <= L; l++) {
            const float *stream = l < L ? st.layers[l].attn_in : st.layers[L - 1].resid_post;
            norms[l * 3 + 0] = (float)l;
            norms[l * 3 + 1 + k] = (float)mean_row_norm(stream, T, C);
        }
        tw_model_state_free(&st);
        tw_model_free(&m);
    }
    printf("  %14s %22s %22s\n", "after layer", "pre-norm (GPT-2)", "post-norm (2017)");
    for (int l = 0; l <= L; l++)
        if (l == 0) printf("  %14s %22.4f %22.4f\n", "embeddings", (double)norms[1], (double)norms[2]);
        else printf("  %14d %22.4f %22.4f\n", l, (double)norms[l * 3 + 1], (double)norms[l * 3 + 2]);
    const double sqrtC = sqrt((double)g2.block.attn.d_model);
    lesson_say("Post-norm ends every block with a LayerNorm, so the stream's size is pinned near "
               "sqrt(C) = %.2f times the gains, whatever happened inside. Pre-norm never "
               "normalises the stream itself: every block adds its outputs, and the size grows "
               "with depth (here from %.3f after the embeddings to %.3f after layer %d; with these "
               "small random weights the growth is modest, in trained models it is much larger); "
               "the final norm before the output head "
               "takes care of it. Pre-norm's advantage is in training: the residual path from the "
               "output back to the input is a plain sum, so gradients reach early layers without "
               "passing through a LayerNorm in every block.", sqrtC, (double)norms[1],
               (double)norms[L * 3 + 1], L);
    lesson_expect("pre-norm stream grows with depth", norms[L * 3 + 1] > norms[1 * 3 + 1]);
    int pinned = 1;
    for (int l = 1; l <= L; l++) if (fabs(norms[l * 3 + 2] - sqrtC) > 0.25 * sqrtC) pinned = 0;
    lesson_expect("post-norm stream stays within 25% of sqrt(C)", pinned);

    // ---- 3. four styles ----
    lesson_section("Tokens to next-token probabilities in four styles");
    lesson_say("Each preset is a 2-layer model over a 65-symbol vocabulary with random weights, "
               "so the predictions mean nothing yet; what matters is the path the numbers take. "
               "Every intermediate is saved as <style>_<what>.npy with shape (layers, T, width).");
    printf("  %-6s %-9s %-9s %-12s %-9s %-6s %-5s %8s\n", "style", "norm", "place", "positions",
           "FFN", "heads", "tied", "params");
    for (int k = 0; k < 4; k++) {
        tw_model_config c;
        LESSON_TRY(tw_model_config_preset(&c, STYLES[k]));
        tw_model m = { 0 };
        LESSON_TRY(tw_model_init(&m, &c));
        tw_model_randomize(&m, a.seed + 10 + k);
        const tw_block_config *b = &c.block;
        char heads[16];
        snprintf(heads, sizeof heads, "%d/%d", b->attn.n_head, b->attn.n_kv_head);
        const char *pos = c.pos == TW_POS_SINUSOIDAL ? "sinusoidal" : c.pos == TW_POS_LEARNED
                        ? "learned" : b->attn.rope == TW_ROPE_ADJACENT ? "RoPE adj." : "RoPE halves";
        printf("  %-6s %-9s %-9s %-12s %-9s %-6s %-5s %8ld\n", STYLES[k],
               b->norm == TW_NORM_LAYER ? "LayerNorm" : "RMSNorm", b->prenorm ? "pre" : "post", pos,
               b->ffn == TW_FFN_SWIGLU ? "SwiGLU" : tw_act_name(b->act), heads, c.tied ? "yes" : "no",
               tw_model_count_params(&m));
        tw_model_state st = { 0 };
        LESSON_TRY(tw_model_state_init(&st, &m, T, 0));
        LESSON_TRY(tw_model_forward(&st, &m, tokens, T, 0));
        const int C = b->attn.d_model, H = b->attn.n_head, Vv = c.vocab;
        const int nl = c.n_layer;
        float *probs = lesson_alloc((long)T * Vv);
        tw_softmax_rows(probs, st.logits, T, Vv, 1.0f);
        // the head is a Linear on the final hidden states: check the last row by hand
        float *last = lesson_alloc(Vv);
        tw_linear_forward(last, st.final_norm + (long)(T - 1) * C, m.head, NULL, 1, C, Vv);
        char name[96];
        snprintf(name, sizeof name, "%s logits == final . head^T", STYLES[k]);
        lesson_expect_close(name, last, st.logits + (long)(T - 1) * Vv, Vv, 0.0f);
        // top 3 next symbols after the last position
        const float *p = probs + (long)(T - 1) * Vv;
        int top[3];
        top_k(top, 3, p, Vv);
        printf("         after \"%s\": top next ids %d (p %.4f), %d (p %.4f), %d (p %.4f); "
               "uniform would be %.4f\n", text, top[0], (double)p[top[0]], top[1],
               (double)p[top[1]], top[2], (double)p[top[2]], 1.0 / Vv);
        double psum = 0.0;
        for (int v = 0; v < Vv; v++) psum += p[v];
        snprintf(name, sizeof name, "%s next-token probabilities sum to 1", STYLES[k]);
        lesson_expect_near(name, psum, 1.0, 1e-5);
        // dumps
        float *embed = lesson_alloc((long)T * C);
        memcpy(embed, st.embed, (size_t)T * C * sizeof(float));
        write_stack(STYLES[k], "embed", embed, 1, T, C);
        // Every (T, C) tensor of the block's table (attn_in is the previous layer's resid_post),
        // then the attention pattern, under the table's names (the names ./generate --dump uses).
        for (int i = 0; i < tw_block_n_tensors; i++) {
            const tw_tensor_info *t = &tw_block_tensors[i];
            if (strcmp(t->shape, "TC") != 0 || strcmp(t->name, "attn_in") == 0 ||
                (t->flags & (TW_TENSOR_WORK | TW_TENSOR_STATS)))
                continue;
            write_stack(STYLES[k], t->name, stack_layers(&st, nl, T, C, t), nl, T, C);
        }
        float *aw = lesson_alloc((long)nl * H * T * T);
        for (int l = 0; l < nl; l++)
            memcpy(aw + (long)l * H * T * T, st.layers[l].attn.pattern, (size_t)H * T * T * sizeof(float));
        char nm[64];
        snprintf(nm, sizeof nm, "%s_pattern.npy", STYLES[k]);
        long ash[4] = { nl, H, T, T };
        lesson_write_npy(nm, aw, ash, 4);
        snprintf(nm, sizeof nm, "%s_logits.npy", STYLES[k]);
        lesson_write_npy2(nm, st.logits, T, Vv);
        snprintf(nm, sizeof nm, "%s_probs.npy", STYLES[k]);
        lesson_write_npy2(nm, probs, T, Vv);
        tw_model_state_free(&st);
        tw_model_free(&m);
    }
    lesson_note("the 2017 model is nearly certain of its (meaningless) guess: it has no final "
                "norm, its stream has length about sqrt(C), and its tied output head reuses "
                "embedding rows drawn from N(0, 1), the 2017 scale, so its logits are tens of "
                "units apart. The other three use N(0, 0.02) embeddings and stay near uniform.");
    lesson_note("the four differ only in choices: where the norm sits and which norm, how "
                "positions enter (added tables or rotations inside attention), the FFN, how many "
                "kv heads, biases, tied output head. The skeleton, embed -> blocks -> norm -> "
                "head -> softmax, is the same.");

    // ---- 4. the 2017 encoder-decoder ----
    lesson_section("The 2017 encoder-decoder and cross-attention");
    lesson_say("The original Transformer translates: an encoder reads the whole source sentence "
               "with attention in both directions (no mask), and a decoder writes the target one "
               "token at a time. Each decoder layer has three sub-layers: causal self-attention "
               "over the target so far, cross-attention whose queries come from the decoder and "
               "whose keys and values come from the encoder's output, and the FFN, each followed "
               "by add & LayerNorm (post-norm). Here: one encoder block and one decoder layer of "
               "the tiny 2017 model, random weights.");
    static const char *const SRC[] = { "le", "chat", "noir", "dort", "." };
    static const char *const TGT[] = { "<s>", "the", "black", "cat", "sleeps" };
    const int Ss = 5, Tt = 5;
    const int src_ids[5] = { 30, 31, 32, 33, 27 }, tgt_ids[5] = { 40, 20, 2, 3, 19 };
    tw_model_config c17;
    LESSON_TRY(tw_model_config_preset(&c17, "2017"));
    tw_model m17 = { 0 };
    LESSON_TRY(tw_model_init(&m17, &c17));
    tw_model_randomize(&m17, a.seed + 20);
    const int C = c17.block.attn.d_model, F = c17.block.ffn_hidden, Vv = c17.vocab;
    // embeddings * sqrt(C) + sinusoidal positions, for source and target
    float *src = lesson_alloc((long)Ss * C), *tgt = lesson_alloc((long)Tt * C);
    float *pe = lesson_alloc((long)Tt * C);
    LESSON_TRY(tw_embedding_forward(src, src_ids, m17.tok_emb, Ss, Vv, C));
    LESSON_TRY(tw_embedding_forward(tgt, tgt_ids, m17.tok_emb, Tt, Vv, C));
    for (long i = 0; i < (long)Ss * C; i++) src[i] *= sqrtf((float)C);
    for (long i = 0; i < (long)Tt * C; i++) tgt[i] *= sqrtf((float)C);
    tw_posenc_sinusoidal(pe, Tt, C, 0);
    tw_add_inplace(src, pe, (long)Ss * C);
    tw_add_inplace(tgt, pe, (long)Tt * C);
    // encoder: the 2017 block with the causal mask switched off
    tw_block_config enc_cfg = c17.block;
    enc_cfg.attn.causal = 0;
    tw_block_scratch es = { 0 };
    LESSON_TRY(tw_block_scratch_init(&es, &enc_cfg, Ss, Ss));
    float *enc = lesson_alloc((long)Ss * C);
    tw_block_forward(enc, &es, NULL, src, &enc_cfg, &m17.layers[0], Ss, 0);
    // decoder layer: self-attention (layer 1's weights), cross-attention (fresh weights), FFN
    tw_mha_config self_cfg = c17.block.attn, cross_cfg = c17.block.attn;
    cross_cfg.causal = 0;
    tw_mha_weights xw = { .wq = weights(C, C, 0.2f, a.seed + 30), .wk = weights(C, C, 0.2f, a.seed + 31),
                           .wv = weights(C, C, 0.2f, a.seed + 32), .wo = weights(C, C, 0.2f, a.seed + 33) };
    float *ones = lesson_alloc(C);
    for (int i = 0; i < C; i++) ones[i] = 1.0f;
    const tw_block_weights *dw = &m17.layers[1];
    tw_mha_scratch ss = { 0 }, xs = { 0 };
    LESSON_TRY(tw_mha_scratch_init(&ss, &self_cfg, Tt, Tt));
    LESSON_TRY(tw_mha_scratch_init(&xs, &cross_cfg, Tt, Ss));
    float *dec = lesson_alloc((long)Tt * C), *cross_map = lesson_alloc((long)Tt * Ss);
    for (int pass = 0; pass < 2; pass++) {
        // pass 1 changes the last target token, to check that earlier rows do not move
        int ids2[5];
        memcpy(ids2, tgt_ids, sizeof ids2);
        float *in = tgt;
        if (pass == 1) {
            ids2[4] = 50;
            in = lesson_alloc((long)Tt * C);
            LESSON_TRY(tw_embedding_forward(in, ids2, m17.tok_emb, Tt, Vv, C));
            for (long i = 0; i < (long)Tt * C; i++) in[i] *= sqrtf((float)C);
            tw_add_inplace(in, pe, (long)Tt * C);
        }
        float *sa = lesson_alloc((long)Tt * C), *h1 = lesson_alloc((long)Tt * C);
        float *ca = lesson_alloc((long)Tt * C), *h2 = lesson_alloc((long)Tt * C);
        float *ff = lesson_alloc((long)Tt * C), *hid = lesson_alloc((long)Tt * F);
        float *out = lesson_alloc((long)Tt * C);
        tw_mha_forward(sa, &ss, NULL, in, NULL, NULL, &self_cfg, &dw->attn, Tt, Tt, 0);
        tw_add_inplace(sa, in, (long)Tt * C);
        tw_layernorm_forward(h1, NULL, NULL, sa, dw->norm1_w, dw->norm1_b, Tt, C, 1e-5f);
        tw_mha_forward(ca, &xs, NULL, h1, enc, NULL, &cross_cfg, &xw, Tt, Ss, 0);   // x_kv = encoder
        tw_add_inplace(ca, h1, (long)Tt * C);
        tw_layernorm_forward(h2, NULL, NULL, ca, ones, NULL, Tt, C, 1e-5f);
        tw_ffn_forward(ff, hid, h2, dw->ffn_w1, dw->ffn_b1, dw->ffn_w2, dw->ffn_b2, Tt, C, F, TW_ACT_RELU);
        tw_add_inplace(ff, h2, (long)Tt * C);
        tw_layernorm_forward(out, NULL, NULL, ff, dw->norm2_w, dw->norm2_b, Tt, C, 1e-5f);
        if (pass == 0) {
            memcpy(dec, out, (size_t)Tt * C * sizeof(float));
            // head 0's cross-attention map: (T target, S source)
            memcpy(cross_map, xs.pattern, (size_t)Tt * Ss * sizeof(float));
        } else {
            lesson_expect_close("decoder rows 0..3 ignore a change to target token 4", out, dec,
                                (long)(Tt - 1) * C, 0.0f);
        }
    }
    printf("  encoder input (%d, %d) -> encoder output (%d, %d); decoder input (%d, %d) -> "
           "decoder output (%d, %d)\n", Ss, C, Ss, C, Tt, C, Tt, C);
    lesson_print_matrix("cross-attention weights, head 0 (rows: target, columns: source)",
                        cross_map, Tt, Ss);
    int all_pos = 1;
    for (long i = 0; i < (long)Tt * Ss; i++) all_pos &= cross_map[i] > 0.0f;
    lesson_expect("cross-attention has no causal mask: every source token visible", all_pos);
    lesson_note("even the first target token (<s>) attends to the whole source sentence: the "
                "source is fully known before decoding starts, so nothing is hidden. In a trained "
                "translation model the map lines up words with their translations (\"black\" on "
                "\"noir\"); with random weights it is only the mechanism you see here.");

    // ---- files ----
    lesson_section("Files");
    lesson_write_npy2("residual_norms.npy", norms, L + 1, 3);
    static const char *const RCOLS[3] = { "layer", "prenorm_gpt2", "postnorm_2017" };
    lesson_write_columns("residual_norms.dat", norms, L + 1, 3, RCOLS,
                         "lesson 9: mean Euclidean norm of the residual stream rows after each "
                         "layer (0 = embeddings), 12-layer tiny models, random weights");
    lesson_write_npy2("encoder_out.npy", enc, Ss, C);
    lesson_write_npy2("decoder_out.npy", dec, Tt, C);
    lesson_write_npy2("cross_attention.npy", cross_map, Tt, Ss);
    lesson_write_matrix_dat("cross_attention.dat", cross_map, Tt, Ss, TGT, SRC,
                            "lesson 9: decoder cross-attention weights, head 0; rows: target "
                            "token (query), columns: source token (key)");
    lesson_plot("09_residual_norms.gp", "residual_norms.dat", "residual_norms.png");
    lesson_plot("09_cross_attention.gp", "cross_attention.dat", "cross_attention.png");
    tw_block_scratch_free(&es);
    tw_mha_scratch_free(&ss);
    tw_mha_scratch_free(&xs);
    tw_model_free(&m17);
    return lesson_finish();
}
