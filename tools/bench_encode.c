// bench_encode.c: the speed of tokenizer encoding on one long line (make bench-encode). Not a
// test: it prints timings; the tests hold the two encoders equal.
//
//   ./build/tools/bench_encode TOK.bin STORY.txt [--kb 100,2048] [--naive-kb 100]
//
// The line: words of STORY.txt drawn at random (fixed seed) and joined by spaces, cut to each
// size in --kb, in KB. For every size: tw_tokenizer_encode (heap of pairs; best of 3 runs) and,
// up to --naive-kb, tw_tokenizer_encode_naive (one run: it is quadratic in the length), their
// ratio, and whether the ids are identical.
#define _POSIX_C_SOURCE 200809L   // clock_gettime, strtok_r
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cpuinfo.h"
#include "core/rng.h"
#include "tokenize/tokenizer.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) { free(b); b = NULL; }
    fclose(f);
    if (b) b[len] = '\0';
    return b;
}

// A line of exactly len bytes of the story's words in a random order.
static char *make_line(char *story, size_t len) {
    char *words[4096], *save = NULL;
    int n = 0;
    for (char *w = strtok_r(story, " \n", &save); w && n < 4096; w = strtok_r(NULL, " \n", &save)) words[n++] = w;
    if (n == 0) return NULL;
    char *line = malloc(len + 4096 + 2);
    tw_rng r;
    tw_rng_init(&r, 1);
    size_t at = 0;
    while (at < len) {
        const char *w = words[tw_rng_next(&r) % (uint64_t)n];
        size_t wl = strlen(w);
        if (at > 0) line[at++] = ' ';
        memcpy(line + at, w, wl);
        at += wl;
    }
    line[len] = '\0';
    return line;
}

typedef tw_status (*encode_fn)(const tw_tokenizer *, int *, int *, int, const char *, int, int);

static double timed(encode_fn fn, const tw_tokenizer *t, int *ids, int *n, int cap, const char *text) {
    double t0 = now();
    if (fn(t, ids, n, cap, text, 1, 0) != TW_OK) {
        fprintf(stderr, "bench_encode: encoding failed\n");
        exit(1);
    }
    return now() - t0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_encode TOK.bin STORY.txt [--kb 100,2048] [--naive-kb 100]\n"
                        "example: ./build/tools/bench_encode data/models/tok512.bin data/stories260K_greedy.txt\n");
        return 2;
    }
    const char *sizes = "100,2048";
    long naive_kb = 100;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--kb")) sizes = argv[i + 1];
        else if (!strcmp(argv[i], "--naive-kb")) naive_kb = atol(argv[i + 1]);
        else { fprintf(stderr, "bench_encode: unknown flag '%s'\n", argv[i]); return 2; }
    }
    tw_tokenizer t;
    char err[512];
    if (tw_tokenizer_load(&t, argv[1], 512, err, sizeof err) != TW_OK) {
        fprintf(stderr, "bench_encode: %s (run `make model`)\n", err);
        return 1;
    }
    char *story = slurp(argv[2]);
    if (!story) { fprintf(stderr, "bench_encode: %s: cannot read it\n", argv[2]); return 1; }
    long max_kb = 0;
    for (const char *p = sizes; *p; ) {
        long kb = strtol(p, (char **)&p, 10);
        if (kb > max_kb) max_kb = kb;
        if (*p == ',') p++;
        else if (*p) { fprintf(stderr, "bench_encode: --kb wants sizes like 100,2048\n"); return 2; }
    }
    if (max_kb < 1 || max_kb > 1 << 20) { fprintf(stderr, "bench_encode: --kb sizes must be 1..1048576\n"); return 2; }
    char *line = make_line(story, (size_t)max_kb * 1024);
    if (!line) { fprintf(stderr, "bench_encode: %s holds no words\n", argv[2]); return 1; }

    char cpu[256];
    bench_cpu_describe(cpu, sizeof cpu);
    printf("CPU: %s\none line of story words from %s, tokenizer %s, one thread\n", cpu, argv[2], argv[1]);
    int ok = 1;
    for (const char *p = sizes; *p; ) {
        long kb = strtol(p, (char **)&p, 10);
        if (*p == ',') p++;
        if (kb < 1) continue;
        const size_t len = (size_t)kb * 1024;
        const char keep = line[len];
        line[len] = '\0';
        const int cap = (int)tw_tokenizer_max_tokens(line);
        int *fast = malloc((size_t)cap * sizeof *fast), *naive = malloc((size_t)cap * sizeof *naive);
        int nf = 0, nn = 0;
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double s = timed(tw_tokenizer_encode, &t, fast, &nf, cap, line);
            if (s < best) best = s;
        }
        printf("%7ld KB, %7d tokens: heap %8.4f s (%6.2f MB/s)", kb, nf, best, len / 1e6 / best);
        if (kb <= naive_kb) {
            double s = timed(tw_tokenizer_encode_naive, &t, naive, &nn, cap, line);
            int same = nf == nn && memcmp(fast, naive, (size_t)nf * sizeof *fast) == 0;
            ok &= same;
            printf(", naive %8.3f s: %.0fx; identical ids: %s", s, s / best, same ? "yes" : "NO");
        }
        printf("\n");
        free(fast);
        free(naive);
        line[len] = keep;
    }
    free(line);
    free(story);
    tw_tokenizer_free(&t);
    return ok ? 0 : 1;
}
