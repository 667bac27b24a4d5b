// Lesson 25: long context: running a model past the length it was trained at.
//
// Teaches: a model trained on windows of T0 tokens has never seen a query more than T0 - 1
// positions after its key, so RoPE's pair i never turned further than (T0 - 1) f_i between them.
// Three ways to run it past T0 rescale the frequencies: linear position interpolation (every
// frequency divided by the factor s), NTK-aware scaling (a larger base: the fastest pair kept,
// the slowest divided by s) and YaRN (pairs that turn many times over T0 kept, pairs that turn
// less than once divided by s, a ramp between, and a temperature on the scores). A small model is
// trained here at T0 = 16 on stories its teacher (stories260K) writes; the lesson prints the angles
// each method reaches, the perplexity at 1x, 2x, 4x and 8x T0 with each method, the loss by
// position at 8x against plain RoPE's (the picture), and the same after a 40-step fine-tune at
// 4x T0 with YaRN, which beats every untuned method. On this small model plain RoPE degrades
// gently and NTK does best untuned; YaRN's ramp, defined in turns over T0, is one pair wide at
// T0 = 16. When `make long-context` has trained its larger model (T0 = 64), a last section
// measures it too, where plain RoPE fails at 4x and the scalings do not.
// Calls: tw_model_forward_next + tw_sampler_sample (the teacher writes), tw_train_step (the
//        student learns, and is fine-tuned), tw_model_config_set_rope_scaling, tw_rope_scaled_freqs,
//        tw_model_forward (perplexity by position).
// Build & run: make lesson25 && ./lesson25 [--seed N] [--out DIR] [--no-plot]
//   (about 4.5 s of CPU at the best SIMD level, the default: the teacher's stories, the
//   training (about half of it), the fine-tune and eighteen evaluations)
// Plot:        gnuplot viz/25_loss_by_position.gp   (reads out/lesson25/loss_by_position.dat)
// Needs: data/models/stories260K.bin data/models/tok512.bin
// Extra runs: ci (seconds of CPU: make test runs it once; make test-lessons-full also checks
//   that a second run writes the same bytes and that --seed changes the output)
// Valgrind: skip (seconds of training and evaluation; tw_train_step, the RoPE scalings and the
//   scaled training run under valgrind in tests/test_train.c and tests/test_train_rope_scaling.c)
// Writes: perplexity.dat loss_by_position.dat frequencies.dat
// Pictures: loss_by_position.png
#include <math.h>
#include <string.h>
#include "lesson.h"
#include "nn/long_context.h"
#include "train/step.h"
#include "train/checkpoint.h"
#include "train/tokens.h"
#include "decode/sampler.h"
#include "simd/simd.h"

#define MODEL_PATH "data/models/stories260K.bin"
#define TOK_PATH   "data/models/tok512.bin"

static const lesson_info INFO = {
    25, "Long context: RoPE past the trained length (linear, NTK, YaRN) and a short fine-tune",
    "The teacher (stories260K) writes stories; a small Llama-style student learns them on windows "
    "of T0 = 16 tokens. Then the student reads windows of 16, 32, 64 and 128 tokens with plain "
    "RoPE and with linear interpolation, NTK-aware scaling and YaRN, which rescale the rotation "
    "frequencies so the angles stay near the trained range. The lesson prints the angles each "
    "method reaches, the perplexity of every method at every length, the loss by position at "
    "8 x T0 against plain RoPE's (a picture), and the same after a 40-step fine-tune at 4 x T0 "
    "with YaRN. If `make long-context` has trained its larger model, it is measured too. About "
    "4.5 seconds of CPU."
};

enum {
    T0 = 16,                 // the trained context
    N_TRAIN = 9000,          // teacher tokens to train on
    N_VAL = 3200,            // held-out teacher tokens to measure on (24 windows of 8 T0 + 1)
    B = 16,                  // windows of T0 per batch (B / 4 windows of 4 T0 when fine-tuning)
    STEPS = 240,             // training steps at T0
    FT_STEPS = 40,           // fine-tuning steps at 4 T0: the same tokens per step
    N_KIND = 4, N_K = 4,
    BAND = 8                 // positions per band in the by-position table
};
#define TEACHER_TEMP 0.5f    // the teacher writes at temperature 0.5: plainer stories, learnt faster
#define LR 3e-3f
#define FT_LR 1e-3f
static const int KS[N_K] = { 1, 2, 4, 8 };
static const char *const KIND_NAMES[N_KIND] = { "none", "linear", "ntk", "yarn" };

// ---- 1. the data: stories from the teacher ----

// The teacher writes stories (BOS story BOS story ...) into tok until n tokens.   tok: (n)
static void write_stories(int *tok, long n, const tw_model *teacher, uint64_t seed) {
    tw_model_state s;
    tw_sampler sp;
    LESSON_TRY(tw_model_state_init(&s, teacher, 1, teacher->cfg.max_seq));
    LESSON_TRY(tw_sampler_init(&sp, teacher->cfg.vocab, TEACHER_TEMP, 0.0f, seed));
    long k = 0;
    while (k < n) {
        int token = TW_TOK_BOS;
        tok[k++] = token;
        for (int pos = 0; pos < teacher->cfg.max_seq - 1 && k < n; pos++) {
            tw_model_forward_next(&s, teacher, &token, 1, pos);
            token = tw_sampler_sample(&sp, s.logits);
            if (token == TW_TOK_BOS) break;
            tok[k++] = token;
        }
    }
    tw_sampler_free(&sp);
    tw_model_state_free(&s);
}

// ---- 2. a student trained at T0 ----

// A Llama-style student: width 48, 2 layers, 3 heads of 16 (8 RoPE pairs each), context T0.
static void make_student(tw_model *m, uint64_t seed) {
    tw_model_config c;
    LESSON_TRY(tw_model_config_preset(&c, "llama"));
    c.vocab = 512; c.max_seq = T0; c.n_layer = 2;
    c.block.attn.d_model = 48; c.block.attn.n_head = 3; c.block.attn.n_kv_head = 3;
    c.block.attn.head_dim = 16; c.block.ffn_hidden = 128;
    LESSON_TRY(tw_model_init(m, &c));
    tw_model_randomize(m, seed);
}

// Trains m for steps steps on windows of T tokens (rows = B T0 / T per batch) at seeded random
// offsets of tok (n). Returns the last step's loss.
static float train(tw_model *m, const int *tok, long n, int T, int steps, float lr, uint64_t seed) {
    const int rows = B * T0 / T;
    tw_trainer t;
    LESSON_TRY(tw_trainer_init(&t, m, T));
    const tw_train_config c = { rows, T, steps, steps / 10, lr, lr / 10, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    int *in = lesson_alloc_bytes((size_t)rows * T * sizeof *in);
    int *tg = lesson_alloc_bytes((size_t)rows * T * sizeof *tg);
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_train_stats st = { 0 };
    for (int s = 0; s < steps; s++) {
        for (int b = 0; b < rows; b++) {
            const long a = (long)(tw_rng_next(&r) % (uint64_t)(n - T - 1));
            memcpy(in + (size_t)b * T, tok + a, (size_t)T * sizeof *in);
            memcpy(tg + (size_t)b * T, tok + a + 1, (size_t)T * sizeof *tg);
        }
        LESSON_TRY(tw_train_step(&st, &t, m, in, tg, &c));
    }
    tw_trainer_free(&t);
    return st.loss;
}

// ---- evaluation by position ----

// Mean NLL (nats) of each next token by position over consecutive windows of W tokens of val
// (n), the model (trained at T_train) run with scaling kind and factor W / T_train.
//   nll: (W)   position W - 1 predicts the token after the window, so a window needs W + 1 tokens
static void nll_by_position(double *nll, const tw_model *trained, int T_train, int kind,
                            const int *val, long n, int W) {
    tw_model m = *trained;   // shares the weights; only the configuration differs
    if (kind != TW_ROPE_SCALING_NONE && W > T_train)
        LESSON_TRY(tw_model_config_set_rope_scaling(&m.cfg, (tw_rope_scaling_kind)kind,
                                                    (float)W / T_train, T_train, 1 << 16));
    if (m.cfg.max_seq < W) m.cfg.max_seq = W;   // plain RoPE may run past: to see what happens
    tw_model_state s;
    LESSON_TRY(tw_model_state_init(&s, &m, W, 0));
    const int V = m.cfg.vocab;
    int windows = 0;
    for (int t = 0; t < W; t++) nll[t] = 0.0;
    for (long a = 0; a + W + 1 <= n; a += W, windows++) {
        LESSON_TRY(tw_model_forward(&s, &m, val + a, W, 0));
        for (int t = 0; t < W; t++) {
            const float *z = s.logits + (size_t)t * V;
            double mx = z[0], sum = 0.0;
            for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
            for (int v = 0; v < V; v++) sum += exp((double)z[v] - mx);
            nll[t] += mx + log(sum) - z[val[a + t + 1]];
        }
    }
    tw_model_state_free(&s);
    if (windows == 0) lesson_die("too few validation tokens (%ld) for windows of %d", n, W);
    for (int t = 0; t < W; t++) nll[t] /= windows;
}

static double mean_of(const double *x, int from, int to) {
    double s = 0.0;
    for (int i = from; i < to; i++) s += x[i];
    return s / (to - from);
}

// ---- sections ----

static void section_student(tw_model *m, int *train_tok, int *val, const tw_model *teacher,
                            uint64_t seed) {
    lesson_section("A student trained at T0 = 16");
    write_stories(train_tok, N_TRAIN, teacher, seed);
    write_stories(val, N_VAL, teacher, seed + 1000);
    make_student(m, seed);
    lesson_say("The teacher (stories260K) writes %d tokens of stories to learn from and %d more to "
               "measure on, at temperature %.1f. The student: %d layers, width %d, %d heads of "
               "%d, %ld weights, RoPE with theta %.0f. It trains %d steps of %d windows of T0 = "
               "%d tokens (AdamW, learning rate %g, warm-up then cosine): it has never seen a "
               "query more than %d positions after its key.", N_TRAIN, N_VAL,
               (double)TEACHER_TEMP, m->cfg.n_layer, m->cfg.block.attn.d_model,
               m->cfg.block.attn.n_head, m->cfg.block.attn.head_dim, m->n_floats,
               (double)m->cfg.block.attn.rope_theta, STEPS, B, T0, (double)LR, T0 - 1);
    const double t0 = lesson_seconds();
    const float loss = train(m, train_tok, N_TRAIN, T0, STEPS, LR, seed);
    printf("  last batch loss %.3f (ln 512 = %.3f at the start), %.1f s\n", loss, log(512.0),
           lesson_seconds() - t0);
}


static void section_frequencies(void) {
    lesson_section("What each method does to RoPE's frequencies");
    enum { D = 16, P = D / 2 };
    const double theta = 10000.0, s = 8.0;
    lesson_say("The student's heads have D = %d, so RoPE turns %d pairs, pair i at f_i = "
               "10000^(-2i/D) radians per position. Over the trained context T0 = %d, pair i "
               "turns through (T0 - 1) f_i radians; the table shows the angle each pair reaches at "
               "the last position of a window of 8 T0 = %d, for each method with factor s = 8. "
               "Plain RoPE reaches 8 times the trained angle in every pair.", D, P, T0, 8 * T0);
    float rows[P][6];
    double f[N_KIND][P];
    for (int k = 0; k < N_KIND; k++) {
        const tw_rope_scaling sc = tw_rope_scaling_make((tw_rope_scaling_kind)k, (float)s, T0);
        tw_rope_scaled_freqs(f[k], D, theta, &sc);
    }
    printf("  %4s %12s %12s %12s %12s %12s\n", "pair", "trained", "none", "linear", "ntk", "yarn");
    for (int i = 0; i < P; i++) {
        rows[i][0] = (float)i;
        rows[i][1] = (float)((T0 - 1) * f[0][i]);
        printf("  %4d %12.4f", i, rows[i][1]);
        for (int k = 0; k < N_KIND; k++) {
            rows[i][2 + k] = (float)((8 * T0 - 1) * f[k][i]);
            printf(" %12.4f", rows[i][2 + k]);
        }
        printf("\n");
    }
    lesson_write_columns("frequencies.dat", &rows[0][0], P, 6,
                         (const char *const[]){ "pair", "trained_angle", "none", "linear", "ntk", "yarn" },
                         "angle (radians) at the last position: trained (T0 - 1), and 8 T0 - 1 per method");
    lesson_expect("linear: every pair's angle at 8 T0 - 1 within the trained angle x 8 (8T0-1)/(8(T0-1))",
                  fabs(rows[P - 1][3] - rows[P - 1][1] * (8.0 * T0 - 1) / (8.0 * (T0 - 1))) < 1e-4);
    lesson_expect("ntk: pair 0 unchanged (angle as plain RoPE's), the slowest pair as linear's (1e-5 relative)",
                  rows[0][4] == rows[0][2] && fabs(rows[P - 1][4] / rows[P - 1][3] - 1) < 1e-5);
    lesson_expect("yarn at T0 = 16: pair 0 kept (as plain RoPE's), pairs 1..7 as linear's (1e-5 relative)",
                  rows[0][5] == rows[0][2] && fabs(rows[1][5] / rows[1][3] - 1) < 1e-5 &&
                  fabs(rows[P - 1][5] / rows[P - 1][3] - 1) < 1e-5);
    lesson_note("YaRN counts turns over the trained context: pair 0 turns T0 / (2 pi) = "
                "%.1f times over T0 = 16, fewer than beta_fast = 32, and pair 1 less than "
                "beta_slow = 1 time, so its ramp is one pair wide and it is linear with pair 0 "
                "kept. Its defaults were chosen for contexts of thousands of tokens.",
                T0 / 6.283185307179586);
    lesson_note("linear squeezes every pair, the fast ones too, so neighbouring positions become "
                "harder to tell apart; NTK and YaRN keep the fast pairs (which already wrapped "
                "around many times in training, so no angle is new to them) and squeeze the slow "
                "ones, whose large angles are the ones the model never saw.");
}

// Prints one row of perplexities (one per kind) for windows of W tokens; keeps each kind's NLL by
// position in keep[kind] when keep is not NULL (keep[kind]: (W)).
static void perplexity_row(double *ppl, double **keep, const tw_model *m, int T_train,
                           const int *val, long n, int W) {
    double *nll = lesson_alloc_bytes((size_t)W * sizeof *nll);
    printf("  %4d = %dx", W, W / T_train);
    for (int j = 0; j < N_KIND; j++) {
        nll_by_position(nll, m, T_train, j, val, n, W);
        ppl[j] = exp(mean_of(nll, 0, W));
        printf(" %10.3f", ppl[j]);
        fflush(stdout);
        if (keep) {
            keep[j] = lesson_alloc_bytes((size_t)W * sizeof *keep[j]);
            memcpy(keep[j], nll, (size_t)W * sizeof *nll);
        }
    }
    printf("\n");
}

static void print_kinds_header(void) {
    printf("  %9s", "W");
    for (int j = 0; j < N_KIND; j++) printf(" %10s", KIND_NAMES[j]);
    printf("\n");
}

// Perplexities ppl[k][kind] at W = KS[k] T0 and NLL by position at 8 T0 (nll8[kind]: (8 T0)).
static void section_lengths(double ppl[N_K][N_KIND], double *nll8[N_KIND], const tw_model *m,
                            const int *val, long n) {
    lesson_section("Perplexity at 1x, 2x, 4x and 8x the trained context");
    lesson_say("The validation stories (%ld tokens the student never trained on) cut into "
               "consecutive windows of W tokens, each read from position 0 with no cache; the "
               "perplexity is exp of the mean loss over every position of every window. For W > "
               "T0 each scaling runs with factor s = W / T0 and trained context %d.", n, T0);
    print_kinds_header();
    for (int k = 0; k < N_K; k++)
        perplexity_row(ppl[k], KS[k] == 8 ? nll8 : NULL, m, T0, val, n, KS[k] * T0);
    float table[N_K][1 + N_KIND];
    for (int k = 0; k < N_K; k++) {
        table[k][0] = (float)KS[k];
        for (int j = 0; j < N_KIND; j++) table[k][1 + j] = (float)ppl[k][j];
    }
    lesson_write_columns("perplexity.dat", &table[0][0], N_K, 1 + N_KIND,
                         (const char *const[]){ "times_T0", "none", "linear", "ntk", "yarn" },
                         "perplexity over whole windows of k T0 tokens, T0 = 16");
    const double base = ppl[0][0];
    printf("  against the trained length (%.3f), at 4x: plain %+.0f %%, linear %+.0f %%, ntk "
           "%+.0f %%, yarn %+.0f %%\n", base, 100 * (ppl[2][0] / base - 1),
           100 * (ppl[2][1] / base - 1), 100 * (ppl[2][2] / base - 1), 100 * (ppl[2][3] / base - 1));
    lesson_expect("at 1x the scalings are plain RoPE (factor 1 changes nothing): the same bits",
                  ppl[0][1] == ppl[0][0] && ppl[0][2] == ppl[0][0] && ppl[0][3] == ppl[0][0]);
    lesson_expect("every method is worse at 8x than at the trained length (table, last row > first)",
                  ppl[3][0] > base && ppl[3][1] > base && ppl[3][2] > base && ppl[3][3] > base);
    lesson_expect("linear is the worst method at 2x, 4x and 8x (largest in each row)",
                  ppl[1][1] > fmax(fmax(ppl[1][0], ppl[1][2]), ppl[1][3]) &&
                  ppl[2][1] > fmax(fmax(ppl[2][0], ppl[2][2]), ppl[2][3]) &&
                  ppl[3][1] > fmax(fmax(ppl[3][0], ppl[3][2]), ppl[3][3]));
    lesson_expect("NTK beats YaRN at 4x and 8x on this model (no fine-tune)",
                  ppl[2][2] < ppl[2][3] && ppl[3][2] < ppl[3][3]);
    lesson_note("on this small model plain RoPE degrades gently (+%.0f %% at 4x): its heads look "
                "mostly at the last few tokens, whose angles it has seen. Linear interpolation "
                "hurts most, since it slows the fast pairs the model uses to tell neighbours "
                "apart; YaRN keeps them but its temperature sharpens every score by %.2f, which "
                "this model was never trained with.", 100 * (ppl[2][0] / base - 1),
                pow(0.1 * log(4.0) + 1.0, 2));
}

// Fine-tunes a copy of m at 4 T0 with YaRN (factor 4) into *ft.
static void section_finetune(double ft_ppl[2], double *ft8, tw_model *ft, const tw_model *m,
                             const double ppl[N_K][N_KIND], const int *train_tok, const int *val,
                             long n_val, uint64_t seed) {
    lesson_section("A short fine-tune at 4x with YaRN");
    LESSON_TRY(tw_model_init(ft, &m->cfg));
    memcpy(ft->memory, m->memory, (size_t)m->n_floats * sizeof(float));
    LESSON_TRY(tw_model_config_set_rope_scaling(&ft->cfg, TW_ROPE_SCALING_YARN, 4.0f, T0, 1 << 16));
    lesson_say("A copy of the student is trained %d more steps on windows of 4 T0 = %d tokens with "
               "YaRN at factor 4 (%d windows a batch: the same %d tokens a step as before, %.0f %% "
               "of the first training's steps), learning rate %g. Then it is measured like the "
               "others, with YaRN at factor W / T0.", FT_STEPS, 4 * T0, B / 4, B * T0,
               100.0 * FT_STEPS / STEPS, (double)FT_LR);
    const float loss = train(ft, train_tok, N_TRAIN, 4 * T0, FT_STEPS, FT_LR, seed + 7);
    printf("  last fine-tuning batch loss %.3f\n", loss);
    tw_model view = *ft;
    view.cfg = m->cfg;   // nll_by_position applies the scaling for each W itself
    double *ft4 = lesson_alloc_bytes(4 * T0 * sizeof *ft4);
    nll_by_position(ft4, &view, T0, TW_ROPE_SCALING_YARN, val, n_val, 4 * T0);
    nll_by_position(ft8, &view, T0, TW_ROPE_SCALING_YARN, val, n_val, 8 * T0);
    ft_ppl[0] = exp(mean_of(ft4, 0, 4 * T0));
    ft_ppl[1] = exp(mean_of(ft8, 0, 8 * T0));
    printf("  %-26s %10s %10s\n", "perplexity", "4x", "8x");
    printf("  %-26s %10.3f %10.3f\n", "plain RoPE, no fine-tune", ppl[2][0], ppl[3][0]);
    printf("  %-26s %10.3f %10.3f\n", "yarn, no fine-tune", ppl[2][3], ppl[3][3]);
    printf("  %-26s %10.3f %10.3f\n", "yarn, fine-tuned at 4x", ft_ppl[0], ft_ppl[1]);
    const double best4 = fmin(fmin(ppl[2][0], ppl[2][1]), fmin(ppl[2][2], ppl[2][3]));
    lesson_expect("fine-tuned YaRN at 4x beats every method without fine-tuning at 4x", ft_ppl[0] < best4);
    lesson_expect("fine-tuned YaRN at 8x (twice the length it was tuned at) beats untuned YaRN at 8x",
                  ft_ppl[1] < ppl[3][3]);
    lesson_note("a claim you may meet: \"with YaRN a model reaches 4x its context with no loss, "
                "and no training\". Here the untuned scalings all lose something; %d steps at "
                "the longer length (a sixth of the first training's steps) recover most of it. Long-context "
                "models are made this way: scale RoPE, then train a little at the new length.",
                FT_STEPS);
}

static void section_by_position(double *nll8[N_KIND], const double *ft8) {
    lesson_section("Loss by position at 8x");
    const int W = 8 * T0, n_band = W / BAND, cols = 2 + N_KIND;
    float *d = lesson_alloc((long)n_band * cols);
    lesson_say("The loss of each position of the windows of 8 T0 = %d tokens, in bands of %d "
               "positions (the mean over %d windows): where the methods part.", W, BAND,
               (int)((N_VAL - 1) / W));
    printf("  %9s", "positions");
    for (int j = 0; j < N_KIND; j++) printf(" %8s", KIND_NAMES[j]);
    printf(" %10s\n", "yarn+tuned");
    for (int b = 0; b < n_band; b++) {
        float *r = d + (size_t)b * cols;
        r[0] = (float)(b * BAND + (BAND - 1) / 2.0);
        for (int j = 0; j < N_KIND; j++) r[1 + j] = (float)mean_of(nll8[j], b * BAND, (b + 1) * BAND);
        r[1 + N_KIND] = (float)mean_of(ft8, b * BAND, (b + 1) * BAND);
        printf("  %3d..%-4d", b * BAND, (b + 1) * BAND - 1);
        for (int j = 0; j < N_KIND; j++) printf(" %8.3f", r[1 + j]);
        printf(" %10.3f\n", r[1 + N_KIND]);
    }
    lesson_write_columns("loss_by_position.dat", d, n_band, cols,
                         (const char *const[]){ "position", "none", "linear", "ntk", "yarn", "yarn_tuned" },
                         "mean loss (nats) by band of 8 positions, windows of 8 T0 = 128, T0 = 16");
    lesson_plot("25_loss_by_position.gp", "loss_by_position.dat", "loss_by_position.png");
    // Past the trained context: the mean over positions T0 .. 8 T0 - 1.
    double past[N_KIND + 1];
    for (int j = 0; j < N_KIND; j++) past[j] = mean_of(nll8[j], T0, W);
    past[N_KIND] = mean_of(ft8, T0, W);
    printf("  mean loss at positions %d..%d: none %.3f, linear %.3f, ntk %.3f, yarn %.3f, yarn tuned %.3f\n",
           T0, W - 1, past[0], past[1], past[2], past[3], past[4]);
    lesson_expect("past T0, the fine-tuned model has the lowest mean loss",
                  past[4] < fmin(fmin(past[0], past[1]), fmin(past[2], past[3])));
}

// ---- 6. a larger model, when make long-context has trained it ----

#define LONGCTX_MODEL "data/longctx/model64.bin"
#define LONGCTX_VAL   "data/stories/val.bin"

static void section_larger_model(void) {
    lesson_section("A larger model (make long-context), if it is there");
    tw_model m;
    char err[512];
    int *val = NULL;
    long n = 0;
    FILE *f = fopen(LONGCTX_MODEL, "rb");
    if (f) fclose(f);
    if (!f || tw_model_load_file(&m, LONGCTX_MODEL, err, sizeof err) != TW_OK) {
        lesson_say("%s is not there: `make long-context` trains it (4 layers, width 64, 600 steps "
                   "at T0 = 64 on the stories corpus of `make stories`; minutes, once), and this "
                   "section then measures it at 1x and 4x.", LONGCTX_MODEL);
        return;
    }
    if (tw_tokens_read(&val, &n, LONGCTX_VAL, err, sizeof err) != TW_OK) {
        lesson_say("%s (run make stories); section skipped.", err);
        tw_model_free(&m);
        return;
    }
    const int T = m.cfg.max_seq;
    const long use = n < 16L * 4 * T + 1 ? n : 16L * 4 * T + 1;   // 16 windows of 4 T
    lesson_say("%s: trained at T0 = %d, %d layers, width %d, measured on %ld tokens of %s.",
               LONGCTX_MODEL, T, m.cfg.n_layer, m.cfg.block.attn.d_model, use, LONGCTX_VAL);
    double p1[N_KIND], p4[N_KIND];
    print_kinds_header();
    perplexity_row(p1, NULL, &m, T, val, use, T);
    perplexity_row(p4, NULL, &m, T, val, use, 4 * T);
    lesson_expect("larger model: plain RoPE at 4x more than 20 % above its trained-length perplexity",
                  p4[0] > 1.2 * p1[0]);
    lesson_expect("larger model: YaRN or NTK at 4x within 20 % of it",
                  p4[3] <= 1.2 * p1[0] || p4[2] <= 1.2 * p1[0]);
    free(val);
    tw_model_free(&m);
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 25 }, NULL);
    tw_simd_init("auto");
    tw_model teacher, student, tuned;
    tw_tokenizer tok;
    lesson_load_model(&teacher, &tok, MODEL_PATH, TOK_PATH);
    int *train_tok = lesson_alloc_bytes(N_TRAIN * sizeof *train_tok);
    int *val = lesson_alloc_bytes(N_VAL * sizeof *val);
    section_student(&student, train_tok, val, &teacher, a.seed);
    section_frequencies();
    double ppl[N_K][N_KIND], *nll8[N_KIND], ft_ppl[2];
    section_lengths(ppl, nll8, &student, val, N_VAL);
    double *ft8 = lesson_alloc_bytes(8 * T0 * sizeof *ft8);
    section_finetune(ft_ppl, ft8, &tuned, &student, ppl, train_tok, val, N_VAL, a.seed);
    section_by_position(nll8, ft8);
    section_larger_model();
    tw_model_free(&tuned);
    tw_model_free(&student);
    tw_model_free(&teacher);
    tw_tokenizer_free(&tok);
    lesson_say("Try it: make exercise36 (YaRN's frequencies)");
    return lesson_finish();
}
