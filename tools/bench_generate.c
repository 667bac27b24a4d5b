// bench_generate.c: tokens per second of the llama2.c forward pass on the library's functions:
// prefill (all prompt tokens in one call) and decode (one token per call), with the KV cache and
// without it (every decode step recomputes the whole prefix). A benchmark, not a test: the
// numbers depend on the machine; the outputs are checked elsewhere (tests/test_llama2c.c).
//
//   bench_generate MODEL.bin [-p PREFILL_TOKENS] [-d DECODE_TOKENS] [-r REPEATS]
//
// The prompt is seeded random token ids (no tokenizer needed); decoding is greedy.
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tw.h"
#include "llama2c.h"
#include "sampler.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(tw_status st, const char *what) {
    if (st != TW_OK) {
        fprintf(stderr, "bench_generate: %s: %s\n", what, tw_status_str(st));
        exit(1);
    }
}

// One run: prefill P tokens, then decode n_dec greedy tokens. Returns the two times in seconds.
static void run_once(double *t_pre, double *t_dec, const tw_llama2c *m, int *seq, int P, int n_dec,
                     int with_cache) {
    const int V = m->cfg.vocab_size, total = P + n_dec;
    tw_llama2c_state s;
    check(tw_llama2c_state_init(&s, m, with_cache ? P : total, total, with_cache, 0), "state");
    double t0 = now_seconds();
    check(tw_llama2c_forward(&s, m, seq, P, 0, 0), "prefill");
    double t1 = now_seconds();
    int next = tw_argmax(s.logits + (size_t)(P - 1) * V, V);
    for (int pos = P; pos < total; pos++) {
        seq[pos] = next;
        if (with_cache) {
            check(tw_llama2c_forward(&s, m, &seq[pos], 1, pos, 0), "decode");
            next = tw_argmax(s.logits, V);
        } else {
            check(tw_llama2c_forward(&s, m, seq, pos + 1, 0, 0), "decode");
            next = tw_argmax(s.logits + (size_t)pos * V, V);
        }
    }
    double t2 = now_seconds();
    *t_pre = t1 - t0;
    *t_dec = t2 - t1;
    tw_llama2c_state_free(&s);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_generate MODEL.bin [-p PREFILL] [-d DECODE] [-r REPEATS]\n");
        return 2;
    }
    int P = 64, n_dec = 64, repeats = 3;
    for (int i = 2; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (strcmp(argv[i], "-p") == 0) P = v;
        else if (strcmp(argv[i], "-d") == 0) n_dec = v;
        else if (strcmp(argv[i], "-r") == 0) repeats = v;
        else { fprintf(stderr, "bench_generate: unknown flag '%s'\n", argv[i]); return 2; }
    }
    char err[512];
    tw_llama2c m;
    if (tw_llama2c_load(&m, argv[1], err, sizeof err) != TW_OK) {
        fprintf(stderr, "bench_generate: %s\n", err);
        return 1;
    }
    const tw_llama2c_config *c = &m.cfg;
    if (P < 1 || n_dec < 1 || repeats < 1 || P + n_dec > c->seq_len) {
        fprintf(stderr, "bench_generate: need -p >= 1, -d >= 1, -r >= 1 and p + d <= seq_len %d\n", c->seq_len);
        return 2;
    }
    int *seq = malloc((size_t)(P + n_dec) * sizeof *seq);
    tw_rng r;
    tw_rng_init(&r, 1);
    for (int t = 0; t < P; t++) seq[t] = t == 0 ? 1 : 3 + (int)(tw_rng_next(&r) % (uint64_t)(c->vocab_size - 3));

    printf("%s: dim %d, hidden %d, layers %d, heads %d, kv heads %d, vocab %d, seq_len %d\n",
           argv[1], c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len);
    printf("prefill %d tokens, then decode %d tokens greedily; best of %d runs\n", P, n_dec, repeats);
    printf("%-10s %16s %16s\n", "kv cache", "prefill tok/s", "decode tok/s");
    for (int with_cache = 1; with_cache >= 0; with_cache--) {
        double best_pre = 1e30, best_dec = 1e30;
        for (int k = 0; k < repeats; k++) {
            double tp, td;
            run_once(&tp, &td, &m, seq, P, n_dec, with_cache);
            if (tp < best_pre) best_pre = tp;
            if (td < best_dec) best_dec = td;
        }
        printf("%-10s %16.1f %16.1f\n", with_cache ? "yes" : "no", P / best_pre, n_dec / best_dec);
    }
    free(seq);
    tw_llama2c_free(&m);
    return 0;
}
