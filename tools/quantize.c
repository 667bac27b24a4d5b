// quantize.c: `./quantize IN.bin OUT.bin [--group GS]` reads a llama2.c version-0 (fp32)
// checkpoint and writes llama2.c's version-2 (Q8_0) checkpoint, the file runq.c reads
// (docs/quantization.md). For every quantized tensor it prints the largest and the mean absolute
// rounding error |w - q s|, then the sizes.
//
// Group size: --group GS must divide dim and hidden_dim, else it is refused (runq.c would drop
// the tail of every row). Without --group, 64 (export.py's default) is halved until it divides
// both, and the choice is printed: stories260K (dim 64, hidden_dim 172) gets 4, the 15M model
// (288, 768) gets 32, as export.py's backoff would give for it.
// --budget TOKENS.bin: after writing, the error budget of the int8 model against the fp32 one
// (lib/quant/q8budget.h) on a held-out token file (e.g. data/stories/val.bin from `make stories`):
// the largest logit error, KL(fp32 || int8), perplexity of both and the greedy agreement, over
// the file's first --budget-tokens tokens (default 4096) in windows of the model's seq_len.
// Exit status: 0 written, 1 unreadable input or failed write, 2 bad usage (flags, group size).
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/llama2c.h"
#include "quant/q8_0.h"
#include "quant/q8file.h"
#include "quant/q8model.h"
#include "quant/q8budget.h"
#include "formats/same_file.h"
#include "train/tokens.h"
#include "simd/simd.h"
#include "tokenize/tokenizer.h"

static const char USAGE[] =
    "usage: ./quantize IN.bin OUT.bin [--group GS] [--budget TOKENS.bin [--budget-tokens N] [-z TOK.bin]]\n"
    "  IN.bin      a llama2.c version-0 (fp32) checkpoint, e.g. data/models/stories260K.bin\n"
    "  OUT.bin     the llama2.c version-2 (Q8_0, int8 in groups) checkpoint to write\n"
    "  --group GS  values per scale; must divide dim and hidden_dim (default: 64, halved until it does)\n"
    "  --budget TOKENS.bin  then measure what int8 costs on a held-out token file (uint16 ids, as\n"
    "              `make stories` writes data/stories/val.bin): largest logit error, KL(fp32 || int8),\n"
    "              perplexity at fp32 and int8, greedy tokens that agree (int8 kernels of $TW_SIMD or auto)\n"
    "  --budget-tokens N  how many tokens of that file (default 4096), in windows of seq_len\n"
    "  -z TOK.bin  the tokenizer of those tokens: also print bits per byte, which (unlike perplexity\n"
    "              per token) compares models with different tokenizers\n"
    "example: ./quantize data/models/stories260K.bin out/stories260K_q80.bin\n";

enum { BUDGET_TOKENS = 4096, BUDGET_PROMPT = 8, BUDGET_STEPS = 256 };

static int usage_error(const char *why) {
    fprintf(stderr, "quantize: %s (./quantize --help for usage)\n", why);
    return 2;
}

// The value after flag argv[*i] into *v, a whole number in [lo, hi]; *i moves past it. 0, or the
// usage error's exit status (2) with one line on stderr. e.g.: an example value for the message.
static int flag_value(long *v, int *i, int argc, char **argv, long lo, long hi, const char *e_g) {
    const char *flag = argv[*i];
    char why[160];
    if (*i + 1 >= argc) {
        snprintf(why, sizeof why, "%s needs a value, e.g. %s %s", flag, flag, e_g);
        return usage_error(why);
    }
    const char *s = argv[++*i];
    char *end;
    errno = 0;
    *v = strtol(s, &end, 10);
    if (errno || *end || end == s || *v < lo || *v > hi) {
        snprintf(why, sizeof why, "%s '%s' is not a whole number in [%ld, %ld]", flag, s, lo, hi);
        return usage_error(why);
    }
    return 0;
}

// Largest and mean |w - dequant(q)| over one tensor.
static void rounding_error(double *max_err, double *mean_err, const float *w,
                           const tw_q8file_tensor *t, int gs, float *row) {
    double sum = 0, mx = 0;
    for (int r = 0; r < t->rows; r++) {
        tw_dequant_groups(row, t->q + (long)r * t->cols, t->s + (long)r * (t->cols / gs), t->cols / gs, gs);
        for (int k = 0; k < t->cols; k++) {
            double e = fabs((double)w[(long)r * t->cols + k] - row[k]);
            sum += e;
            if (e > mx) mx = e;
        }
    }
    *max_err = mx;
    *mean_err = sum / ((double)t->rows * t->cols);
}

// The size of a file in bytes (-1 if it cannot be read).
static long long file_bytes(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    long long n = fseek(f, 0, SEEK_END) == 0 ? (long long)ftell(f) : -1;
    fclose(f);
    return n;
}

// The first max_tokens ids of the token file at path into *text (*n of them, malloc'd), checked
// against the model's vocabulary, before anything is written. 0, or 1 with one line on stderr.
static int read_budget_text(int **text, long *n, const tw_model *m, const char *path, long max_tokens) {
    char err[512];
    long at = 0;
    if (m->cfg.max_seq < 2) {
        fprintf(stderr, "quantize: --budget: the model's seq_len is %d: a window of at least 2 tokens is needed\n",
                m->cfg.max_seq);
        return 1;
    }
    if (tw_tokens_read(text, n, path, err, sizeof err) != TW_OK) {
        fprintf(stderr, "quantize: --budget: %s\n", err);
        return 1;
    }
    if (*n < 2 || !tw_tokens_fit_vocab(*text, *n, m->cfg.vocab, &at)) {
        if (*n < 2) fprintf(stderr, "quantize: --budget: %s holds %ld token: at least 2 are needed\n", path, *n);
        else fprintf(stderr, "quantize: --budget: %s: token %ld is id %d, outside this model's vocabulary of %d "
                     "(was it made with another tokenizer?)\n", path, at, (*text)[at], m->cfg.vocab);
        free(*text);
        *text = NULL;
        return 1;
    }
    if (*n > max_tokens) *n = max_tokens;
    return 0;
}

// The error budget of the int8 model q against its fp32 original m on text (n tokens, read from
// path); prints it. 0 on success, 1 with one line on stderr.
// Tokens the budget predicts in n tokens cut into windows of W (every token but each window's
// first), and with a tokenizer (tok->vocab set) the bytes of text they decode to (*bytes, else 0).
static long budget_scored(long *bytes, const tw_tokenizer *tok, const int *text, long n, int W) {
    long scored = 0;
    *bytes = 0;
    for (long w0 = 0; w0 < n; w0 += W) {
        const long end = w0 + W < n ? w0 + W : n;
        if (end - w0 < 2) break;   // a last piece of one token predicts nothing
        scored += end - w0 - 1;
        if (tok->vocab) *bytes += tw_tokenizer_decoded_bytes(tok, text, w0 + 1, end);
    }
    return scored;
}

static int print_budget(const tw_model *m, const tw_q8file *q, const int *text, long n, const char *path,
                        const tw_tokenizer *tok) {
    char err[512];
    tw_model m8;
    if (tw_q8file_to_model(&m8, q, err, sizeof err) != TW_OK) {
        fprintf(stderr, "quantize: --budget: %s\n", err);
        return 1;
    }
    const char *level = tw_simd_init(NULL);
    if (!level) level = tw_simd_init("auto");   // $TW_SIMD names a level this CPU lacks
    const tw_q8_ops *q8 = tw_q8_ops_for_simd_level(level);
    // W >= 2 (read_budget_text): a prompt of at most W - 1 tokens leaves at least one step
    const int W = m->cfg.max_seq;
    int n_prompt = n < BUDGET_PROMPT ? (int)n : BUDGET_PROMPT;
    if (n_prompt > W - 1) n_prompt = W - 1;
    const int steps = W - n_prompt < BUDGET_STEPS ? W - n_prompt : BUDGET_STEPS;
    tw_q8_budget b;
    tw_status st = tw_q8_budget_measure_text(&b, m, &m8, text, n, n_prompt, steps);
    if (st != TW_OK)
        fprintf(stderr, "quantize: --budget: %s (seq_len %d, %ld tokens of %s)\n", tw_status_str(st), W, n, path);
    else
        printf("error budget on %s: %d tokens in windows of %d (kernels: %s, int8 %s)\n"
               "  largest |logit error|     %.4g\n"
               "  mean KL(fp32 || int8)     %.4g nats\n"
               "  perplexity fp32 -> int8   %.4f -> %.4f (%+.3f%%)\n"
               "  greedy tokens that agree  %d of %d, from the file's first %d tokens\n",
               path, b.T, W, level, q8 ? q8->level : "naive", b.max_logit_err, b.mean_kl, b.ppl_ref, b.ppl_test,
               100.0 * (b.ppl_test / b.ppl_ref - 1.0), b.agree, b.steps, n_prompt);
    if (st == TW_OK) {
        // Perplexity depends on which tokens it averages over: say which, so that it is not
        // compared with ./train's (the first --eval-batches windows of --seq) as if the same.
        long bytes;
        const long scored = budget_scored(&bytes, tok, text, n, W);
        printf("  (perplexity over the %ld predicted tokens: the file's first %ld, each window's first token "
               "not predicted)\n", scored, n);
        if (bytes > 0)
            printf("  bits per byte fp32 -> int8 %.4f -> %.4f (%ld bytes of text)\n",
                   log(b.ppl_ref) * (double)scored / ((double)bytes * log(2.0)),
                   log(b.ppl_test) * (double)scored / ((double)bytes * log(2.0)), bytes);
    }
    tw_model_free(&m8);
    return st == TW_OK ? 0 : 1;
}

int main(int argc, char **argv) {
    const char *in = NULL, *out = NULL, *budget = NULL, *tok_path = NULL;
    int gs = 0;
    long budget_tokens = BUDGET_TOKENS;
    int budget_tokens_given = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) { fputs(USAGE, stdout); return 0; }
        if (strcmp(argv[i], "--group") == 0) {
            long v;
            const int rc = flag_value(&v, &i, argc, argv, 1, TW_QUANT_MAX_GROUP, "32");
            if (rc) return rc;
            gs = (int)v;
        } else if (strcmp(argv[i], "--budget") == 0) {
            if (i + 1 >= argc) return usage_error("--budget needs a token file, e.g. --budget data/stories/val.bin");
            budget = argv[++i];
        } else if (strcmp(argv[i], "-z") == 0) {
            if (i + 1 >= argc) return usage_error("-z needs the tokenizer of the --budget tokens, e.g. -z data/models/tok512.bin");
            tok_path = argv[++i];
        } else if (strcmp(argv[i], "--budget-tokens") == 0) {
            const int rc = flag_value(&budget_tokens, &i, argc, argv, 2, 100000000L, "4096");
            if (rc) return rc;
            budget_tokens_given = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            char why[128];
            snprintf(why, sizeof why, "unknown flag '%s'", argv[i]);
            return usage_error(why);
        } else if (!in) in = argv[i];
        else if (!out) out = argv[i];
        else return usage_error("too many arguments: give IN.bin and OUT.bin");
    }
    if (!in || !out) return usage_error("give IN.bin and OUT.bin");
    if (budget_tokens_given && !budget) return usage_error("--budget-tokens needs --budget TOKENS.bin");
    if (tok_path && !budget) return usage_error("-z needs --budget TOKENS.bin (it counts the bytes of those tokens)");
    // The output replaces its path whole: it may not be an input (compared as files, not names).
    if (tw_same_file(in, out) || (budget && tw_same_file(budget, out))) {
        fprintf(stderr, "quantize: %s: the output is the same file as the %s: writing it would destroy "
                "that input; give another OUT.bin\n", out, tw_same_file(in, out) ? "fp32 input" : "--budget token file");
        return 2;
    }

    // One of the toolkit's other files (a version-2 file: already quantized) is named by the
    // loader from its magic (tw_file_kind_name), instead of being read as a header.
    tw_model m;
    char err[512];
    if (tw_llama2c_load(&m, in, err, sizeof err) != TW_OK) {
        fprintf(stderr, "quantize: %s\n", err);
        return 1;
    }
    int *text = NULL;   // (n_text) the --budget tokens, read before anything is written
    long n_text = 0;
    if (budget && read_budget_text(&text, &n_text, &m, budget, budget_tokens) != 0) {
        tw_model_free(&m);
        return 1;
    }
    tw_tokenizer tok = { 0 };   // -z: counts the bytes of the --budget tokens (bits per byte)
    if (tok_path && tw_tokenizer_load(&tok, tok_path, m.cfg.vocab, err, sizeof err) != TW_OK) {
        fprintf(stderr, "quantize: -z: %s\n", err);
        tw_model_free(&m);
        free(text);
        return 1;
    }
    const int C = m.cfg.block.attn.d_model, F = m.cfg.block.ffn_hidden, widths[2] = { C, F };
    if (gs > 0) {
        for (int w = 0; w < 2; w++)
            if (widths[w] % gs != 0) {
                fprintf(stderr, "quantize: --group %d does not divide %s %d of %s (the last %d values "
                        "of every row would be lost); use a divisor of %d and %d, e.g. --group %d\n",
                        gs, w == 0 ? "dim" : "hidden_dim", widths[w], in, widths[w] % gs, C, F,
                        tw_quant_fit_group(widths, 2, gs));
                tw_model_free(&m);
                free(text);
                tw_tokenizer_free(&tok);
                return 2;
            }
        printf("group size %d (--group)\n", gs);
    } else {
        gs = tw_quant_fit_group(widths, 2, 64);
        if (gs == 64) printf("group size 64 (the default)\n");
        else printf("group size %d: the default 64 does not divide dim %d and hidden_dim %d, so it was "
                    "halved until it does (--group to choose)\n", gs, C, F);
    }

    // fails on a loaded checkpoint only for memory, or for weights so large (near FLT_MAX) that a
    // scale passes the reader's bound (tw_q8file_check_values): gs divides the widths (checked)
    // and the loader refused non-finite weights
    tw_q8file q;
    if (tw_q8file_from_model(&q, &m, gs, err, sizeof err) != TW_OK) {
        fprintf(stderr, "quantize: %s: %s\n", in, err);
        tw_model_free(&m);
        free(text);
        tw_tokenizer_free(&tok);
        return 1;
    }
    const tw_q8file_config cfg = q.cfg;

    float *row = malloc((size_t)(C > F ? C : F) * sizeof(float));
    if (!row) {
        fprintf(stderr, "quantize: out of memory\n");
        tw_q8file_free(&q);
        tw_model_free(&m);
        free(text);
        tw_tokenizer_free(&tok);
        return 1;
    }
    printf("%-30s %-12s %14s %14s\n", "tensor", "shape", "max |error|", "mean |error|");
    double worst = 0;
    for (int i = 0; i < q.n_tensors; i++) {
        const tw_q8file_tensor *t = &q.tensors[i];
        char name[64];
        tw_q8file_model_name(name, sizeof name, &cfg, i);
        const float *w = tw_model_param(&m, name)->data;   // exists: tw_q8file_from_model found it
        double mx, mean;
        rounding_error(&mx, &mean, w, t, gs, row);
        if (mx > worst) worst = mx;
        char shape[32];
        snprintf(shape, sizeof shape, "(%d, %d)", t->rows, t->cols);
        printf("%-30s %-12s %14.6e %14.6e\n", t->name, shape, mx, mean);
    }
    free(row);
    tw_status st = tw_q8file_write(out, &q, err, sizeof err);
    if (st != TW_OK) fprintf(stderr, "quantize: %s\n", err);
    else {
        const long long q8_bytes = tw_q8file_size(&cfg), fp32_bytes = file_bytes(in);
        printf("largest error over all tensors: %.6e\nwrote %s: %lld bytes (version 2, Q8_0, group "
               "size %d); the fp32 file has %lld bytes\n", worst, out, q8_bytes, gs, fp32_bytes);
        // Not a quarter: every group of gs int8 values carries its float scale (4 bytes); the
        // norms' gains stay float32, and the fp32 file also stores RoPE tables the int8 file does not.
        printf("  %.1f%% of the fp32 size, not 25%%: each group of %d one-byte values carries a 4-byte "
               "float scale, (%d + 4) / (4 x %d) = %.1f%% of the matrices' fp32 bytes (norms stay fp32; the fp32 file also holds RoPE tables)\n",
               100.0 * (double)q8_bytes / (double)fp32_bytes, gs, gs, gs, 100.0 * (gs + 4) / (4.0 * gs));
    }
    int rc = st == TW_OK ? 0 : 1;
    if (rc == 0 && budget) rc = print_budget(&m, &q, text, n_text, budget, &tok);
    tw_tokenizer_free(&tok);
    free(text);
    tw_q8file_free(&q);
    tw_model_free(&m);
    return rc;
}
