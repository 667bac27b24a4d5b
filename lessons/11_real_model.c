// Lesson 11: a real model: stories260K writes a story.
//
// Teaches: everything from lessons 1-9 running together on a real pretrained Llama (stories260K:
// 5 layers, width 64, 8 query heads, 4 kv heads, vocabulary 512, trained on TinyStories): the
// prompt's tokens, the story it writes one token at a time, the KV cache growing by a fixed number
// of bytes per token (and a check that cached decoding gives the same logits as recomputing the
// whole sequence), and the attention maps of several heads on real text, drawn as PNGs: look for
// heads that attend to the previous token and heads that park their attention on the first token.
// Calls: tw_llama2c_load, tw_model_state_init, tw_model_forward_next, tw_model_forward,
//        tw_tokenizer_load, tw_tokenizer_encode, tw_tokenizer_decode, tw_sampler_init,
//        tw_sampler_sample, tw_kv_cache_bytes, tw_write_labelled_matrix, tw_npy_write_*.
// Build & run: make lesson11 && ./lesson11 [--prompt TEXT] [--steps N] [--temperature X]
//              [--seed N] [--out DIR] [--no-plot]                     (make fetches the model)
// Plot:        gnuplot viz/11_attention.gp       (reads out/lesson11/attn_prev.dat)
// Needs: data/models/stories260K.bin data/models/tok512.bin
// Writes: tokens.npy story.txt kv_growth.npy kv_growth.dat logits_cached.npy logits_full.npy
// Writes: attn_all.npy head_scores.npy head_scores.dat attn_l0h0.dat attn_prev.dat attn_first.dat
// Pictures: attn_l0h0.png attn_prev.png attn_first.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    11, "A real model: stories260K writes a story",
    "stories260K is a real Llama, small enough to read: 5 layers, width 64, 8 query heads sharing "
    "4 key/value heads, a 512-token vocabulary, trained by Andrej Karpathy on the TinyStories "
    "data set. This lesson runs it on the library's functions: it tokenizes a prompt, writes a "
    "story one token at a time with a KV cache (printing the cache as it grows), checks that the "
    "cached computation gives the same logits as recomputing the whole text, and draws the "
    "attention maps of several heads on the story, looking for heads that attend to the previous "
    "token and heads that attend to the first token."
};

#define MODEL_PATH "data/models/stories260K.bin"
#define TOK_PATH   "data/models/tok512.bin"

enum { MAP_T = 24 };   // tokens shown in the attention maps

// The token explain_one_pick worked out; main checks that the sampler returns the same.
static int g_predicted = -1;

static int by_prob_desc(const void *a, const void *b) {
    const tw_prob_index *x = a, *y = b;
    if (x->prob != y->prob) return x->prob < y->prob ? 1 : -1;
    return x->index - y->index;
}

// Shows the next-token distribution and redoes, in the open, what tw_sampler_sample is about to
// do with it (lib/decode/sampler.h): softmax of logits / temperature, the top-p nucleus, one
// uniform number u, and the token u lands on. It draws u from a copy of the sampler, so the real
// sampler's stream is untouched and must then return the same token.   logits: (V)
// Returns 0 and prints nothing when the choice is nearly certain (top probability >= 0.6) unless
// `force`: the first uncertain step is the instructive one.
static int explain_one_pick(const tw_sampler *sampler, const tw_tokenizer *tok,
                            const float *logits, int prev, int step, int force) {
    const int V = sampler->vocab_size;
    if (sampler->temperature == 0.0f) {
        g_predicted = tw_argmax(logits, V);
        lesson_say("Temperature 0: the sampler is greedy and takes the largest logit, id %d [%s].",
                   g_predicted, lesson_token(tok, g_predicted));
        return 1;
    }
    tw_prob_index *c = lesson_alloc_bytes((size_t)V * sizeof *c);      // (V)
    float *z = lesson_alloc(V);                                         // (V)
    for (int i = 0; i < V; i++) z[i] = logits[i] / sampler->temperature;
    tw_softmax_rows(z, z, 1, V, 1.0f);
    for (int i = 0; i < V; i++) c[i] = (tw_prob_index){ z[i], i };
    qsort(c, (size_t)V, sizeof *c, by_prob_desc);
    if (c[0].prob >= 0.6f && !force) return 0;
    const float p = sampler->topp;
    const int nucleus_on = p > 0.0f && p < 1.0f;
    // The nucleus: the shortest run of most likely tokens whose mass exceeds p.
    int keep = V;
    float mass = 0.0f;                              // float sums in lib/decode/sampler.c's order
    if (nucleus_on) {
        for (int i = 0; i < V; i++) {
            mass += c[i].prob;
            if (mass > p) { keep = i + 1; break; }
        }
    } else {
        mass = 1.0f;
    }
    lesson_say("How a token is chosen, at step %d (%s). The model's last position gives %d logits, one "
               "per vocabulary entry. Divided by the temperature %.2f and passed through softmax "
               "they become probabilities; the most likely ones, after \"...%s\" (pieces as lesson 1 shows them, _ for a space):", step,
               force && c[0].prob >= 0.6f ? "the last step"
                                          : "the first step where the model is not nearly sure: p < 0.6 for the top token",
               V,
               (double)sampler->temperature, tw_tokenizer_decode(tok, 0, prev));
    printf("    %4s %6s  %-12s %8s %10s\n", "rank", "id", "piece", "p", "cumulative");
    double cum = 0.0;
    for (int i = 0; i < 10 && i < V; i++) {
        cum += c[i].prob;
        printf("    %4d %6d  [%-10s] %8.4f %10.4f%s\n", i + 1, c[i].index,
               lesson_token(tok, c[i].index), (double)c[i].prob, cum,
               nucleus_on && i + 1 == keep ? "   <- the nucleus ends here" : "");
    }
    for (int i = 0; i < 10 && i < V; i++)
        if (strcmp(tok->vocab[c[i].index], " ") == 0)
            lesson_note("[_] (id %d, rank %d, p %.4f) is the space alone. A word that tok512 has no "
                        "\"_word\" piece for is spelled [_] and then smaller pieces (lesson 1: "
                        "\" Zoe\" is [_][Z][o][e]), so this p is the total of all such rarer next "
                        "words together.", c[i].index, i + 1, (double)c[i].prob);
    tw_sampler copy = *sampler;                     // shares the scratch; only the state matters
    float u = tw_sampler_next_f32(&copy);
    float target = u * mass, run = 0.0f;
    g_predicted = c[keep - 1].index;                // rounding fallback, as decode/sampler.c does
    for (int i = 0; i < keep; i++) {
        run += c[i].prob;
        if (target < run) { g_predicted = c[i].index; break; }
    }
    if (nucleus_on)
        lesson_say("Top-p %.2f keeps the %d most likely tokens, the fewest whose mass (%.4f) "
                   "exceeds %.2f; the rest can never be drawn. The sampler draws one uniform "
                   "number u = %.4f, scales it by the nucleus mass to %.4f, and walks down the "
                   "cumulative column to the first entry above it: id %d [%s].", (double)p, keep,
                   mass, (double)p, (double)u, target, g_predicted,
                   lesson_token(tok, g_predicted));
    else
        lesson_say("The sampler draws one uniform number u = %.4f and walks down the cumulative "
                   "column to the first entry above it: id %d [%s].", (double)u, g_predicted,
                   lesson_token(tok, g_predicted));
    return 1;
}

// What the sections share: the model, the text it wrote and what was measured on it. Tracked
// memory, except the model, tokenizer and states, which main frees.
typedef struct {
    tw_model m;
    tw_tokenizer tok;
    tw_model_state st, full, ms;   // decoding with the cache; one full pass; the maps' pass
    int steps, max_tok, S_max;     // steps asked for; the prompt's most tokens; cache positions
    int *seq;                      // (S_max) the prompt's ids, then the story's
    int n_prompt, n;               // tokens of the prompt, and in all
    char *story;                   // the text so far
    float *growth;                 // (n_growth, 3) step, positions, bytes in the cache
    int n_growth;
    float *last_logits;            // (V) the cached logits of the last step, after logits_len tokens
    int logits_len;
    float *full_last;              // (V) the same from one full pass
    int T;                         // tokens in the attention maps
    float *all;                    // (L, H, T, T) every head's attention
    float *scores;                 // (L*H, 4) layer, head, previous-token and first-token weight
    int best_prev, best_first;     // index l*H + h of the two heads shown
} run;

#define CFG_SIZES(c) const int C = (c)->block.attn.d_model, L = (c)->n_layer, \
    H = (c)->block.attn.n_head, G = (c)->block.attn.n_kv_head, D = (c)->block.attn.head_dim, \
    V = (c)->vocab; (void)C; (void)L; (void)H; (void)G; (void)D; (void)V

// 1. The model's sizes, and which lesson taught each piece.
static void the_model(const run *r) {
    lesson_section("The model");
    const tw_model_config *c = &r->m.cfg;
    CFG_SIZES(c);
    long long n_params = (long long)V * C + (long long)L * (2LL * C + 2LL * C * C + 2LL * C * G * D +
                         3LL * C * c->block.ffn_hidden) + C;
    printf("  dim C %d, FFN F %d, layers %d, query heads %d, kv heads %d (head size %d), vocab %d, "
           "context %d\n", C, c->block.ffn_hidden, L, H, G, D, V, c->max_seq);
    printf("  %lld parameters (embedding shared with the output head), %.2f MB as float32\n",
           n_params, n_params * 4e-6);
    lesson_say("Every piece is a lesson you have seen: RMSNorm (3), Linear (2), GQA with %d query "
               "heads reading %d kv heads (4), RoPE on adjacent pairs, base 10000 (5), causal "
               "softmax attention (6, 7), SwiGLU with F = %d = the 2/3 rule rounded to 4 (8), "
               "pre-norm blocks (9).", H, G, c->block.ffn_hidden);
}

// 2. The prompt as ids and pieces.
static void the_prompt(run *r, const char *prompt) {
    lesson_section("The prompt as tokens");
    const tw_model_config *c = &r->m.cfg;
    const int steps = r->steps;
    const tw_tokenizer *tok = &r->tok;
    int max_tok = (int)tw_tokenizer_max_tokens(prompt);
    const int S_max = max_tok + steps;
    int *seq = lesson_alloc_bytes((size_t)S_max * sizeof(int));
    int n_prompt = 0;
    LESSON_TRY(tw_tokenizer_encode(tok, seq, &n_prompt, max_tok, prompt, 1, 0));
    if (n_prompt + steps > c->max_seq) lesson_die("prompt + steps exceeds the model's context of %d", c->max_seq);
    printf("  \"%s\" -> %d tokens:", prompt, n_prompt);
    for (int i = 0; i < n_prompt; i++) printf(" %d", seq[i]);
    printf("\n   pieces:");
    for (int i = 0; i < n_prompt; i++) {
        printf(" [%s]", lesson_token(tok, seq[i]));
    }
    printf("\n");
    lesson_say("The first id, %d, is BOS (begin of text), the piece \"\\n<s>\\n\" of lesson 1; "
               "the attention maps below label it <s>.", TW_TOK_BOS);
    r->max_tok = max_tok;
    r->S_max = S_max;
    r->seq = seq;
    r->n_prompt = n_prompt;
}

// 3. Prefill, then one token at a time through the KV cache; the first uncertain pick explained.
static void write_story(run *r, const char *prompt, float temperature, uint64_t seed) {
    lesson_section("Writing a story, one token at a time");
    const tw_model_config *c = &r->m.cfg;
    CFG_SIZES(c);
    const int steps = r->steps, n_prompt = r->n_prompt, S_max = r->S_max;
    int *seq = r->seq;
    tw_model_state st = { 0 };
    const tw_tokenizer *tok = &r->tok;
    const tw_model *m = &r->m;
    lesson_say("First the whole prompt goes through the model at once (prefill), filling the KV "
               "cache with its keys and values. Then each step feeds only the newest token: its "
               "query attends to every cached key, its own key and value are appended, and the "
               "logits of the next token are sampled (temperature %.2f, top-p 0.9, seed %llu).",
               (double)temperature, (unsigned long long)seed);
    LESSON_TRY(tw_model_state_init(&st, m, n_prompt, S_max));
    tw_sampler sampler = { 0 };
    LESSON_TRY(tw_sampler_init(&sampler, V, temperature, 0.9f, seed));
    const size_t per_pos = tw_kv_cache_bytes(1, G, D) * (size_t)L;   // all layers, float32
    float *growth = lesson_alloc((long)(steps + 1) * 3);               // (steps+1, 3)
    int n = n_prompt, n_growth = 0, logits_len = 0, explained = 0;   // logits_len: tokens behind last_logits
    LESSON_TRY(tw_model_forward_next(&st, m, seq, n_prompt, 0));
    float *last_logits = lesson_alloc(V);
    size_t story_cap = 64 + (size_t)steps * 32 + strlen(prompt);
    char *story = lesson_alloc_bytes(story_cap);
    snprintf(story, story_cap, "%s", prompt);
    for (int step = 0; step < steps; step++) {
        const float *logits = st.logits + (size_t)((step == 0 ? n_prompt : 1) - 1) * V;
        memcpy(last_logits, logits, (size_t)V * sizeof(float));
        logits_len = n;
        growth[n_growth * 3 + 0] = (float)step;
        growth[n_growth * 3 + 1] = (float)n;
        growth[n_growth * 3 + 2] = (float)((double)n * per_pos);
        n_growth++;
        int explains = !explained && explain_one_pick(&sampler, tok, logits, seq[n - 1], step,
                                                      step == steps - 1);
        int next = tw_sampler_sample(&sampler, logits);
        if (explains) {
            lesson_expect("the sampler picked the token worked out above", next == g_predicted);
            explained = 1;
        }
        if (next == TW_TOK_BOS || next == TW_TOK_EOS) break;          // the story ended
        const char *piece = tw_tokenizer_decode(tok, seq[n - 1], next);
        if (strlen(story) + strlen(piece) + 1 < story_cap) strcat(story, piece);
        seq[n++] = next;
        LESSON_TRY(tw_model_forward_next(&st, m, &seq[n - 1], 1, n - 1));
    }
    const int generated = n - n_prompt;
    printf("\n");
    lesson_say("%s", story);
    printf("\n");
    printf("  %d tokens generated after the %d prompt tokens.\n", generated, n_prompt);
    tw_sampler_free(&sampler);
    r->st = st;
    r->n = n;
    r->story = story;
    r->growth = growth;
    r->n_growth = n_growth;
    r->last_logits = last_logits;
    r->logits_len = logits_len;
}

// 4. How much of the cache is in use, what it saves, and a check against a full recomputation.
static void the_kv_cache(run *r, const char *prompt) {
    lesson_section("The KV cache growing");
    const tw_model_config *c = &r->m.cfg;
    CFG_SIZES(c);
    const int steps = r->steps, n_prompt = r->n_prompt, S_max = r->S_max, max_tok = r->max_tok;
    const int n = r->n, n_growth = r->n_growth, logits_len = r->logits_len;
    const int generated = n - n_prompt;
    const size_t per_pos = tw_kv_cache_bytes(1, G, D) * (size_t)L;   // all layers, float32
    const int *seq = r->seq;
    const float *growth = r->growth, *last_logits = r->last_logits;
    const tw_model *m = &r->m;
    lesson_say("Each position stores, in each of the %d layers, a key and a value for each of the "
               "%d kv heads: 2 x %d x %d x %d floats x 4 bytes = %zu bytes per token. The cache "
               "was allocated for %d positions (%zu bytes): %d for the prompt, the most tokens "
               "its %zu bytes could ever need (one per byte, plus BOS, the leading space and "
               "EOS: tw_tokenizer_max_tokens), plus the %d steps asked for. The prompt took %d; "
               "this is how much of the cache is in use:",
               L, G, L, G, D, per_pos, S_max, (size_t)L * tw_kv_cache_bytes(S_max, G, D), max_tok,
               strlen(prompt), steps, n_prompt);
    printf("  %8s %10s %14s\n", "step", "positions", "bytes in use");
    for (int i = 0; i < n_growth; i++)
        if (i < 3 || (i & (i - 1)) == 0 || i == n_growth - 1)
            printf("  %8.0f %10.0f %14.0f\n", (double)growth[i * 3], (double)growth[i * 3 + 1],
                   (double)growth[i * 3 + 2]);
    long long recompute = 0;
    for (int p = n_prompt; p < n; p++) recompute += p + 1;   // each step reprocesses everything
    lesson_say("Without the cache every step would recompute the keys and values of the whole "
               "text so far: %lld key/value rows per layer for these %d steps, against %d with "
               "the cache, and the gap grows with the square of the length. With GQA the cache "
               "is half of what 8 kv heads would need (lesson 4).", recompute, generated, n);
    // check: the cached logits of the last step == one full pass over the whole sequence
    tw_model_state full = { 0 };
    LESSON_TRY(tw_model_state_init(&full, m, logits_len, 0));
    LESSON_TRY(tw_model_forward(&full, m, seq, logits_len, 0));
    float *full_last = full.logits + (size_t)(logits_len - 1) * V;
    // the same operations on the same numbers in the same order, so they agree exactly; the
    // tolerance only allows for a future kernel that reorders the cached path
    lesson_expect_close("KV-cached logits == full recomputation", last_logits, full_last, V, 1e-4f);
    r->full = full;
    r->full_last = full_last;
}

// 5. Every head's attention on the story's first tokens: previous-token and first-token heads.
static void attention_maps(run *r) {
    lesson_section("Attention maps of real text");
    const tw_model_config *c = &r->m.cfg;
    CFG_SIZES(c);
    const int n = r->n;
    const int *seq = r->seq;
    const tw_model *m = &r->m;
    const int T = n < MAP_T ? n : MAP_T;
    tw_model_state ms = { 0 };
    LESSON_TRY(tw_model_state_init(&ms, m, T, 0));
    LESSON_TRY(tw_model_forward(&ms, m, seq, T, 0));
    lesson_say("We run the first %d tokens of the story through the model in one pass and keep "
               "every head's (T, T) weights. Two scores per head, averaged over the rows t >= 1: "
               "\"prev\", the weight on the previous token (t - 1), and \"first\", the weight on "
               "position 0 (BOS).", T);
    float *all = lesson_alloc((long)L * H * T * T);                    // (L, H, T, T)
    float *scores = lesson_alloc((long)L * H * 4);                     // (L*H, 4)
    double uniform = 0.0;
    for (int t = 1; t < T; t++) uniform += 1.0 / (t + 1);
    uniform /= (T - 1);
    int best_prev = 0, best_first = 0;
    for (int l = 0; l < L; l++) {
        const float *w = ms.layers[l].attn.pattern;                    // (H, T, T)
        memcpy(all + (long)l * H * T * T, w, (size_t)H * T * T * sizeof(float));
        for (int h = 0; h < H; h++) {
            const float *wh = w + (long)h * T * T;
            double prev = 0.0, first = 0.0;
            for (int t = 1; t < T; t++) { prev += wh[t * T + t - 1]; first += wh[t * T]; }
            int k = l * H + h;
            scores[k * 4 + 0] = (float)l;
            scores[k * 4 + 1] = (float)h;
            scores[k * 4 + 2] = (float)(prev / (T - 1));
            scores[k * 4 + 3] = (float)(first / (T - 1));
            if (scores[k * 4 + 2] > scores[best_prev * 4 + 2]) best_prev = k;
            if (scores[k * 4 + 3] > scores[best_first * 4 + 3]) best_first = k;
        }
    }
    printf("  (a uniform causal head would score %.3f on both)\n", uniform);
    printf("  %5s", "layer");
    for (int h = 0; h < H; h++) printf("   head %d   ", h);
    printf("\n  %5s", "");
    for (int h = 0; h < H; h++) printf(" prev first ");
    printf("\n");
    for (int l = 0; l < L; l++) {
        printf("  %5d", l);
        for (int h = 0; h < H; h++)
            printf(" %4.2f %4.2f  ", (double)scores[(l * H + h) * 4 + 2], (double)scores[(l * H + h) * 4 + 3]);
        printf("\n");
    }
    const int pl = best_prev / H, ph = best_prev % H, fl = best_first / H, fh = best_first % H;
    lesson_say("Layer %d head %d puts %.0f%% of its weight on the previous token on average: a "
               "\"previous-token head\", the kind that lets later layers know which word came "
               "before. Layer %d head %d puts %.0f%% on the first token: BOS carries almost no "
               "information, and a head with nothing useful to find for a token can \"park\" its "
               "weight there rather than spread it over the text (a pattern known as an "
               "attention sink).",
               pl, ph, 100.0 * scores[best_prev * 4 + 2], fl, fh, 100.0 * scores[best_first * 4 + 3]);
    lesson_expect("some head attends to the previous token more than uniform would",
                  scores[best_prev * 4 + 2] > 2 * uniform);
    lesson_expect("some head attends to the first token more than uniform would",
                  scores[best_first * 4 + 3] > 2 * uniform);
    // row sums of every map are 1
    int sums_ok = 1;
    for (long row = 0; row < (long)L * H * T; row++) {
        double s = 0.0;
        for (int j = 0; j < T; j++) s += all[row * T + j];
        sums_ok &= fabs(s - 1.0) < 1e-5;
    }
    lesson_expect("every attention row sums to 1", sums_ok);
    (void)pl; (void)ph; (void)fl; (void)fh;
    r->ms = ms;
    r->T = T;
    r->all = all;
    r->scores = scores;
    r->best_prev = best_prev;
    r->best_first = best_first;
}

// The maps of three heads for gnuplot; the ids, story, cache growth, logits and scores.
static void write_files(const run *r) {
    lesson_section("Files");
    const tw_model_config *c = &r->m.cfg;
    CFG_SIZES(c);
    const int T = r->T, n = r->n, n_growth = r->n_growth;
    const int pl = r->best_prev / H, ph = r->best_prev % H, fl = r->best_first / H, fh = r->best_first % H;
    const int *seq = r->seq;
    const tw_tokenizer *tok = &r->tok;
    const char *story = r->story;
    const float *all = r->all, *scores = r->scores, *growth = r->growth;
    const float *last_logits = r->last_logits, *full_last = r->full_last;
    const char **labels = lesson_alloc_bytes((size_t)T * sizeof *labels);
    for (int t = 0; t < T; t++) {
        const char *p = t == 0 ? "<s>" : tok->vocab[seq[t]];   // the piece, as lesson_token shows it
        char buf[64];
        snprintf(buf, sizeof buf, "%s", p);
        for (char *q = buf; *q; q++) if (*q == ' ') *q = '_';   // visible spaces on the axes
        labels[t] = lesson_strdup(buf);
    }
    struct { const char *name; const char *png; int l, h; const char *what; } MAPS[3] = {
        { "attn_l0h0.dat", "attn_l0h0.png", 0, 0, "the first head of layer 0" },
        { "attn_prev.dat", "attn_prev.png", pl, ph, "previous-token head" },
        { "attn_first.dat", "attn_first.png", fl, fh, "first-token head" },
    };
    for (int i = 0; i < 3; i++) {
        char comment[160], extra_gp[160];
        snprintf(comment, sizeof comment, "lesson 11: stories260K attention, layer %d head %d (%s); "
                 "rows: query token, columns: key token", MAPS[i].l, MAPS[i].h, MAPS[i].what);
        lesson_write_matrix_dat(MAPS[i].name, all + ((long)MAPS[i].l * H + MAPS[i].h) * T * T, T, T,
                                labels, labels, comment);
        snprintf(extra_gp, sizeof extra_gp, "maptitle='stories260K, layer %d head %d: %s'",
                 MAPS[i].l, MAPS[i].h, MAPS[i].what);
        lesson_plot_ex("11_attention.gp", MAPS[i].name, MAPS[i].png, extra_gp);
    }
    int32_t *ids32 = lesson_alloc_bytes((size_t)n * sizeof(int32_t));
    for (int i = 0; i < n; i++) ids32[i] = seq[i];
    long shape1[1] = { n };
    lesson_write_npy_i32("tokens.npy", ids32, shape1, 1);
    size_t sl = strlen(story);
    char *story_nl = lesson_alloc_bytes(sl + 2);
    memcpy(story_nl, story, sl);
    story_nl[sl] = '\n';
    lesson_write_text("story.txt", story_nl);
    lesson_write_npy2("kv_growth.npy", growth, n_growth, 3);
    static const char *const KCOLS[3] = { "step", "positions", "bytes" };
    lesson_write_columns("kv_growth.dat", growth, n_growth, 3, KCOLS,
                         "lesson 11: KV cache in use before each sampling step (float32, all layers)");
    lesson_write_npy2("logits_cached.npy", last_logits, V, 0);
    lesson_write_npy2("logits_full.npy", full_last, V, 0);
    long ashape[4] = { L, H, T, T };
    lesson_write_npy("attn_all.npy", all, ashape, 4);
    lesson_write_npy2("head_scores.npy", scores, L * H, 4);
    static const char *const HCOLS[4] = { "layer", "head", "prev_token_weight", "first_token_weight" };
    lesson_write_columns("head_scores.dat", scores, L * H, 4, HCOLS,
                         "lesson 11: mean attention weight on the previous token and on position 0");
}

int main(int argc, char **argv) {
    const char *prompt = "Once upon a time";
    int steps = 96;
    float temperature = 0.8f;
    lesson_opt extra[] = {
        { "--prompt", 's', &prompt, "TEXT", "how the story starts (default \"Once upon a time\")" },
        { "--steps", 'i', &steps, "N", "tokens to generate, 1..400 (default 96)" },
        { "--temperature", 'f', &temperature, "X", "sampling temperature, 0 = greedy (default 0.8)" },
        { 0 }
    };
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 42 }, extra);
    if (steps < 1 || steps > 400) {
        fprintf(stderr, "lesson11: option --steps: %d is outside 1..400 (try ./lesson11 --help)\n", steps);
        exit(2);
    }
    if (temperature < 0.0f) {
        fprintf(stderr, "lesson11: option --temperature: must be >= 0 (try ./lesson11 --help)\n");
        exit(2);
    }
    if (a.seed == 0) {
        fprintf(stderr, "lesson11: option --seed: the sampler needs a non-zero seed (try ./lesson11 --help)\n");
        exit(2);
    }

    run r = { .steps = steps };
    lesson_load_model(&r.m, &r.tok, MODEL_PATH, TOK_PATH);
    the_model(&r);
    the_prompt(&r, prompt);
    write_story(&r, prompt, temperature, a.seed);
    the_kv_cache(&r, prompt);
    attention_maps(&r);
    write_files(&r);
    tw_model_state_free(&r.ms);
    tw_model_state_free(&r.full);
    tw_model_state_free(&r.st);
    tw_tokenizer_free(&r.tok);
    tw_model_free(&r.m);
    lesson_say("Try it: make exercise10 (top-p sampling)");
    return lesson_finish();
}
