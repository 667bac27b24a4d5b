// Lesson 18: looking inside: switching heads off, and reading the stream layer by layer.
//
// Teaches: two tools of mechanistic interpretability (the TransformerLens way, written in C), on
// the real stories260K model. Ablation: switch one attention head off (zero its output before the
// output projection) and measure how much worse the model predicts a story: the loss change and
// how many next-token predictions change, for each of the 40 heads, as a table and a heatmap. The
// previous-token head of lesson 11 is located again from its attention pattern and its rank in
// the table is printed. The logit lens: apply the final norm and the classifier to the residual
// stream after each layer and watch the top prediction form, layer by layer.
// Calls: tw_llama2c_load, tw_tokenizer_load/_encode/_decode, tw_model_state_init,
//        tw_model_forward (with tw_model_state.head_off), tw_rmsnorm_forward,
//        tw_layernorm_forward, tw_linear_forward, tw_softmax_rows, tw_argmax.
// Build & run: make lesson18 && ./lesson18 [--out DIR] [--no-plot]   (make fetches the model)
// Plot:        gnuplot viz/18_ablation.gp        (reads out/lesson18/ablation.dat)
// Needs: data/models/stories260K.bin data/models/tok512.bin
// Writes: ablation_dloss.npy ablation_changed.npy ablation.dat ablation_table.txt
// Writes: prev_token_score.npy logit_lens.txt logit_lens_agree.npy
// Pictures: ablation.png
#include <math.h>
#include <string.h>
#include "lesson.h"

#define MODEL_PATH "data/models/stories260K.bin"
#define TOK_PATH   "data/models/tok512.bin"

static const lesson_info INFO = {
    18, "Looking inside: ablation and the logit lens",
    "Two ways to ask what the parts of a trained model do, on stories260K. Ablation switches one "
    "attention head off (its output is zeroed before the output projection, an option of the "
    "library's forward pass) and measures the loss and the predictions on a story; done for each "
    "of the 40 heads it gives a map of which heads matter, drawn as a heatmap. The logit lens "
    "reads the residual stream after each layer through the final norm and the classifier, "
    "showing the top prediction form layer by layer."
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

// Runs the story with the heads in head_off (L*H, or NULL) switched off; returns the loss.
static double run_story(int *pred, model *md, const unsigned char *head_off, const int *ids, int n) {
    md->s.head_off = head_off;
    LESSON_TRY(tw_model_forward(&md->s, &md->m, ids, n, 0));
    md->s.head_off = NULL;
    return story_loss(pred, md->s.logits, ids, n, md->V);
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

int main(int argc, char **argv) {
    lesson_start(argc, argv, &INFO, (lesson_args){ .no_seed = 1, .plot = 1 }, NULL);
    model md;
    load(&md);
    const int L = md.L, H = md.H, V = md.V, LH = L * H;
    int n;
    const int *ids = encode_story(&md, &n);

    lesson_section("The story and the model's loss on it");
    lesson_say("The model reads a story of %d tokens (BOS included) and at every position predicts "
               "the next token. Its loss is the mean of -log p(the token that really comes next) "
               "over the %d predictions (lesson 17 calls exp(loss) the perplexity).", n, n - 1);
    int *base_pred = lesson_alloc_bytes((size_t)n * sizeof(int));
    const double base_loss = run_story(base_pred, &md, NULL, ids, n);
    int right = 0;
    for (int t = 0; t + 1 < n; t++) right += base_pred[t] == ids[t + 1];
    printf("  loss %.4f nats (perplexity %.2f); the top prediction is the real next token at %d of "
           "%d positions\n", base_loss, exp(base_loss), right, n - 1);
    float *prev_score = lesson_alloc(LH);                                   // (L, H)
    previous_token_scores(prev_score, &md, n);
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

    lesson_section("Switching heads off (ablation)");
    lesson_say("Switching a head off means zeroing its output, the head's D = %d columns of the "
               "(T, H*D) matrix that enters the output projection Wo, so the head adds nothing to "
               "the residual stream. It is an option of the library's forward pass "
               "(tw_model_state.head_off), tested to equal zeroing those columns of Wo. With nothing "
               "switched off the pass is bit-identical to the ordinary one:",
               md.m.cfg.block.attn.head_dim);
    unsigned char *none = lesson_alloc_bytes((size_t)LH);
    float *plain = lesson_alloc((long)n * V);
    memcpy(plain, md.s.logits, (size_t)n * V * sizeof(float));
    run_story(base_pred, &md, none, ids, n);
    lesson_expect_close("logits with an all-zero head_off == without one", md.s.logits, plain,
                        (long)n * V, 0.0f);
    lesson_say("Now each of the %d heads in turn, one forward pass each:", LH);
    float *dloss = lesson_alloc(LH), *changed = lesson_alloc(LH);          // (L, H)
    ablate_each_head(dloss, changed, &md, ids, n, base_loss, base_pred);
    char *table = lesson_alloc_bytes(4096);
    print_ablation_table(&md, dloss, changed, table, 4096);
    const int worst = tw_argmax(dloss, LH);
    double mean = 0.0;
    for (int k = 0; k < LH; k++) mean += dloss[k];
    mean /= LH;
    lesson_note("the head that matters most: layer %d head %d (+%.3f nats, %.0f%% of predictions "
                "changed; %.0f%% of its weight on the previous token); the mean over all heads is "
                "%+.3f", worst / H, worst % H, (double)dloss[worst], 100.0 * changed[worst],
                100.0 * prev_score[worst], mean);
    const int r11 = rank_of(dloss, LH, l11);
    lesson_note("lesson 11's previous-token head, layer %d head %d: %+.3f nats, rank %d of %d: %s",
                LESSON11_LAYER, LESSON11_HEAD, (double)dloss[l11], r11, LH,
                r11 <= 3 ? "it stands out" : "it does not stand out");
    switch_off_together(&md, prev_score, dloss, ids, n, base_loss, dloss[worst]);

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
    float *agree = lesson_alloc(L + 1);                                     // (L + 1)
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
    unload(&md);
    return lesson_finish();
}
