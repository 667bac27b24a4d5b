// Lesson 29: preferences and rewards: DPO and GRPO move a model's behaviour, and a reward is gamed.
//
// Teaches: after pre-training a model can be steered by comparisons (DPO: pairs of a chosen and a
// rejected completion) or by a score a program computes (GRPO: sample a group, push each
// completion up or down by its reward against its group's). The rule here: the story stories260K
// writes after the plain-text prompt "a story about dog" (BOS first; not the instruction set's
// chat template) contains the word "dog". The lesson computes the DPO loss of one pair by hand
// (the two log-ratios, z, the loss, what beta does, what the reference changes), samples its own
// preference pairs, then trains a copy of the model for a few DPO steps and another for a few
// GRPO steps with the `contains` reward, measuring the rule's rate and the KL to the reference at
// every step (the picture). Last, GRPO with the `count` reward, which can be gamed: the count climbs
// while the stories repeat the word.
// Calls: tw_grpo_sample (sampling), tw_dpo_reference, tw_dpo_pair_loss, tw_dpo_train_step,
//        tw_grpo_train_step, tw_reward_contains, tw_reward_count, tw_model_forward (the exact KL).
// Build & run: make lesson29 && ./lesson29 [--seed N] [--out DIR] [--no-plot]
//   (about 2.3 s of CPU, measured on a loaded 2-vCPU machine at the default SIMD level: 8 DPO
//   steps, 18 GRPO steps of 12 stories, 20 measurements of 16 stories each)
// Plot:        gnuplot viz/29_rate_kl.gp   (reads out/lesson29/rate_kl.dat)
// Needs: data/models/stories260K.bin data/models/tok512.bin
// Valgrind: skip (more than 11 minutes under valgrind, measured: DPO and GRPO with sampling on
//   stories260K; the DPO and GRPO steps run under valgrind in tests/test_dpo.c and tests/test_grpo.c)
// Writes: rate_kl.dat stories.txt
// Extra runs: ci
// Pictures: rate_kl.png
#include <math.h>
#include <string.h>
#include "lesson.h"
#include "train/checkpoint.h"
#include "train/dpo.h"
#include "train/dpo_step.h"
#include "train/grpo.h"
#include "train/pairs.h"
#include "train/reward.h"
#include "train/step.h"

#define MODEL_PATH "data/models/stories260K.bin"
#define TOK_PATH   "data/models/tok512.bin"
#define WORD       "dog"  // the rule: the completion contains it (a whole word, any case)
#define PROMPT     "a story about " WORD
#define LEN        32     // new tokens per completion at most: short stories keep the lesson quick
#define N_POOL     128    // completions sampled to make the preference pairs
#define MAX_PAIRS  8      // pairs kept (each a satisfying and a failing completion)
#define DPO_BETA   0.5f
#define DPO_LR     3e-4f
#define DPO_STEPS  8
#define GRPO_LR    5e-4f  // the `contains` reward
#define HACK_LR    1e-3f  // the `count` reward: a faster rate, so that 8 steps show where it goes
#define GRPO_G     12     // completions per group (one prompt per step)
#define GRPO_STEPS 8
#define HACK_STEPS 10     // GRPO on the count: a few more steps, since a group with no "dog" teaches nothing
#define N_EVAL     16     // completions per measurement
#define TEXT_CAP   1024

static const lesson_info INFO = {
    29, "Preferences and rewards: DPO, GRPO and reward hacking",
    "stories260K is asked for \"a story about dog\"; the rule is that the story contains \"dog\". The "
    "DPO loss of one pair is computed by hand (log-ratios, z, the loss, a table over beta, what the "
    "reference changes); then pairs sampled here train a copy with DPO, and the rule itself trains "
    "another with GRPO, each for 8 steps, with the rule's rate and the KL to the reference measured "
    "at every step. Last, GRPO on the count of \"dog\", a reward that can be gamed."
};

// Everything the sections share: the frozen reference, the tokenizer, the prompt and the states.
typedef struct {
    tw_model ref;
    tw_tokenizer tok;
    int prompt[32], n_prompt, T_max;   // T_max = n_prompt + LEN
    tw_model_state cs;                 // sampling (a KV cache of T_max positions)
    tw_model_state sp, sr;             // forwards of the policy and of the reference (no cache)
    char text[TEXT_CAP];
} world;

// The decoded completion tokens[start .. len) into w->text (BOS and EOS decode to nothing).
static const char *decode(world *w, const int *tokens, int start, int len) {
    size_t n = 0;
    w->text[0] = '\0';
    for (int t = start; t < len; t++) {
        if (tokens[t] <= 2) continue;
        const char *piece = tw_tokenizer_decode(&w->tok, tokens[t - 1], tokens[t]);
        const size_t k = strlen(piece);
        if (n + k + 1 > TEXT_CAP) break;
        memcpy(w->text + n, piece, k + 1);
        n += k;
    }
    for (char *c = w->text; *c; c++) if (*c == '\n') *c = ' ';
    return w->text;
}

// Whitespace-separated words of text, and how many of them are distinct (compared in lower case
// without punctuation): a story that repeats itself has few distinct words.
static void word_stats(int *words, int *distinct, const char *text) {
    char seen[128][24];
    *words = *distinct = 0;
    for (const char *p = text; *p; ) {
        while (*p == ' ') p++;
        if (!*p) break;
        char wd[24];
        int n = 0;
        for (; *p && *p != ' '; p++)
            if (n < 23 && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) wd[n++] = (char)(*p | 0x20);
        wd[n] = '\0';
        (*words)++;
        int known = 0;
        for (int i = 0; i < *distinct && !known; i++) known = !strcmp(seen[i], wd);
        if (!known && *distinct < 128) strcpy(seen[(*distinct)++], wd);
    }
}

// KL(pi || pi_ref) summed exactly over the vocabulary at every position that predicts a completion
// token of tokens (len, prompt n_prompt), divided by the completion's length: nats per token.
static double kl_per_token(world *w, const tw_model *m, const int *tokens, int len) {
    const int V = m->cfg.vocab, T = len - 1;
    LESSON_TRY(tw_model_forward(&w->sp, m, tokens, T, 0));
    LESSON_TRY(tw_model_forward(&w->sr, &w->ref, tokens, T, 0));
    double kl = 0.0;
    for (int t = w->n_prompt - 1; t < T; t++) {
        const float *a = w->sp.logits + (size_t)t * V, *b = w->sr.logits + (size_t)t * V;
        double ma = a[0], mb = b[0], za = 0.0, zb = 0.0;
        for (int v = 1; v < V; v++) { if (a[v] > ma) ma = a[v]; if (b[v] > mb) mb = b[v]; }
        for (int v = 0; v < V; v++) { za += exp(a[v] - ma); zb += exp(b[v] - mb); }
        const double la = ma + log(za), lb = mb + log(zb);
        for (int v = 0; v < V; v++) kl += exp(a[v] - la) * ((a[v] - la) - (b[v] - lb));
    }
    return kl / (len - w->n_prompt);
}

typedef struct {
    double rate;       // share of the completions that contain WORD
    double count;      // mean number of times WORD appears
    double distinct;   // mean share of distinct words in a completion
    double kl;         // mean KL(pi || pi_ref), nats per completion token
} measure;

// N_EVAL completions of m from the same seed each time (so that two measurements differ by the
// model, not by the draw), their rule, count, distinct words and KL to the reference. first: the
// first completion's text (a tracked string) when not NULL.
static measure evaluate(world *w, const tw_model *m, uint64_t seed, const char **first) {
    tw_sampler sp;
    LESSON_TRY(tw_sampler_init(&sp, m->cfg.vocab, 1.0f, 1.0f, seed));
    int tokens[64];
    measure r = { 0, 0, 0, 0 };
    for (int k = 0; k < N_EVAL; k++) {
        int len;
        memcpy(tokens, w->prompt, sizeof(int) * (size_t)w->n_prompt);
        LESSON_TRY(tw_grpo_sample(&len, tokens, w->n_prompt, w->T_max, &w->cs, m, &sp));
        r.kl += kl_per_token(w, m, tokens, len) / N_EVAL;
        const char *text = decode(w, tokens, w->n_prompt, len);
        int words, distinct;
        word_stats(&words, &distinct, text);
        r.rate += tw_reward_contains(text, WORD) / N_EVAL;
        r.count += tw_reward_count(text, WORD) / N_EVAL;
        r.distinct += (words ? (double)distinct / words : 1.0) / N_EVAL;
        if (k == 0 && first) *first = lesson_strdup(text);
    }
    tw_sampler_free(&sp);
    return r;
}

// What sections 2 and 3 found, for section 4's summary.
typedef struct {
    double pool_rate, dpo_rate, dpo_kl, grpo_rate, grpo_kl;   // rates over steps 6..8, KL at the end
    double count0, count1, distinct0, distinct1, hack_kl;     // the count reward, before and after
} findings;

static void load_copy(tw_model *m) {
    char err[512] = "";
    if (tw_model_load_file(m, MODEL_PATH, err, sizeof err) != TW_OK) lesson_die("%s (run `make model` first)", err);
}

// ---- the sections of main() ----

// 0. Samples N_POOL completions from the model and pairs the i-th that contains WORD (chosen) with
// the i-th that does not (rejected), as tools/make_pref.c does for every word. Returns the share
// of the N_POOL completions that satisfy the rule: the reference's rate, on more samples than a
// measurement has.
static double sample_pairs(tw_pairs *p, world *w, uint64_t seed) {
    tw_sampler sp;
    LESSON_TRY(tw_sampler_init(&sp, w->ref.cfg.vocab, 1.0f, 1.0f, seed));
    static int pool[N_POOL][64];
    int len[N_POOL], ok[N_POOL], n_ok = 0;
    for (int k = 0; k < N_POOL; k++) {
        memcpy(pool[k], w->prompt, sizeof(int) * (size_t)w->n_prompt);
        LESSON_TRY(tw_grpo_sample(&len[k], pool[k], w->n_prompt, w->T_max, &w->cs, &w->ref, &sp));
        ok[k] = tw_reward_contains(decode(w, pool[k], w->n_prompt, len[k]), WORD) > 0.0f;
        n_ok += ok[k];
    }
    tw_sampler_free(&sp);
    for (int a = 0, b = 0; p->n < MAX_PAIRS; a++, b++) {
        while (a < N_POOL && !ok[a]) a++;
        while (b < N_POOL && ok[b]) b++;
        if (a >= N_POOL || b >= N_POOL) break;
        LESSON_TRY(tw_pairs_add(p, w->prompt, w->n_prompt, pool[a] + w->n_prompt, len[a] - w->n_prompt,
                                pool[b] + w->n_prompt, len[b] - w->n_prompt));
    }
    printf("  prompt \"%s\" (%d tokens with BOS); %d completions of up to %d tokens, temperature 1:\n"
           "  %d contain \"%s\" (%.0f %%); pairs made: %ld (chosen: contains it; rejected: does not)\n",
           PROMPT, w->n_prompt, N_POOL, LEN, n_ok, WORD, 100.0 * n_ok / N_POOL, p->n);
    if (p->n < 2) lesson_die("only %ld pairs from %d samples: try another --seed", p->n, N_POOL);
    printf("  pair 0, chosen:   \"%s\"\n", decode(w, tw_pairs_chosen(p, 0) - 1, 1, p->len[1] + 1));
    printf("  pair 0, rejected: \"%s\"\n", decode(w, tw_pairs_rejected(p, 0) - 1, 1, p->len[2] + 1));
    return (double)n_ok / N_POOL;
}

// 1. The DPO loss of pair 0 by hand, a table over beta, and what the reference changes.
//   ref: (p->n, 2) the reference's log-probabilities of every pair's chosen and rejected
static void dpo_by_hand(const tw_pairs *p, const double *ref) {
    const double rw = ref[0], rl = ref[1];
    const double pw = rw + 1.0, pl = rl - 1.0;   // a policy that moved each by one nat
    const double beta = DPO_BETA, z = beta * ((pw - rw) - (pl - rl));
    const double loss = log1p(exp(-z));
    tw_dpo_result r;
    tw_dpo_pair_loss(&r, pw, pl, rw, rl, beta);
    printf("  pair 0 under the reference: log pi_ref(y_w|x) = %.3f, log pi_ref(y_l|x) = %.3f (sums over %d "
           "and %d tokens)\n", rw, rl, p->len[1], p->len[2]);
    printf("  a policy with log pi(y_w|x) = %.3f (+1) and log pi(y_l|x) = %.3f (-1):\n", pw, pl);
    printf("    log-ratio of the chosen   log pi - log pi_ref = %+.3f\n", pw - rw);
    printf("    log-ratio of the rejected log pi - log pi_ref = %+.3f\n", pl - rl);
    printf("    z = beta (%+.0f - %+.0f) = %.3f   loss = -log sigma(z) = log(1 + e^-z) = %.5f   (tw_dpo_pair_loss: %.5f)\n",
           pw - rw, pl - rl, z, loss, r.loss);
    lesson_expect_near("the hand-computed loss equals tw_dpo_pair_loss", loss, r.loss, 1e-12);

    // What beta does: the same move of the log-ratios is a larger z; the move that brings the loss
    // down to 0.1 (z = 2.252) is 2.252 / beta nats.
    static const double BETAS[5] = { 0.05, 0.1, 0.5, 1.0, 2.0 };
    const double z_01 = -log(expm1(0.1));
    printf("\n  %6s %12s %14s %16s %22s\n", "beta", "loss at ref", "loss (+1, -1)", "dloss/dlog pi_w", "nats to loss 0.1");
    int all_ln2 = 1, falling = 1;
    double prev = INFINITY;
    for (int i = 0; i < 5; i++) {
        tw_dpo_result at_ref, moved;
        tw_dpo_pair_loss(&at_ref, rw, rl, rw, rl, BETAS[i]);
        tw_dpo_pair_loss(&moved, pw, pl, rw, rl, BETAS[i]);
        printf("  %6.2f %12.4f %14.4f %16.4f %22.2f\n", BETAS[i], at_ref.loss, moved.loss, moved.d_chosen, z_01 / BETAS[i]);
        all_ln2 &= fabs(at_ref.loss - log(2.0)) < 1e-12;
        falling &= moved.loss < prev;
        prev = moved.loss;
    }
    lesson_say("At the reference z = 0 and every pair's loss is ln 2 = 0.6931, whatever beta. beta turns a "
               "move of the log-ratios into z: with a large beta a small move already saturates the loss "
               "(its gradient beta sigma(-z) vanishes) and training stops near the reference; with a small "
               "beta the policy must move %.0f nats to get the loss to 0.1. beta is the leash.",
               z_01 / BETAS[0]);
    lesson_expect("every pair starts at ln 2, for every beta", all_ln2);
    lesson_expect("for the same move, a larger beta gives a smaller loss", falling);

    // Without the reference: z0 = beta (log pi(y_w) - log pi(y_l)) of the raw log-probabilities.
    double zmin = INFINITY, zmax = -INFINITY, wmin = 1, wmax = 0;
    for (long i = 0; i < p->n; i++) {
        const double z0 = beta * (ref[2 * i] - ref[2 * i + 1]), weight = 1.0 / (1.0 + exp(z0));
        zmin = fmin(zmin, z0); zmax = fmax(zmax, z0);
        wmin = fmin(wmin, weight); wmax = fmax(wmax, weight);
    }
    printf("\n  without the reference, z0 = beta (log pi(y_w|x) - log pi(y_l|x)) over the %ld pairs: from %.2f to %.2f;\n"
           "  each pair's gradient weight sigma(-z0) from %.4f to %.4f (with the reference: 0.5000 for every pair)\n",
           p->n, zmin, zmax, wmin, wmax);
    printf("  pushing log pi(y_l|x) of pair 0 down, log pi(y_w|x) unchanged at the reference's:\n");
    printf("  %22s %20s %20s\n", "log pi(y_l|x)", "loss, no reference", "loss, DPO");
    double last_noref = 0.0;
    for (int k = 0; k < 4; k++) {
        const double drop = k == 0 ? 0.0 : pow(10.0, k), l = rl - drop;
        tw_dpo_result with;
        tw_dpo_pair_loss(&with, rw, l, rw, rl, beta);
        const double noref = log1p(exp(-beta * (rw - l)));
        printf("  %22.2f %20.6f %20.6f\n", l, noref, with.loss);
        last_noref = noref;
    }
    lesson_say("A raw log-probability says how likely the text is (its length, its common or rare words), not "
               "whether it keeps the rule. Without the reference, a pair whose chosen story is already the more "
               "probable one starts with a tiny loss and teaches nothing, the opposite kind dominates, and the loss is driven to 0 by "
               "pushing log pi(y_l) towards minus infinity. With it, z measures only how the policy CHANGED "
               "the two probabilities, every pair starts equal, and beta log(pi / pi_ref) is a reward "
               "relative to the start: DPO is derived from maximising a reward minus beta KL(pi || pi_ref), "
               "and the reference is the model the policy is tied to. (Both losses still fall as log pi(y_l) "
               "falls: the pair's loss alone has no floor; how far the policy goes is set by beta and by "
               "how long it trains, and the KL below measures it.)");
    lesson_expect("without the reference the pairs' gradient weights differ (by more than 0.2)", wmax - wmin > 0.2);
    lesson_expect("without the reference, log pi(y_l) -> -1000 drives the loss below 1e-6", last_noref < 1e-6);
}

// 2a. DPO on the pairs: the rate and the KL at steps 0 .. DPO_STEPS into rows[s][1..2].
static void train_dpo(float (*rows)[5], world *w, const tw_pairs *p, const double *ref, uint64_t seed) {
    tw_model m;
    load_copy(&m);
    int T_pairs = 0;
    for (long i = 0; i < p->n; i++)
        for (int c = 1; c <= 2; c++) if (p->len[3 * i] + p->len[3 * i + c] - 1 > T_pairs) T_pairs = p->len[3 * i] + p->len[3 * i + c] - 1;
    tw_trainer t;
    tw_dpo_scratch d;
    LESSON_TRY(tw_trainer_init(&t, &m, T_pairs));
    LESSON_TRY(tw_dpo_scratch_init(&d, &m, T_pairs));
    const tw_train_config c = { 0, 0, DPO_STEPS, 0, DPO_LR, DPO_LR, 0.0f, 0.9f, 0.95f, 1e-8f, 1.0f };
    long idx[MAX_PAIRS];
    for (long i = 0; i < p->n; i++) idx[i] = i;   // every pair, every step
    printf("  %4s %10s %10s %10s %12s %14s\n", "step", "loss", "margin", "accuracy", "rule rate", "KL nats/token");
    for (int s = 0; s <= DPO_STEPS; s++) {
        const measure e = evaluate(w, &m, seed, NULL);
        rows[s][1] = (float)e.rate;
        rows[s][2] = (float)e.kl;
        if (s == DPO_STEPS) { printf("  %4d %10s %10s %10s %12.3f %14.4f\n", s, "", "", "", e.rate, e.kl); break; }
        tw_dpo_stats st;
        LESSON_TRY(tw_dpo_train_step(&st, &t, &d, &m, p, idx, (int)p->n, ref, DPO_BETA, &c));
        printf("  %4d %10.4f %10.3f %10.2f %12.3f %14.4f\n", s, st.loss, st.margin, st.accuracy, e.rate, e.kl);
    }
    tw_dpo_scratch_free(&d);
    tw_trainer_free(&t);
    tw_model_free(&m);
}

// 2b and 3. GRPO with a reward (contains or count of WORD), GRPO_G completions a step of the one
// prompt; before every step (and after the last) the model is measured as DPO's was. rows: when
// not NULL, the rate and KL into rows[s][3..4]. before, after: the first and last measurement.
static void train_grpo(measure *before, measure *after, const char **story_before, const char **story_after,
                       float (*rows)[5], world *w, tw_reward_kind kind, int steps, uint64_t seed) {
    tw_model m;
    load_copy(&m);
    tw_trainer t;
    LESSON_TRY(tw_trainer_init(&t, &m, w->T_max));
    tw_grpo_batch b = { GRPO_G, w->T_max, lesson_alloc_bytes(sizeof(int) * GRPO_G * (size_t)w->T_max),
                        lesson_alloc_bytes(sizeof(int) * GRPO_G), lesson_alloc_bytes(sizeof(int) * GRPO_G),
                        lesson_alloc(GRPO_G) };
    const tw_grpo_config gc = { GRPO_G, 0.2f, 0.04f, 1.0f, 1e-4f };
    const float lr = kind == TW_REWARD_COUNT ? HACK_LR : GRPO_LR;
    const tw_train_config c = { 0, 0, steps, 0, lr, lr, 0.0f, 0.9f, 0.95f, 1e-8f, 1.0f };
    tw_sampler sp;
    LESSON_TRY(tw_sampler_init(&sp, m.cfg.vocab, 1.0f, 1.0f, seed ^ 0x9e3779b97f4a7c15ULL));
    printf("  %4s %12s %10s %12s %14s %10s\n", "step", "batch reward", "signal", kind == TW_REWARD_COUNT ? "mean count" : "rule rate",
           "KL nats/token", "distinct");
    for (int s = 0; s <= steps; s++) {
        // Without rows (the count reward) only the ends are measured; the batch reward shows the way.
        const int measured = rows || s == 0 || s == steps;
        const measure e = measured ? evaluate(w, &m, seed, s == 0 ? story_before : s == steps ? story_after : NULL)
                                   : (measure){ NAN, NAN, NAN, NAN };
        if (s == 0) *before = e;
        if (s == steps) *after = e;
        if (rows) { rows[s][3] = (float)e.rate; rows[s][4] = (float)e.kl; }
        const double shown = kind == TW_REWARD_COUNT ? e.count : e.rate;
        if (s == steps) { printf("  %4d %12s %10s %12.3f %14.4f %10.2f\n", s, "", "", shown, e.kl, e.distinct); break; }
        for (int i = 0; i < GRPO_G; i++) {
            int *tk = b.tokens + (size_t)i * w->T_max;
            memcpy(tk, w->prompt, sizeof(int) * (size_t)w->n_prompt);
            LESSON_TRY(tw_grpo_sample(&b.len[i], tk, w->n_prompt, w->T_max, &w->cs, &m, &sp));
            b.prompt_len[i] = w->n_prompt;
            const char *text = decode(w, tk, w->n_prompt, b.len[i]);
            b.rewards[i] = kind == TW_REWARD_COUNT ? tw_reward_count(text, WORD) : tw_reward_contains(text, WORD);
        }
        tw_grpo_stats st;
        LESSON_TRY(tw_grpo_train_step(&st, &t, &m, &w->sr, &w->ref, &b, &gc, &c));
        if (measured) printf("  %4d %12.3f %10.0f %12.3f %14.4f %10.2f\n", s, st.reward, st.signal, shown, e.kl, e.distinct);
        else printf("  %4d %12.3f %10.0f %12s %14s %10s\n", s, st.reward, st.signal, "-", "-", "-");
    }
    tw_sampler_free(&sp);
    tw_trainer_free(&t);
    tw_model_free(&m);
}

// 2. Both methods on the rule, the picture, and the checks.
// pool_rate: the reference's rate on the N_POOL completions of section 1.
static void section_rule(findings *f, world *w, const tw_pairs *p, const double *ref, double pool_rate, uint64_t seed) {
    static float rows[DPO_STEPS + 1][5];
    for (int s = 0; s <= DPO_STEPS; s++) rows[s][0] = (float)s;
    lesson_say("DPO: %ld pairs, all of them every step, beta %.1f, AdamW lr 3e-4. Each row measures the model "
               "BEFORE that step's update: %d completions from the same seed every time, the share that "
               "contain \"%s\", and KL(pi || pi_ref) summed exactly over the vocabulary at each completion "
               "token, averaged (nats per token).", p->n, (double)DPO_BETA, N_EVAL, WORD);
    train_dpo(rows, w, p, ref, seed);
    lesson_say("GRPO with the reward \"contains %s\" (1 or 0): each step samples %d completions of the prompt "
               "from the current policy, scores them, and updates on the group advantages (beta 0.04 on the "
               "k3 KL, lr 5e-4). The batch reward is what the step saw; the rate and KL are measured as for "
               "DPO.", WORD, GRPO_G);
    measure g0, g1;
    const char *s0, *s1;
    train_grpo(&g0, &g1, &s0, &s1, rows, w, TW_REWARD_CONTAINS, GRPO_STEPS, seed);
    const char *cols[5] = { "step", "dpo_rate", "dpo_kl", "grpo_rate", "grpo_kl" };
    lesson_write_columns("rate_kl.dat", &rows[0][0], DPO_STEPS + 1, 5, cols,
                         "lesson 29: the rule's rate and KL(pi || pi_ref) in nats/token before each step");
    lesson_plot("29_rate_kl.gp", "rate_kl.dat", "rate_kl.png");
    // The checks compare the reference's rate on the N_POOL completions of section 1 with the rate
    // over the last three measurements (3 x N_EVAL completions): 16 completions alone are too
    // few to tell 6 % from 12 %.
    double dpo_end = 0.0, grpo_end = 0.0;
    for (int s = DPO_STEPS - 2; s <= DPO_STEPS; s++) { dpo_end += rows[s][1] / 3.0; grpo_end += rows[s][3] / 3.0; }
    printf("\n  the reference's rate on the %d completions of section 1: %.3f\n", N_POOL, pool_rate);
    printf("  rate over steps %d..%d (%d completions): DPO %.3f (KL %.4f at step %d), GRPO %.3f (KL %.4f) nats/token\n",
           DPO_STEPS - 2, DPO_STEPS, 3 * N_EVAL, dpo_end, rows[DPO_STEPS][2], DPO_STEPS, grpo_end, g1.kl);
    *f = (findings){ pool_rate, dpo_end, rows[DPO_STEPS][2], grpo_end, g1.kl, 0, 0, 0, 0, 0 };
    lesson_expect("both start from the same model: the same rate at step 0", rows[0][1] == (float)g0.rate);
    lesson_expect("DPO at least doubles the rule's rate", dpo_end >= 2.0 * pool_rate);
    lesson_expect("GRPO at least doubles the rule's rate", grpo_end >= 2.0 * pool_rate);
    lesson_expect("each paid a KL from the reference (> 0.01 nats/token at the end)", rows[DPO_STEPS][2] > 0.01f && g1.kl > 0.01);
    lesson_expect("at step 0 the policy is the reference: KL 0", rows[0][2] == 0.0f && rows[0][4] == 0.0f);
}

// 3. GRPO on the count of WORD: the mean count climbs, the stories lose their words.
static void section_hacking(findings *f, world *w, uint64_t seed) {
    lesson_say("The reward \"how many times %s appears\" has no ceiling: repeating the word scores higher than "
               "telling a story about it. The same GRPO, rewarded by the count (lr 1e-3, %d steps; the count and the distinct words are measured before and after):", WORD, HACK_STEPS);
    measure c0, c1;
    const char *s0, *s1;
    train_grpo(&c0, &c1, &s0, &s1, NULL, w, TW_REWARD_COUNT, HACK_STEPS, seed);
    printf("\n  before: \"%s\"\n  after:  \"%s\"\n", s0, s1);
    char both[3 * TEXT_CAP];
    snprintf(both, sizeof both, "before GRPO on the count of \"%s\":\n%s\nafter %d steps:\n%s\n", WORD, s0, HACK_STEPS, s1);
    lesson_write_text("stories.txt", both);
    printf("  mean count %.2f -> %.2f; distinct words per story %.2f -> %.2f of its words; KL %.4f nats/token\n",
           c0.count, c1.count, c0.distinct, c1.distinct, c1.kl);
    lesson_say("The reward went up, and what it was meant to stand for went down: the share of distinct words "
               "in a story fell. A reward is a measurement of what we want, and optimising a measurement finds "
               "its cheapest way up (Goodhart's law). The bounded `contains` reward of section 2 stops paying "
               "after one mention; the KL penalty slows the drift but does not forbid it.");
    f->count0 = c0.count; f->count1 = c1.count; f->distinct0 = c0.distinct; f->distinct1 = c1.distinct;
    f->hack_kl = c1.kl;
    lesson_expect("the mean count at least doubles", c1.count >= 2.0 * c0.count && c1.count > c0.count);
    lesson_expect("the stories repeat themselves more: fewer distinct words", c1.distinct < c0.distinct);
}

// 4. What the two ways of learning used.
static void section_pairs_vs_reward(const tw_pairs *p, const findings *f) {
    printf("  DPO:  %d sampled completions, judged once, made %ld fixed pairs; %d steps of %ld pairs; no sampling "
           "while training\n", N_POOL, p->n, DPO_STEPS, p->n);
    printf("  GRPO: %d fresh completions from the current policy per step, scored by a C function: %d in %d steps\n",
           GRPO_G, GRPO_G * GRPO_STEPS, GRPO_STEPS);
    printf("  the rule's rate from %.3f (the reference) to %.3f with DPO (KL %.3f nats/token) and %.3f with GRPO "
           "(KL %.3f);\n  the gameable count from %.2f to %.2f, distinct words %.2f -> %.2f (KL %.3f)\n",
           f->pool_rate, f->dpo_rate, f->dpo_kl, f->grpo_rate, f->grpo_kl, f->count0, f->count1, f->distinct0,
           f->distinct1, f->hack_kl);
    lesson_say("Pairs are data: someone (here, the rule) judged two completions once, and DPO makes the "
               "judged-better one more probable relative to the reference; it never sees what the model "
               "writes after it has changed. A reward is a judge on call: GRPO asks it about the policy's own "
               "new completions every step, so it keeps finding what scores, including what the judge did "
               "not mean (section 3). Pairs can come from people, who cannot be asked about every sample of every step; a "
               "reward must be a program, and then it must be hard to game. The two KLs above are each method's "
               "price for its rate at the learning rate and number of steps chosen here, not a verdict on the "
               "method: another --seed, rate or step count reorders them; the count's KL shows what gaming costs "
               "in distance from the model that could tell stories.");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 29 }, NULL);
    tw_simd_init("auto");
    world *w = lesson_alloc_bytes(sizeof *w);
    lesson_load_model(&w->ref, &w->tok, MODEL_PATH, TOK_PATH);
    LESSON_TRY(tw_tokenizer_encode(&w->tok, w->prompt, &w->n_prompt, 32, PROMPT, 1, 0));
    w->T_max = w->n_prompt + LEN;
    LESSON_TRY(tw_model_state_init(&w->cs, &w->ref, w->T_max, w->T_max));
    LESSON_TRY(tw_model_state_init(&w->sp, &w->ref, w->T_max, 0));
    LESSON_TRY(tw_model_state_init(&w->sr, &w->ref, w->T_max, 0));
    tw_pairs p;
    memset(&p, 0, sizeof p);
    findings f;

    lesson_section("Preference pairs sampled from the model");
    const double pool_rate = sample_pairs(&p, w, a.seed);
    tw_dpo_scratch d;
    int T_pairs = w->T_max;
    LESSON_TRY(tw_dpo_scratch_init(&d, &w->ref, T_pairs));
    double *ref = lesson_alloc_bytes(sizeof(double) * 2 * (size_t)p.n);
    LESSON_TRY(tw_dpo_reference(ref, &d, &w->ref, &p));
    tw_dpo_scratch_free(&d);

    lesson_section("The DPO loss of one pair, by hand");
    dpo_by_hand(&p, ref);

    lesson_section("The rule's rate and the KL paid: DPO and GRPO");
    section_rule(&f, w, &p, ref, pool_rate, a.seed + 1);

    lesson_section("Reward hacking: a reward that can be gamed");
    section_hacking(&f, w, a.seed + 1);

    lesson_section("Learning from pairs, learning from a reward");
    section_pairs_vs_reward(&p, &f);

    tw_pairs_free(&p);
    tw_model_state_free(&w->sr);
    tw_model_state_free(&w->sp);
    tw_model_state_free(&w->cs);
    tw_model_free(&w->ref);
    tw_tokenizer_free(&w->tok);
    lesson_say("Try it: make exercise42 (the DPO loss and its gradient), make exercise43 (GRPO's advantages "
               "and clipped objective)");
    return lesson_finish();
}
