// Lesson 14: training: a tiny model learns to write stories from its teacher.
//
// Teaches: what one training step is made of, each part with numbers: the data (a stream of
// tokens cut into windows; a batch is B windows, its targets the same windows shifted by one);
// the initialisation (why 0.02, why the residual projections are scaled down, what a bad scale
// does to the first loss); AdamW worked by hand on four weights (the moments m and v, the bias
// correction, the decoupled weight decay, why norm gains are not decayed) and checked against the
// library's optimizer; the learning-rate schedule (warm-up, then cosine decay); the loss falling
// from ln V towards the teacher's floor (the teacher's own loss on its stories, which no student
// can beat); plain gradient descent against AdamW; a learning rate ten times too high, its loss
// spike printed beside the gradient norm and the size of the update, and why clipping does not
// save it; gradient accumulation, equal to a bigger batch; and training's cost, 6 N FLOPs per
// token, against the time this machine took.
// Calls: tw_model_forward_next + tw_sampler_sample (the teacher writes), tw_model_forward (the
//        floor), tw_adamw_step (by hand), tw_lr_schedule, tw_train_step (AdamW),
//        tw_model_forward_backward (plain SGD, accumulation), tw_model_loss (validation);
//        tw_simd_init picks the kernels all of them use.
// Build & run: make lesson14 && ./lesson14 [--seed N] [--simd LEVEL] [--out DIR]
//   (about 5 s of CPU at the best SIMD level, the default, most of it the three training runs;
//   about 20 s with --simd naive)
// Needs: data/models/stories260K.bin data/models/tok512.bin
// Valgrind: skip (about 7 s of CPU of training; its step, tw_train_step, runs under valgrind in
//   tests/test_train.c)
// Writes: losses.dat samples.txt
// Extra runs: ci (seconds of CPU: make test runs it once; make test-lessons-full also checks
//   that a second run writes the same bytes and that --seed changes the output)
// Arm run: --simd naive (make test-arm-lessons: at the NEON level under qemu this lesson took 617 s
//   of CPU; the NEON kernels themselves are proven by make test-arm)
// Pictures: losses.png schedule.png spike.png
#include <math.h>
#include <string.h>
#include "lesson.h"
#include "train/step.h"
#include "train/optim.h"
#include "formats/llama2c.h"
#include "decode/sampler.h"
#include "tokenize/tokenizer.h"
#include "simd/simd.h"

static const lesson_info INFO = {
    14, "Training: a tiny model learns stories from its teacher",
    "The teacher (stories260K) writes a few hundred short stories. A student with fewer than half "
    "the teacher's weights (the lesson prints both counts and their ratio) starts from random "
    "numbers and learns them. Before it trains, the lesson shows each part of a training step "
    "with numbers: the windows and the batch, the initialisation, one AdamW step by hand, the "
    "warm-up and cosine schedule. Then the loss falls from ln V towards the teacher's own loss "
    "(the floor); AdamW is compared with plain gradient descent and with a learning rate ten "
    "times too high (its spike explained with the gradient norm); gradient accumulation is shown "
    "equal to a bigger batch; and the run's cost, 6 N FLOPs per token, is set against its time."
};

enum { N_TRAIN = 16000, N_VAL = 2000, B = 8, T = 32, STEPS = 150, EVAL_EVERY = 50, WARMUP = 10 };
// -log softmax(logits)[target] in double.   logits: (V)
static double nll_of(const float *logits, int V, int target) {
    double mx = logits[0], sum = 0.0;
    for (int i = 1; i < V; i++) if (logits[i] > mx) mx = logits[i];
    for (int i = 0; i < V; i++) sum += exp((double)logits[i] - mx);
    return mx + log(sum) - (double)logits[target];
}

// The teacher writes stories (BOS story BOS story ...) until n tokens; returns the count written
// (whole stories, at least n). tok: (cap)
static long write_stories(int *tok, long n, long cap, const tw_model *teacher, tw_sampler *sp) {
    tw_model_state s;
    if (tw_model_state_init(&s, teacher, 1, teacher->cfg.max_seq) != TW_OK) lesson_die("out of memory");
    long k = 0;
    while (k < n) {
        int token = TW_TOK_BOS;
        tok[k++] = token;
        for (int pos = 0; pos < teacher->cfg.max_seq - 1 && k < cap; pos++) {
            tw_model_forward_next(&s, teacher, &token, 1, pos);
            token = tw_sampler_sample(sp, s.logits);
            if (token == TW_TOK_BOS) break;
            tok[k++] = token;
        }
    }
    tw_model_state_free(&s);
    return k;
}

// The teacher's average NLL of tok (n), story by story from each BOS, whole story as context.
static double teacher_floor(const int *tok, long n, const tw_model *teacher) {
    tw_model_state s;
    const int S = teacher->cfg.max_seq, V = teacher->cfg.vocab;
    if (tw_model_state_init(&s, teacher, S, 0) != TW_OK) lesson_die("out of memory");
    double sum = 0.0;
    long scored = 0;
    for (long a = 0; a < n;) {
        long b = a + 1;
        while (b < n && tok[b] != TW_TOK_BOS) b++;
        const int len = (int)(b - a);
        tw_model_forward(&s, teacher, tok + a, len, 0);
        for (int t = 0; t + 1 < len; t++) sum += nll_of(s.logits + (size_t)t * V, V, tok[a + t + 1]);
        scored += len - 1;
        if (b < n) { sum += nll_of(s.logits + (size_t)(len - 1) * V, V, TW_TOK_BOS); scored++; }
        a = b;
    }
    tw_model_state_free(&s);
    return sum / (double)scored;
}

// A student: the same Llama arrangement as the teacher, width 48, n_layer layers. Every matrix
// and the embedding table are drawn from N(0, std^2); with scale_resid the two projections that
// write into the residual stream (attn.wo, ffn.down) get std / sqrt(2 n_layer), as GPT-2 does.
// Norm gains start at 1, as in every trainer.
static void make_student_ex(tw_model *m, uint64_t seed, int n_layer, float std, int scale_resid) {
    tw_model_config c;
    tw_model_config_preset(&c, "llama");
    c.vocab = 512; c.max_seq = T; c.n_layer = n_layer;
    c.block.attn.d_model = 48; c.block.attn.n_head = 4; c.block.attn.n_kv_head = 4;
    c.block.attn.head_dim = 12; c.block.ffn_hidden = 128;
    if (tw_model_init(m, &c) != TW_OK) lesson_die("out of memory for the student");
    tw_model_randomize(m, seed);   // matrices and embeddings N(0, 0.02^2)
    const float resid = scale_resid ? 1.0f / sqrtf(2.0f * (float)n_layer) : 1.0f;
    for (int i = 0; i < m->n_params; i++) {
        tw_param *p = &m->params[i];
        const size_t len = strlen(p->name);
        const int is_resid = (len > 7 && strcmp(p->name + len - 7, "attn.wo") == 0) ||
                             (len > 8 && strcmp(p->name + len - 8, "ffn.down") == 0);
        const float k = std / 0.02f * (is_resid ? resid : 1.0f);
        for (long j = 0; j < p->count; j++)
            p->data[j] = p->kind == TW_PARAM_GAIN ? 1.0f : p->data[j] * k;
    }
}

// The student this lesson trains: 2 layers, the library's plain 0.02 everywhere.
static void make_student(tw_model *m, uint64_t seed) { make_student_ex(m, seed, 2, 0.02f, 0); }

// Batch s: B windows of T + 1 tokens at seeded random offsets of the training tokens.
static void batch(int *in, int *tg, const int *tok, long n, int s, uint64_t seed) {
    tw_rng r;
    tw_rng_init(&r, seed * 1000003u + (uint64_t)s);
    for (int b = 0; b < B; b++) {
        const long a = (long)(tw_rng_next(&r) % (uint64_t)(n - T - 1));
        memcpy(in + b * T, tok + a, T * sizeof *in);
        memcpy(tg + b * T, tok + a + 1, T * sizeof *tg);
    }
}

static float val_loss(tw_trainer *t, const tw_model *m, const int *val, long n) {
    int in[B * T], tg[B * T];
    double sum = 0.0;
    int k = 0;
    for (long w = 0; (w + B) * T + 1 <= n; w += B, k++) {
        for (int b = 0; b < B; b++) {
            memcpy(in + b * T, val + (w + b) * T, T * sizeof *in);
            memcpy(tg + b * T, val + (w + b) * T + 1, T * sizeof *tg);
        }
        float l;
        tw_model_loss(&l, &t->s, m, in, tg, B, T);
        sum += l;
    }
    return (float)(sum / k);
}

// A story from the model: BOS then up to n tokens at temperature 0.8, into text.
static void story(char *text, size_t len, const tw_model *m, const tw_tokenizer *tok, uint64_t seed, int n) {
    tw_model_state s;
    tw_sampler sp;
    tw_model_state_init(&s, m, 1, m->cfg.max_seq);
    tw_sampler_init(&sp, m->cfg.vocab, 0.8f, 0.0f, seed);
    size_t k = 0;
    int token = TW_TOK_BOS;
    for (int pos = 0; pos < n && pos < m->cfg.max_seq; pos++) {
        tw_model_forward_next(&s, m, &token, 1, pos);
        const int next = tw_sampler_sample(&sp, s.logits);
        if (next == TW_TOK_BOS) break;
        const char *piece = tw_tokenizer_decode(tok, token, next);
        for (const char *p = piece; *p && k + 1 < len; p++)
            if (tw_tokenizer_piece_printable(piece)) text[k++] = *p == '\n' ? ' ' : *p;
        token = next;
    }
    text[k] = '\0';
    tw_sampler_free(&sp);
    tw_model_state_free(&s);
}

typedef enum { ADAMW, SGD } optimizer;

// What one run records, one entry per step.   each: (STEPS)
typedef struct {
    float loss[STEPS];    // the batch's loss before the update
    float gnorm[STEPS];   // the global gradient norm before clipping
    float lr[STEPS];      // the rate the step used
    float upd[STEPS];     // rms of the change of every weight: how far the step moved them
    float val[STEPS / EVAL_EVERY + 1];   // validation loss at steps 0, 50, 100, ...
} run_log;

// The schedule every AdamW run here uses: warm-up WARMUP steps, cosine from lr to lr / 10.
static tw_train_config adamw_config(float lr) {
    return (tw_train_config){ B, T, STEPS, WARMUP, lr, lr / 10, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
}

// Trains a fresh student for STEPS steps into *m, recording *log.
static void train(tw_model *m, run_log *log, optimizer opt, float lr, const int *tok, long n,
                  const int *vtok, long nv, uint64_t seed, int verbose) {
    make_student(m, seed);
    tw_trainer t;
    if (tw_trainer_init(&t, m, T) != TW_OK) lesson_die("out of memory");
    const tw_train_config c = adamw_config(lr);
    float *before = lesson_alloc(m->n_floats);
    int in[B * T], tg[B * T];
    log->val[0] = val_loss(&t, m, vtok, nv);
    for (int s = 0; s < STEPS; s++) {
        batch(in, tg, tok, n, s, seed);
        memcpy(before, m->memory, (size_t)m->n_floats * sizeof *before);
        if (opt == ADAMW) {
            tw_train_stats st;
            LESSON_TRY(tw_train_step(&st, &t, m, in, tg, &c));
            log->loss[s] = st.loss; log->gnorm[s] = st.gnorm; log->lr[s] = st.lr;
        } else {   // plain gradient descent: w -= lr * g, nothing else (no clipping, no schedule)
            tw_model_grads_zero(&t.g);
            LESSON_TRY(tw_model_forward_backward(&log->loss[s], &t.g, &t.ds, &t.s, m, in, tg, B, T, 1.0f));
            log->gnorm[s] = tw_grad_global_norm(t.grad_ptrs, t.counts, m->n_params);
            log->lr[s] = lr;
            for (long j = 0; j < m->n_floats; j++) m->memory[j] -= lr * t.g.memory[j];
        }
        double ss = 0.0;
        for (long j = 0; j < m->n_floats; j++) ss += ((double)m->memory[j] - before[j]) * ((double)m->memory[j] - before[j]);
        log->upd[s] = (float)sqrt(ss / (double)m->n_floats);
        if ((s + 1) % EVAL_EVERY == 0) {
            log->val[(s + 1) / EVAL_EVERY] = val_loss(&t, m, vtok, nv);
            if (verbose) printf("    step %3d   batch loss %.3f   validation loss %.3f\n", s + 1,
                                (double)log->loss[s], (double)log->val[(s + 1) / EVAL_EVERY]);
        }
    }
    tw_trainer_free(&t);
}

// ---- the sections ----

// 1. The teacher writes n_train + n_val tokens into *all (a tracked array); returns the floor.
static double section_textbook(int **all, long *n_train, long *n_val, const tw_model *teacher, uint64_t seed) {
    lesson_section("The teacher writes the textbook");
    lesson_say("stories260K samples stories at temperature 1 (its own distribution, nothing cut), "
               "each from BOS to the next BOS, until there are %d tokens to learn from and %d more "
               "held out for validation. Because we know the model that wrote them, we know the "
               "best loss anyone can reach on the held-out stories: the teacher's own average "
               "negative log-likelihood of them.", N_TRAIN, N_VAL);
    const double t0 = lesson_seconds();
    const long cap = N_TRAIN + N_VAL + 2 * teacher->cfg.max_seq;
    *all = lesson_alloc_bytes((size_t)cap * sizeof **all);
    tw_sampler sp;
    tw_sampler_init(&sp, 512, 1.0f, 1.0f, seed);
    *n_train = write_stories(*all, N_TRAIN, cap, teacher, &sp);
    *n_val = write_stories(*all + *n_train, N_VAL, cap - *n_train, teacher, &sp);
    tw_sampler_free(&sp);
    const double floor_nll = teacher_floor(*all + *n_train, *n_val, teacher);
    const double lnV = log(512.0);
    printf("  training tokens %ld, validation tokens %ld (written in %.1f s)\n", *n_train, *n_val,
           lesson_seconds() - t0);
    printf("  ln V = ln 512 = %.3f nats: the loss of a model that knows nothing\n", lnV);
    printf("  the teacher's floor on the validation stories: %.3f nats/token (perplexity %.2f)\n",
           floor_nll, exp(floor_nll));
    lesson_expect("the floor is far below ln V", floor_nll < lnV - 3.0);
    return floor_nll;
}

// 2. Windows and a batch, as arrays.
static void section_batch(const int *tok, long n, const tw_tokenizer *tz, uint64_t seed) {
    lesson_section("The data: windows of a token stream, and a batch");
    lesson_say("The stories are one long stream of %ld token ids. A training example is a window "
               "of T + 1 = %d consecutive tokens starting anywhere (%ld possible starts): its first "
               "T are the inputs, its last T the targets, the same tokens shifted by one, so one "
               "window asks for T predictions at once, each from the tokens before it (the causal "
               "mask sees to that). A batch is B = %d windows at random starts: two (B, T) arrays "
               "of ints.", n, T + 1, n - T - 1, B);
    int in[B * T], tg[B * T];
    batch(in, tg, tok, n, 0, seed);
    printf("  step 0's batch: inputs (%d, %d), targets (%d, %d); row 0, first 8 positions:\n", B, T, B, T);
    printf("    t        ");
    for (int t = 0; t < 8; t++) printf("%9d", t);
    printf("\n    inputs   ");
    for (int t = 0; t < 8; t++) printf("%9d", in[t]);
    printf("\n    targets  ");
    for (int t = 0; t < 8; t++) printf("%9d", tg[t]);
    printf("\n    as text  ");
    for (int t = 0; t < 8; t++) printf("%9s", lesson_visible_piece(tw_tokenizer_decode(tz, t ? in[t - 1] : 0, in[t])));
    printf("\n    as text  ");
    for (int t = 0; t < 8; t++) printf("%9s", lesson_visible_piece(tw_tokenizer_decode(tz, in[t], tg[t])));
    printf("\n");
    int shifted = 1;
    for (int b = 0; b < B; b++)
        for (int t = 0; t + 1 < T; t++) shifted &= tg[b * T + t] == in[b * T + t + 1];
    lesson_expect("every target row is its input row shifted left by one", shifted);
    lesson_note("windows overlap and cross story boundaries (a BOS inside a window is just a token to "
                "predict); %d steps of %d windows see %d tokens, about %.1f passes over the stream",
                STEPS, B, STEPS * B * T, (double)STEPS * B * T / (double)n);
}

// The loss of step 0's batch under a model; also the rms of its first window's logits.
static float first_loss(const tw_model *m, const int *tok, long n, uint64_t seed, float *logit_rms) {
    tw_model_state s;
    if (tw_model_state_init(&s, m, T, 0) != TW_OK) lesson_die("out of memory");
    int in[B * T], tg[B * T];
    batch(in, tg, tok, n, 0, seed);
    float loss;
    LESSON_TRY(tw_model_loss(&loss, &s, m, in, tg, B, T));
    LESSON_TRY(tw_model_forward(&s, m, in, T, 0));   // the first window's logits (T, V)
    double ss = 0.0;
    for (long i = 0; i < (long)T * m->cfg.vocab; i++) ss += (double)s.logits[i] * s.logits[i];
    *logit_rms = (float)sqrt(ss / ((double)T * m->cfg.vocab));
    tw_model_state_free(&s);
    return loss;
}

// The rms of the residual stream leaving the last layer, over the T positions of step 0's first window.
static float stream_rms(const tw_model *m, const int *tok, long n, uint64_t seed) {
    tw_model_state s;
    if (tw_model_state_init(&s, m, T, 0) != TW_OK) lesson_die("out of memory");
    int in[B * T], tg[B * T];
    batch(in, tg, tok, n, 0, seed);
    LESSON_TRY(tw_model_forward(&s, m, in, T, 0));
    const float *x = s.layers[m->cfg.n_layer - 1].resid_post;
    const long C = m->cfg.block.attn.d_model;
    double ss = 0.0;
    for (long i = 0; i < T * C; i++) ss += (double)x[i] * x[i];
    tw_model_state_free(&s);
    return (float)sqrt(ss / (double)(T * C));
}

// 3. Initialisation: the scale of the random weights, and the first loss.
static void section_init(const int *tok, long n, uint64_t seed) {
    lesson_section("Initialisation: why 0.02, and why the residual projections are scaled");
    lesson_say("Training starts from random weights, and their scale matters before the first step. "
               "A row of logits is the final hidden vector (rms about 1 after the final norm) times "
               "the head's matrix: with entries of std s, each logit has std about s sqrt(C) = "
               "s sqrt(48). At s = 0.02 that is 0.14: every token gets almost the same probability "
               "and the first loss is ln V, the honest 'I know nothing'. At s = 1 the logits have "
               "std 7: the model is confidently wrong, the first loss is far above ln V, and the "
               "first steps go into undoing that confidence instead of learning.");
    const double lnV = log(512.0);
    static const float STD[4] = { 0.002f, 0.02f, 0.2f, 1.0f };
    float loss[4];
    printf("  init std   logit rms   first loss   ln V = %.3f\n", lnV);
    for (int i = 0; i < 4; i++) {
        tw_model m;
        make_student_ex(&m, seed, 2, STD[i], 0);
        float rms;
        loss[i] = first_loss(&m, tok, n, seed, &rms);
        printf("  %8.3f   %9.4f   %10.3f\n", (double)STD[i], (double)rms, (double)loss[i]);
        tw_model_free(&m);
    }
    lesson_expect_near("at std 0.02 the first loss is ln V", loss[1], lnV, 0.05);
    lesson_expect("at std 1 the first loss is more than 2 nats above ln V", loss[3] > lnV + 2.0);
    lesson_note("0.02 is GPT-2's choice, kept by nanoGPT and llama2.c: small enough that the first "
                "loss is ln V, large enough that the weights differ (all zeros would give every "
                "unit of a layer the same gradient, and they would stay identical)");

    lesson_say("Each block ADDS its attention and FFN outputs to the residual stream, so with L "
               "layers the stream is a sum of 2L contributions and its size grows about like "
               "sqrt(2L). GPT-2 and nanoGPT draw the two projections that write into the stream, "
               "here attn.wo and ffn.down, with std 0.02 / sqrt(2L), so the sum has about the same "
               "size at any depth. (llama2.c's model.py scales wo and w3; its w3 is the FFN's up "
               "projection, not w2, the down projection that writes into the stream.) The rms of "
               "the stream leaving the last layer, on step 0's first window:");
    static const int LAYERS[3] = { 2, 8, 32 };
    float plain[3], scaled[3];
    printf("  layers   all 0.02   wo, down at 0.02/sqrt(2L)\n");
    for (int i = 0; i < 3; i++) {
        tw_model m;
        make_student_ex(&m, seed, LAYERS[i], 0.02f, 0);
        plain[i] = stream_rms(&m, tok, n, seed);
        tw_model_free(&m);
        make_student_ex(&m, seed, LAYERS[i], 0.02f, 1);
        scaled[i] = stream_rms(&m, tok, n, seed);
        tw_model_free(&m);
        printf("  %6d   %8.4f   %8.4f\n", LAYERS[i], (double)plain[i], (double)scaled[i]);
    }
    lesson_expect("unscaled, the stream at 32 layers is more than twice its size at 2",
                  plain[2] > 2.0f * plain[0]);
    lesson_expect("scaled, it grows by less than half as much", scaled[2] / scaled[0] < 0.5f * plain[2] / plain[0]);
    lesson_note("the student below has 2 layers and keeps the library's plain 0.02 "
                "(tw_model_randomize): at 2 layers the difference is small");
}

// One AdamW step on one weight, by hand, in double: returns the new weight, updates *m and *v.
// decoupled: 1 decays p by lr wd (AdamW); 0 adds wd p to the gradient (Adam with L2).
// correct: 0 skips the bias correction.
static double adamw_by_hand(double p, double *m, double *v, double g, int step, double lr, double b1,
                            double b2, double eps, double wd, int decoupled, int correct) {
    if (!decoupled) g += wd * p;
    *m = b1 * *m + (1 - b1) * g;
    *v = b2 * *v + (1 - b2) * g * g;
    const double mhat = correct ? *m / (1 - pow(b1, step)) : *m;
    const double vhat = correct ? *v / (1 - pow(b2, step)) : *v;
    if (decoupled) p *= 1 - lr * wd;
    return p - lr * mhat / (sqrt(vhat) + eps);
}

// 4. AdamW by hand on four weights, against tw_adamw_step.
static void section_adamw(void) {
    lesson_section("AdamW, one step at a time, by hand");
    lesson_say("AdamW keeps two running averages per weight: m of its gradient (the direction) and "
               "v of its squared gradient (the size), and moves the weight by lr m / sqrt(v): a "
               "step of about lr whatever the gradient's scale. Both averages start at 0, so early "
               "on they are too small by the factor 1 - beta^step; dividing by it is the bias "
               "correction. Weight decay shrinks the weight itself by lr wd, beside the Adam step "
               "(decoupled). Four weights: three of a matrix and one norm gain (no decay). "
               "lr 0.01, beta1 0.9, beta2 0.95, eps 1e-8, wd 0.1, as in the training below.");
    const double lr = 0.01, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
    const double w0[4] = { 0.50, -0.30, 0.02, 1.00 };
    const int decays[4] = { 1, 1, 1, 0 };
    const double grads[2][4] = { { 0.10, -2.00, 0.0001, 0.05 }, { 0.30, -1.00, -0.0001, 0.05 } };
    double w[4], m[4] = { 0 }, v[4] = { 0 };
    float lw[4], lm[4] = { 0 }, lv[4] = { 0 };
    for (int i = 0; i < 4; i++) { w[i] = w0[i]; lw[i] = (float)w0[i]; }
    for (int step = 1; step <= 2; step++) {
        printf("  step %d         w          g          m          v      m_hat      v_hat     decay     w new\n", step);
        for (int i = 0; i < 4; i++) {
            const double g = grads[step - 1][i], wdi = decays[i] ? wd : 0.0;
            const double p = w[i];
            w[i] = adamw_by_hand(p, &m[i], &v[i], g, step, lr, b1, b2, eps, wdi, 1, 1);
            printf("  %-9s %9.4f %10.4f %10.3g %10.3g %10.4f %10.3g %9.6f %9.5f\n",
                   decays[i] ? "matrix" : "gain", p, g, m[i], v[i], m[i] / (1 - pow(b1, step)),
                   v[i] / (1 - pow(b2, step)), p * lr * wdi, w[i]);
            const float gf = (float)g;
            const tw_adamw_hparams hp = { (float)lr, (float)b1, (float)b2, (float)eps, (float)wdi };
            tw_adamw_step(&lw[i], &lm[i], &lv[i], &gf, 1, step, &hp);
        }
    }
    float wf[4];
    for (int i = 0; i < 4; i++) wf[i] = (float)w[i];
    // 1e-6: the library works in double too, but keeps m and v as floats between steps and the
    // hyperparameters are floats (0.95f is 0.949999988): a relative 1e-7 on weights of size 1.
    lesson_expect_close("the hand computation equals tw_adamw_step after 2 steps", wf, lw, 4, 1e-6f);
    lesson_note("step 1 moves every weight by about lr = 0.01, the gradient of 2 and that of 1e-4 "
                "alike: m_hat / sqrt(v_hat) = g / |g| at step 1. Adam's step is set by lr, not by the "
                "size of the gradient");

    // What the classic mistakes do at step 1. Bias correction: the first weight (0.5, g 0.1),
    // without decay so that only the correction differs.
    double mm = 0, vv = 0;
    const double right = adamw_by_hand(0.5, &mm, &vv, 0.1, 1, lr, b1, b2, eps, 0.0, 1, 1) - 0.5;
    mm = vv = 0;
    const double no_bc = adamw_by_hand(0.5, &mm, &vv, 0.1, 1, lr, b1, b2, eps, 0.0, 1, 0) - 0.5;
    mm = vv = 0;
    const double right999 = adamw_by_hand(0.5, &mm, &vv, 0.1, 1, lr, b1, 0.999, eps, 0.0, 1, 1) - 0.5;
    mm = vv = 0;
    const double no_bc999 = adamw_by_hand(0.5, &mm, &vv, 0.1, 1, lr, b1, 0.999, eps, 0.0, 1, 0) - 0.5;
    printf("  the classic mistakes at step 1. Weight 0.5, gradient 0.1 (no decay here):\n");
    printf("    Adam                                       moves it by %+.6f\n", right);
    printf("    no bias correction, beta2 0.95             moves it by %+.6f (x %.4f; 0.1/sqrt(0.05) = %.4f)\n",
           no_bc, no_bc / right, 0.1 / sqrt(0.05));
    printf("    no bias correction, beta2 0.999 (torch)    moves it by %+.6f (x %.4f; 0.1/sqrt(0.001) = %.4f)\n",
           no_bc999, no_bc999 / right999, 0.1 / sqrt(0.001));
    // 1e-6: eps (1e-8 against sqrt(v) = 3e-3) is all that separates the ratio from 0.1 / sqrt(1 - beta2).
    lesson_expect_near("without bias correction the first step is 0.1/sqrt(1 - beta2) times the right one",
                       no_bc999 / right999, 0.1 / sqrt(0.001), 1e-5);
    // Decay: a small weight 0.02 whose gradient -1e-4 asks it to grow.
    mm = vv = 0;
    const double dec = adamw_by_hand(0.02, &mm, &vv, -1e-4, 1, lr, b1, b2, eps, wd, 1, 1) - 0.02;
    mm = vv = 0;
    const double l2 = adamw_by_hand(0.02, &mm, &vv, -1e-4, 1, lr, b1, b2, eps, wd, 0, 1) - 0.02;
    printf("  weight 0.02, gradient -1e-4 (the loss wants it larger), wd 0.1:\n");
    printf("    AdamW, decay decoupled                     moves it by %+.6f\n", dec);
    printf("    Adam, decay through the gradient (g + wd w) moves it by %+.6f\n", l2);
    lesson_expect("decay through the gradient reverses this weight's step; decoupled, it does not",
                  dec > 0 && l2 < 0);
    lesson_note("wd w = 0.002 is 20 times the gradient: added to it, the 'decay' becomes the whole "
                "signal, and Adam's normalisation turns it into a full step of lr the wrong way. "
                "Decoupled, the decay is lr wd w = 2e-5, the same small fraction (0.1 %%) of every weight, "
                "whatever its gradient's history");
    lesson_note("gains are not decayed: decay pulls a weight towards 0, and a gain of 0 switches its "
                "norm's output off. (1 - lr wd)^1000 = %.3f: a thousand steps would shrink an "
                "unused gain to a third, for nothing", pow(1 - lr * wd, 1000));
}

// 5. The learning-rate schedule.
static void section_schedule(float lr) {
    lesson_section("The schedule: warm-up, then cosine decay");
    lesson_say("The learning rate changes every step (tw_lr_schedule): it rises linearly from 0 "
               "over the first %d steps (warm-up: while v is still a poor average of a few "
               "gradients, full-size steps would be noisy), then follows half a cosine down to "
               "lr / 10 at the last step (small steps at the end settle the weights in a minimum "
               "instead of bouncing around it). For lr %.0e over %d steps (schedule.png):",
               WARMUP, (double)lr, STEPS);
    static const int SHOW[6] = { 0, 1, 5, WARMUP, STEPS / 2, STEPS };
    printf("  step ");
    for (int i = 0; i < 6; i++) printf("%10d", SHOW[i]);
    printf("\n  lr   ");
    float r[6];
    for (int i = 0; i < 6; i++) {
        r[i] = tw_lr_schedule(SHOW[i], lr, lr / 10, WARMUP, STEPS);
        printf("%10.2e", (double)r[i]);
    }
    printf("\n");
    lesson_expect("the rate is 0 at step 0, lr after warm-up, lr/10 at the end",
                  r[0] == 0.0f && r[3] == lr && fabsf(r[5] - lr / 10) < 1e-9f);
    lesson_expect_near("half-way through the cosine it is the mean of lr and lr/10",
                       tw_lr_schedule(WARMUP + (STEPS - WARMUP) / 2, lr, lr / 10, WARMUP, STEPS),
                       0.55 * lr, 1e-8);
}

// The weights that multiply: every matrix (the head among them when it is not tied); not the
// embedding table (looked up) nor the norm gains.
static double matrix_weights(const tw_model *m) {
    double n = 0;
    for (int i = 0; i < m->n_params; i++)
        if (m->params[i].kind == TW_PARAM_WEIGHT) n += (double)m->params[i].count;
    return n;
}

// The FLOPs of training on `tokens` tokens, counted: forward 2 per weight of every matrix
// (embedding lookups are not multiplications) plus the attention's scores and weighted sums
// over (T + 1) / 2 keys on average; backward twice the forward.
static double counted_flops(const tw_model *m, double tokens) {
    const double matrix = matrix_weights(m);
    const double HD = (double)m->cfg.block.attn.n_head * m->cfg.block.attn.head_dim;
    const double attn = m->cfg.n_layer * 2.0 * 2.0 * HD * (T + 1) / 2.0;
    return 3.0 * (2.0 * matrix + attn) * tokens;
}

// 6. The student learns with AdamW: the loss towards the floor, and what it cost.
static void section_train(run_log *rl, tw_model *teacher, const int *tok, long n, const int *vtok,
                          long nv, double floor_nll, const tw_tokenizer *tz, uint64_t seed) {
    lesson_section("A student learns with AdamW");
    tw_model student;
    make_student(&student, seed);
    const long ns = tw_model_count_params(&student), nt = tw_model_count_params(teacher);
    lesson_say("The student: the same Llama arrangement, 2 layers of width 48: %ld weights against "
               "the teacher's %ld, %.2f times fewer. Each step takes %d windows of %d tokens, "
               "predicts every next token, and AdamW moves every weight (lr 1e-2 with the schedule "
               "above, clipping at norm 1).", ns, nt, (double)nt / (double)ns, B, T);
    lesson_expect("the student has fewer than half the teacher's weights (as --help says)", 2 * ns < nt);
    char before[400], after[400];
    story(before, sizeof before, &student, tz, 7, 40);
    tw_model_free(&student);
    const double tt = lesson_seconds();
    train(&student, rl, ADAMW, 1e-2f, tok, n, vtok, nv, seed, 1);
    const double secs = lesson_seconds() - tt;
    story(after, sizeof after, &student, tz, 7, 40);
    const double lnV = log(512.0), tokens = (double)STEPS * B * T;
    printf("  %d steps, %.0f tokens, in %.1f s\n", STEPS, tokens, secs);
    printf("  validation loss %.3f -> %.3f (floor %.3f, ln V %.3f)\n", (double)rl->val[0],
           (double)rl->val[STEPS / EVAL_EVERY], floor_nll, lnV);
    printf("  before: %s\n  after:  %s\n", before, after);
    lesson_expect_near("the first validation loss is ln V", rl->val[0], lnV, 0.1);
    lesson_expect("the validation loss falls by more than 2 nats", rl->val[STEPS / EVAL_EVERY] < lnV - 2.0);
    lesson_expect("it stays above the teacher's floor", rl->val[STEPS / EVAL_EVERY] > floor_nll);
    lesson_note("the gap to the floor (the dashed line in losses.png) is what more steps, a bigger "
                "student and longer context buy");
    char samples[1000];
    snprintf(samples, sizeof samples, "before training: %s\nafter %d steps: %s\n", before, STEPS, after);
    lesson_write_text("samples.txt", samples);

    lesson_say("What it cost. A forward pass does about 2 FLOPs per weight per token (a multiply "
               "and an add), the backward twice that, so training costs about 6 N FLOPs per token, "
               "N the weights that multiply (the embedding table is looked up, not multiplied; "
               "the head is). Counted exactly, with the attention's own products over the window:");
    const double n_mult = matrix_weights(&student);
    const double six_n = 6.0 * n_mult * tokens, exact = counted_flops(&student, tokens);
    printf("  N (weights that multiply) %.0f   6 N tokens = %.3g FLOPs   counted %.3g FLOPs\n",
           n_mult, six_n, exact);
    printf("  the run took %.2f s here: %.2f GFLOP/s counted (the time also holds 4 validation\n"
           "  passes and the bookkeeping of this lesson)\n", secs, exact / secs / 1e9);
    lesson_expect("6 N tokens is within 10% of the counted FLOPs", fabs(six_n / exact - 1.0) < 0.10);
    lesson_note("at T = %d the attention's share is small; it grows with the window (the count's "
                "extra term is proportional to T), which is why 6 N is an estimate for short windows",
                T);
    tw_model_free(&student);
}

// 7. Plain gradient descent, and a rate ten times too high: the spike, with its gradient norm.
static void section_compare(run_log *logs, const int *tok, long n, const int *vtok, long nv, uint64_t seed) {
    lesson_section("Plain gradient descent, and a learning rate that is too high");
    lesson_say("Same student, same batches. Gradient descent moves each weight by lr times its "
               "gradient (lr 0.5 here): weights with small gradients, like the embeddings of rare "
               "tokens, hardly move. Then AdamW again with lr 0.1, ten times too high.");
    tw_model m;
    train(&m, &logs[1], SGD, 0.5f, tok, n, vtok, nv, seed, 0);
    tw_model_free(&m);
    train(&m, &logs[2], ADAMW, 1e-1f, tok, n, vtok, nv, seed, 0);
    tw_model_free(&m);
    const int last = STEPS / EVAL_EVERY;
    printf("  validation loss after %d steps: AdamW lr 1e-2 %.3f   SGD lr 0.5 %.3f   AdamW lr 1e-1 %.3f\n",
           STEPS, (double)logs[0].val[last], (double)logs[1].val[last], (double)logs[2].val[last]);
    lesson_expect("AdamW beats plain gradient descent", logs[0].val[last] < logs[1].val[last]);
    lesson_expect("a learning rate ten times higher ends worse", logs[0].val[last] < logs[2].val[last]);

    // The spike: the highest batch loss of the lr 0.1 run after its first 10 steps.
    const run_log *h = &logs[2];
    int peak = 10;
    for (int s = 10; s < STEPS; s++) if (h->loss[s] > h->loss[peak]) peak = s;
    lesson_say("At lr 0.1 the loss does not just fall slower: it jumps. The steps around its "
               "highest batch loss, with the gradient norm before clipping and the rms of the "
               "change of the weights (spike.png draws the whole run):");
    printf("  step        lr   batch loss   grad norm   rms update   (same step at lr 1e-2: loss, grad norm)\n");
    const int a = peak - 4 > 0 ? peak - 4 : 0, b = peak + 3 < STEPS ? peak + 3 : STEPS - 1;
    for (int s = a; s <= b; s++)
        printf("  %4d  %8.4f   %10.3f   %9.3f   %10.5f   %s(%.3f, %.3f)\n", s + 1, (double)h->lr[s],
               (double)h->loss[s], (double)h->gnorm[s], (double)h->upd[s], s == peak ? "<- " : "   ",
               (double)logs[0].loss[s], (double)logs[0].gnorm[s]);
    float sorted[STEPS];   // the median gradient norm after warm-up, to compare the peak with
    int ns = 0;
    for (int s = WARMUP; s < STEPS; s++) {
        int k = ns++;
        for (; k > 0 && sorted[k - 1] > h->gnorm[s]; k--) sorted[k] = sorted[k - 1];
        sorted[k] = h->gnorm[s];
    }
    const float median = sorted[ns / 2], jump = h->loss[peak] - h->loss[peak - 1];
    if (jump > 1.0f)
        printf("  a spike: the loss jumped %.2f nats in one step, the gradient norm to %.2f (%.1f times "
               "the run's median %.3f)\n", (double)jump, (double)h->gnorm[peak],
               (double)(h->gnorm[peak] / median), (double)median);
    else
        printf("  no spike with this seed (the highest loss is %.2f nats above the step before): a "
               "rate this high makes spikes likely, not certain (the default seed, 14, has one). "
               "The gradient norm there is %.2f, %.1f times the run's median %.3f\n",
               (double)jump, (double)h->gnorm[peak], (double)(h->gnorm[peak] / median), (double)median);
    lesson_expect("where the loss is highest the gradient norm is above the run's median",
                  h->gnorm[peak] > median);
    float ratio_hi = 0, ratio_lo = 0;   // rms update / lr over steps 11..STEPS
    for (int s = WARMUP; s < STEPS; s++) {
        ratio_hi += h->upd[s] / h->lr[s] / (STEPS - WARMUP);
        ratio_lo += logs[0].upd[s] / logs[0].lr[s] / (STEPS - WARMUP);
    }
    printf("  rms update / lr, averaged over steps %d..%d: %.3f at lr 1e-1, %.3f at lr 1e-2\n",
           WARMUP + 1, STEPS, (double)ratio_hi, (double)ratio_lo);
    lesson_expect("the update per weight is a steady fraction of lr at both rates (within a factor 3)",
                  ratio_hi < 3 * ratio_lo && ratio_lo < 3 * ratio_hi);
    lesson_note("why: a large gradient norm means the loss is steep where the weights are, so a step "
                "of the same size changes the loss a lot. Clipping scales the GRADIENT down to norm "
                "1, but Adam divides the gradient by its own running size, so its step stays a steady "
                "fraction of lr (the line above: an rms of %.2f lr at lr 0.1), up to lr for a weight with a "
                "steady gradient, whatever the clipping does. At lr 0.1 that moves weights of size "
                "0.02 to 0.1 by up to 0.1 each step: the model overshoots, the loss jumps, the "
                "gradient grows, and it takes steps to come back. Clipping protects plain SGD from a "
                "bad batch; for Adam the learning rate is the brake", (double)ratio_hi);
    double tail_hi = 0, tail_lo = 0;   // the mean batch loss of the last 20 steps
    for (int s = STEPS - 20; s < STEPS; s++) { tail_hi += h->loss[s] / 20; tail_lo += logs[0].loss[s] / 20; }
    int below = 0;
    for (int s = WARMUP; s < STEPS; s++) below += h->gnorm[s] < logs[0].gnorm[s];
    printf("  mean batch loss over the last 20 steps: %.3f at lr 1e-1, %.3f at lr 1e-2; the gradient "
           "norm at lr 1e-1 is below lr 1e-2's at %d of steps %d..%d\n", tail_hi, tail_lo, below,
           WARMUP + 1, STEPS);
    lesson_expect("the lr 0.1 run ends higher with mostly smaller gradient norms",
                  tail_hi > tail_lo && 2 * below > STEPS - WARMUP);
    lesson_note("after its first steps the lr 0.1 run stalls (spike.png): its gradient norm is mostly "
                "below the good run's, yet its loss stays higher; steps of lr 0.1 are too coarse to "
                "follow the narrow directions the lr 0.01 run keeps finding");
    lesson_note("a single spike in a longer ./train run (say loss 6.75 with gradient norm 50 among "
                "steps near 1) is the same picture at one step: look at the gradient norm beside it; "
                "the run recovers if the norm falls back within a few steps, and a lower --lr or "
                "a longer --warmup makes it rarer (docs/training.md)");
}

// 8. Gradient accumulation: two half batches, each scaled by 1/2, give the whole batch's gradient.
static void section_accumulate(const int *tok, long n, uint64_t seed) {
    lesson_section("Gradient accumulation: a big batch in small pieces");
    lesson_say("A batch too big for memory can be run in k micro-batches: zero the gradients once, "
               "run forward and backward on each part with its loss scaled by 1/k, and the "
               "gradients add up to those of the whole batch (the loss is a mean, and the gradient "
               "of a mean of means of equal parts is the mean of their gradients). Step 0's batch "
               "of %d windows as one batch, and as 2 x %d and 4 x %d:", B, B / 2, B / 4);
    tw_model m;
    make_student(&m, seed);
    tw_model_grads whole, parts;
    tw_model_state s, ds;
    if (tw_model_grads_init(&whole, &m) != TW_OK || tw_model_grads_init(&parts, &m) != TW_OK ||
        tw_model_state_init(&s, &m, T, 0) != TW_OK || tw_model_state_init(&ds, &m, T, 0) != TW_OK)
        lesson_die("out of memory");
    int in[B * T], tg[B * T];
    batch(in, tg, tok, n, 0, seed);
    float loss_whole, gmax = 0;
    LESSON_TRY(tw_model_forward_backward(&loss_whole, &whole, &ds, &s, &m, in, tg, B, T, 1.0f));
    for (long j = 0; j < m.n_floats; j++) gmax = fmaxf(gmax, fabsf(whole.memory[j]));
    static const int K[2] = { 2, 4 };
    float diff[2];
    for (int i = 0; i < 2; i++) {
        const int k = K[i], rows = B / k;
        tw_model_grads_zero(&parts);
        double loss_sum = 0;
        for (int p = 0; p < k; p++) {
            float l;
            LESSON_TRY(tw_model_forward_backward(&l, &parts, &ds, &s, &m, in + p * rows * T,
                                                 tg + p * rows * T, rows, T, 1.0f / (float)k));
            loss_sum += l / k;
        }
        diff[i] = 0;
        for (long j = 0; j < m.n_floats; j++) diff[i] = fmaxf(diff[i], fabsf(parts.memory[j] - whole.memory[j]));
        printf("  %d x %d windows: loss %.6f (whole batch %.6f)   max |gradient difference| %.2g "
               "(largest gradient %.3g)\n", k, rows, loss_sum, (double)loss_whole, (double)diff[i], (double)gmax);
    }
    // 1e-6 of the largest gradient: the per-window contributions are the same numbers added in the
    // same order, only scaled by 1/k before instead of after; float rounding of the scale is all
    // that may differ.
    lesson_expect("accumulated gradients equal the whole batch's (to 1e-6 of the largest)",
                  diff[0] <= 1e-6f * gmax && diff[1] <= 1e-6f * gmax);
    lesson_note("the same memory holds any batch size; the cost is k smaller passes, which use the "
                "machine less well than one big one");
    tw_model_grads_free(&whole); tw_model_grads_free(&parts);
    tw_model_state_free(&s); tw_model_state_free(&ds);
    tw_model_free(&m);
}

// 9. The pictures: the three runs' losses (with ln V and the floor), the schedule, the spike.
static void section_pictures(const run_log *logs, double floor_nll) {
    lesson_section("Pictures");
    enum { COLS = 8 };
    float *table = lesson_alloc((long)COLS * STEPS);
    for (int s = 0; s < STEPS; s++) {
        float *r = table + (long)COLS * s;
        r[0] = (float)(s + 1);
        r[1] = logs[0].loss[s]; r[2] = logs[1].loss[s]; r[3] = logs[2].loss[s];
        r[4] = logs[0].lr[s];   r[5] = logs[2].lr[s];
        r[6] = logs[0].gnorm[s]; r[7] = logs[2].gnorm[s];
    }
    static const char *const NAMES[COLS] = { "step", "adamw_1e-2", "sgd_0.5", "adamw_1e-1", "lr_1e-2",
                                            "lr_1e-1", "gnorm_1e-2", "gnorm_1e-1" };
    char comment[200], extra[64];
    snprintf(comment, sizeof comment, "batch loss per step (nats/token), learning rate, gradient norm "
             "before clipping; ln V %.4f, teacher's floor %.4f", log(512.0), floor_nll);
    lesson_write_columns("losses.dat", table, STEPS, COLS, NAMES, comment);
    snprintf(extra, sizeof extra, "floor=%.4f", floor_nll);
    lesson_plot_ex("14_losses.gp", "losses.dat", "losses.png", extra);
    lesson_plot("14_schedule.gp", "losses.dat", "schedule.png");
    lesson_plot("14_spike.gp", "losses.dat", "spike.png");
}

int main(int argc, char **argv) {
    const char *level = NULL;
    const lesson_opt extra[] = {
        { "--simd", 's', &level, "LEVEL", "the kernels: naive, avx2, avx512, neon (default: the best this CPU has)" },
        { NULL, 0, NULL, NULL, NULL },
    };
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 14 }, extra);   // T is fixed: no -T
    const char *kernels = tw_simd_init(level);   // level NULL: $TW_SIMD, else the best level
    if (!kernels) {   // bad usage: exit 2, as for any bad flag
        fprintf(stderr, "lesson14: --simd %s: unknown or not available on this machine (available: %s)\n",
                level ? level : getenv("TW_SIMD"), tw_simd_available());
        return 2;
    }
    tw_model teacher;
    tw_tokenizer tz;
    lesson_load_model(&teacher, &tz, "data/models/stories260K.bin", "data/models/tok512.bin");
    lesson_note("kernels: %s (available here: %s). The naive level's plain loops give the same "
                "numbers on every machine; a SIMD level sums in another order and may change the "
                "last digits, and the unstable run at lr 0.1 by more", kernels, tw_simd_available());

    int *all;
    long n_train, n_val;
    const double floor_nll = section_textbook(&all, &n_train, &n_val, &teacher, a.seed);
    const int *vtok = all + n_train;
    section_batch(all, n_train, &tz, a.seed);
    section_init(all, n_train, a.seed);
    section_adamw();
    section_schedule(1e-2f);
    run_log *logs = lesson_alloc_bytes(3 * sizeof *logs);   // AdamW 1e-2, SGD 0.5, AdamW 1e-1
    section_train(&logs[0], &teacher, all, n_train, vtok, n_val, floor_nll, &tz, a.seed);
    section_compare(logs, all, n_train, vtok, n_val, a.seed);
    section_accumulate(all, n_train, a.seed);
    section_pictures(logs, floor_nll);
    tw_tokenizer_free(&tz);
    tw_model_free(&teacher);
    lesson_say("Try it: make exercise18 (AdamW), make exercise24 (clipping), make exercise25 (the schedule)");
    return lesson_finish();
}
