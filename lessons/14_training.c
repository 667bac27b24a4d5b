// Lesson 14: training: a tiny model learns to write stories from its teacher.
//
// Teaches: a model learns by repeating one step (forward, loss, backward, update) on batches of
// text; its loss starts at ln V (it knows nothing: every token equally likely) and falls; the
// validation loss, on text it never trained on, says whether it learned the language or the
// batches; when the text comes from a known model (the teacher, stories260K), the teacher's own
// loss on it is a floor no student can go below; AdamW, which scales every weight's step by its
// gradient's history, learns much faster than plain gradient descent at the same budget; and a
// learning rate that is too high makes the loss jump instead of fall.
// Calls: tw_model_forward_next + tw_sampler_sample (the teacher writes), tw_model_forward (the
//        floor), tw_train_step (AdamW), tw_model_forward_backward (plain SGD), tw_model_loss (validation);
//        tw_simd_init picks the kernels all of them use.
// Build & run: make lesson14 && ./lesson14 [--seed N] [--simd LEVEL] [--out DIR]
//   (about 4 s of CPU at the best SIMD level, the default; 19 s with --simd naive)
// Needs: data/models/stories260K.bin data/models/tok512.bin
// Writes: losses.dat samples.txt
// Pictures: losses.png
#include <math.h>
#include <string.h>
#include "lesson.h"
#include "train/step.h"
#include "formats/llama2c.h"
#include "decode/sampler.h"
#include "tokenize/tokenizer.h"
#include "simd/simd.h"

static const lesson_info INFO = {
    14, "Training: a tiny model learns stories from its teacher",
    "The teacher (stories260K) writes a few hundred short stories. A student with 60 times fewer "
    "weights starts from random numbers and learns them: the lesson prints its loss falling from "
    "ln V towards the teacher's own loss (the floor), its stories before and after, and compares "
    "AdamW with plain gradient descent and with a learning rate that is too high."
};

enum { N_TRAIN = 16000, N_VAL = 2000, B = 8, T = 32, STEPS = 150, EVAL_EVERY = 50 };

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

// The student: a llama-style model of 2 layers, width 48.
static void make_student(tw_model *m, uint64_t seed) {
    tw_model_config c;
    tw_model_config_preset(&c, "llama");
    c.vocab = 512; c.max_seq = T; c.n_layer = 2;
    c.block.attn.d_model = 48; c.block.attn.n_head = 4; c.block.attn.n_kv_head = 4;
    c.block.attn.head_dim = 12; c.block.ffn_hidden = 128;
    if (tw_model_init(m, &c) != TW_OK) lesson_die("out of memory for the student");
    tw_model_randomize(m, seed);
    for (int i = 0; i < m->n_params; i++)   // norm gains start at 1, as in every trainer
        if (m->params[i].kind == TW_PARAM_GAIN)
            for (long j = 0; j < m->params[i].count; j++) m->params[i].data[j] = 1.0f;
}

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

// Trains a fresh student for STEPS steps; curve (STEPS) receives each step's batch loss and
// val (STEPS / EVAL_EVERY + 1) the validation loss at steps 0, 50, ... Returns the student.
static void train(tw_model *m, float *curve, float *val, optimizer opt, float lr, const int *tok,
                  long n, const int *vtok, long nv, uint64_t seed, int verbose) {
    make_student(m, seed);
    tw_trainer t;
    if (tw_trainer_init(&t, m, T) != TW_OK) lesson_die("out of memory");
    const tw_train_config c = { B, T, STEPS, 10, lr, lr / 10, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    int in[B * T], tg[B * T];
    val[0] = val_loss(&t, m, vtok, nv);
    for (int s = 0; s < STEPS; s++) {
        batch(in, tg, tok, n, s, seed);
        if (opt == ADAMW) {
            tw_train_stats st;
            tw_train_step(&st, &t, m, in, tg, &c);
            curve[s] = st.loss;
        } else {   // plain gradient descent: w -= lr * g, nothing else
            tw_model_grads_zero(&t.g);
            tw_model_forward_backward(&curve[s], &t.g, &t.ds, &t.s, m, in, tg, B, T, 1.0f);
            for (long j = 0; j < m->n_floats; j++) m->memory[j] -= lr * t.g.memory[j];
        }
        if ((s + 1) % EVAL_EVERY == 0) {
            val[(s + 1) / EVAL_EVERY] = val_loss(&t, m, vtok, nv);
            if (verbose) printf("    step %3d   batch loss %.3f   validation loss %.3f\n", s + 1,
                                (double)curve[s], (double)val[(s + 1) / EVAL_EVERY]);
        }
    }
    tw_trainer_free(&t);
}

int main(int argc, char **argv) {
    const char *level = NULL;
    const lesson_opt extra[] = {
        { "--simd", 's', &level, "LEVEL", "the kernels: naive, avx2, avx512, neon (default: the best this CPU has)" },
        { NULL, 0, NULL, NULL, NULL },
    };
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 14, .T = T }, extra);
    const char *kernels = tw_simd_init(level);   // level NULL: $TW_SIMD, else the best level
    if (!kernels) {   // bad usage: exit 2, as for any bad flag
        fprintf(stderr, "lesson14: --simd %s: unknown or not available on this machine (available: %s)\n",
                level ? level : getenv("TW_SIMD"), tw_simd_available());
        return 2;
    }
    char err[512];
    tw_model teacher;
    tw_tokenizer tok;
    if (tw_llama2c_load(&teacher, "data/models/stories260K.bin", err, sizeof err) != TW_OK) lesson_die("%s (run `make model`)", err);
    if (tw_tokenizer_load(&tok, "data/models/tok512.bin", 512, err, sizeof err) != TW_OK) lesson_die("%s", err);
    lesson_note("kernels: %s (available here: %s). The naive level's plain loops give the same "
                "numbers on every machine; a SIMD level sums in another order and may change the "
                "last digits, and the unstable run at lr 0.1 by more", kernels, tw_simd_available());
    const double t0 = lesson_seconds();

    lesson_section("The teacher writes the textbook");
    lesson_say("stories260K samples stories at temperature 1 (its own distribution, nothing cut), "
               "each from BOS to the next BOS, until there are %d tokens to learn from and %d more "
               "held out for validation. Because we know the model that wrote them, we know the "
               "best loss anyone can reach on the held-out stories: the teacher's own average "
               "negative log-likelihood of them.", N_TRAIN, N_VAL);
    const long cap = N_TRAIN + N_VAL + 2 * teacher.cfg.max_seq;
    int *all = lesson_alloc_bytes((size_t)cap * sizeof *all);
    tw_sampler sp;
    tw_sampler_init(&sp, 512, 1.0f, 1.0f, a.seed);
    const long n_train = write_stories(all, N_TRAIN, cap, &teacher, &sp);
    const long n_val = write_stories(all + n_train, N_VAL, cap - n_train, &teacher, &sp);
    tw_sampler_free(&sp);
    const int *vtok = all + n_train;
    const double floor_nll = teacher_floor(vtok, n_val, &teacher);
    const double lnV = log(512.0);
    printf("  training tokens %ld, validation tokens %ld (written in %.1f s)\n", n_train, n_val,
           lesson_seconds() - t0);
    printf("  ln V = ln 512 = %.3f nats: the loss of a model that knows nothing\n", lnV);
    printf("  the teacher's floor on the validation stories: %.3f nats/token (perplexity %.2f)\n",
           floor_nll, exp(floor_nll));
    lesson_expect("the floor is far below ln V", floor_nll < lnV - 3.0);

    lesson_section("A student learns with AdamW");
    tw_model student;
    make_student(&student, a.seed);
    lesson_say("The student: the same Llama arrangement, 2 layers of width 48: %ld weights against "
               "the teacher's %ld. Each step takes %d windows of %d tokens, predicts every next "
               "token, and AdamW moves every weight (learning rate 1e-2, warm-up 10 steps, cosine "
               "decay to 1e-3, clipping at norm 1).", tw_model_count_params(&student),
               tw_model_count_params(&teacher), B, T);
    char before[400], after[400];
    story(before, sizeof before, &student, &tok, 7, 40);
    tw_model_free(&student);
    float *curves = lesson_alloc(3L * STEPS), *vals = lesson_alloc(3L * (STEPS / EVAL_EVERY + 1));
    const double tt = lesson_seconds();
    train(&student, curves, vals, ADAMW, 1e-2f, all, n_train, vtok, n_val, a.seed, 1);
    const double secs = lesson_seconds() - tt;
    story(after, sizeof after, &student, &tok, 7, 40);
    printf("  %d steps, %d tokens, in %.1f s\n", STEPS, STEPS * B * T, secs);
    printf("  validation loss %.3f -> %.3f (floor %.3f, ln V %.3f)\n", (double)vals[0],
           (double)vals[STEPS / EVAL_EVERY], floor_nll, lnV);
    printf("  before: %s\n  after:  %s\n", before, after);
    lesson_note("the loss starts at ln V: random weights give every token about the same probability");
    lesson_expect_near("the first validation loss is ln V", vals[0], lnV, 0.1);
    lesson_expect("the validation loss falls by more than 2 nats", vals[STEPS / EVAL_EVERY] < lnV - 2.0);
    lesson_expect("it stays above the teacher's floor", vals[STEPS / EVAL_EVERY] > floor_nll);
    lesson_note("the gap to the floor is what more steps, a bigger student and longer context buy");
    char samples[1000];
    snprintf(samples, sizeof samples, "before training: %s\nafter %d steps: %s\n", before, STEPS, after);
    lesson_write_text("samples.txt", samples);
    tw_model_free(&student);

    lesson_section("Plain gradient descent, and a learning rate that is too high");
    lesson_say("Same student, same batches. Gradient descent moves each weight by lr times its "
               "gradient (lr 0.5 here); AdamW divides each weight's step by the root of its "
               "recent squared gradients, so rarely-used embeddings and busy matrices all move at "
               "about the rate asked for. Then AdamW again with lr 0.1, ten times too high.");
    train(&student, curves + STEPS, vals + (STEPS / EVAL_EVERY + 1), SGD, 0.5f, all, n_train, vtok, n_val, a.seed, 0);
    tw_model_free(&student);
    train(&student, curves + 2 * STEPS, vals + 2 * (STEPS / EVAL_EVERY + 1), ADAMW, 1e-1f, all, n_train, vtok,
          n_val, a.seed, 0);
    tw_model_free(&student);
    const int last = STEPS / EVAL_EVERY;
    const float v_adam = vals[last], v_sgd = vals[(STEPS / EVAL_EVERY + 1) + last],
                v_high = vals[2 * (STEPS / EVAL_EVERY + 1) + last];
    printf("  validation loss after %d steps: AdamW lr 1e-2 %.3f   SGD lr 0.5 %.3f   AdamW lr 1e-1 %.3f\n",
           STEPS, (double)v_adam, (double)v_sgd, (double)v_high);
    lesson_expect("AdamW beats plain gradient descent", v_adam < v_sgd);
    lesson_expect("a learning rate ten times higher ends worse", v_adam < v_high);

    float *table = lesson_alloc(4L * STEPS);
    for (int s = 0; s < STEPS; s++) {
        table[4 * s] = (float)(s + 1);
        table[4 * s + 1] = curves[s];
        table[4 * s + 2] = curves[STEPS + s];
        table[4 * s + 3] = curves[2 * STEPS + s];
    }
    static const char *const COLS[4] = { "step", "adamw_1e-2", "sgd_0.5", "adamw_1e-1" };
    char comment[160];
    snprintf(comment, sizeof comment, "batch loss per step (nats/token); ln V %.4f, teacher's floor %.4f",
             lnV, floor_nll);
    lesson_write_columns("losses.dat", table, STEPS, 4, COLS, comment);
    lesson_plot("14_losses.gp", "losses.dat", "losses.png");
    tw_tokenizer_free(&tok);
    tw_model_free(&teacher);
    return lesson_finish();
}
