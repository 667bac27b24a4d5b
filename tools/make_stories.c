// make_stories.c: a training corpus that needs no download. Samples short stories from
// stories260K at temperature 1 (the whole distribution: no top-p) with a fixed seed, so every run
// writes the same files, and measures the teacher's floor: stories260K's own average negative
// log-likelihood on the validation stories, the lowest loss a student can expect to reach there.
//
//   make_stories MODEL.bin TOKENIZER.bin OUTDIR [--tokens N] [--seed S] [--val-frac F]
//
// Each story starts with BOS (id 1) and runs until the model samples BOS again (how llama2.c's
// run ends a text) or reaches its seq_len. The token stream is BOS story BOS story ..., the way
// llama2.c's pretokenised shards are laid out; whole stories go to the validation split (the last
// ones, about F of the tokens). Writes into OUTDIR (each file atomically):
//   train.bin, val.bin   uint16 tokens (train/tokens.h)
//   train.txt, val.txt   the same stories as text, one per line (a newline inside a story is
//                        written as a space, so `./train -z` re-encodes nearly the same tokens)
//   floor.txt            the teacher's floor and how it was measured (key value lines)
#define _POSIX_C_SOURCE 200809L   // clock_gettime, mkdir
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "nn/model.h"
#include "formats/atomic_file.h"
#include "formats/llama2c.h"
#include "decode/sampler.h"
#include "tokenize/tokenizer.h"
#include "train/tokens.h"
#include "simd/simd.h"

static void die(const char *fmt, const char *a) {
    fprintf(stderr, "make_stories: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n");
    exit(1);
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// -log softmax(logits)[target], in double.   logits: (V)
static double nll_of(const float *logits, int V, int target) {
    double mx = logits[0], sum = 0.0;
    for (int i = 1; i < V; i++) if (logits[i] > mx) mx = logits[i];
    for (int i = 0; i < V; i++) sum += exp((double)logits[i] - mx);
    return mx + log(sum) - (double)logits[target];
}

typedef struct {
    int  *tok;            // (n) BOS story BOS story ...
    long  n, cap;
    long *story_start;    // (n_stories) index of each story's BOS
    int  *story_ended;    // (n_stories) 1: the model sampled the BOS after it (0: hit seq_len)
    long  n_stories, story_cap;
} corpus;

static void push_token(corpus *c, int t) {
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1 << 16;
        c->tok = realloc(c->tok, (size_t)c->cap * sizeof *c->tok);
        if (c->tok == NULL) die("out of memory for %s tokens", "the");
    }
    c->tok[c->n++] = t;
}

static void push_story(corpus *c, long start, int ended) {
    if (c->n_stories == c->story_cap) {
        c->story_cap = c->story_cap ? 2 * c->story_cap : 1024;
        c->story_start = realloc(c->story_start, (size_t)c->story_cap * sizeof *c->story_start);
        c->story_ended = realloc(c->story_ended, (size_t)c->story_cap * sizeof *c->story_ended);
        if (c->story_start == NULL || c->story_ended == NULL) die("out of memory for %s", "stories");
    }
    c->story_start[c->n_stories] = start;
    c->story_ended[c->n_stories++] = ended;
}

// Samples stories until the corpus holds at least want tokens; *nll_sum and *n_scored receive
// the teacher's NLL of every token it sampled (the terminal BOS included).
static void sample_corpus(corpus *c, tw_model_state *s, const tw_model *m, tw_sampler *sp,
                          long want, double *nll_sum, long *n_scored) {
    const int V = m->cfg.vocab, S = m->cfg.max_seq;
    while (c->n < want) {
        const long start = c->n;
        int token = TW_TOK_BOS, pos = 0, ended = 0;
        push_token(c, token);
        while (pos < S) {
            if (tw_model_forward_next(s, m, &token, 1, pos) != TW_OK) die("forward pass failed%s", "");
            const int next = tw_sampler_sample(sp, s->logits);
            *nll_sum += nll_of(s->logits, V, next);
            ++*n_scored;
            pos++;
            if (next == TW_TOK_BOS) { ended = 1; break; }
            if (pos == S) break;   // the story fills the context: cut here (BOS + S - 1 tokens)
            push_token(c, next);
            token = next;
        }
        push_story(c, start, ended);
    }
}

// The teacher's NLL of stories [first, last): each story run once from its BOS with the whole
// story as context (no cache), scoring every token after BOS and the terminal BOS when the model
// had sampled it.
static double floor_nll(const corpus *c, long first, long last, tw_model_state *s,
                        const tw_model *m, long *n_scored) {
    const int V = m->cfg.vocab;
    double sum = 0.0;
    *n_scored = 0;
    for (long k = first; k < last; k++) {
        const long a = c->story_start[k], b = k + 1 < c->n_stories ? c->story_start[k + 1] : c->n;
        const int T = (int)(b - a);   // BOS + story
        if (tw_model_forward(s, m, c->tok + a, T, 0) != TW_OK) die("forward pass failed%s", "");
        for (int t = 0; t + 1 < T; t++) sum += nll_of(s->logits + (size_t)t * V, V, c->tok[a + t + 1]);
        *n_scored += T - 1;
        if (c->story_ended[k]) {
            sum += nll_of(s->logits + (size_t)(T - 1) * V, V, TW_TOK_BOS);
            ++*n_scored;
        }
    }
    return sum;
}

// Writes stories [first, last) as text, one per line, atomically.
static void write_text(const char *path, const corpus *c, long first, long last, const tw_tokenizer *tok) {
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "w") != TW_OK) die("%s: cannot create", path);
    int ok = 1;
    for (long k = first; k < last && ok; k++) {
        const long a = c->story_start[k], b = k + 1 < c->n_stories ? c->story_start[k + 1] : c->n;
        for (long i = a + 1; i < b; i++) {
            const char *piece = tw_tokenizer_decode(tok, c->tok[i - 1], c->tok[i]);
            if (!tw_tokenizer_piece_printable(piece)) continue;
            for (const char *p = piece; *p; p++) fputc(*p == '\n' || *p == '\r' ? ' ' : *p, af.f);
        }
        ok = fputc('\n', af.f) != EOF;
    }
    if (tw_atomic_commit(&af, ok) != TW_OK) die("%s: write failed", path);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: make_stories MODEL.bin TOKENIZER.bin OUTDIR [--tokens N] [--seed S] [--val-frac F]\n");
        return 2;
    }
    const char *model_path = argv[1], *tok_path = argv[2], *outdir = argv[3];
    long want = 2000000;
    unsigned long long seed = 1337;
    double val_frac = 0.1;
    for (int i = 4; i < argc; i += 2) {
        if (i + 1 >= argc) die("flag '%s' needs a value", argv[i]);
        char *end;
        errno = 0;
        if (strcmp(argv[i], "--tokens") == 0) want = strtol(argv[i + 1], &end, 10);
        else if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[i + 1], &end, 10);
        else if (strcmp(argv[i], "--val-frac") == 0) val_frac = strtod(argv[i + 1], &end);
        else die("unknown flag '%s'", argv[i]);
        if (end == argv[i + 1] || *end != '\0' || errno != 0) die("%s: not a number", argv[i]);
    }
    if (want < 1000 || seed == 0 || !(val_frac > 0.0 && val_frac < 0.5))
        die("%s", "--tokens must be >= 1000, --seed non-zero and --val-frac in (0, 0.5)");
    // The fastest kernels this CPU has ($TW_SIMD or --simd-less auto). A different level rounds
    // differently in the last bit, which can change a sampled token: the corpus is reproducible
    // for a given kernel level, which floor.txt records.
    const char *level = tw_simd_init(NULL);
    if (level == NULL) die("TW_SIMD: level '%s' is not available here", getenv("TW_SIMD"));
    char err[512] = "";
    tw_model m;
    tw_tokenizer tok;
    if (tw_llama2c_load(&m, model_path, err, sizeof err) != TW_OK) die("%s", err);
    if (tw_tokenizer_load(&tok, tok_path, m.cfg.vocab, err, sizeof err) != TW_OK) die("%s", err);
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) die("%s: cannot create the folder", outdir);

    tw_model_state dec, full;
    tw_sampler sp;
    if (tw_model_state_init(&dec, &m, 1, m.cfg.max_seq) != TW_OK ||
        tw_model_state_init(&full, &m, m.cfg.max_seq, 0) != TW_OK ||
        tw_sampler_init(&sp, m.cfg.vocab, 1.0f, 1.0f, seed) != TW_OK)
        die("out of memory for %s", "activations");
    corpus c = { 0 };
    double nll_sampled = 0.0, t0 = now_seconds();
    long n_sampled = 0;
    sample_corpus(&c, &dec, &m, &sp, want, &nll_sampled, &n_sampled);
    const double t_sample = now_seconds() - t0;

    // The validation split: the last whole stories holding about val_frac of the tokens.
    long first_val = c.n_stories;
    while (first_val > 1 && c.n - c.story_start[first_val - 1] < (long)(val_frac * (double)c.n)) first_val--;
    first_val--;
    const long n_train = c.story_start[first_val], n_val = c.n - n_train;

    t0 = now_seconds();
    long n_floor = 0;
    const double floor_sum = floor_nll(&c, first_val, c.n_stories, &full, &m, &n_floor);
    const double t_floor = now_seconds() - t0;
    const double floor = floor_sum / (double)n_floor;

    char path[4096];
    snprintf(path, sizeof path, "%s/train.bin", outdir);
    if (tw_tokens_write(path, c.tok, n_train, err, sizeof err) != TW_OK) die("%s", err);
    snprintf(path, sizeof path, "%s/val.bin", outdir);
    if (tw_tokens_write(path, c.tok + n_train, n_val, err, sizeof err) != TW_OK) die("%s", err);
    snprintf(path, sizeof path, "%s/train.txt", outdir);
    write_text(path, &c, 0, first_val, &tok);
    snprintf(path, sizeof path, "%s/val.txt", outdir);
    write_text(path, &c, first_val, c.n_stories, &tok);
    snprintf(path, sizeof path, "%s/floor.txt", outdir);
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "w") != TW_OK) die("%s: cannot create", path);
    fprintf(af.f, "# the teacher's floor: %s's average negative log-likelihood (nats per token) of\n"
            "# the validation stories (val.bin), each scored from its BOS with the whole story as context\n",
            model_path);
    fprintf(af.f, "teacher_nll %.6f\nteacher_ppl %.4f\nscored_tokens %ld\nval_tokens %ld\ntrain_tokens %ld\n"
            "stories %ld\nval_stories %ld\nseed %llu\ntemperature 1\ntopp 1\nsimd %s\n", floor, exp(floor),
            n_floor, n_val, n_train, c.n_stories, c.n_stories - first_val, seed, level);
    if (tw_atomic_commit(&af, 1) != TW_OK) die("%s: write failed", path);

    printf("make_stories: %ld stories, %ld tokens sampled in %.1f s (%.0f tok/s, seed %llu, temperature 1, "
           "%s kernels)\n", c.n_stories, c.n, t_sample, (double)c.n / t_sample, seed, level);
    printf("make_stories: train %ld tokens (%ld stories), validation %ld tokens (%ld stories) in %s/\n",
           n_train, first_val, n_val, c.n_stories - first_val, outdir);
    printf("make_stories: teacher's floor on validation: %.4f nats/token (perplexity %.3f), %ld tokens "
           "scored in %.1f s; while sampling, over all %ld sampled tokens: %.4f\n", floor, exp(floor),
           n_floor, t_floor, n_sampled, nll_sampled / (double)n_sampled);
    free(c.tok); free(c.story_start); free(c.story_ended);
    tw_sampler_free(&sp);
    tw_model_state_free(&dec);
    tw_model_state_free(&full);
    tw_tokenizer_free(&tok);
    tw_model_free(&m);
    return 0;
}
