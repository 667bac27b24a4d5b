// sft_eval.c: does a fine-tuned model follow "a story about WORD", and what did it forget?
// (make sft-eval; docs/finetuning.md)
//
//   sft_eval TOK.bin VAL.bin LABEL=MODEL.bin [LABEL=MODEL.bin ...] [--samples N] [--seed S]
//            [--val-tokens K]
//
// For every model (all with TOK.bin's vocabulary, the three chat tokens included), one row:
//   held-out   the share of answers naming WORD (tw_text_has_word), over N answers to each
//              held-out word's prompt, BOS <|user|>a story about WORD<|assistant|>, each sampled
//              at temperature 1 until <|end|>, BOS or 256 tokens; +- one binomial standard error
//   train      the same for the first 6 train words (the prompts fine-tuning saw)
//   ended      the share of all those answers that ended with <|end|>
//   val loss   mean negative log-likelihood (nats/token) of the first K tokens of VAL.bin (the
//              original stories' validation split), in consecutive windows of 256 positions
// Every model samples with the same seed, so they draw the same random numbers.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decode/sampler.h"
#include "formats/llama2c.h"
#include "simd/simd.h"
#include "tokenize/tokenizer.h"
#include "train/chat_template.h"
#include "train/tokens.h"

#define MAX_ANSWER 256
#define VAL_WINDOW 256
#define N_TRAIN_ASKED 6

static _Noreturn void die(int code, const char *msg, const char *a) {
    fprintf(stderr, "sft_eval: ");
    fprintf(stderr, msg, a);
    fprintf(stderr, "\n");
    exit(code);
}

typedef struct { long asked, named, ended; } tally;

// Asks m n times for a story about word; adds to t.
static void ask(tally *t, tw_model_state *s, const tw_model *m, const tw_tokenizer *tok, tw_sampler *sp,
                const char *word, int n) {
    const int end = tw_tokenizer_lookup(tok, TW_CHAT_END);
    char prompt[128], text[512], answer[MAX_ANSWER * 64 + 1];
    tw_sft_prompt(prompt, sizeof prompt, word);
    tw_chat_format(text, sizeof text, prompt, NULL);
    int ids[600], n_ids = 0;
    if (tw_tokenizer_encode(tok, ids, &n_ids, (int)sizeof ids / (int)sizeof *ids, text, 1, 0) != TW_OK) die(1, "cannot encode %s", text);
    for (int k = 0; k < n; k++) {
        int pos = 0;
        for (; pos + 1 < n_ids; pos++)   // the prompt, all but its last token
            if (tw_model_forward_next(s, m, &ids[pos], 1, pos) != TW_OK) die(1, "forward pass failed%s", "");
        int token = ids[n_ids - 1], ended = 0;
        size_t len = 0;
        answer[0] = '\0';
        for (int a = 0; a < MAX_ANSWER && pos < m->cfg.max_seq; a++, pos++) {
            if (tw_model_forward_next(s, m, &token, 1, pos) != TW_OK) die(1, "forward pass failed%s", "");
            const int next = tw_sampler_sample(sp, s->logits);
            if (next == end) { ended = 1; break; }
            if (next == TW_TOK_BOS) break;
            const char *piece = tw_tokenizer_decode(tok, token, next);
            if (tw_tokenizer_piece_printable(piece)) {
                const size_t pl = strlen(piece);
                if (len + pl < sizeof answer) { memcpy(answer + len, piece, pl + 1); len += pl; }
            }
            token = next;
        }
        t->asked++;
        t->named += tw_text_has_word(answer, word);
        t->ended += ended;
    }
}

// Mean NLL (nats/token) of val's first n tokens, windows of VAL_WINDOW positions.
static double val_loss(tw_model_state *s, const tw_model *m, const int *val, long n) {
    const int V = m->cfg.vocab;
    double sum = 0.0;
    long scored = 0;
    for (long a = 0; a + VAL_WINDOW + 1 <= n; a += VAL_WINDOW) {
        if (tw_model_forward(s, m, val + a, VAL_WINDOW, 0) != TW_OK) die(1, "forward pass failed%s", "");
        for (int t = 0; t < VAL_WINDOW; t++) {
            const float *z = s->logits + (size_t)t * V;
            double mx = z[0], e = 0.0;
            for (int i = 1; i < V; i++) if (z[i] > mx) mx = z[i];
            for (int i = 0; i < V; i++) e += exp((double)z[i] - mx);
            sum += mx + log(e) - (double)z[val[a + t + 1]];
        }
        scored += VAL_WINDOW;
    }
    return sum / (double)scored;
}

static double se(double p, long n) { return sqrt(p * (1.0 - p) / (double)n); }

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: sft_eval TOK.bin VAL.bin LABEL=MODEL.bin [...] [--samples N] [--seed S] [--val-tokens K]\n");
        return 2;
    }
    int samples = 20;
    long val_tokens = 32768;
    unsigned long long seed = 7;
    const char *labels[16];
    int n_models = 0;
    for (int i = 3; i < argc; i++) {
        if (argv[i][0] == '-') {
            if (i + 1 >= argc) die(2, "%s needs a value", argv[i]);
            char *end;
            errno = 0;
            long long v = strtoll(argv[i + 1], &end, 10);
            if (end == argv[i + 1] || *end || errno || v < 1) die(2, "%s: give a positive whole number", argv[i]);
            if (!strcmp(argv[i], "--samples")) samples = v > 10000 ? 10000 : (int)v;
            else if (!strcmp(argv[i], "--seed")) seed = (unsigned long long)v;
            else if (!strcmp(argv[i], "--val-tokens")) val_tokens = (long)v;
            else die(2, "unknown flag %s", argv[i]);
            i++;
        } else {
            if (n_models == 16 || strchr(argv[i], '=') == NULL) die(2, "%s: give LABEL=MODEL.bin (16 at most)", argv[i]);
            labels[n_models++] = argv[i];
        }
    }
    const char *level = tw_simd_init(NULL);
    if (level == NULL) die(1, "TW_SIMD: level '%s' is not available here", getenv("TW_SIMD"));
    char err[4400];
    int *val;
    long n_val;
    if (tw_tokens_read(&val, &n_val, argv[2], err, sizeof err) != TW_OK) die(1, "%s", err);
    if (n_val > val_tokens) n_val = val_tokens;
    if (n_val < VAL_WINDOW + 1) die(1, "%s: too few tokens for one window of 256", argv[2]);

    printf("%-28s %18s %18s %8s %10s\n", "model", "held-out named", "train named", "ended", "val loss");
    for (int k = 0; k < n_models; k++) {
        char label[64];
        const char *path = strchr(labels[k], '=') + 1;
        snprintf(label, sizeof label, "%.*s", (int)(path - labels[k] - 1), labels[k]);
        tw_model m;
        tw_tokenizer tok;
        if (tw_llama2c_load(&m, path, err, sizeof err) != TW_OK) die(1, "%s", err);
        if (tw_tokenizer_load(&tok, argv[1], m.cfg.vocab, err, sizeof err) != TW_OK) die(1, "%s", err);
        if (tw_tokenizer_lookup(&tok, TW_CHAT_END) < 0) die(1, "%s: has no <|end|>: use the grown tokenizer (make sft-data)", argv[1]);
        if (!tw_tokens_fit_vocab(val, n_val, m.cfg.vocab, &(long){ 0 })) die(1, "%s: a token is outside the vocabulary", argv[2]);
        tw_model_state dec, full;
        tw_sampler sp;
        if (tw_model_state_init(&dec, &m, 1, m.cfg.max_seq) != TW_OK || tw_model_state_init(&full, &m, VAL_WINDOW, 0) != TW_OK ||
            tw_sampler_init(&sp, m.cfg.vocab, 1.0f, 1.0f, seed) != TW_OK)
            die(1, "out of memory for %s", path);
        tally held = { 0 }, train = { 0 };
        for (int w = 0; w < tw_sft_n_heldout_words; w++) ask(&held, &dec, &m, &tok, &sp, tw_sft_heldout_words[w], samples);
        for (int w = 0; w < N_TRAIN_ASKED; w++) ask(&train, &dec, &m, &tok, &sp, tw_sft_train_words[w], samples);
        const double ph = (double)held.named / (double)held.asked, pt = (double)train.named / (double)train.asked;
        const double pe = (double)(held.ended + train.ended) / (double)(held.asked + train.asked);
        printf("%-28s %7.1f %% +- %4.1f %7.1f %% +- %4.1f %6.1f %% %10.4f\n", label, 100 * ph, 100 * se(ph, held.asked),
               100 * pt, 100 * se(pt, train.asked), 100 * pe, val_loss(&full, &m, val, n_val));
        fflush(stdout);
        tw_sampler_free(&sp);
        tw_model_state_free(&dec);
        tw_model_state_free(&full);
        tw_tokenizer_free(&tok);
        tw_model_free(&m);
    }
    printf("(%d answers per word: %d held-out words, %d train words; temperature 1, seed %llu; val loss over "
           "%ld tokens of %s; %s kernels)\n", samples, tw_sft_n_heldout_words, N_TRAIN_ASKED, seed, n_val, argv[2], level);
    free(val);
    return 0;
}
