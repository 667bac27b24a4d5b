// Lesson 17: decoding: what the model predicts, and how a token is chosen from it.
//
// Teaches: a language model does not write text, it gives a probability to every possible next
// token; decoding is the rule that turns those probabilities into one token. On the real
// stories260K model: the top 10 next tokens at each step of a story, as text; what greedy,
// temperature, top-k, top-p and beam search each choose from the same distribution; how greedy
// decoding falls into repetition; and perplexity, exp(mean -log p), of a real story against the
// same words shuffled.
// Calls: tw_llama2c_load, tw_tokenizer_load/_encode/_decode, tw_model_state_init,
//        tw_model_forward/_forward_next, tw_softmax_rows, tw_sampler_init/_sample, tw_argmax,
//        tw_beam_init/_search/_free (lib/decode/beam.h).
// Build & run: make lesson17 && ./lesson17 [--seed N] [--out DIR]   (make fetches the model)
// Needs: data/models/stories260K.bin data/models/tok512.bin
// Writes: next_tokens.txt nll_story.npy nll_shuffled.npy shuffled.txt greedy.txt sampled.txt
#include <math.h>
#include <string.h>
#include "lesson.h"

#define MODEL_PATH "data/models/stories260K.bin"
#define TOK_PATH   "data/models/tok512.bin"

static const lesson_info INFO = {
    17, "Decoding: what the model predicts",
    "At every position a language model outputs one probability per vocabulary entry; decoding "
    "turns them into text. With the real stories260K model this lesson prints the ten most "
    "likely next tokens at each step of a story, lets greedy, temperature, top-k, top-p and beam "
    "search choose from the same distribution, shows greedy decoding repeating itself, and "
    "measures perplexity on a real story against the same words shuffled."
};

// A short story in the style of the model's training data (TinyStories), written for this lesson.
static const char *STORY =
    "Once upon a time, there was a little girl named Lily. She liked to play in the park with "
    "her red ball. One day, the ball rolled under a big tree. Lily was sad, but her friend Tom "
    "helped her get it back. They played together all day and were very happy.";

typedef struct {
    tw_model         m;
    tw_tokenizer     tok;
    tw_model_state full;   // no cache, T_max = MAX_T: whole sequences at once
    int              V;
} model;

enum { MAX_T = 256 };

static void load(model *md) {
    memset(md, 0, sizeof *md);
    lesson_load_model(&md->m, &md->tok, MODEL_PATH, TOK_PATH);
    md->V = md->m.cfg.vocab;
    LESSON_TRY(tw_model_state_init(&md->full, &md->m, MAX_T, 0));
}

static void unload(model *md) {
    tw_model_state_free(&md->full);
    tw_tokenizer_free(&md->tok);
    tw_model_free(&md->m);
}

// BOS + text as ids (tracked); *n receives the count.
static int *encode(const model *md, const char *text, int *n) {
    int max = (int)tw_tokenizer_max_tokens(text);
    int *ids = lesson_alloc_bytes((size_t)max * sizeof(int));
    LESSON_TRY(tw_tokenizer_encode(&md->tok, ids, n, max, text, 1, 0));
    if (*n > MAX_T) lesson_die("the text has %d tokens, more than %d", *n, MAX_T);
    return ids;
}

// The token `id` as every lesson shows it (lesson_token: its piece, '_' for a space).
static const char *piece(const model *md, int id) {
    return lesson_token(&md->tok, id);
}

// Probabilities (V) after the whole of ids (n), at temperature 1.
static void next_probs(float *p, model *md, const int *ids, int n) {
    LESSON_TRY(tw_model_forward_next(&md->full, &md->m, ids, n, 0));
    tw_softmax_rows(p, md->full.logits + (size_t)(n - 1) * md->V, 1, md->V, 1.0f);
}

// The k most likely ids of p (V), best first (ties: lower id).   top: (k)
static void top_k_ids(int *top, const float *p, int V, int k) {
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int i = 0; i < V; i++) {
            int taken = 0;
            for (int q = 0; q < j; q++) taken |= top[q] == i;
            if (!taken && (best < 0 || p[i] > p[best])) best = i;
        }
        top[j] = best;
    }
}

// ---- 1. the top 10 at each step ----
static void top10_along_the_story(model *md, const int *ids, int n, char *log, size_t log_cap) {
    const int V = md->V, shown = 8;
    LESSON_TRY(tw_model_forward(&md->full, &md->m, ids, n, 0));
    float *p = lesson_alloc((long)n * V);                               // (n, V)
    tw_softmax_rows(p, md->full.logits, n, V, 1.0f);
    size_t len = 0;
    int top[10];
    for (int t = 0; t + 1 < n; t++) {
        top_k_ids(top, p + (size_t)t * V, V, 10);
        int rank = 0;
        for (int i = 0; i < V; i++) rank += p[(size_t)t * V + i] > p[(size_t)t * V + ids[t + 1]];
        len += (size_t)snprintf(log + len, log_cap - len, "after [%s] next is [%s] p=%.4f rank %d; top 10:",
                                piece(md, ids[t]), piece(md, ids[t + 1]),
                                (double)p[(size_t)t * V + ids[t + 1]], rank + 1);
        for (int j = 0; j < 10; j++)
            len += (size_t)snprintf(log + len, log_cap - len, " [%s] %.3f", piece(md, top[j]),
                                    (double)p[(size_t)t * V + top[j]]);
        len += (size_t)snprintf(log + len, log_cap - len, "\n");
        if (t >= shown) continue;
        printf("  after \"...%s\" the text goes on with [%s] (p = %.3f, rank %d). Top 10:\n   ",
               piece(md, ids[t]), piece(md, ids[t + 1]),
               (double)p[(size_t)t * V + ids[t + 1]], rank + 1);
        for (int j = 0; j < 10; j++)
            printf(" [%s] %.3f", piece(md, top[j]), (double)p[(size_t)t * V + top[j]]);
        printf("\n");
    }
}

// ---- 2. five rules, one distribution ----
typedef struct { model *md; } beam_ctx;

// tw_beam_search's callback: log-probabilities after the whole prefix, recomputed from scratch
// (no KV cache per beam: simple, and fast enough for a 260K-parameter model).
static tw_status model_logprobs(float *logprobs, const int *prefix, int len, void *ctx) {
    model *md = ((beam_ctx *)ctx)->md;
    tw_status st = tw_model_forward_next(&md->full, &md->m, prefix, len, 0);
    if (st != TW_OK) return st;
    const float *z = md->full.logits + (size_t)(len - 1) * md->V;
    float mx = z[0];
    for (int i = 1; i < md->V; i++) if (z[i] > mx) mx = z[i];
    double sum = 0.0;
    for (int i = 0; i < md->V; i++) sum += exp((double)z[i] - mx);
    for (int i = 0; i < md->V; i++) logprobs[i] = (float)((double)z[i] - mx - log(sum));
    return TW_OK;
}

static void five_rules(model *md, uint64_t seed) {
    const char *prompt = "The dog";   // an opening where the widths disagree
    int n;
    int *ids = encode(md, prompt, &n);
    const int V = md->V;
    float *p = lesson_alloc(V);
    next_probs(p, md, ids, n);
    const float *logits = md->full.logits + (size_t)(n - 1) * V;
    int top[10];
    top_k_ids(top, p, V, 10);
    lesson_say("The distribution after \"%s\" (temperature 1):", prompt);
    for (int j = 0; j < 10; j++) printf("    [%s] %.4f\n", piece(md, top[j]), (double)p[top[j]]);

    int greedy = tw_argmax(logits, V);
    printf("  greedy: the largest probability, always [%s]\n", piece(md, greedy));
    lesson_expect("greedy == the top of the list", greedy == top[0]);

    // temperature: the same logits divided by tau, then sampled 20 times with one seed
    static const float taus[3] = { 0.5f, 1.0f, 1.5f };
    for (int i = 0; i < 3; i++) {
        float *pt = lesson_alloc(V);
        tw_softmax_rows(pt, logits, 1, V, taus[i]);
        tw_sampler s = { 0 };
        LESSON_TRY(tw_sampler_init(&s, V, taus[i], 0.0f, seed + (uint64_t)i));
        printf("  temperature %.1f: p(top) = %.3f; 12 draws:", (double)taus[i], (double)pt[top[0]]);
        for (int d = 0; d < 12; d++) printf(" [%s]", piece(md, tw_sampler_sample(&s, logits)));
        printf("\n");
        tw_sampler_free(&s);
    }
    // top-k: keep the k most likely, renormalise, sample
    const int k = 3;
    double mass_k = 0.0;
    for (int j = 0; j < k; j++) mass_k += p[top[j]];
    printf("  top-k, k = %d: only", k);
    for (int j = 0; j < k; j++) printf(" [%s] %.3f", piece(md, top[j]), p[top[j]] / mass_k);
    printf(" can be drawn (renormalised from %.3f of the mass)\n", mass_k);
    // top-p: the shortest prefix of the sorted list whose mass exceeds p
    const float topp = 0.9f;
    double cum = 0.0;
    int keep = 0;
    while (keep < 10 && cum <= topp) cum += p[top[keep++]];
    if (cum > topp)
        printf("  top-p, p = %.1f: the nucleus is the %d most likely tokens (mass %.3f); here that is "
               "%s than top-k's %d\n", (double)topp, keep, cum, keep < k ? "fewer" : keep > k ? "more" : "as many", k);
    else
        printf("  top-p, p = %.1f: the nucleus holds more than 10 tokens here (the top 10 hold %.3f)\n",
               (double)topp, cum);
    lesson_say("Top-k keeps a fixed number of candidates however the mass is spread; top-p keeps "
               "as many as it takes to cover p of the mass: few when the model is sure, many when "
               "it is not.");

    // beam search: the most likely continuation of 8 tokens, by width
    const int steps = 8;
    beam_ctx ctx = { md };
    int out[8], greedy_loop[8];
    float lp[3];
    static const int widths[3] = { 1, 2, 4 };
    int *seq = lesson_alloc_bytes((size_t)(n + steps) * sizeof(int));
    memcpy(seq, ids, (size_t)n * sizeof(int));
    for (int i = 0; i < steps; i++) {                                    // greedy by hand
        next_probs(p, md, seq, n + i);
        greedy_loop[i] = seq[n + i] = tw_argmax(md->full.logits + (size_t)(n + i - 1) * V, V);
    }
    lesson_say("Beam search keeps the `width` most likely continuations at every step "
               "(lib/decode/beam.c, tw_beam_search) and returns the most likely one it kept. Eight "
               "tokens after \"%s\":", prompt);
    for (int w = 0; w < 3; w++) {
        tw_beam b = { 0 };
        LESSON_TRY(tw_beam_init(&b, widths[w], V, n + steps));
        LESSON_TRY(tw_beam_search(out, &lp[w], &b, ids, n, steps, model_logprobs, &ctx));
        tw_beam_free(&b);
        printf("    width %d: log p = %7.3f  \"...", widths[w], (double)lp[w]);
        for (int i = 0; i < steps; i++)
            printf("%s", tw_tokenizer_decode(&md->tok, i ? out[i - 1] : ids[n - 1], out[i]));
        printf("\"\n");
        if (w == 0) {
            int same = 1;
            for (int i = 0; i < steps; i++) same &= out[i] == greedy_loop[i];
            lesson_expect("beam width 1 == greedy decoding", same);
        }
    }
    lesson_note("greedy commits to its first choice; a wider beam can keep a less likely first "
                "token that leads to a much more likely sentence. Width 4 scores %.3f against "
                "greedy's %.3f here (e^%.2f = %.0fx more likely). A wider beam is not guaranteed "
                "to score higher, only likely to.", (double)lp[2], (double)lp[0],
                (double)(lp[2] - lp[0]), exp((double)(lp[2] - lp[0])));
}

// ---- 3. repetition ----
// Fraction of the 4-grams of ids (n) that occurred earlier in the same sequence.
static double repeated_4grams(const int *ids, int n) {
    int rep = 0, total = 0;
    for (int i = 0; i + 4 <= n; i++, total++)
        for (int j = 0; j < i; j++)
            if (memcmp(ids + i, ids + j, 4 * sizeof(int)) == 0) { rep++; break; }
    return total ? (double)rep / total : 0.0;
}

// Generates `steps` tokens after BOS + "Once upon a time" with a KV cache; returns the text.
static const char *generate(model *md, tw_sampler *s, int steps, double *rep) {
    int n;
    int *prompt = encode(md, "Once upon a time", &n);
    int *seq = lesson_alloc_bytes((size_t)(n + steps) * sizeof(int));
    memcpy(seq, prompt, (size_t)n * sizeof(int));
    tw_model_state st = { 0 };
    LESSON_TRY(tw_model_state_init(&st, &md->m, n, n + steps));
    LESSON_TRY(tw_model_forward_next(&st, &md->m, seq, n, 0));
    size_t cap = (size_t)steps * 24 + 64, len = 0;
    char *text = lesson_alloc_bytes(cap);
    len += (size_t)snprintf(text, cap, "Once upon a time");
    int total = n;
    for (int i = 0; i < steps; i++) {
        const float *logits = st.logits + (size_t)(i == 0 ? n - 1 : 0) * md->V;
        int next = tw_sampler_sample(s, logits);
        const char *pc = tw_tokenizer_decode(&md->tok, seq[total - 1], next);
        if (len + strlen(pc) + 1 < cap) { memcpy(text + len, pc, strlen(pc) + 1); len += strlen(pc); }
        seq[total++] = next;
        LESSON_TRY(tw_model_forward_next(&st, &md->m, &seq[total - 1], 1, total - 1));
    }
    tw_model_state_free(&st);
    *rep = repeated_4grams(seq + n, steps);
    return text;
}

// ---- 4. perplexity ----
// -log p of each token of ids (n) given the ones before it.   nll: (n - 1)
static double mean_nll(float *nll, model *md, const int *ids, int n) {
    const int V = md->V;
    LESSON_TRY(tw_model_forward(&md->full, &md->m, ids, n, 0));
    float *p = lesson_alloc(V);
    double sum = 0.0;
    for (int t = 0; t + 1 < n; t++) {
        tw_softmax_rows(p, md->full.logits + (size_t)t * V, 1, V, 1.0f);
        nll[t] = -logf(p[ids[t + 1]]);
        sum += nll[t];
    }
    return sum / (n - 1);
}

// The story's words (split at spaces) in a random order, as a tracked string.
static char *shuffle_words(const char *text, uint64_t seed) {
    char *copy = lesson_strdup(text);
    int n = 0;
    char **words = lesson_alloc_bytes((strlen(text) / 2 + 2) * sizeof(char *));
    for (char *w = strtok(copy, " "); w; w = strtok(NULL, " ")) words[n++] = w;
    tw_rng r;
    tw_rng_init(&r, seed);
    for (int i = n - 1; i > 0; i--) {                                     // Fisher-Yates
        int j = (int)(tw_rng_uniform(&r) * (float)(i + 1));
        if (j > i) j = i;
        char *t = words[i]; words[i] = words[j]; words[j] = t;
    }
    char *out = lesson_alloc_bytes(strlen(text) + 2);
    for (int i = 0; i < n; i++) { if (i) strcat(out, " "); strcat(out, words[i]); }
    return out;
}

// 1. What the model expected at each step of a story: the top 10 (all steps in next_tokens.txt).
static void step_by_step(model *md) {
    lesson_section("What the model predicts, step by step");
    lesson_say("One forward pass over a story gives, at every position, a probability for each of "
               "the %d tokens that could come next. Here is what the model expected at the first "
               "steps of a short story, against what the story actually says (tokens as lesson 1 shows "
               "them; every step is in next_tokens.txt):", md->V);
    int n_story;
    int *story = encode(md, STORY, &n_story);
    char *log = lesson_alloc_bytes((size_t)n_story * 512);
    top10_along_the_story(md, story, n_story, log, (size_t)n_story * 512);
    lesson_write_text("next_tokens.txt", log);
}

// 2. Greedy, temperature, top-k, top-p and beam search on one distribution.
static void five_ways(model *md, uint64_t seed) {
    lesson_section("Five ways to choose from one distribution");
    five_rules(md, seed);
}

// 3. 160 tokens greedy against sampled: how often each repeats a 4-gram.
static void greedy_repeats(model *md, uint64_t seed) {
    lesson_section("Greedy decoding repeats itself");
    tw_sampler greedy = { 0 }, sampled = { 0 };
    LESSON_TRY(tw_sampler_init(&greedy, md->V, 0.0f, 0.0f, 1));
    LESSON_TRY(tw_sampler_init(&sampled, md->V, 0.8f, 0.9f, seed));
    double rep_g, rep_s;
    const char *g_text = generate(md, &greedy, 160, &rep_g);
    const char *s_text = generate(md, &sampled, 160, &rep_s);
    tw_sampler_free(&greedy);
    tw_sampler_free(&sampled);
    lesson_say("160 tokens after \"Once upon a time\", greedy:\n\n%s\n", g_text);
    lesson_say("The same with temperature 0.8 and top-p 0.9 (seed %llu):\n\n%s\n",
               (unsigned long long)seed, s_text);
    printf("  4-grams of tokens that already occurred earlier: greedy %.0f%%, sampled %.0f%%\n",
           100 * rep_g, 100 * rep_s);
    lesson_say("Greedy decoding is deterministic: once it produces a sentence it has produced "
               "before, the context looks alike and the same most likely continuation follows, so "
               "it loops. Sampling can leave the loop because it sometimes picks the second or "
               "third choice.");
    lesson_expect("greedy repeats more 4-grams than sampling", rep_g > rep_s);
    lesson_write_text("greedy.txt", g_text);
    lesson_write_text("sampled.txt", s_text);
}

// 4. Perplexity (and bits per byte) of a story against the same words shuffled.
static void perplexity(model *md, uint64_t seed) {
    lesson_section("Perplexity: a real story against the same words shuffled");
    int n_story;
    int *story = encode(md, STORY, &n_story);
    char *shuffled = shuffle_words(STORY, seed);
    int n_shuf;
    int *shuf = encode(md, shuffled, &n_shuf);
    float *nll_s = lesson_alloc(n_story), *nll_x = lesson_alloc(n_shuf);
    double m_s = mean_nll(nll_s, md, story, n_story), m_x = mean_nll(nll_x, md, shuf, n_shuf);
    lesson_say("Perplexity is exp of the mean of -log p(actual next token) over a text: the number "
               "of equally likely choices the model was, on average, hesitating between. A model "
               "that knew nothing would score %d (the vocabulary size).", md->V);
    printf("  real story     %3d tokens, mean -log p %.3f, perplexity %7.2f\n", n_story - 1, m_s, exp(m_s));
    printf("  words shuffled %3d tokens, mean -log p %.3f, perplexity %7.2f\n", n_shuf - 1, m_x, exp(m_x));
    // Bits per byte: the same loss over the bytes of text the predicted tokens stand for, the
    // figure that compares models whose tokenizers differ (perplexity per token does not).
    const long bytes_s = tw_tokenizer_decoded_bytes(&md->tok, story, 1, n_story);
    printf("  real story: %.3f bits per byte (%ld bytes of text for its %d predicted tokens)\n",
           m_s * (n_story - 1) / (bytes_s * log(2.0)), bytes_s, n_story - 1);
    lesson_say("The shuffled text has the same words, so a model that only counted words would "
               "score both alike. The gap is what the model learned about order. The shuffled "
               "story begins: \"%.80s...\"", shuffled);
    lesson_expect("shuffling the words raises perplexity", exp(m_x) > exp(m_s));
    if (exp(m_x) > md->V)
        lesson_note("the shuffled text scores worse than %d, worse than guessing uniformly: the "
                    "model is confidently expecting an order that is not there.", md->V);
    lesson_write_npy2("nll_story.npy", nll_s, n_story - 1, 0);
    lesson_write_npy2("nll_shuffled.npy", nll_x, n_shuf - 1, 0);
    lesson_write_text("shuffled.txt", shuffled);
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 17 }, NULL);
    if (a.seed == 0) {
        fprintf(stderr, "lesson17: option --seed: the sampler needs a non-zero seed (try ./lesson17 --help)\n");
        exit(2);
    }
    model md;
    load(&md);
    step_by_step(&md);
    five_ways(&md, a.seed);
    greedy_repeats(&md, a.seed);
    perplexity(&md, a.seed);
    unload(&md);
    lesson_say("Try it: make exercise21 (beam search)");
    return lesson_finish();
}
