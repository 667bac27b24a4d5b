// bench_bpe.c: the speed of BPE training (make bench-bpe). Not a test: it prints timings.
//
//   ./build/tools/bench_bpe out/bpe/stories.txt --vocab 4096 [--naive-kb 64] [--naive-vocab 1024]
//
// 1. The fast trainer on the whole file to --vocab pieces, one thread: seconds and MB/s.
// 2. The naive and the fast trainer on the same first --naive-kb KB (cut at a line start) to
//    --naive-vocab pieces, measured one after the other in this run: their times, the ratio, and
//    whether they learned identical vocabularies. (The naive trainer recounts the whole text per
//    merge; on the full file to 4096 pieces it would take hours, hence the smaller input.)
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tokenize/bpe_train.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) { free(b); b = NULL; }
    fclose(f);
    if (b) { b[len] = '\0'; *n = (size_t)len; }
    return b;
}

typedef tw_status (*trainer_fn)(tw_bpe_vocab *, const char *, size_t, const tw_bpe_options *, char *, size_t);

// Trains once; returns the seconds, or exits with the trainer's message.
static double timed(tw_bpe_vocab *v, trainer_fn fn, const char *name, const char *text, size_t n, int V) {
    tw_bpe_options o = { V, 1, 2 };
    char err[512];
    double t0 = now();
    if (fn(v, text, n, &o, err, sizeof err) != TW_OK) {
        fprintf(stderr, "bench_bpe: %s: %s\n", name, err);
        exit(1);
    }
    return now() - t0;
}

static int same_vocab(const tw_bpe_vocab *a, const tw_bpe_vocab *b) {
    if (a->vocab_size != b->vocab_size || a->n_merges != b->n_merges) return 0;
    for (int i = 0; i < a->vocab_size; i++)
        if (a->lengths[i] != b->lengths[i] || memcmp(a->pieces[i], b->pieces[i], (size_t)a->lengths[i]) != 0) return 0;
    for (int k = 0; k < a->n_merges; k++)
        if (a->merge_count[k] != b->merge_count[k] || a->tokens_after[k] != b->tokens_after[k]) return 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_bpe TEXT [--vocab 4096] [--naive-kb 64] [--naive-vocab 1024]\n");
        return 2;
    }
    int V = 4096, naive_kb = 64, naive_V = 1024;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--vocab")) V = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--naive-kb")) naive_kb = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--naive-vocab")) naive_V = atoi(argv[i + 1]);
        else { fprintf(stderr, "bench_bpe: unknown flag '%s'\n", argv[i]); return 2; }
    }
    size_t n;
    char *text = slurp(argv[1], &n);
    if (!text || n == 0) { fprintf(stderr, "bench_bpe: %s: cannot read, or empty\n", argv[1]); return 1; }

    tw_bpe_vocab v;
    double s = timed(&v, tw_bpe_train, "fast", text, n, V);
    printf("fast trainer: %zu bytes (%.2f MB) to %d pieces (%d merges) in %.2f s: %.2f MB/s, one thread\n",
           n, n / 1e6, V, v.n_merges, s, n / 1e6 / s);
    printf("  its compression on that (training) text: %lld tokens, %.4f bytes/token\n",
           v.tokens_after[v.n_merges - 1], (double)n / (double)v.tokens_after[v.n_merges - 1]);
    tw_bpe_vocab_free(&v);

    size_t cut = (size_t)naive_kb * 1024 < n ? (size_t)naive_kb * 1024 : n;
    while (cut < n && text[cut - 1] != '\n') cut++;
    tw_bpe_vocab a, b;
    double t_fast = timed(&a, tw_bpe_train, "fast", text, cut, naive_V);
    double t_naive = timed(&b, tw_bpe_train_naive, "naive", text, cut, naive_V);
    printf("same input, first %zu bytes to %d pieces: naive %.2f s, fast %.4f s: fast is %.0fx faster; "
           "identical vocabularies: %s\n", cut, naive_V, t_naive, t_fast, t_naive / t_fast,
           same_vocab(&a, &b) ? "yes" : "NO");
    int ok = same_vocab(&a, &b);
    tw_bpe_vocab_free(&a);
    tw_bpe_vocab_free(&b);
    free(text);
    return ok ? 0 : 1;
}
