// bench_tokenize.c: encoding speed of the three tokenizers on a few MB of mixed text
// (make bench-tokenize). Not a test: it prints timings; tests/test_bbpe.c holds the ids equal to
// the references.
//
//   ./build/tools/bench_tokenize --write-text FILE [--mb 4]
//        writes the text: English-like sentences, Chinese, and C/Python/JavaScript lines, drawn
//        with a fixed seed in equal thirds (by bytes) and cut to --mb MB
//   ./build/tools/bench_tokenize FILE TOKENIZER... [--reference JS_RESULTS]
//        encodes FILE with each tokenizer (best of 3 runs) and prints MB/s and tokens; with
//        --reference, also the JavaScript references' MB/s (lines "gpt2 MBPS" and "qwen3 MBPS",
//        written in the same `make bench-tokenize` run by tools/tokenizers/bench_reference.js)
//        and the ratio C / JavaScript.
// The text is encoded as one call per line, the way both JavaScript references are called.
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cpuinfo.h"
#include "core/rng.h"
#include "formats/atomic_file.h"
#include "tokenize/text_tokenizer.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *const words[] = {
    "the", "a", "model", "token", "attention", "layer", "reads", "every", "word", "of", "its",
    "context", "and", "predicts", "next", "one", "Once", "upon", "time", "there", "was", "little",
    "girl", "named", "Lily", "she", "loved", "play", "outside", "don't", "it's", "we'll", "sun",
    "weights", "learn", "from", "data", "training", "loss", "falls", "quickly", "at", "first",
    "then", "slowly", "Transformer", "embedding", "vocabulary", "merges", "bytes", "2024", "42",
    "3.14", "résumé", "naïve", "café", "GPU", "memory", "cache", "is", "not", "what", "you", "think",
};
static const char *const code[] = {
    "for (int i = 0; i < n; i++) sum += a[i] * b[i];", "def forward(self, x):", "    return self.norm(x + self.attn(x))",
    "const y = xs.map(x => x * 2).filter(Boolean);", "if (err != TW_OK) { fprintf(stderr, \"%s\\n\", msg); return 1; }",
    "import torch.nn.functional as F", "    logits = model(tokens)[:, -1, :] / temperature",
    "static float dot(const float *a, const float *b, int n) {", "let total = 0; for (const v of values) total += v;",
    "class Block(nn.Module):", "#include <stdio.h>", "        self.w1 = nn.Linear(dim, hidden, bias=False)",
};

// Appends one line of the given kind (0 English, 1 Chinese, 2 code) to buf at *n.
static void add_line(char *buf, size_t *n, size_t cap, int kind, tw_rng *r) {
    char line[1024];
    size_t k = 0;
    if (kind == 0) {
        int nw = 8 + (int)((uint32_t)(tw_rng_next(r) >> 32) % 20);
        for (int i = 0; i < nw && k < 900; i++)
            k += (size_t)snprintf(line + k, sizeof line - k, "%s%s", i ? " " : "", words[(uint32_t)(tw_rng_next(r) >> 32) % (sizeof words / sizeof *words)]);
        k += (size_t)snprintf(line + k, sizeof line - k, ".");
    } else if (kind == 1) {
        int nc = 10 + (int)((uint32_t)(tw_rng_next(r) >> 32) % 40);
        for (int i = 0; i < nc; i++) {   // common CJK ideographs U+4E00..U+62FF, a comma now and then
            unsigned cp = i % 12 == 11 ? 0xFF0C : 0x4E00 + (uint32_t)(tw_rng_next(r) >> 32) % 0x1500;
            line[k++] = (char)(0xE0 | (cp >> 12));
            line[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            line[k++] = (char)(0x80 | (cp & 0x3F));
        }
        memcpy(line + k, "\xe3\x80\x82", 3);   // 。
        k += 3;
    } else {
        k = (size_t)snprintf(line, sizeof line, "%s", code[(uint32_t)(tw_rng_next(r) >> 32) % (sizeof code / sizeof *code)]);
    }
    line[k++] = '\n';
    if (*n + k > cap) return;
    memcpy(buf + *n, line, k);
    *n += k;
}

static int write_text(const char *path, double mb) {
    size_t cap = (size_t)(mb * 1e6), n = 0, per[3] = { 0, 0, 0 };
    char *buf = malloc(cap);
    if (!buf) return 1;
    tw_rng r;
    tw_rng_init(&r, 2024);
    while (n + 1024 < cap) {   // the kind with the fewest bytes so far goes next
        int kind = per[0] <= per[1] && per[0] <= per[2] ? 0 : per[1] <= per[2] ? 1 : 2;
        size_t before = n;
        add_line(buf, &n, cap, kind, &r);
        per[kind] += n - before;
    }
    tw_atomic_file af;
    tw_status st = tw_atomic_open(&af, path, "wb");
    if (st == TW_OK) st = tw_atomic_commit(&af, fwrite(buf, 1, n, af.f) == n);
    free(buf);
    if (st != TW_OK) { fprintf(stderr, "bench_tokenize: %s: cannot write it\n", path); return 1; }
    printf("bench_tokenize: wrote %s: %.2f MB (English %.2f, Chinese %.2f, code %.2f MB)\n", path,
           n / 1e6, per[0] / 1e6, per[1] / 1e6, per[2] / 1e6);
    return 0;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    if (b) { b[n] = '\0'; *len = (size_t)n; }
    return b;
}

// Encodes every line of text; returns the seconds taken, the token count in *tokens.
static double encode_lines(const tw_text_tokenizer *t, const char *text, size_t len, size_t *tokens) {
    tw_ids ids = { 0 };
    double t0 = now();
    *tokens = 0;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) + 1 : len;
        ids.n = 0;
        if (tw_text_tokenizer_encode(t, &ids, text + i, end - i) != TW_OK) { tw_ids_free(&ids); return -1; }
        *tokens += ids.n;
        i = end;
    }
    double dt = now() - t0;
    tw_ids_free(&ids);
    return dt;
}

// The JavaScript reference's MB/s for key ("gpt2" or "qwen3") in the results file, or 0.
static double reference_mbps(const char *path, const char *key) {
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return 0;
    char name[32];
    double v, found = 0;
    while (fscanf(f, "%31s %lf", name, &v) == 2)
        if (strcmp(name, key) == 0) found = v;
    fclose(f);
    return found;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--write-text") == 0) {
        double mb = argc >= 5 && strcmp(argv[3], "--mb") == 0 ? atof(argv[4]) : 4.0;
        return write_text(argv[2], mb > 0 && mb < 1000 ? mb : 4.0);
    }
    if (argc < 3) {
        fprintf(stderr, "usage: bench_tokenize --write-text FILE [--mb N] | FILE TOKENIZER... [--reference JS_RESULTS]\n");
        return 2;
    }
    const char *ref = NULL;
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], "--reference") == 0) ref = argv[i + 1];
    size_t len;
    char *text = slurp(argv[1], &len);
    if (!text) { fprintf(stderr, "bench_tokenize: cannot read %s\n", argv[1]); return 1; }
    char cpu[256];
    bench_cpu_describe(cpu, sizeof cpu);
    printf("bench_tokenize: %s, %.2f MB, one encode call per line, best of 3 runs; %s\n", argv[1], len / 1e6, cpu);
    printf("%-44s %10s %10s %12s %12s\n", "tokenizer", "MB/s (C)", "tokens", "MB/s (JS)", "C / JS");
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--reference") == 0) { i++; continue; }
        tw_text_tokenizer t;
        char err[512];
        if (tw_text_tokenizer_load(&t, argv[i], err, sizeof err) != TW_OK) {
            printf("%-44s skipped: %s\n", argv[i], err);
            continue;
        }
        double best = 1e30;
        size_t tokens = 0;
        for (int run = 0; run < 3; run++) {
            double dt = encode_lines(&t, text, len, &tokens);
            if (dt >= 0 && dt < best) best = dt;
        }
        const char *key = t.kind == TW_TOKKIND_GPT2 ? "gpt2" : t.kind == TW_TOKKIND_HF ? "qwen3" : NULL;
        double js = key ? reference_mbps(ref, key) : 0, mbps = len / 1e6 / best;
        if (js > 0) printf("%-44s %10.2f %10zu %12.2f %11.1fx\n", argv[i], mbps, tokens, js, mbps / js);
        else printf("%-44s %10.2f %10zu %12s %12s\n", argv[i], mbps, tokens, "-", "-");
        tw_text_tokenizer_free(&t);
    }
    free(text);
    return 0;
}
