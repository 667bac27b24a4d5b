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

// Bad flags: one line, exit 2.
static _Noreturn void die_usage(const char *fmt, const char *a) {
    fprintf(stderr, "make_stories: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n");
    exit(2);
}

// The most tokens one run samples: 100 million tokens take 400 MB as ints here and hours at the
// teacher's few thousand tokens per second; llama2.c's TinyStories shards hold about that many.
#define MAX_STORY_TOKENS 100000000L

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

// The first validation story: going back from the end, the story at which the validation part
// first holds at least val_frac of the tokens (0 if only the whole corpus does).
static long split_point(const corpus *c, double val_frac) {
    long first_val = c->n_stories;
    while (first_val > 0 && c->n - c->story_start[first_val - 1] < (long)(val_frac * (double)c->n)) first_val--;
    return first_val > 0 ? first_val - 1 : 0;
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

// Writes stories [first, last) as text, one per line, atomically. 1, or 0 with why in err.
static int write_text(const char *path, const corpus *c, long first, long last, const tw_tokenizer *tok,
                      char *err, size_t err_len) {
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "w") != TW_OK) {
        snprintf(err, err_len, "%s: cannot create (%s)", path, strerror(errno));
        return 0;
    }
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
    if (tw_atomic_commit(&af, ok) != TW_OK) {
        snprintf(err, err_len, "%s: write failed (%s)", path, strerror(errno));
        return 0;
    }
    return 1;
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
        if (i + 1 >= argc) die_usage("flag '%s' needs a value", argv[i]);
        const char *v = argv[i + 1];
        char *end;
        errno = 0;
        if (strcmp(argv[i], "--tokens") == 0) want = strtol(v, &end, 10);
        else if (strcmp(argv[i], "--seed") == 0) {
            // strtoull takes "-1" as 2^64 - 1: a sign is refused before it can wrap.
            if (v[0] == '-' || v[0] == '+') die_usage("--seed %s: give a whole number from 1 to 18446744073709551615 (no sign)", v);
            seed = strtoull(v, &end, 10);
        } else if (strcmp(argv[i], "--val-frac") == 0) val_frac = strtod(v, &end);
        else die_usage("unknown flag '%s'", argv[i]);
        if (end == v || *end != '\0' || errno != 0) die_usage("%s: not a number", argv[i]);
    }
    if (want < 1000 || want > MAX_STORY_TOKENS) {
        char msg[200];
        snprintf(msg, sizeof msg, "--tokens %ld: give 1000 .. %ld (STORY_TOKENS for make stories; 100 "
                 "million tokens already take hours to sample)", want, MAX_STORY_TOKENS);
        die_usage("%s", msg);
    }
    if (seed == 0 || !(val_frac > 0.0 && val_frac < 0.5))
        die_usage("%s", "--seed must be non-zero (STORY_SEED for make stories) and --val-frac in (0, 0.5)");
    // The fastest kernels this CPU has ($TW_SIMD or --simd-less auto). A different level rounds
    // differently in the last bit, which can change a sampled token: the corpus is reproducible
    // for a given kernel level, which floor.txt records.
    const char *level = tw_simd_init(NULL);
    if (level == NULL) die("TW_SIMD: level '%s' is not available here", getenv("TW_SIMD"));
    char err[4400] = "";   // room for a staged path and why its write failed
    tw_model m;
    tw_tokenizer tok;
    if (tw_llama2c_load(&m, model_path, err, sizeof err) != TW_OK) die("%s", err);
    if (tw_tokenizer_load(&tok, tok_path, m.cfg.vocab, err, sizeof err) != TW_OK) die("%s", err);
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) die("%s: cannot create the folder (does its parent folder exist?)", outdir);

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
    // The validation split: the last whole stories holding about val_frac of the tokens (at least
    // that, by less than one story), and at least one story left for training. A story is up to
    // seq_len tokens, so a small corpus may have no such split (--tokens 1000: two stories of 497
    // and 512 tokens, 51 % validation): then more stories are sampled, one at a time, until the
    // validation part is within a quarter of val_frac of the tokens, and the output says so.
    long first_val = split_point(&c, val_frac);
    while (first_val < 1 || (double)(c.n - c.story_start[first_val]) > 1.25 * val_frac * (double)c.n) {
        if (c.n >= MAX_STORY_TOKENS) die("%s", "cannot split the stories near --val-frac within the token limit");
        sample_corpus(&c, &dec, &m, &sp, c.n + 1, &nll_sampled, &n_sampled);
        first_val = split_point(&c, val_frac);
    }
    const double t_sample = now_seconds() - t0;
    const long n_train = c.story_start[first_val], n_val = c.n - n_train;
    t0 = now_seconds();
    long n_floor = 0;
    const double floor_sum = floor_nll(&c, first_val, c.n_stories, &full, &m, &n_floor);
    const double t_floor = now_seconds() - t0;
    const double floor = floor_sum / (double)n_floor;

    // The five files are one set (floor.txt describes val.bin): each is written whole under a
    // staging name, NAME.new in OUTDIR, and only when all five are complete are they renamed
    // over the old ones. A write that fails (a full disk) removes the staged files and leaves the
    // old set as it was; renames within one folder need no space.
    static const char *const names[5] = { "train.bin", "val.bin", "train.txt", "val.txt", "floor.txt" };
    char final_path[5][4096], staged[5][4200];
    for (int k = 0; k < 5; k++) {
        snprintf(final_path[k], sizeof final_path[k], "%.4000s/%s", outdir, names[k]);
        snprintf(staged[k], sizeof staged[k], "%.4090s.new", final_path[k]);
    }
    int ok = tw_tokens_write(staged[0], c.tok, n_train, err, sizeof err) == TW_OK &&
             tw_tokens_write(staged[1], c.tok + n_train, n_val, err, sizeof err) == TW_OK;
    ok = ok && write_text(staged[2], &c, 0, first_val, &tok, err, sizeof err);
    ok = ok && write_text(staged[3], &c, first_val, c.n_stories, &tok, err, sizeof err);
    if (ok) {
        tw_atomic_file af;
        if (tw_atomic_open(&af, staged[4], "w") != TW_OK) {
            snprintf(err, sizeof err, "%s: cannot create (%s)", staged[4], strerror(errno));
            ok = 0;
        } else {
            fprintf(af.f, "# the teacher's floor: %s's average negative log-likelihood (nats per token) of\n"
                    "# the validation stories (val.bin), each scored from its BOS with the whole story as context\n",
                    model_path);
            fprintf(af.f, "teacher_nll %.6f\nteacher_ppl %.4f\nscored_tokens %ld\nval_tokens %ld\ntrain_tokens %ld\n"
                    "stories %ld\nval_stories %ld\nseed %llu\ntemperature 1\ntopp 1\nsimd %s\n", floor, exp(floor),
                    n_floor, n_val, n_train, c.n_stories, c.n_stories - first_val, seed, level);
            if (tw_atomic_commit(&af, 1) != TW_OK) {
                snprintf(err, sizeof err, "%s: write failed (%s)", staged[4], strerror(errno));
                ok = 0;
            }
        }
    }
    if (!ok) {
        for (int k = 0; k < 5; k++) remove(staged[k]);
        fprintf(stderr, "make_stories: %s; nothing in %s/ was changed (free some space and run it again)\n", err, outdir);
        return 1;
    }
    for (int k = 0; k < 5; k++)
        if (rename(staged[k], final_path[k]) != 0) {
            fprintf(stderr, "make_stories: %s: cannot rename it to %s (%s): the set in %s/ is mixed; run it again\n",
                    staged[k], names[k], strerror(errno), outdir);
            return 1;
        }

    printf("make_stories: %ld stories, %ld tokens sampled in %.1f s (%.0f tok/s, seed %llu, temperature 1, "
           "%s kernels)\n", c.n_stories, c.n, t_sample, (double)c.n / t_sample, seed, level);
    if (c.n > want + m.cfg.max_seq)   // more than the last story's overshoot: stories were added
        printf("make_stories: sampled %ld tokens, more than --tokens %ld: at %ld the last whole stories "
               "(up to %d tokens each) could not make about %.0f %% of the corpus\n", c.n, want, want,
               m.cfg.max_seq, 100.0 * val_frac);
    printf("make_stories: train %ld tokens (%ld stories), validation %ld tokens (%ld stories, %.1f %% of "
           "the tokens; --val-frac %g) in %s/\n", n_train, first_val, n_val, c.n_stories - first_val,
           100.0 * (double)n_val / (double)c.n, val_frac, outdir);
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
