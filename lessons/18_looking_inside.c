// Lesson 18: looking inside: switching heads off, attributing a logit, patching activations,
// finding induction heads, and reading the stream layer by layer.
//
// Teaches: tools of mechanistic interpretability (the TransformerLens way, written in C), on the
// real stories260K model and on a small model the lesson trains itself. Ablation: switch one
// attention head off and measure how much worse the model predicts a story, for each of the 40
// heads, as a table and a heatmap; then zero- against mean-ablation (the head's output replaced
// by its average) over several sampled stories, with the spread, and why some changes are
// negative. Direct logit attribution: the logit of a token split into what the embedding, each
// head and each MLP wrote, which adds up to the logit with the final norm's scale frozen (checked).
// Activation patching: a clean and a corrupted prompt, one activation copied from the clean run,
// over layers x positions and over heads, as pictures. Induction scores: the attention from a
// repeated sequence's second copy to the token after the first occurrence, weak in stories260K;
// a 2-layer model trained here (half a second) on one period scores high, and a period it never
// saw shows that it found a shortcut by distance, not induction; a 2-layer model trained with the
// period varied (`make induction-model`, about a minute, once, into data/models/induction.bin)
// has real induction heads: a previous-token head in layer 0, layer-1 heads that copy at periods
// it never saw, and switching the first off breaks the second (checked when the file is there).
// The logit lens: the final norm and classifier applied to the stream after each layer.
// Calls: tw_llama2c_load, tw_tokenizer_load/_encode/_lookup, tw_model_state_init,
//        tw_model_forward (with tw_model_state.head_off and .head_patch), tw_block_forward,
//        tw_rmsnorm_forward, tw_linear_forward, tw_softmax_rows, tw_argmax, tw_sampler_sample,
//        tw_model_init, tw_trainer_init, tw_train_step, tw_llama2c_write (--train-induction).
// Build & run: make lesson18 && ./lesson18 [--seed N] [--out DIR] [--no-plot]   (make fetches the model)
//   (about 1.3 s of CPU at the best SIMD level, the default; the small model's 500 training
//   steps are a third of it; about 5 s with TW_SIMD=naive)
//   make induction-model   (= ./lesson18 --train-induction: about a minute, once; section 7 then runs)
// Extra runs: ci (about 1.3 s of CPU: make test runs it once; make test-lessons-full also checks
//   that a second run writes the same bytes and that --seed changes the output)
// Plot:        gnuplot viz/18_ablation.gp        (reads out/lesson18/ablation.dat)
//              gnuplot viz/18_ablation_spread.gp (reads out/lesson18/ablation_spread.dat)
//              gnuplot viz/18_patching.gp        (reads out/lesson18/patching_positions.dat)
// Needs: data/models/stories260K.bin data/models/tok512.bin
// Valgrind: skip (more than 8 minutes under valgrind: 500 training steps and every head ablated;
//   the training step, ablation and patching run under valgrind in tests/test_model.c)
// Writes: ablation_dloss.npy ablation_changed.npy ablation.dat ablation_table.txt
// Writes: prev_token_score.npy logit_lens.txt logit_lens_agree.npy
// Writes: ablation_spread.npy ablation_spread.dat patching_positions.npy patching_heads.npy
// Writes: induction_score.npy patching_positions.dat patching_heads.dat
// Arm tolerance: 1e-5 (make test-arm-lessons: the patching tables are differences of two losses of
//   size 1 to 8, where NEON's and AVX-512's rounding, about 1e-7 relative, left up to 1.6e-6)
// Pictures: ablation.png ablation_spread.png patching_positions.png patching_heads.png
#include <math.h>
#include <string.h>
#include "lesson.h"
#include "simd/simd.h"

#define MODEL_PATH "data/models/stories260K.bin"
#define TOK_PATH   "data/models/tok512.bin"

static const lesson_info INFO = {
    18, "Looking inside: ablation, attribution, patching, induction heads, the logit lens",
    "Ways to ask what the parts of a trained model do, on stories260K. Ablation switches one "
    "attention head off (zeroed, or replaced by its mean output) and measures the loss, on one "
    "story and over several with the spread; direct logit attribution splits a logit into what "
    "each head and MLP wrote; activation patching copies one activation from a clean prompt into "
    "a corrupted run and measures how much of the answer comes back, over layers x positions and "
    "over heads; induction scores on a repeated random sequence, in stories260K, in a 2-layer "
    "model trained here (which finds a shortcut by distance, shown by a period it never saw) and in "
    "one trained with the period varied by `make induction-model` (real induction heads); the "
    "logit lens reads the stream after each layer through the final norm and the classifier. "
    "About a second and a half of CPU."
};

// A short story in the style of TinyStories, written for this lesson.
static const char *STORY =
    "Once upon a time, there was a little boy named Tim. Tim had a big red ball. He liked to "
    "play with his ball in the park. One day, Tim saw a little dog. The dog wanted to play too. "
    "Tim threw the ball and the dog ran to get it. Tim and the dog were happy. They played "
    "all day until the sun went down.";

typedef struct {
    tw_model       m;
    tw_tokenizer   tok;
    tw_model_state s;      // no cache: the whole story in one call
    int            L, H, V, C;
} model;

enum { MAX_T = 256 };
// Lesson 11's previous-token head (layers and heads counted from 0, as there).
enum { LESSON11_LAYER = 3, LESSON11_HEAD = 6 };
// A head putting at least this share of its weight on the previous token is called a
// previous-token head here (uniform weights over this story would give about 4%).
#define PREV_THRESHOLD 0.45f

static void load(model *md) {
    memset(md, 0, sizeof *md);
    lesson_load_model(&md->m, &md->tok, MODEL_PATH, TOK_PATH);
    md->L = md->m.cfg.n_layer;
    md->H = md->m.cfg.block.attn.n_head;
    md->V = md->m.cfg.vocab;
    md->C = md->m.cfg.block.attn.d_model;
    LESSON_TRY(tw_model_state_init(&md->s, &md->m, MAX_T, 0));
}

static void unload(model *md) {
    tw_model_state_free(&md->s);
    tw_tokenizer_free(&md->tok);
    tw_model_free(&md->m);
}

// The token `id` as every lesson shows it (lesson_token: its piece, '_' for a space).
static const char *piece(const model *md, int id) {
    return lesson_token(&md->tok, id);
}

// BOS + STORY as ids (tracked); *n receives the count.
static int *encode_story(const model *md, int *n) {
    int max = (int)tw_tokenizer_max_tokens(STORY);
    int *ids = lesson_alloc_bytes((size_t)max * sizeof(int));
    LESSON_TRY(tw_tokenizer_encode(&md->tok, ids, n, max, STORY, 1, 0));
    if (*n > MAX_T) lesson_die("the story has %d tokens, more than %d", *n, MAX_T);
    return ids;
}

// Mean over positions of -log p(next token), from logits (n, V); pred (n-1): each row's argmax.
static double story_loss(int *pred, const float *logits, const int *ids, int n, int V) {
    float *p = lesson_alloc(V);
    double sum = 0.0;
    for (int t = 0; t + 1 < n; t++) {
        tw_softmax_rows(p, logits + (size_t)t * V, 1, V, 1.0f);
        sum += -log((double)p[ids[t + 1]]);
        pred[t] = tw_argmax(logits + (size_t)t * V, V);
    }
    return sum / (n - 1);
}

// Runs ids (n) with the heads in head_off (L*H, or NULL) switched off: their outputs zeroed, or
// taken from patch (L, n, H*D) when it is not NULL. Returns the loss; pred (n-1): the argmaxes.
static double run_patched(int *pred, model *md, const unsigned char *head_off, const float *patch,
                          const int *ids, int n) {
    md->s.head_off = head_off;
    md->s.head_patch = patch;
    LESSON_TRY(tw_model_forward(&md->s, &md->m, ids, n, 0));
    md->s.head_off = NULL;
    md->s.head_patch = NULL;
    return story_loss(pred, md->s.logits, ids, n, md->V);
}

// The same with switched-off heads zeroed.
static double run_story(int *pred, model *md, const unsigned char *head_off, const int *ids, int n) {
    return run_patched(pred, md, head_off, NULL, ids, n);
}

// ---- 1. the story, and the previous-token head found again ----
// score (L*H): mean attention weight from position t to t-1, over t = 1..n-1, for each head,
// read from the last forward pass (lesson 11's measure).
static void previous_token_scores(float *score, const model *md, int n) {
    for (int l = 0; l < md->L; l++) {
        const float *pattern = md->s.layers[l].attn.pattern;   // (H, n, n)
        for (int h = 0; h < md->H; h++) {
            double sum = 0.0;
            for (int t = 1; t < n; t++) sum += pattern[((size_t)h * n + t) * n + t - 1];
            score[l * md->H + h] = (float)(sum / (n - 1));
        }
    }
}

// ---- 2. switching every head off in turn ----
// dloss, changed (L*H): loss with the head off minus the baseline loss (nats), and the share of
// positions whose top prediction changed.
static void ablate_each_head(float *dloss, float *changed, model *md, const int *ids, int n,
                             double base_loss, const int *base_pred) {
    const int LH = md->L * md->H;
    unsigned char *off = lesson_alloc_bytes((size_t)LH);
    int *pred = lesson_alloc_bytes((size_t)n * sizeof(int));
    for (int k = 0; k < LH; k++) {
        off[k] = 1;
        double loss = run_story(pred, md, off, ids, n);
        off[k] = 0;
        int diff = 0;
        for (int t = 0; t + 1 < n; t++) diff += pred[t] != base_pred[t];
        dloss[k] = (float)(loss - base_loss);
        changed[k] = (float)diff / (float)(n - 1);
    }
}

// The table printed and written: layers down, heads across, the loss change in nats.
static void print_ablation_table(const model *md, const float *dloss, const float *changed,
                                 char *text, size_t cap) {
    size_t len = 0;
    len += (size_t)snprintf(text + len, cap - len, "loss change (nats) when one head is off; "
                            "in brackets: %% of positions whose top prediction changed\n%8s", "");
    for (int h = 0; h < md->H; h++) len += (size_t)snprintf(text + len, cap - len, "     head %d", h);
    len += (size_t)snprintf(text + len, cap - len, "\n");
    for (int l = 0; l < md->L; l++) {
        len += (size_t)snprintf(text + len, cap - len, "layer %d ", l);
        for (int h = 0; h < md->H; h++)
            len += (size_t)snprintf(text + len, cap - len, " %+.3f(%2.0f)", (double)dloss[l * md->H + h],
                                    100.0 * changed[l * md->H + h]);
        len += (size_t)snprintf(text + len, cap - len, "\n");
    }
    fputs(text, stdout);
}

// 1 + the number of entries of x (n) larger than x[k]: x[k]'s rank, 1 = the largest.
static int rank_of(const float *x, int n, int k) {
    int r = 1;
    for (int i = 0; i < n; i++) r += x[i] > x[k];
    return r;
}

// Switches every previous-token head off at once and compares with the sum of the single changes.
static void switch_off_together(model *md, const float *prev_score, const float *dloss,
                                const int *ids, int n, double base_loss, double worst_single) {
    const int LH = md->L * md->H;
    unsigned char *off = lesson_alloc_bytes((size_t)LH);
    int *pred = lesson_alloc_bytes((size_t)n * sizeof(int));
    double singles = 0.0;
    int count = 0;
    for (int k = 0; k < LH; k++)
        if (prev_score[k] >= PREV_THRESHOLD) { off[k] = 1; singles += dloss[k]; count++; }
    const double together = run_story(pred, md, off, ids, n) - base_loss;
    lesson_say("A head's attention pattern says where it looks; ablation says whether the "
               "predictions need what it brings, and the two can disagree. One reason is "
               "redundancy: with one previous-token head off, the others still carry the "
               "previous token. Switching all %d off together:", count);
    printf("  all %d previous-token heads off: %+.3f nats; the sum of switching each off alone: "
           "%+.3f; the most important single head alone: %+.3f\n", count, together, singles,
           worst_single);
    lesson_note("together they cost %s than the sum of their parts%s, and %s than the one head that "
                "matters most. Ablation measures what the loss needs, not what a head looks at.",
                together > singles ? "more" : "less",
                together > singles ? " (heads that back each other up)" : "",
                together < worst_single ? "less" : "more");
    lesson_expect("the previous-token heads off together cost more than the sum of each alone",
                  together > singles);
}

// ---- 3. the logit lens ----
// The model's own readout applied to any stream (T, C): the final norm of the model's kind, then
// the classifier. logits: (T, V)   normed: (T, C) scratch   stats: (2*T) scratch
static void read_out(float *logits, float *normed, float *stats, const model *md, const float *stream,
                     int T) {
    const tw_model_config *c = &md->m.cfg;
    if (!c->final_norm)
        memcpy(normed, stream, (size_t)T * md->C * sizeof(float));
    else if (c->block.norm == TW_NORM_LAYER)
        tw_layernorm_forward(normed, stats, stats + T, stream, md->m.final_w, md->m.final_b, T, md->C,
                             c->block.norm_eps);
    else
        tw_rmsnorm_forward(normed, stats, stream, md->m.final_w, T, md->C, c->block.norm_eps);
    tw_linear_forward(logits, normed, md->m.head.f32, NULL, T, md->C, md->V);
}

// The stream after stage k: k = 0 the embeddings, k = l + 1 after layer l (of the last forward).
static const float *stream_after(const model *md, int k) {
    return k == 0 ? md->s.embed : md->s.layers[k - 1].resid_post;
}


// ---- 1. the story, the loss, the previous-token heads ----
// Prints the model's loss on ids (n) and the heads that attend to the previous token; fills
// base_pred (n-1) and prev_score (L*H). Returns the loss.
static double the_story(int *base_pred, float *prev_score, model *md, const int *ids, int n) {
    const int H = md->H, LH = md->L * md->H;
    lesson_section("The story and the model's loss on it");
    lesson_say("The model reads a story of %d tokens (BOS included) and at every position predicts "
               "the next token. Its loss is the mean of -log p(the token that really comes next) "
               "over the %d predictions (lesson 17 calls exp(loss) the perplexity).", n, n - 1);
    const double base_loss = run_story(base_pred, md, NULL, ids, n);
    int right = 0;
    for (int t = 0; t + 1 < n; t++) right += base_pred[t] == ids[t + 1];
    printf("  loss %.4f nats (perplexity %.2f); the top prediction is the real next token at %d of "
           "%d positions\n", base_loss, exp(base_loss), right, n - 1);
    previous_token_scores(prev_score, md, n);
    const int l11 = LESSON11_LAYER * H + LESSON11_HEAD, top_prev = tw_argmax(prev_score, LH);
    lesson_say("Lesson 11 found a previous-token head, layer %d head %d, by its attention pattern "
               "on the story it wrote. Measured again on this story, as the mean weight a position "
               "puts on the one before it (uniform weights would give about %.0f%%), several heads "
               "do it:", LESSON11_LAYER, LESSON11_HEAD, 100.0 * log((double)n) / (n - 1));
    int n_prev = 0;
    for (int k = 0; k < LH; k++)
        if (prev_score[k] >= PREV_THRESHOLD) {
            printf("  layer %d head %d: %.0f%% on the previous token%s\n", k / H, k % H,
                   100.0 * prev_score[k], k == l11 ? "   (lesson 11's)" : "");
            n_prev++;
        }
    lesson_note("on this story layer %d head %d is the most previous-token-like (%.0f%%); we call "
                "the %d heads at %.0f%% or more the previous-token heads", top_prev / H, top_prev % H,
                100.0 * prev_score[top_prev], n_prev, 100.0 * PREV_THRESHOLD);
    lesson_expect("lesson 11's head is a previous-token head on this story too",
                  prev_score[l11] >= PREV_THRESHOLD);
    return base_loss;
}

// ---- 2. zero-ablation on the story ----
// dloss, changed (L*H) as ablate_each_head; table: the printed table (4096 bytes, tracked).
static void zero_ablation(float *dloss, float *changed, char *table, model *md, const int *ids, int n,
                          double base_loss, int *base_pred, const float *prev_score) {
    const int H = md->H, V = md->V, LH = md->L * md->H, l11 = LESSON11_LAYER * H + LESSON11_HEAD;
    lesson_section("Switching heads off (ablation)");
    lesson_say("Switching a head off means zeroing its output, the head's D = %d columns of the "
               "(T, H*D) matrix that enters the output projection Wo, so the head adds nothing to "
               "the residual stream. It is an option of the library's forward pass "
               "(tw_model_state.head_off), tested to equal zeroing those columns of Wo. With nothing "
               "switched off the pass is bit-identical to the ordinary one:",
               md->m.cfg.block.attn.head_dim);
    unsigned char *none = lesson_alloc_bytes((size_t)LH);
    float *plain = lesson_alloc((long)n * V);
    memcpy(plain, md->s.logits, (size_t)n * V * sizeof(float));
    run_story(base_pred, md, none, ids, n);
    lesson_expect_close("logits with an all-zero head_off == without one", md->s.logits, plain,
                        (long)n * V, 0.0f);
    lesson_say("Now each of the %d heads in turn, one forward pass each:", LH);
    ablate_each_head(dloss, changed, md, ids, n, base_loss, base_pred);
    print_ablation_table(md, dloss, changed, table, 4096);
    const int worst = tw_argmax(dloss, LH);
    double mean = 0.0;
    int negative = 0;
    for (int k = 0; k < LH; k++) { mean += dloss[k]; negative += dloss[k] < 0; }
    mean /= LH;
    lesson_note("the head that matters most: layer %d head %d (+%.3f nats, %.0f%% of predictions "
                "changed; %.0f%% of its weight on the previous token); the mean over all heads is "
                "%+.3f", worst / H, worst % H, (double)dloss[worst], 100.0 * changed[worst],
                100.0 * prev_score[worst], mean);
    const int r11 = rank_of(dloss, LH, l11);
    lesson_note("lesson 11's previous-token head, layer %d head %d: %+.3f nats, rank %d of %d: %s",
                LESSON11_LAYER, LESSON11_HEAD, (double)dloss[l11], r11, LH,
                r11 <= 3 ? "it stands out" : "it does not stand out");
    lesson_say("%d of the %d changes are negative: without that head the model predicts this story "
               "slightly better. Training lowers the loss averaged over many stories, not on each "
               "one, so a head can cost a little on a given text while it pays on others; and a "
               "change of a few thousandths of a nat on one story of %d tokens is within what any "
               "perturbation does. One story cannot tell the two apart: the next section measures "
               "over many.", negative, LH, n);
    switch_off_together(md, prev_score, dloss, ids, n, base_loss, dloss[worst]);
}

// ---- 3. zero- and mean-ablation over many stories ----
// ids (n_st, T): n_st stories of T tokens sampled from the model itself (BOS first).
static void sample_stories(int *ids, model *md, int n_st, int T, uint64_t seed) {
    tw_model_state s = { 0 };
    tw_sampler smp = { 0 };
    LESSON_TRY(tw_model_state_init(&s, &md->m, 1, T));
    LESSON_TRY(tw_sampler_init(&smp, md->V, 1.0f, 0.9f, seed));
    for (int i = 0; i < n_st; i++) {
        int *row = ids + (size_t)i * T;
        row[0] = TW_TOK_BOS;
        for (int p = 0; p + 1 < T; p++) {
            LESSON_TRY(tw_model_forward_next(&s, &md->m, &row[p], 1, p));
            row[p + 1] = tw_sampler_sample(&smp, s.logits);
        }
    }
    tw_sampler_free(&smp);
    tw_model_state_free(&s);
}

// Mean over values (n) and its standard deviation (n - 1 in the denominator).
static void mean_sd(double *mean, double *sd, const double *values, int n) {
    double m = 0.0, v = 0.0;
    for (int i = 0; i < n; i++) m += values[i];
    m /= n;
    for (int i = 0; i < n; i++) v += (values[i] - m) * (values[i] - m);
    *mean = m;
    *sd = n > 1 ? sqrt(v / (n - 1)) : 0.0;
}

enum { N_STORIES = 6, STORY_T = 32 };

// For every head, the loss change on each of N_STORIES sampled stories with the head zeroed and
// with it replaced by its mean output (over every position of every story). spread (L*H, 4):
// zero mean, zero sd, mean-ablation mean, mean-ablation sd, in nats.
static void ablation_over_stories(float *spread, model *md, uint64_t seed) {
    const int L = md->L, H = md->H, LH = L * H, D = md->m.cfg.block.attn.head_dim, T = STORY_T;
    lesson_section("Zero- and mean-ablation over many stories");
    lesson_say("Zeroing a head asks what the model does with a value that head never outputs: a "
               "vector of zeros can itself push the later layers somewhere strange. Mean-ablation "
               "instead replaces the head's output by its average over many texts, so only the "
               "part that depends on this text is removed. Both, for every head, on %d stories of "
               "%d tokens the model sampled itself (temperature 1, top-p 0.9, seed %llu), with the "
               "spread over the stories.", N_STORIES, T, (unsigned long long)seed);
    int *ids = lesson_alloc_bytes((size_t)N_STORIES * T * sizeof(int));
    sample_stories(ids, md, N_STORIES, T, seed);
    // each head's mean output: z averaged over every position of every story
    double *zsum = lesson_alloc_bytes((size_t)L * H * D * sizeof(double));
    int *pred = lesson_alloc_bytes((size_t)T * sizeof(int));
    double base[N_STORIES];
    for (int i = 0; i < N_STORIES; i++) {
        base[i] = run_story(pred, md, NULL, ids + (size_t)i * T, T);
        for (int l = 0; l < L; l++)
            for (int t = 0; t < T; t++)
                for (int j = 0; j < H * D; j++) zsum[(size_t)l * H * D + j] += md->s.layers[l].attn.z[(size_t)t * H * D + j];
    }
    float *patch = lesson_alloc((long)L * T * H * D);      // (L, T, H*D): the mean at every position
    for (int l = 0; l < L; l++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < H * D; j++)
                patch[((size_t)l * T + t) * H * D + j] = (float)(zsum[(size_t)l * H * D + j] / (N_STORIES * T));
    unsigned char *off = lesson_alloc_bytes((size_t)LH);
    double dz[N_STORIES], dm[N_STORIES];
    int z_bigger = 0;
    for (int k = 0; k < LH; k++) {
        off[k] = 1;
        for (int i = 0; i < N_STORIES; i++) {
            const int *story = ids + (size_t)i * T;
            dz[i] = run_patched(pred, md, off, NULL, story, T) - base[i];
            dm[i] = run_patched(pred, md, off, patch, story, T) - base[i];
        }
        off[k] = 0;
        double a, b, c, d;
        mean_sd(&a, &b, dz, N_STORIES);
        mean_sd(&c, &d, dm, N_STORIES);
        spread[k * 4 + 0] = (float)a; spread[k * 4 + 1] = (float)b;
        spread[k * 4 + 2] = (float)c; spread[k * 4 + 3] = (float)d;
        z_bigger += fabs(a) > fabs(c);
    }
    // the 8 heads whose zero-ablation costs most, and the 3 that cost least
    int order[64];
    for (int k = 0; k < LH; k++) order[k] = k;
    for (int a = 0; a < LH; a++)
        for (int b = a + 1; b < LH; b++)
            if (spread[order[b] * 4] > spread[order[a] * 4]) { int t = order[a]; order[a] = order[b]; order[b] = t; }
    printf("  %-14s %22s %22s\n", "head", "zero: mean +- sd", "mean-ablation: +- sd");
    for (int r = 0; r < LH; r++) {
        if (r == 8) printf("  %-14s\n", "...");
        if (r >= 8 && r < LH - 3) continue;
        const int k = order[r];
        printf("  layer %d head %d %+10.4f +- %.4f   %+10.4f +- %.4f\n", k / H, k % H,
               (double)spread[k * 4], (double)spread[k * 4 + 1], (double)spread[k * 4 + 2],
               (double)spread[k * 4 + 3]);
    }
    int within = 0, negative = 0;   // heads whose mean change is within 2 standard errors of 0
    for (int k = 0; k < LH; k++) {
        negative += spread[k * 4] < 0;
        within += fabs(spread[k * 4]) < 2.0 * spread[k * 4 + 1] / sqrt((double)N_STORIES);
    }
    lesson_note("all %d heads are in ablation_spread.dat and ablation_spread.png (bars: one standard "
                "deviation over the stories)", LH);
    lesson_say("Zeroing moves the loss more than mean-ablation for %d of the %d heads: part of what "
               "zero-ablation measures is the shock of an output the head never produces. %d heads "
               "have a negative mean change under zero-ablation, and for %d of the %d heads the "
               "mean change is within two standard errors (2 sd / sqrt(%d)) of zero: on these "
               "stories their effect cannot be told from noise. A negative change that held over "
               "many stories would mean the head hurts this kind of text on average, which training "
               "tends to remove; a negative change on one story is mostly a head that helps on "
               "other texts, or noise.", z_bigger, LH, negative, within, LH, N_STORIES);
    lesson_expect("zero-ablation moves the loss more than mean-ablation for most heads", 2 * z_bigger > LH);
}

// ---- 4. direct logit attribution ----
// At position t of the last forward pass over ids, the logit of token `target` written as the sum
// of what each part of the model added to the residual stream: the embedding, every head
// (its z times its columns of Wo) and every MLP, each read through the final RMSNorm with its
// scale 1/rms frozen at the value of the real run, and the classifier. dla (1 + L*H + L): the
// contributions, in that order.
static void direct_logit_attribution(double *dla, model *md, int t, int target) {
    const int L = md->L, H = md->H, C = md->C, D = md->m.cfg.block.attn.head_dim, V = md->V;
    const tw_model_config *c = &md->m.cfg;
    // the direction a stream vector is read along: final-norm gain times the target's row of W_U
    double *dir = lesson_alloc_bytes((size_t)C * sizeof(double));
    const double inv_rms = 1.0 / md->s.final_rms[t];
    for (int j = 0; j < C; j++)
        dir[j] = (double)md->m.final_w[j] * md->m.head.f32[(size_t)target * C + j] * inv_rms;
    double *part = lesson_alloc_bytes((size_t)C * sizeof(double));
    int k = 0;
    double sum = 0.0;
    for (int j = 0; j < C; j++) sum += md->s.embed[(size_t)t * C + j] * dir[j];
    dla[k++] = sum;
    for (int l = 0; l < L; l++) {
        char name[48];
        snprintf(name, sizeof name, "layers.%d.attn.wo", l);
        const float *wo = tw_model_param(&md->m, name)->data;      // (C, H*D)
        const float *z = md->s.layers[l].attn.z + (size_t)t * H * D;   // (H*D) at position t
        for (int h = 0; h < H; h++) {
            sum = 0.0;
            for (int j = 0; j < C; j++) {
                part[j] = 0.0;
                for (int d = 0; d < D; d++) part[j] += (double)z[h * D + d] * wo[(size_t)j * H * D + h * D + d];
                sum += part[j] * dir[j];
            }
            dla[k++] = sum;
        }
    }
    for (int l = 0; l < L; l++) {
        sum = 0.0;
        for (int j = 0; j < C; j++) sum += md->s.layers[l].ffn_out[(size_t)t * C + j] * dir[j];
        dla[k++] = sum;
    }
    (void)V;
    (void)c;
}

static void logit_attribution(model *md, const int *ids, int n) {
    const int L = md->L, H = md->H, V = md->V, C = md->C, NP = 1 + L * H + L;
    lesson_section("Direct logit attribution: who wrote the logit");
    // the second " Tim": the model should copy the name from earlier in the story
    const int tim = tw_tokenizer_lookup(&md->tok, " Tim");
    int t = -1, seen = 0;
    for (int p = 1; p < n && t < 0; p++)
        if (ids[p] == tim && seen++) t = p - 1;
    if (t < 0) lesson_die("the story has no second \" Tim\"");
    int *pred = lesson_alloc_bytes((size_t)n * sizeof(int));
    run_story(pred, md, NULL, ids, n);
    const float logit = md->s.logits[(size_t)t * V + tim];
    lesson_say("In a pre-norm model the stream after the last layer is a sum: the token's "
               "embedding, plus what every head (its output z times its %d columns of Wo) and "
               "every MLP added. The final RMSNorm divides that sum by its rms and multiplies by a "
               "gain, and the classifier takes dot products with it. With the rms frozen at its "
               "value in the real run, the whole readout is linear, so the logit of a token splits "
               "exactly into one contribution per part. Here: at position %d, after [%s], the "
               "logit of [%s], the name the story repeats (logit %.4f, rank %d):",
               md->m.cfg.block.attn.head_dim, t, piece(md, ids[t]), piece(md, tim), (double)logit,
               1 + (int)(pred[t] != tim));
    double *dla = lesson_alloc_bytes((size_t)NP * sizeof(double));
    direct_logit_attribution(dla, md, t, tim);
    // the stream is exactly the sum of the parts (in float, as the model added them)
    double total = 0.0, abs_total = 0.0;
    for (int k = 0; k < NP; k++) { total += dla[k]; abs_total += fabs(dla[k]); }
    int order[64];
    for (int k = 0; k < NP; k++) order[k] = k;
    for (int a = 0; a < NP; a++)
        for (int b = a + 1; b < NP; b++)
            if (fabs(dla[order[b]]) > fabs(dla[order[a]])) { int x = order[a]; order[a] = order[b]; order[b] = x; }
    printf("  the eight largest contributions:\n");
    for (int r = 0; r < 8; r++) {
        const int k = order[r];
        if (k == 0) printf("    %-20s %+9.4f\n", "embedding", dla[k]);
        else if (k <= L * H) printf("    layer %d head %d %9s %+9.4f\n", (k - 1) / H, (k - 1) % H, "", dla[k]);
        else printf("    layer %d MLP %12s %+9.4f\n", k - 1 - L * H, "", dla[k]);
    }
    double heads = 0.0, mlps = 0.0;
    for (int k = 1; k <= L * H; k++) heads += dla[k];
    for (int k = 1 + L * H; k < NP; k++) mlps += dla[k];
    printf("  embedding %+.4f + all %d heads %+.4f + all %d MLPs %+.4f = %+.4f; the model's logit %.4f\n",
           dla[0], L * H, heads, L, mlps, total, (double)logit);
    // Tolerance: the model's logit is float arithmetic (the stream's 2L additions, Wo's 64-term and
    // the classifier's C-term dot products, RMSNorm) with relative rounding about 2^-24 per
    // operation on terms whose absolute sum is abs_total; 200 operations' worth, 1.2e-5 x
    // abs_total, bounds it with room. The contributions themselves are summed in double.
    const double tol = 200 * 5.96e-8 * abs_total;
    lesson_expect_near("the contributions add up to the logit (tol 200 u sum|contribution|)", total,
                       logit, tol);
    lesson_note("largest |contribution| %.4f against a total of |contributions| %.4f; the check "
                "allows %.2g. A head that writes a large positive share is one that moved [%s] up "
                "at this position; the rest largely cancel.", fabs(dla[order[0]]), abs_total, tol,
                piece(md, tim));
    (void)C;
}

// ---- 5. activation patching ----
// The metric of a patched run: logit(a) - logit(b) at the last position of the current state.
static double logit_gap(const model *md, int T, int a, int b) {
    const float *row = md->s.logits + (size_t)(T - 1) * md->V;
    return (double)row[a] - (double)row[b];
}

// Runs the blocks from layer `from` on (the stream entering it already in place), then the final
// norm and classifier, on the state's T rows: the rest of the forward pass after a patched stream.
static void finish_forward(model *md, int from, int T) {
    const tw_model_config *c = &md->m.cfg;
    for (int l = from; l < md->L; l++)
        tw_block_forward(md->s.layers[l].resid_post, &md->s.layers[l], NULL,
                         l == 0 ? md->s.embed : md->s.layers[l - 1].resid_post, &c->block,
                         &md->m.layers[l], T, 0);
    float *normed = lesson_alloc((long)T * md->C), *stats = lesson_alloc(2L * T);
    read_out(md->s.logits, normed, stats, md, md->s.layers[md->L - 1].resid_post, T);
}

// The stream at boundary k of the current state: 0 the embeddings, k > 0 after layer k - 1.
static float *stream_at(model *md, int k) {
    return k == 0 ? md->s.embed : md->s.layers[k - 1].resid_post;
}

static void activation_patching(float *by_pos, float *by_head, const char **labels, model *md,
                                int *T_out) {
    const int L = md->L, H = md->H, C = md->C, D = md->m.cfg.block.attn.head_dim;
    lesson_section("Activation patching: where the name travels");
    static const char *CLEAN = "There was a boy named Tim. One day,";
    static const char *CORRUPT = "There was a boy named Lily. One day,";
    const int tim = tw_tokenizer_lookup(&md->tok, " Tim"), lily = tw_tokenizer_lookup(&md->tok, " Lily");
    int T, T2;
    const int *clean = NULL, *corrupt = NULL;
    {
        int max = (int)tw_tokenizer_max_tokens(CORRUPT) + 4;
        int *a = lesson_alloc_bytes((size_t)max * sizeof(int)), *b = lesson_alloc_bytes((size_t)max * sizeof(int));
        LESSON_TRY(tw_tokenizer_encode(&md->tok, a, &T, max, CLEAN, 1, 0));
        LESSON_TRY(tw_tokenizer_encode(&md->tok, b, &T2, max, CORRUPT, 1, 0));
        if (T != T2) lesson_die("the two prompts have %d and %d tokens", T, T2);
        if (T > 64) lesson_die("the prompts have %d tokens, more than the 64 the tables hold", T);
        clean = a;
        corrupt = b;
    }
    int *pred = lesson_alloc_bytes((size_t)T * sizeof(int));
    // the clean run's streams at every boundary and its head outputs, kept for patching
    float *clean_stream = lesson_alloc((long)(L + 1) * T * C);   // (L+1, T, C)
    float *clean_z = lesson_alloc((long)L * T * H * D);         // (L, T, H*D)
    run_story(pred, md, NULL, clean, T);
    const double m_clean = logit_gap(md, T, tim, lily);
    for (int k = 0; k <= L; k++) memcpy(clean_stream + (size_t)k * T * C, stream_at(md, k), (size_t)T * C * sizeof(float));
    for (int l = 0; l < L; l++) memcpy(clean_z + (size_t)l * T * H * D, md->s.layers[l].attn.z, (size_t)T * H * D * sizeof(float));
    run_story(pred, md, NULL, corrupt, T);
    const double m_corrupt = logit_gap(md, T, tim, lily);
    lesson_say("Two prompts that differ in one token: \"%s\" (clean) and \"%s\" (corrupted). The "
               "measure is logit([_Tim]) - logit([_Lily]) for the next token: %+.3f on the clean "
               "prompt, %+.3f on the corrupted one. Patching runs the corrupted prompt but copies "
               "one activation from the clean run, and asks how much of the gap comes back: "
               "(patched - corrupted) / (clean - corrupted), 1 = all of it, 0 = none.",
               CLEAN, CORRUPT, m_clean, m_corrupt);
    lesson_expect("the clean prompt prefers [_Tim] more than the corrupted one", m_clean > m_corrupt);
    const double gap = m_clean - m_corrupt;
    for (int k = 0; k <= L; k++)
        for (int t = 0; t < T; t++) {
            run_story(pred, md, NULL, corrupt, T);
            memcpy(stream_at(md, k) + (size_t)t * C, clean_stream + ((size_t)k * T + t) * C, (size_t)C * sizeof(float));
            finish_forward(md, k, T);
            by_pos[k * T + t] = (float)((logit_gap(md, T, tim, lily) - m_corrupt) / gap);
        }
    printf("  the residual stream patched at one position (columns) after a layer (rows):\n  %-9s", "");
    for (int t = 0; t < T; t++) printf(" %6.6s", piece(md, clean[t]));
    printf("\n");
    for (int k = 0; k <= L; k++) {
        char name[16];
        snprintf(name, sizeof name, k == 0 ? "embed" : "layer %d", k - 1);
        printf("  %-9s", name);
        for (int t = 0; t < T; t++) printf(" %6.2f", (double)by_pos[k * T + t]);
        printf("\n");
    }
    int name_pos = 0;
    for (int t = 0; t < T; t++) if (clean[t] != corrupt[t]) name_pos = t;
    // Exact facts of the method, checked: positions where the prompts agree hold the same
    // embeddings, so patching them there changes nothing; after the last layer only the last
    // position reaches the logits; patching it there restores the clean run exactly.
    int same_zero = 1, last_only = 1;
    for (int t = 0; t < T; t++) if (t != name_pos) same_zero &= by_pos[t] == 0.0f;
    for (int t = 0; t + 1 < T; t++) last_only &= by_pos[L * T + t] == 0.0f;
    lesson_expect("embeddings patched where the prompts agree change nothing (exactly 0)", same_zero);
    lesson_expect("after the last layer only the last position matters (exactly 0 elsewhere)", last_only);
    lesson_expect_near("after the last layer the last position restores all of the gap",
                       by_pos[L * T + T - 1], 1.0, 1e-5);
    lesson_say("Read down the picture: at the embeddings all of the name's effect sits at its own "
               "position (%d); layer by layer it moves to the last position, from which the "
               "prediction is read. The rows in between say in which layers attention carries it "
               "across.", name_pos);
    // heads: each head's output at every position patched from the clean run
    unsigned char *off = lesson_alloc_bytes((size_t)L * H);
    for (int k = 0; k < L * H; k++) {
        off[k] = 1;
        run_patched(pred, md, off, clean_z, corrupt, T);
        off[k] = 0;
        by_head[k] = (float)((logit_gap(md, T, tim, lily) - m_corrupt) / gap);
    }
    const int best = tw_argmax(by_head, L * H);
    lesson_note("patching one head's output (all positions) from the clean run: layer %d head %d "
                "restores the most, %.0f%% of the gap (all 40 in patching_heads.png)", best / H,
                best % H, 100.0 * by_head[best]);
    for (int t = 0; t < T; t++) labels[t] = lesson_strdup(piece(md, clean[t]));
    *T_out = T;
}

// ---- 6. induction heads ----
// The induction score of every head on [BOS, r, r] (r: K random tokens): the mean attention from
// each position of the second copy to the token after the same token's earlier occurrence.
// score (L*H); returns the loss on the second copy minus the loss on the first (nats); second
// (or NULL): the mean loss on the second copy alone. head_off (L*H, or NULL): heads switched off.
static double induction_scores_off(float *score, double *second_loss, model *md, int K, uint64_t seed,
                                   const unsigned char *head_off) {
    const int L = md->L, H = md->H, T = 2 * K + 1;
    int *ids = lesson_alloc_bytes((size_t)T * sizeof(int));
    tw_rng rng;
    tw_rng_init(&rng, seed);
    ids[0] = TW_TOK_BOS;
    const int lo = md->V > 259 ? 259 : 3;   // stories260K: learned pieces; a small vocabulary: all but 0..2
    for (int i = 1; i <= K; i++) ids[i] = ids[i + K] = lo + (int)(tw_rng_next(&rng) % (uint64_t)(md->V - lo));
    int *pred = lesson_alloc_bytes((size_t)T * sizeof(int));
    run_story(pred, md, head_off, ids, T);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            const float *p = md->s.layers[l].attn.pattern + (size_t)h * T * T;   // (T, T)
            double sum = 0.0;
            for (int q = K + 1; q < 2 * K + 1; q++) sum += p[(size_t)q * T + q - K + 1];
            score[l * H + h] = (float)(sum / K);
        }
    // per-token losses of the two halves
    float *pr = lesson_alloc(md->V);
    double first = 0.0, second = 0.0;
    for (int t = 1; t < K; t++) {
        tw_softmax_rows(pr, md->s.logits + (size_t)t * md->V, 1, md->V, 1.0f);
        first -= log((double)pr[ids[t + 1]]);
        tw_softmax_rows(pr, md->s.logits + (size_t)(t + K) * md->V, 1, md->V, 1.0f);
        second -= log((double)pr[ids[t + K + 1]]);
    }
    if (second_loss) *second_loss = second / (K - 1);
    return (second - first) / (K - 1);
}

static double induction_scores(float *score, model *md, int K, uint64_t seed) {
    return induction_scores_off(score, NULL, md, K, seed, NULL);
}

// The mean causal-uniform weight 1/(q+1) over the second copy's positions q = K+1 .. 2K.
static double uniform_second_copy(int K) {
    double u = 0.0;
    for (int q = K + 1; q < 2 * K + 1; q++) u += 1.0 / (q + 1);
    return u / K;
}

// ---- a model the toolkit trains, where induction heads appear ----
enum { IND_H = 4 };   // heads of the small model
#define INDUCTION_SEED 26u   // the small model's own seed (see induction_heads)
enum { IND_V = 64, IND_K = 10, IND_T = 2 * IND_K + 1, IND_B = 8, IND_STEPS = 500 };

// Batch s: IND_B rows of [BOS, r, r] with r IND_K random tokens of 3..IND_V-1 (then one fresh
// token); in, tg (B, T). The period is always IND_K: section 6 shows what that lets a model do.
static void induction_batch(int *in, int *tg, uint64_t seed, int s) {
    tw_rng r;
    tw_rng_init(&r, seed * 1000003u + (uint64_t)s);
    for (int b = 0; b < IND_B; b++) {
        int row[IND_T + 1];
        row[0] = TW_TOK_BOS;
        for (int i = 1; i <= IND_K; i++) row[i] = row[i + IND_K] = 3 + (int)(tw_rng_next(&r) % (IND_V - 3));
        row[IND_T] = 3 + (int)(tw_rng_next(&r) % (IND_V - 3));   // a fresh token: unpredictable
        memcpy(in + b * IND_T, row, IND_T * sizeof *in);
        memcpy(tg + b * IND_T, row + 1, IND_T * sizeof *tg);
    }
}

// Trains a 2-layer llama-style model (width 16, 4 heads of 4, FFN 32) on repeated random sequences with
// AdamW (tw_train_step); curve (IND_STEPS) receives each step's batch loss.
static void train_induction_model(model *md, float *curve, uint64_t seed) {
    memset(md, 0, sizeof *md);
    tw_model_config c;
    tw_model_config_preset(&c, "llama");
    c.vocab = IND_V; c.max_seq = IND_T; c.n_layer = 2;
    c.block.attn.d_model = 16; c.block.attn.n_head = IND_H; c.block.attn.n_kv_head = IND_H;
    c.block.attn.head_dim = 4; c.block.ffn_hidden = 32;
    if (tw_model_init(&md->m, &c) != TW_OK) lesson_die("out of memory for the small model");
    tw_model_randomize(&md->m, seed);
    for (int i = 0; i < md->m.n_params; i++)   // norm gains start at 1, as in every trainer
        if (md->m.params[i].kind == TW_PARAM_GAIN)
            for (long j = 0; j < md->m.params[i].count; j++) md->m.params[i].data[j] = 1.0f;
    tw_trainer t;
    if (tw_trainer_init(&t, &md->m, IND_T) != TW_OK) lesson_die("out of memory");
    const tw_train_config tc = { IND_B, IND_T, IND_STEPS, 20, 1e-2f, 1e-3f, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    int in[IND_B * IND_T], tg[IND_B * IND_T];
    for (int s = 0; s < IND_STEPS; s++) {
        induction_batch(in, tg, seed, s);
        tw_train_stats st;
        LESSON_TRY(tw_train_step(&st, &t, &md->m, in, tg, &tc));
        curve[s] = st.loss;
    }
    tw_trainer_free(&t);
    md->L = c.n_layer; md->H = c.block.attn.n_head; md->V = c.vocab; md->C = c.block.attn.d_model;
    LESSON_TRY(tw_model_state_init(&md->s, &md->m, IND_T, 0));
}

// ---- 6b. a model trained with the period varied, where induction heads do appear ----
#define INDUCTION_PATH "data/models/induction.bin"   // made by `make induction-model`
enum { IND2_H = 4, IND2_T = 33, IND2_B = 8, IND2_STEPS = 6000 };
// The periods a training row may repeat with; 7 and 10 are left out, kept for the test.
static const int IND2_PERIODS[] = { 3, 4, 5, 6, 8, 9, 11, 12, 13, 14, 15, 16 };
enum { IND2_N_PERIODS = (int)(sizeof IND2_PERIODS / sizeof IND2_PERIODS[0]) };

// Batch s: IND2_B rows [BOS, r, r, r, ...] cut at IND2_T + 1 tokens, r P random tokens of
// 3..IND_V-1, P drawn for each row from IND2_PERIODS: no one distance back finds the copy, only
// the content does. The first copy's targets are TW_IGNORE_INDEX: nothing can predict them, and
// leaving them out spends the whole gradient on the copying. in, tg (B, T).
static void varied_batch(int *in, int *tg, uint64_t seed, int s) {
    tw_rng r;
    tw_rng_init(&r, seed * 1000003u + (uint64_t)s);
    for (int b = 0; b < IND2_B; b++) {
        int row[IND2_T + 1];
        const int P = IND2_PERIODS[tw_rng_next(&r) % IND2_N_PERIODS];
        row[0] = TW_TOK_BOS;
        for (int i = 1; i <= IND2_T; i++)
            row[i] = i <= P ? 3 + (int)(tw_rng_next(&r) % (IND_V - 3)) : row[i - P];
        memcpy(in + b * IND2_T, row, IND2_T * sizeof *in);
        memcpy(tg + b * IND2_T, row + 1, IND2_T * sizeof *tg);
        for (int i = 0; i < P; i++) tg[b * IND2_T + i] = TW_IGNORE_INDEX;
    }
}

// `./lesson18 --train-induction` (what `make induction-model` runs): trains a 2-layer llama-style
// model (width 32, 4 heads of 8, FFN 64) on varied_batch for IND2_STEPS steps of AdamW (lr 2e-2,
// warm-up 20, cosine to 1e-3) and writes it to INDUCTION_PATH as a llama2.c file. Deterministic:
// the same bytes on every run on one machine.
static void train_varied_model(void) {
    tw_model m;
    tw_model_config c;
    tw_model_config_preset(&c, "llama");
    c.vocab = IND_V; c.max_seq = IND2_T; c.n_layer = 2;
    c.block.attn.d_model = 32; c.block.attn.n_head = IND2_H; c.block.attn.n_kv_head = IND2_H;
    c.block.attn.head_dim = 8; c.block.ffn_hidden = 64;
    if (tw_model_init(&m, &c) != TW_OK) lesson_die("out of memory for the small model");
    tw_model_randomize(&m, INDUCTION_SEED);
    for (int i = 0; i < m.n_params; i++)   // norm gains start at 1, as in every trainer
        if (m.params[i].kind == TW_PARAM_GAIN)
            for (long j = 0; j < m.params[i].count; j++) m.params[i].data[j] = 1.0f;
    tw_trainer t;
    if (tw_trainer_init(&t, &m, IND2_T) != TW_OK) lesson_die("out of memory");
    const tw_train_config tc = { IND2_B, IND2_T, IND2_STEPS, 20, 2e-2f, 1e-3f, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    int in[IND2_B * IND2_T], tg[IND2_B * IND2_T];
    const double t0 = lesson_seconds();
    double avg = 0.0;   // mean batch loss over the last 100 steps
    for (int s = 0; s < IND2_STEPS; s++) {
        varied_batch(in, tg, INDUCTION_SEED, s);
        tw_train_stats st;
        LESSON_TRY(tw_train_step(&st, &t, &m, in, tg, &tc));
        if (s >= IND2_STEPS - 100) avg += st.loss / 100.0;
        if (s % 1000 == 0 || s == IND2_STEPS - 1) printf("  step %4d  loss %.3f\n", s + 1, (double)st.loss);
    }
    tw_trainer_free(&t);
    printf("  %d steps in %.1f s; mean loss of the last 100 batches %.3f nats\n", IND2_STEPS,
           lesson_seconds() - t0, avg);
    lesson_expect("the repeats are learned: mean loss of the last 100 batches < 0.5 nats (ln 61 = 4.11)",
                  avg < 0.5);
    char err[256];
    if (avg < 0.5 && tw_llama2c_write(INDUCTION_PATH, &m, err, sizeof err) != TW_OK)
        lesson_die("%s: cannot write the induction model: %s", INDUCTION_PATH, err);
    printf("  %s %s\n", avg < 0.5 ? "wrote" : "did not write (the check failed)", INDUCTION_PATH);
    tw_model_free(&m);
}

// The model of train_varied_model, when INDUCTION_PATH exists: induction scores at periods it
// never saw, the previous-token heads of layer 0, and both switched off.
static void induction_any_period(void) {
    lesson_section("Induction heads that copy at any period");
    FILE *f = fopen(INDUCTION_PATH, "rb");
    if (!f) {
        lesson_note("%s is absent: `make induction-model` makes it (about a minute)", INDUCTION_PATH);
        return;
    }
    fclose(f);
    model sm;
    memset(&sm, 0, sizeof sm);
    char err[256];
    if (tw_llama2c_load(&sm.m, INDUCTION_PATH, err, sizeof err) != TW_OK)
        lesson_die("%s: %s (delete it and run `make induction-model` again)", INDUCTION_PATH, err);
    sm.L = sm.m.cfg.n_layer; sm.H = sm.m.cfg.block.attn.n_head; sm.V = sm.m.cfg.vocab;
    sm.C = sm.m.cfg.block.attn.d_model;
    if (sm.L != 2 || sm.H != IND2_H || sm.V != IND_V || sm.m.cfg.max_seq < IND2_T)
        lesson_die("%s is not the model `make induction-model` writes (remake it)", INDUCTION_PATH);
    LESSON_TRY(tw_model_state_init(&sm.s, &sm.m, IND2_T, 0));
    lesson_say("The same test on a model trained the way induction heads are found in research: "
               "2 layers of width 32 with 4 heads of 8, vocabulary %d, rows of a random segment "
               "repeated with a period drawn for each row from 3..16 but never 7 or 10, so that no "
               "one distance back finds the copy; loss only on the repeats; %d steps of AdamW "
               "(`make induction-model` trained it once into %s). Tested at the two periods it "
               "never saw:", IND_V, IND2_STEPS, INDUCTION_PATH);
    const int periods[2] = { 7, 10 };
    float ind[2][2 * IND2_H], prev[2][2 * IND2_H], ind_off[2][2 * IND2_H];
    double second[2], second_off[2];
    unsigned char off[2 * IND2_H] = { 0 };
    for (int k = 0; k < 2; k++) {
        induction_scores_off(ind[k], &second[k], &sm, periods[k], INDUCTION_SEED + 10 + k, NULL);
        previous_token_scores(prev[k], &sm, 2 * periods[k] + 1);
    }
    printf("  %-8s %-6s  %-22s  %-22s\n", "", "", "previous-token score", "induction score");
    printf("  %-8s %-6s  %-10s %-10s  %-10s %-10s\n", "", "", "period 7", "period 10", "period 7", "period 10");
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < IND2_H; h++) {
            const int i = l * IND2_H + h;
            printf("  layer %d  head %d  %-10.3f %-10.3f  %-10.3f %-10.3f\n", l, h, (double)prev[0][i],
                   (double)prev[1][i], (double)ind[0][i], (double)ind[1][i]);
        }
    // layer 0's previous-token heads, and the best layer-1 induction head at each period
    int n_off = 0;
    for (int h = 0; h < IND2_H; h++)
        if (prev[0][h] > 0.3f && prev[1][h] > 0.3f) { off[h] = 1; n_off++; }
    int best[2];
    for (int k = 0; k < 2; k++) {
        best[k] = IND2_H + tw_argmax(ind[k] + IND2_H, IND2_H);
        induction_scores_off(ind_off[k], &second_off[k], &sm, periods[k], INDUCTION_SEED + 10 + k, off);
    }
    const float uni7 = (float)uniform_second_copy(7), uni10 = (float)uniform_second_copy(10);
    printf("  uniform attention would score %.3f (period 7) and %.3f (period 10)\n", (double)uni7,
           (double)uni10);
    printf("  loss on the second copy: %.3f / %.3f nats (guessing among the %d tokens: %.2f; among "
           "the copy's own tokens: %.2f / %.2f)\n", second[0], second[1], IND_V - 3, log(IND_V - 3.0),
           log(7.0), log(10.0));
    printf("  with the %d previous-token head%s of layer 0 switched off: best layer-1 score %.3f / %.3f, "
           "loss on the second copy %.3f / %.3f\n", n_off, n_off == 1 ? "" : "s",
           (double)ind_off[0][best[0]], (double)ind_off[1][best[1]], second_off[0], second_off[1]);
    lesson_say("All four layer-1 heads put several times the uniform weight on the token after "
               "the current token's earlier occurrence; the best, head %d at period 7 and head %d at period 10, "
               "put %.0f%% and %.0f%% of their weight there, at distances the model never trained "
               "on: they find it by content, and the second copy is predicted almost for free. "
               "Layer 0 has %d previous-token head%s. Switch %s off and the layer-1 heads lose "
               "their target (best score %.2f / %.2f) and the second copy costs %.2f / %.2f nats, "
               "worse than a uniform guess: the layer-1 head's key is the token *before* each "
               "position, which only layer 0's previous-token head puts there. That composition of "
               "two heads in two layers is an induction head; one layer cannot do it.",
               best[0] - IND2_H, best[1] - IND2_H, 100.0 * ind[0][best[0]], 100.0 * ind[1][best[1]],
               n_off, n_off == 1 ? "" : "s", n_off == 1 ? "it" : "them", (double)ind_off[0][best[0]],
               (double)ind_off[1][best[1]], second_off[0], second_off[1]);
    lesson_expect("at both unseen periods a layer-1 head scores > 0.4 (over 4x uniform)",
                  ind[0][best[0]] > 0.4f && ind[0][best[0]] > 4 * uni7 &&
                  ind[1][best[1]] > 0.4f && ind[1][best[1]] > 4 * uni10);
    float min1[2];   // the weakest layer-1 head at each period
    for (int k = 0; k < 2; k++) {
        min1[k] = ind[k][IND2_H];
        for (int h = 1; h < IND2_H; h++) min1[k] = fminf(min1[k], ind[k][IND2_H + h]);
    }
    lesson_expect("every layer-1 head scores over 3x uniform at both unseen periods",
                  min1[0] > 3 * uni7 && min1[1] > 3 * uni10);
    lesson_expect("at both unseen periods the second copy costs under half of ln(period) nats",
                  second[0] < 0.5 * log(7.0) && second[1] < 0.5 * log(10.0));
    lesson_expect("layer 0 has a previous-token head (score > 0.3 at both periods)", n_off > 0);
    lesson_expect("switching it off halves the layer-1 score and costs over 1 nat on the second copy",
                  ind_off[0][best[0]] < 0.5f * ind[0][best[0]] && ind_off[1][best[1]] < 0.5f * ind[1][best[1]] &&
                  second_off[0] > second[0] + 1.0 && second_off[1] > second[1] + 1.0);
    tw_model_state_free(&sm.s);
    tw_model_free(&sm.m);
}

static void induction_heads(float *score, float *trained_score, float *curve, model *md, uint64_t seed) {
    const int H = md->H, LH = md->L * md->H, K = 24;
    lesson_section("Induction heads: copying what came after last time");
    lesson_say("An induction head completes patterns: when the current token appeared before, it "
               "attends to the token that followed it then, and helps predict it again. Its test is "
               "a sequence of %d random tokens repeated once: the first copy is unpredictable, the "
               "second can be copied. Score: the mean attention from each position of the second "
               "copy to the token after the same token in the first copy (uniform weights would "
               "give %.3f).", K, uniform_second_copy(K));
    const double drop = induction_scores(score, md, K, seed);
    const int best = tw_argmax(score, LH);
    printf("  best head: layer %d head %d, score %.3f; loss on the second copy minus the first: %+.3f nats\n",
           best / H, best % H, (double)score[best], drop);
    lesson_say("stories260K was trained on stories, not on random tokens: its best head scores "
               "%.3f (uniform: %.3f), and the second copy's loss is only %.2f nats per token lower. "
               "Stories repeat names and phrases, not random sequences, so whatever copying it "
               "learned is weak here.", (double)score[best], uniform_second_copy(K), -drop);
    lesson_say("So train a model where copying is the whole task: 2 layers of width 16 with 4 heads "
               "of 4, vocabulary %d, on rows of %d random tokens repeated once, %d steps of AdamW "
               "on batches of %d (tw_train_step, lesson 14; seed %u, fixed). The first copy cannot be predicted "
               "(ln %d = %.2f nats); the second can, if the model learns to look back.",
               IND_V, IND_K, IND_STEPS, IND_B, INDUCTION_SEED, IND_V - 3, log((double)(IND_V - 3)));
    model small;
    const double t0 = lesson_seconds();
    // Its own fixed seed, not --seed: how soon a model this small settles on a rule varies from
    // seed to seed (with --seed 3 passed on, 500 steps had not yet made the second copy a nat
    // cheaper), and the lesson's claims are about the rule it finds.
    (void)seed;
    train_induction_model(&small, curve, INDUCTION_SEED);
    const double secs = lesson_seconds() - t0;
    const double drop_small = induction_scores(trained_score, &small, IND_K, INDUCTION_SEED + 1);
    float other[2 * IND_H];   // the same test at a period the model never saw
    const double drop_other = induction_scores(other, &small, IND_K - 3, INDUCTION_SEED + 2);
    const int best_s = tw_argmax(trained_score, 2 * IND_H);
    printf("  batch loss: step 1 %.3f, step %d %.3f (trained in %.2f s)\n", (double)curve[0], IND_STEPS,
           (double)curve[IND_STEPS - 1], secs);
    printf("  induction score per head, period %d as trained / period %d never seen (uniform: %.3f / %.3f):\n",
           IND_K, IND_K - 3, uniform_second_copy(IND_K), uniform_second_copy(IND_K - 3));
    for (int l = 0; l < 2; l++) {
        printf("    layer %d:", l);
        for (int h = 0; h < IND_H; h++)
            printf("  head %d %.3f / %.3f", h, (double)trained_score[l * IND_H + h], (double)other[l * IND_H + h]);
        printf("\n");
    }
    printf("  loss on the second copy minus the first: %+.3f nats per token at period %d, %+.3f at %d\n",
           drop_small, IND_K, drop_other, IND_K - 3);
    const int best_o = tw_argmax(other, 2 * IND_H);
    const int content = other[best_o] > 0.5f && drop_other < -1.0;   // it copies at any period
    const double drop7 = drop_other;
    lesson_say("Layer %d head %d puts %.0f%% of its weight on the token after the earlier occurrence, "
               "and the second copy's loss falls by %.2f nats per token. But every training row "
               "repeated after exactly %d tokens, so a head can score this by attending %d positions "
               "back, by distance alone (RoPE makes distance easy to read), without matching any "
               "content. The test that tells them apart is a period the model never saw: %d. "
               "There the best head scores %.2f and the second copy's loss changes by %+.2f nats "
               "per token: %s",
               best_s / IND_H, best_s % IND_H, 100.0 * trained_score[best_s], -drop_small, IND_K,
               IND_K - 1, IND_K - 3, (double)other[best_o], drop7,
               content ? "it copies by content, an induction head. It needs two layers: a head in "
                         "layer 0 copies each token's predecessor into its position (a previous-token "
                         "head), and a layer-1 head looks for the position whose predecessor matches "
                         "the current token."
                       : "the high score was a shortcut by distance, not an induction head. A model "
                         "trained with one period learns the cheapest rule that fits its data; to "
                         "force induction the period must vary, and then it takes far longer than "
                         "this lesson's half second of training (in trials for this lesson, 2,000 steps were not "
                         "enough; the next section measures a model trained for longer).");
    lesson_expect("the trained model attends from the second copy to the token after the first (score > 0.5)",
                  trained_score[best_s] > 0.5f);
    lesson_expect("the trained model predicts the second copy far better than the first (by > 1 nat)",
                  drop_small < -1.0);
    lesson_expect(content ? "at the unseen period it still copies (score > 0.5)"
                          : "at the unseen period no head copies (best score < 0.5): a shortcut",
                  content ? other[best_o] > 0.5f : other[best_o] < 0.5f);
    tw_model_state_free(&small.s);
    tw_model_free(&small.m);
}

// ---- 7. the logit lens ----
// agree (L+1): the share of positions where the lens after each stage agrees with the output.
// Returns the lens's top predictions as text (tracked).
static char *logit_lens(float *agree, model *md_, const int *ids, int n, int *base_pred) {
    model md = *md_;   // (a view: the same model and state)
    const int L = md.L, V = md.V;
    lesson_section("The logit lens: the prediction forming layer by layer");
    lesson_say("After each layer the residual stream has the model's width C = %d, the same space "
               "the final norm and the classifier read at the end. Reading it early, through that "
               "same readout, shows what the model would predict if it stopped there. Row "
               "\"embed\" reads the token's own embedding; the last row is the model's real output.", md.C);
    float *lens = lesson_alloc((long)n * V), *normed = lesson_alloc((long)n * md.C);
    float *stats = lesson_alloc(2L * n);
    run_story(base_pred, &md, NULL, ids, n);
    read_out(lens, normed, stats, &md, stream_after(&md, L), n);
    lesson_expect_close("the lens after the last layer == the model's logits", lens, md.s.logits,
                        (long)n * V, 0.0f);
    size_t cap = 16384, len = 0;
    char *text = lesson_alloc_bytes(cap);
    const int shown0 = 1, shown = 9;   // positions 1..9: "Once upon a time, there was ..."
    printf("  %-8s", "after");
    for (int t = shown0; t < shown0 + shown && t < n; t++) printf(" %-9s", piece(&md, ids[t]));
    printf("\n");
    for (int k = 0; k <= L; k++) {
        read_out(lens, normed, stats, &md, stream_after(&md, k), n);
        char name[16];
        snprintf(name, sizeof name, k == 0 ? "embed" : "layer %d", k - 1);
        int same = 0;
        len += (size_t)snprintf(text + len, cap - len, "%s:", name);
        for (int t = 0; t + 1 < n; t++) {
            int top = tw_argmax(lens + (size_t)t * V, V);
            same += top == base_pred[t];
            if (len + 32 < cap) len += (size_t)snprintf(text + len, cap - len, " %s", piece(&md, top));
        }
        len += (size_t)snprintf(text + len, cap - len, "\n");
        agree[k] = (float)same / (float)(n - 1);
        printf("  %-8s", name);
        for (int t = shown0; t < shown0 + shown && t < n; t++)
            printf(" %-9s", piece(&md, tw_argmax(lens + (size_t)t * V, V)));
        printf("  (%3.0f%% agree with the output)\n", 100.0 * agree[k]);
    }
    lesson_note("each column is a position of the story, headed by its token; each row is the top "
                "prediction for the next token read after that layer. Early rows mostly echo the "
                "current token or a common one; the agreement with the final output grows with "
                "depth.");
    lesson_expect("the last layer's lens agrees with the output everywhere", agree[L] == 1.0f);
    lesson_expect("the lens agrees more after the last layer than after the embeddings",
                  agree[L] > agree[0]);
    return text;
}

// The tables as .npy and text; the pictures' data.
static void write_files(model *md_, const float *dloss, const float *changed, const float *prev_score,
                        const float *agree, const char *table, const char *text, const float *spread,
                        const float *by_pos, int T, const char **tokens, const float *by_head,
                        const float *induction) {
    const model md = *md_;
    const int L = md.L, H = md.H;
    long sh[2] = { L, H };
    lesson_write_npy("ablation_dloss.npy", dloss, sh, 2);
    lesson_write_npy("ablation_changed.npy", changed, sh, 2);
    lesson_write_npy("prev_token_score.npy", prev_score, sh, 2);
    lesson_write_npy2("logit_lens_agree.npy", agree, L + 1, 0);
    lesson_write_text("ablation_table.txt", table);
    lesson_write_text("logit_lens.txt", text);
    const char *rows[16], *cols[16];
    for (int l = 0; l < L && l < 16; l++) { char b[24]; snprintf(b, sizeof b, "layer %d", l); rows[l] = lesson_strdup(b); }
    for (int h = 0; h < H && h < 16; h++) { char b[24]; snprintf(b, sizeof b, "head %d", h); cols[h] = lesson_strdup(b); }
    lesson_write_matrix_dat("ablation.dat", dloss, L, H, L <= 16 ? rows : NULL, H <= 16 ? cols : NULL,
                            "lesson 18: stories260K, loss change (nats) on a story when one head is switched off");
    char extra[160];
    snprintf(extra, sizeof extra, "prevl=%d; prevh=%d", LESSON11_LAYER, LESSON11_HEAD);
    lesson_plot_ex("18_ablation.gp", "ablation.dat", "ablation.png", extra);
    lesson_write_npy("ablation_spread.npy", spread, (long[2]){ L * H, 4 }, 2);
    {
        size_t cap = 8192, len = 0;
        char *dat = lesson_alloc_bytes(cap);
        len += (size_t)snprintf(dat + len, cap - len, "# lesson 18: loss change (nats) over %d sampled stories "
                                "when one head is zeroed or mean-ablated\n# index label zero_mean zero_sd "
                                "mean_mean mean_sd\n", N_STORIES);
        for (int k = 0; k < L * H; k++)
            len += (size_t)snprintf(dat + len, cap - len, "%d \"L%d.%d\" %.6f %.6f %.6f %.6f\n", k, k / H, k % H,
                                    (double)spread[k * 4], (double)spread[k * 4 + 1],
                                    (double)spread[k * 4 + 2], (double)spread[k * 4 + 3]);
        lesson_write_text("ablation_spread.dat", dat);
    }
    lesson_plot("18_ablation_spread.gp", "ablation_spread.dat", "ablation_spread.png");
    lesson_write_npy2("patching_positions.npy", by_pos, L + 1, T);
    lesson_write_npy("patching_heads.npy", by_head, sh, 2);
    lesson_write_npy("induction_score.npy", induction, sh, 2);
    const char *stages[17];
    for (int k = 0; k <= L && k < 17; k++) {
        char b[24];
        snprintf(b, sizeof b, k == 0 ? "embed" : "after L%d", k - 1);
        stages[k] = lesson_strdup(b);
    }
    lesson_write_matrix_dat("patching_positions.dat", by_pos, L + 1, T, stages, tokens,
                            "lesson 18: share of the clean-corrupted logit gap restored by patching "
                            "the residual stream at one position after one layer");
    lesson_plot_ex("18_patching.gp", "patching_positions.dat", "patching_positions.png",
                   "maptitle='residual stream patched: share of the gap restored'; xlab='position (token)'; ylab='stream'");
    lesson_write_matrix_dat("patching_heads.dat", by_head, L, H, rows, cols,
                            "lesson 18: share of the gap restored by patching one head's output");
    lesson_plot_ex("18_patching.gp", "patching_heads.dat", "patching_heads.png",
                   "maptitle='one head patched: share of the gap restored'; xlab='head'; ylab='layer'");
}

int main(int argc, char **argv) {
    int train_induction = 0;
    const lesson_opt opts[] = {
        { "--train-induction", 'b', &train_induction, NULL,
          "train the small induction model into " INDUCTION_PATH " and stop (make induction-model)" },
        { NULL, 0, NULL, NULL, NULL } };
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 18, .plot = 1 }, opts);
    if (train_induction) {
        train_varied_model();
        return lesson_finish();
    }
    tw_simd_init(NULL);   // $TW_SIMD, else the best kernels of this CPU: hundreds of forward passes
    model md;
    load(&md);
    const int L = md.L, H = md.H, V = md.V, LH = L * H;
    int n;
    const int *ids = encode_story(&md, &n);
    int *base_pred = lesson_alloc_bytes((size_t)n * sizeof(int));
    float *prev_score = lesson_alloc(LH);                                   // (L, H)
    float *dloss = lesson_alloc(LH), *changed = lesson_alloc(LH);          // (L, H)
    float *spread = lesson_alloc(LH * 4L);                                  // (L*H, 4)
    float *by_pos = lesson_alloc((L + 1) * 64L), *by_head = lesson_alloc(LH);
    float *induction = lesson_alloc(LH);
    const char *tokens[64];
    char *table = lesson_alloc_bytes(4096);
    int T_patch = 0;

    const double base_loss = the_story(base_pred, prev_score, &md, ids, n);
    zero_ablation(dloss, changed, table, &md, ids, n, base_loss, base_pred, prev_score);
    ablation_over_stories(spread, &md, a.seed);
    logit_attribution(&md, ids, n);
    activation_patching(by_pos, by_head, tokens, &md, &T_patch);
    float *trained_induction = lesson_alloc(2 * IND_H), *ind_curve = lesson_alloc(IND_STEPS);
    induction_heads(induction, trained_induction, ind_curve, &md, a.seed + 1);
    induction_any_period();
    float *agree = lesson_alloc(L + 1);                                     // (L + 1)
    char *lens_text = logit_lens(agree, &md, ids, n, base_pred);
    write_files(&md, dloss, changed, prev_score, agree, table, lens_text, spread, by_pos, T_patch,
                tokens, by_head, induction);
    (void)V;
    unload(&md);
    lesson_say("Try it: make exercise22 (the logit lens)");
    return lesson_finish();
}
