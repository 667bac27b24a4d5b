// bpe_train.c: ./bpe-train, learn a BPE vocabulary from a text file and write it as a llama2.c
// tokenizer file (read by ./generate -z, llama2.c's run.c, and ./train once it lands).
//
//   make bpe-train
//   ./bpe-train story.txt --vocab 512 -o out/tok_story.bin [--compare data/models/tok512.bin]
//
// The last tenth of the file (from a line start) is held out: the vocabulary is learned from the
// rest, and the compression it reaches (bytes per token) is measured on the held-out part with the
// library's encoder. See docs/bpe.md for the rules the trainer follows.
// Exit: 0 done; 1 bad data (file unreadable, empty, not text, vocabulary impossible for this
// text), with nothing written; 2 bad usage. Errors are one line on stderr.
#define _POSIX_C_SOURCE 200809L   // clock_gettime, stat
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "formats/regular_file.h"
#include "formats/same_file.h"
#include "tokenize/bpe_train.h"
#include "tokenize/tokenizer.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: ./bpe-train TEXT.txt --vocab N -o TOKENIZER.bin [options]\n"
        "example: ./bpe-train out/bpe/stories.txt --vocab 512 -o out/bpe/tok_stories.bin\n"
        "options:\n"
        "  --vocab N           pieces in the vocabulary, 259 special/byte tokens included (required)\n"
        "  -o PATH             the tokenizer file to write (llama2.c format; required)\n"
        "  --held-out F        fraction of the text, at its end, kept out of training and used to\n"
        "                      measure compression (default 0.1; 0: measure on the training text)\n"
        "  --min-char-count N  a character joins the base alphabet if it occurs N times (default 1)\n"
        "  --min-pair-count N  the least count a pair needs to be merged (default 2)\n"
        "  --compare PATH      also measure another tokenizer file (e.g. tok512.bin) on the same text\n"
        "  --naive             train with the slow reference trainer (same result)\n");
}

static void die_usage(const char *fmt, const char *a) {
    fprintf(stderr, "bpe-train: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (./bpe-train -h for usage)\n");
    exit(2);
}

static long parse_long(const char *flag, const char *s, long lo, long hi) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || v < lo || v > hi) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: '%%s' is not an integer in %ld..%ld", flag, lo, hi);
        die_usage(msg, s);
    }
    return v;
}

typedef struct {
    const char *text_path, *out_path, *compare_path;
    long        vocab;
    double      held_out;
    long        min_char, min_pair;
    int         naive;
} options;

static options parse_args(int argc, char **argv) {
    options o = { NULL, NULL, NULL, -1, 0.1, 1, 2, 0 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { usage(stdout); exit(0); }
        if (strcmp(a, "--naive") == 0) { o.naive = 1; continue; }
        if (a[0] != '-') {
            if (o.text_path) die_usage("unexpected argument '%s' (one text file only)", a);
            o.text_path = a;
            continue;
        }
        int known = !strcmp(a, "--vocab") || !strcmp(a, "-o") || !strcmp(a, "--held-out") ||
                    !strcmp(a, "--min-char-count") || !strcmp(a, "--min-pair-count") || !strcmp(a, "--compare");
        if (!known) die_usage("unknown flag '%s'", a);
        if (i + 1 >= argc) die_usage("flag '%s' needs a value", a);
        const char *v = argv[++i];
        if (!strcmp(a, "--vocab")) o.vocab = parse_long(a, v, 1, 1L << 24);
        else if (!strcmp(a, "-o")) o.out_path = v;
        else if (!strcmp(a, "--compare")) o.compare_path = v;
        else if (!strcmp(a, "--min-char-count")) o.min_char = parse_long(a, v, 1, 1L << 30);
        else if (!strcmp(a, "--min-pair-count")) o.min_pair = parse_long(a, v, 1, 1L << 30);
        else {
            char *end;
            o.held_out = strtod(v, &end);
            if (end == v || *end != '\0' || !(o.held_out >= 0.0 && o.held_out < 1.0))
                die_usage("--held-out: '%s' is not a fraction in [0, 1)", v);
        }
    }
    if (!o.text_path) die_usage("no text file given%s", "");
    if (o.vocab < 0) die_usage("--vocab N is required%s", "");
    if (!o.out_path) die_usage("-o PATH is required%s", "");
    return o;
}

// ---- reading the text ----

static void die_data(const char *path, const char *msg) {
    fprintf(stderr, "bpe-train: %s: %s\n", path, msg);
    exit(1);
}

// The largest training text: the trainer keeps a few words of state per byte, and at the fast
// trainer's 5-20 MB/s a larger file would take minutes. A bound, not a guess: /dev/zero or a
// FIFO never get here (tw_regular_file_open), and a regular file's size is known before reading.
#define BPE_MAX_TEXT_BYTES (256LL << 20)

static char *read_text(const char *path, size_t *n) {
    char err[512];
    long long bytes = 0;
    FILE *f = tw_regular_file_open_measured(&bytes, err, sizeof err, path, "a text file (e.g. story.txt)",
                                            "cannot open");
    if (!f) {
        fprintf(stderr, "bpe-train: %s\n", err);
        exit(1);
    }
    if (bytes > BPE_MAX_TEXT_BYTES) {
        fclose(f);
        char msg[256];
        snprintf(msg, sizeof msg, "is %lld bytes, more than the %lld MiB this trainer reads: train on "
                 "a part of it (e.g. head -c 100M FILE > part.txt)", bytes, BPE_MAX_TEXT_BYTES >> 20);
        die_data(path, msg);
    }
    char *buf = malloc((size_t)bytes + 1);
    if (!buf) { fclose(f); die_data(path, "out of memory reading the file"); }
    size_t len = fread(buf, 1, (size_t)bytes, f);
    int bad = ferror(f) || len != (size_t)bytes;
    fclose(f);
    if (bad) { free(buf); die_data(path, "read error (did the file shrink while it was read?)"); }
    if (len == 0) { free(buf); die_data(path, "is empty: there is nothing to learn from"); }
    char *nul = memchr(buf, '\0', len);
    if (nul) {
        char msg[160];
        snprintf(msg, sizeof msg, "byte %zu is NUL: not a text file (the encoder reads text up to a NUL)",
                 (size_t)(nul - buf));
        free(buf);
        die_data(path, msg);
    }
    buf[len] = '\0';
    *n = len;
    return buf;
}

// ---- measuring compression ----

// Tokens of text (n bytes, NUL-terminated) under tok, no BOS/EOS. The encoder's cost grows with
// the square of the length, so the text is encoded in pieces of about 512 bytes cut before a space:
// a piece " rest" is encoded as "rest", whose dummy-prefix space stands for the cut-off one. That
// is exact for any vocabulary whose pieces hold a space only as their first byte (ours, tok512).
// *exact is cleared if a piece of tok holds a space after its first byte, or if a run of 64 KB
// without a space had to be cut elsewhere.
static long long count_tokens(const tw_tokenizer *tok, const char *text, size_t n, int *exact) {
    long long total = 0;
    size_t cap = 1 << 17;
    char *chunk = malloc(cap + 1);
    int *ids = malloc((cap + 4) * sizeof *ids);
    if (!chunk || !ids) { fprintf(stderr, "bpe-train: out of memory measuring compression\n"); exit(1); }
    *exact = 1;
    for (int i = 0; i < tok->vocab_size; i++)   // a piece spanning a cut would make this inexact
        if (tok->vocab[i][0] != '\0' && strchr(tok->vocab[i] + 1, ' ') != NULL) *exact = 0;
    for (size_t s = 0; s < n;) {
        size_t e = s + 512 < n ? s + 512 : n;
        while (e < n && text[e] != ' ' && e - s < (64u << 10)) e++;
        if (e < n && text[e] != ' ') *exact = 0;
        size_t from = (s > 0 && text[s] == ' ') ? s + 1 : s;   // the dummy prefix is that space
        memcpy(chunk, text + from, e - from);
        chunk[e - from] = '\0';
        int k = 0;
        if (tw_tokenizer_encode(tok, ids, &k, (int)cap + 4, chunk, 0, 0) != TW_OK) {
            fprintf(stderr, "bpe-train: out of memory measuring compression\n");
            exit(1);
        }
        total += k;
        s = e;
    }
    free(chunk);
    free(ids);
    return total;
}

// How many records a llama2.c tokenizer file holds (its vocabulary size is not stored), or -1
// (why in err) if it is not a regular file or a record runs past the end.
static int count_records(const char *path, char *err, size_t err_len) {
    long long bytes = 0;
    FILE *f = tw_regular_file_open_measured(&bytes, err, err_len, path,
                                            "a llama2.c tokenizer file (.bin, e.g. tok512.bin)", "cannot open");
    if (!f) return -1;
    unsigned char h[8];
    long long at = 4;
    int n = 0;
    snprintf(err, err_len, "%s: cannot read it as a llama2.c tokenizer file", path);
    if (fread(h, 1, 4, f) != 4) { fclose(f); return -1; }
    while (fread(h, 1, 8, f) == 8) {
        int32_t len = (int32_t)((uint32_t)h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 24);
        at += 8 + (long long)len;
        if (len < 0 || at > bytes || fseek(f, len, SEEK_CUR) != 0 || n == INT32_MAX) { fclose(f); return -1; }
        n++;
    }
    fclose(f);
    return n;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    options o = parse_args(argc, argv);
    // -o replaces its path whole: it may be neither input (compared as files, not names).
    if (tw_same_file(o.text_path, o.out_path) || (o.compare_path && tw_same_file(o.compare_path, o.out_path))) {
        fprintf(stderr, "bpe-train: -o %s: the same file as the %s: writing it would destroy that input; "
                "give another -o PATH\n", o.out_path, tw_same_file(o.text_path, o.out_path) ? "training text" : "--compare file");
        return 2;
    }
    size_t n;
    char *text = read_text(o.text_path, &n);
    char err[512];

    // --compare is read before anything is written, so a bad file leaves -o as it was.
    tw_tokenizer other;
    int V_other = 0;
    if (o.compare_path) {
        V_other = count_records(o.compare_path, err, sizeof err);
        if (V_other >= 0 && V_other < 3)
            snprintf(err, sizeof err, "%s: holds %d records: not a llama2.c tokenizer file (it needs 3 or more)",
                     o.compare_path, V_other);
        if (V_other < 3 || tw_tokenizer_load(&other, o.compare_path, V_other, err, sizeof err) != TW_OK) {
            fprintf(stderr, "bpe-train: --compare %s\n", err);
            free(text);
            return 1;
        }
    }

    // Hold out the end of the text, from the start of a line (or else of a word) when there is one.
    size_t cut = n;
    if (o.held_out > 0.0) {
        cut = (size_t)((double)n * (1.0 - o.held_out));
        const char *nl = memchr(text + cut, '\n', n - cut);
        if (!nl) nl = memchr(text + cut, ' ', n - cut);   // else at a word
        if (nl && nl + 1 < text + n) cut = (size_t)(nl + 1 - text);
        if (cut == 0 || cut >= n) cut = n;   // too short to split: measure on the training text
    }

    tw_bpe_options bo = { (int)o.vocab, (int)o.min_char, (int)o.min_pair };
    tw_bpe_vocab v;
    double t0 = now();
    tw_status st = o.naive ? tw_bpe_train_naive(&v, text, cut, &bo, err, sizeof err)
                           : tw_bpe_train(&v, text, cut, &bo, err, sizeof err);
    double secs = now() - t0;
    if (st != TW_OK) {
        const char *hint = strstr(err, "smaller than") ? ": raise --vocab, or --min-char-count to keep rare characters out"
                         : strstr(err, "at most") ? ": lower --vocab, give more text, or lower --min-pair-count" : "";
        fprintf(stderr, "bpe-train: %s: %s%s\n", o.text_path, err, hint);
        if (o.compare_path) tw_tokenizer_free(&other);
        free(text);
        return 1;
    }
    if (tw_bpe_vocab_write(&v, o.out_path) != TW_OK) {
        fprintf(stderr, "bpe-train: %s: cannot write (%s); nothing was written\n", o.out_path, strerror(errno));
        tw_bpe_vocab_free(&v);
        if (o.compare_path) tw_tokenizer_free(&other);
        free(text);
        return 1;
    }
    printf("learned %d pieces (259 special and byte tokens, %d characters, %d merges) from %zu bytes "
           "in %.2f s (%.2f MB/s)%s\n", v.vocab_size, v.n_chars, v.n_merges, cut, secs,
           (double)cut / 1e6 / (secs > 0 ? secs : 1e-9), o.naive ? " with the naive trainer" : "");
    printf("wrote %s (llama2.c tokenizer format: ./generate MODEL -z %s)\n", o.out_path, o.out_path);

    // Compression on the held-out text (or the training text if it was too short to split).
    const char *eval = cut < n ? text + cut : text;
    size_t eval_n = cut < n ? n - cut : n;
    const char *what = cut < n ? "held-out" : "training (too short to hold any out)";
    tw_tokenizer tok;
    if (tw_bpe_vocab_to_tokenizer(&tok, &v) != TW_OK) { fprintf(stderr, "bpe-train: out of memory\n"); return 1; }
    int exact;
    long long k = count_tokens(&tok, eval, eval_n, &exact);
    double ours = (double)eval_n / (double)k;
    printf("compression on the %s text (%zu bytes): %lld tokens, %.4f bytes/token%s\n", what, eval_n, k,
           ours, exact ? "" : " (approximate: a piece spans a space, or a 64 KB run without one was cut)");
    tw_tokenizer_free(&tok);

    if (o.compare_path) {
        long long k2 = count_tokens(&other, eval, eval_n, &exact);
        double theirs = (double)eval_n / (double)k2;
        printf("%s (V = %d) on the same text: %lld tokens, %.4f bytes/token%s; ours/theirs = %.4f\n",
               o.compare_path, V_other, k2, theirs, exact ? "" : " (approximate)", ours / theirs);
        tw_tokenizer_free(&other);
    }
    int rc = 0;
    tw_bpe_vocab_free(&v);
    free(text);
    return rc;
}
