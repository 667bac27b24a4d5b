// Lesson 22: distillation: what a teacher's soft targets carry that a hard label does not.
//
// Teaches: at every position a trained model gives a whole distribution over the next token; the
// data gives one token. The teacher's distribution carries H bits per position (its entropy) and
// ranks the alternatives; a one-hot label carries none of that. Softening both distributions with
// a temperature tau > 1 raises the entropy and lifts the small probabilities into view. The
// distillation loss a tau^2 KL(p_tau || q_tau) + (1 - a) CE pulls every logit of the student
// towards the teacher's (the gradient a tau (q - p) is non-zero almost everywhere), where the hard
// label's gradient pushes one token up and the rest down in proportion.
// Calls: tw_model_forward, tw_softmax_rows, tw_distill_loss, tw_cross_entropy_forward.
// Build & run: make lesson22 && ./lesson22 [--out DIR] [--no-plot]
// Plot:        gnuplot viz/22_temperature.gp        (reads out/lesson22/temperature.dat)
// Needs: data/models/stories260K.bin data/models/tok512.bin
// Writes: temperature.dat entropy_bits.npy
// Pictures: temperature.png
#include <math.h>
#include <string.h>
#include "lesson.h"

#define MODEL_PATH "data/models/stories260K.bin"
#define TOK_PATH   "data/models/tok512.bin"
static const char *STORY = "Once upon a time, there was a little girl named Lily. She loved to play "
                           "outside in the park with her dog. One day, she saw a big red ball.";

static const lesson_info INFO = {
    22, "Distillation: soft targets and temperature",
    "stories260K reads a short story. At each position its next-token distribution is measured in "
    "bits (its entropy), against the zero bits of a one-hot label; the temperature tau = 0.5 .. 8 "
    "softens it; and the gradient of the distillation loss (tw_distill_loss) is compared with the "
    "hard label's: how many of the 512 logits each one moves."
};

// Entropy in bits of softmax(z / tau).   z: (V)
static double entropy_bits(const float *z, int V, double tau) {
    double max = z[0], sum = 0.0, h = 0.0;
    for (int v = 1; v < V; v++) if (z[v] > max) max = z[v];
    for (int v = 0; v < V; v++) sum += exp((z[v] - max) / tau);
    for (int v = 0; v < V; v++) {
        const double p = exp((z[v] - max) / tau) / sum;
        if (p > 0.0) h -= p * log2(p);
    }
    return h;
}

// ---- the sections of main() ----

// The teacher's top 5 next tokens at one position of the story, with their probabilities.
// logits: (n, V), ids: the story's tokens.
static void print_teacher_top5(const float *logits, const int *ids, int V, const tw_tokenizer *tok) {
    const int show = 13;   // "... named" -> the name: a position with real alternatives
    const float *z = logits + (size_t)show * V;
    int order[5] = { -1, -1, -1, -1, -1 };
    for (int k = 0; k < 5; k++)
        for (int v = 0; v < V; v++) {
            int used = 0;
            for (int j = 0; j < k; j++) used |= order[j] == v;
            if (!used && (order[k] < 0 || z[v] > z[order[k]])) order[k] = v;
        }
    double sum = 0.0, max = z[order[0]];
    for (int v = 0; v < V; v++) sum += exp(z[v] - max);
    printf("  after \"...");
    for (int t = show - 3; t <= show; t++) printf("%s", lesson_visible_piece(tw_tokenizer_decode(tok, ids[t - 1], ids[t])));
    printf("\" the story has \"%s\"; the teacher's top 5:\n",
           lesson_visible_piece(tw_tokenizer_decode(tok, ids[show], ids[show + 1])));
    for (int k = 0; k < 5; k++)
        printf("    %-12s p = %.3f\n", lesson_visible_piece(tw_tokenizer_decode(tok, ids[show], order[k])),
               exp(z[order[k]] - max) / sum);
}

// 1. The teacher's entropy in bits at each of the n positions against the 0 bits of a one-hot
// label; writes entropy_bits.npy.   logits: (n, V) (the model's, over the story ids)
static void teacher_bits_per_position(const float *logits, const int *ids, int n, int V,
                                      const tw_tokenizer *tok) {
    float *H = lesson_alloc(n);
    double mean_h = 0.0, mean_nll = 0.0;
    for (int t = 0; t < n; t++) {
        H[t] = (float)entropy_bits(logits + (size_t)t * V, V, 1.0);
        mean_h += H[t] / n;
        const float *z = logits + (size_t)t * V;
        double max = z[0], sum = 0.0;
        for (int v = 1; v < V; v++) if (z[v] > max) max = z[v];
        for (int v = 0; v < V; v++) sum += exp(z[v] - max);
        mean_nll += -((z[ids[t + 1]] - max) - log(sum)) / log(2.0) / n;
    }
    const long shH[1] = { n };
    lesson_write_npy("entropy_bits.npy", H, shH, 1);
    print_teacher_top5(logits, ids, V, tok);
    printf("  mean over %d positions: the teacher's distribution holds %.2f bits; the story's own token "
           "costs it %.2f bits; a one-hot label holds 0 bits of alternatives\n", n, mean_h, mean_nll);
    lesson_say("A hard label says which token came; the teacher also says what else could have come and "
               "how likely each was: %.2f bits per position here, as much uncertainty as a uniform choice "
               "among %.1f tokens. A student trained on labels must discover that spread from many "
               "examples; a distilled student is given it at every position.", mean_h, pow(2.0, mean_h));
    lesson_expect("the teacher's distribution carries more than 0.5 bits per position", mean_h > 0.5);
}

// 2. The mean entropy against the temperature tau; writes temperature.dat.   logits: (n, V)
static void temperature_softens(const float *logits, int n, int V) {
    static const float TAUS[6] = { 0.5f, 1.0f, 2.0f, 3.0f, 4.0f, 8.0f };
    float table[6 * 2];
    printf("  %6s %14s\n", "tau", "mean bits");
    int rising = 1;
    for (int i = 0; i < 6; i++) {
        double h = 0.0;
        for (int t = 0; t < n; t++) h += entropy_bits(logits + (size_t)t * V, V, TAUS[i]) / n;
        table[i * 2] = TAUS[i];
        table[i * 2 + 1] = (float)h;
        if (i > 0 && !(table[i * 2 + 1] > table[i * 2 - 1])) rising = 0;
        printf("  %6.1f %14.3f\n", (double)TAUS[i], h);
    }
    const char *cols[2] = { "tau", "mean_entropy_bits" };
    lesson_write_columns("temperature.dat", table, 6, 2, cols, "lesson 22: the teacher's mean entropy against tau");
    lesson_plot("22_temperature.gp", "temperature.dat", "temperature.png");
    lesson_say("Dividing the logits by tau > 1 flattens the distribution: the rare alternatives gain "
               "probability, so the KL term sees them (at tau = 1 a token of p = 1e-4 barely counts). "
               "As tau grows without bound every distribution becomes uniform (log2 %d = %.0f bits) and "
               "carries nothing: tau is a dial between the label's sharpness and the teacher's shape.",
               V, log2((double)V));
    lesson_expect("the entropy rises with the temperature", rising);
    lesson_expect("at tau = 8 the entropy stays below uniform", table[11] < log2((double)V));
}

// 3. How many logits the soft (distillation) and the hard (label) gradient move.   logits: (n, V)
static void soft_targets_move_every_logit(const float *logits, const int *ids, int n, int V) {
    float *student = lesson_alloc((long)n * V);   // a student that knows less: the teacher's logits halved
    for (long i = 0; i < (long)n * V; i++) student[i] = 0.5f * logits[i];
    int *targets = lesson_alloc_bytes(sizeof(int) * (size_t)n);
    for (int t = 0; t < n; t++) targets[t] = ids[t + 1];
    float *d_soft = lesson_alloc((long)n * V), *d_hard = lesson_alloc((long)n * V);
    float l_soft, l_hard;
    LESSON_TRY(tw_distill_loss(&l_soft, d_soft, 1.0f, student, logits, targets, n, V, 1.0f, 2.0f));
    LESSON_TRY(tw_distill_loss(&l_hard, d_hard, 1.0f, student, logits, targets, n, V, 0.0f, 2.0f));
    long moved_soft = 0, moved_hard_up = 0;
    for (long i = 0; i < (long)n * V; i++) {
        moved_soft += fabsf(d_soft[i]) * n > 1e-4f;
        moved_hard_up += d_hard[i] < 0.0f;
    }
    printf("  a student with the teacher's logits halved: soft loss (a = 1, tau = 2) %.4f, hard loss "
           "(a = 0) %.4f\n", (double)l_soft, (double)l_hard);
    printf("  logits the soft gradient moves by more than 1e-4 per position: %ld of %ld (%.0f%%)\n",
           moved_soft, (long)n * V, 100.0 * moved_soft / ((double)n * V));
    printf("  logits the hard gradient pushes up: %ld (one per position; every other one goes down in "
           "proportion to its probability)\n", moved_hard_up);
    lesson_say("The hard label's gradient softmax(z) - onehot raises one logit per position and lowers the "
               "rest by their own probability: it does not say which wrong tokens were nearly right. The "
               "soft gradient tau (q - p) is the difference of two whole distributions, one number of "
               "information for every token of the vocabulary at every position.");
    lesson_expect("the hard gradient raises exactly one logit per position", moved_hard_up == n);
    lesson_expect("the soft gradient moves more logits than the hard one raises", moved_soft > 10 * moved_hard_up);
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .no_seed = 1 }, NULL);
    tw_model m;
    tw_tokenizer tok;
    lesson_load_model(&m, &tok, MODEL_PATH, TOK_PATH);
    const int V = m.cfg.vocab;
    int ids[512], T = 0;   // tw_tokenizer_max_tokens(STORY) bounds it
    LESSON_TRY(tw_tokenizer_encode(&tok, ids, &T, 512, STORY, 1, 0));
    tw_model_state s;
    LESSON_TRY(tw_model_state_init(&s, &m, T, 0));
    LESSON_TRY(tw_model_forward(&s, &m, ids, T, 0));
    const int n = T - 1;   // positions with a next token in the story

    lesson_section("What the teacher says at each position");
    teacher_bits_per_position(s.logits, ids, n, V, &tok);

    lesson_section("Temperature softens the distribution");
    temperature_softens(s.logits, n, V);

    lesson_section("The gradient: soft targets move every logit");
    soft_targets_move_every_logit(s.logits, ids, n, V);
    tw_model_state_free(&s);
    tw_model_free(&m);
    tw_tokenizer_free(&tok);
    (void)a;
    lesson_say("Try it: make exercise31 (the distillation loss's backward)");
    return lesson_finish();
}
