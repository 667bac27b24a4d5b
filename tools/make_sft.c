// make_sft.c: the instruction set of supervised fine-tuning, made here with no download
// (make sft-data; docs/finetuning.md).
//
//   make_sft MODEL.bin TOKENIZER.bin OUTDIR [--per-word N] [--seed S]
//
// Writes into OUTDIR (each file atomically):
//   model.bin, tok.bin   MODEL and TOKENIZER grown by <|user|>, <|assistant|>, <|end|> (ids V, V+1,
//                        V+2; train/grow_vocab.h, tokenize/special.h), as ./add-tokens would
//   train.bin            the examples as uint16 tokens (train/tokens.h), one after the other, each
//                        BOS <|user|>a story about WORD<|assistant|>STORY<|end|> (train/chat_template.h)
//   train_mask.bin       one byte per token: 1 on STORY's tokens and <|end|>, else 0 (./train --mask)
//   train.txt            the same examples as text, one per line
// The stories come from MODEL itself: sampled at temperature 1 with seed S, each from BOS until
// the model samples BOS again (stories cut by the context are dropped). Rejection sampling: a
// story is kept for WORD only if it names WORD (tw_text_has_word), and is given to the first
// word of tw_sft_train_words, in list order, that names it and still needs examples; a story
// that names none of them is dropped. Every train word gets N examples (default 20).
#define _POSIX_C_SOURCE 200809L   // mkdir
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "decode/sampler.h"
#include "formats/atomic_file.h"
#include "formats/llama2c.h"
#include "formats/llama2c_write.h"
#include "formats/same_file.h"
#include "simd/simd.h"
#include "tokenize/special.h"
#include "tokenize/tokenizer.h"
#include "train/chat_template.h"
#include "train/grow_vocab.h"
#include "train/tokens.h"

#define MAX_SAMPLED_STORIES 100000   // give up (one line) rather than sample forever
#define STORY_TEXT_MAX 8192

static _Noreturn void die(int code, const char *msg, const char *a) {
    fprintf(stderr, "make_sft: ");
    fprintf(stderr, msg, a);
    fprintf(stderr, "\n");
    exit(code);
}

// Samples one story from BOS into text (printable pieces, a newline written as a space).
// Returns 1 if the model ended it by sampling BOS within its context, 0 if the context cut it.
static int sample_story(char *text, tw_model_state *s, const tw_model *m, const tw_tokenizer *tok,
                        tw_sampler *sp) {
    int token = TW_TOK_BOS;
    size_t len = 0;
    text[0] = '\0';
    for (int pos = 0; pos < m->cfg.max_seq; pos++) {
        if (tw_model_forward_next(s, m, &token, 1, pos) != TW_OK) die(1, "forward pass failed%s", "");
        const int next = tw_sampler_sample(sp, s->logits);
        if (next == TW_TOK_BOS) return 1;
        const char *piece = tw_tokenizer_decode(tok, token, next);
        if (tw_tokenizer_piece_printable(piece))
            for (const char *p = piece; *p && len + 1 < STORY_TEXT_MAX; p++) text[len++] = *p == '\n' || *p == '\r' ? ' ' : *p;
        text[len] = '\0';
        token = next;
    }
    return 0;
}

typedef struct {
    int *tok; unsigned char *mask; long n, cap;   // the examples' tokens and mask bytes
} stream;

static void push_example(stream *st, const int *ids, const unsigned char *mk, int n) {
    if (st->n + n > st->cap) {
        st->cap = 2 * (st->n + n) + 4096;
        st->tok = realloc(st->tok, (size_t)st->cap * sizeof *st->tok);
        st->mask = realloc(st->mask, (size_t)st->cap);
        if (!st->tok || !st->mask) die(1, "out of memory for %s", "the examples");
    }
    memcpy(st->tok + st->n, ids, (size_t)n * sizeof *ids);
    memcpy(st->mask + st->n, mk, (size_t)n);
    st->n += n;
}

static int write_bytes(const char *path, const unsigned char *b, long n) {
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "wb") != TW_OK) return 0;
    return tw_atomic_commit(&af, fwrite(b, 1, (size_t)n, af.f) == (size_t)n) == TW_OK;
}

int main(int argc, char **argv) {
    if (argc < 4 || argv[1][0] == '-') {
        fprintf(stderr, "usage: make_sft MODEL.bin TOKENIZER.bin OUTDIR [--per-word N] [--seed S]\n"
                "example: make_sft data/models/stories260K.bin data/models/tok512.bin data/sft\n");
        return 2;
    }
    const char *model_path = argv[1], *tok_path = argv[2], *outdir = argv[3];
    long per_word = 20;
    unsigned long long seed = 4242;
    for (int i = 4; i < argc; i += 2) {
        if (i + 1 >= argc) die(2, "flag %s needs a value", argv[i]);
        char *end;
        errno = 0;
        if (!strcmp(argv[i], "--per-word")) per_word = strtol(argv[i + 1], &end, 10);
        else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], &end, 10);
        else die(2, "unknown flag %s (flags: --per-word N, --seed S)", argv[i]);
        if (end == argv[i + 1] || *end || errno || argv[i + 1][0] == '-') die(2, "%s: give a positive whole number", argv[i]);
    }
    if (per_word < 1 || per_word > 1000) die(2, "--per-word: give 1 .. 1000 examples per word%s", "");
    if (seed == 0) die(2, "--seed: give a non-zero seed%s", "");
    if (tw_simd_init(NULL) == NULL) die(1, "TW_SIMD: level '%s' is not available here", getenv("TW_SIMD"));

    char err[4400] = "", path[3][4200];
    tw_model m, g;
    tw_tokenizer tok, gtok;
    if (tw_llama2c_load(&m, model_path, err, sizeof err) != TW_OK) die(1, "%s", err);
    if (tw_tokenizer_load(&tok, tok_path, m.cfg.vocab, err, sizeof err) != TW_OK) die(1, "%s", err);
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) die(1, "%s: cannot create the folder (does its parent folder exist?)", outdir);

    // The grown model and tokenizer.
    const char *const specials[3] = { TW_CHAT_USER, TW_CHAT_ASSISTANT, TW_CHAT_END };
    snprintf(path[0], sizeof path[0], "%.4000s/tok.bin", outdir);
    snprintf(path[1], sizeof path[1], "%.4000s/model.bin", outdir);
    if (tw_same_file(path[1], model_path) || tw_same_file(path[0], tok_path))
        die(2, "%s: OUTDIR holds the input model or tokenizer under the name it would write; give another folder", outdir);
    if (tw_special_add_to_file(path[0], tok_path, m.cfg.vocab, specials, 3, err, sizeof err) != TW_OK) die(1, "%s", err);
    if (tw_model_grow_vocab(&g, &m, 3) != TW_OK) die(1, "out of memory growing %s", model_path);
    if (tw_llama2c_write(path[1], &g, err, sizeof err) != TW_OK) die(1, "%s", err);
    if (tw_tokenizer_load(&gtok, path[0], g.cfg.vocab, err, sizeof err) != TW_OK) die(1, "%s", err);

    // Rejection sampling from the base model.
    tw_model_state s;
    tw_sampler sp;
    if (tw_model_state_init(&s, &m, 1, m.cfg.max_seq) != TW_OK || tw_sampler_init(&sp, m.cfg.vocab, 1.0f, 1.0f, seed) != TW_OK)
        die(1, "out of memory for %s", "sampling");
    const int W = tw_sft_n_train_words;
    long *have = calloc((size_t)W, sizeof *have), sampled = 0, kept = 0;
    char *story = malloc(STORY_TEXT_MAX), prompt[128];
    const int max_ids = STORY_TEXT_MAX + 256;
    int *ids = malloc((size_t)max_ids * sizeof *ids);
    unsigned char *mk = malloc((size_t)max_ids);
    stream st = { 0 };
    tw_atomic_file txt;
    snprintf(path[2], sizeof path[2], "%.4000s/train.txt", outdir);
    if (!have || !story || !ids || !mk) die(1, "out of memory for %s", "the examples");
    if (tw_atomic_open(&txt, path[2], "w") != TW_OK) die(1, "%s: cannot create it", path[2]);
    while (kept < (long)W * per_word) {
        if (++sampled > MAX_SAMPLED_STORIES) die(1, "gave up after %s stories: a word is too rare; lower --per-word", "100000");
        if (!sample_story(story, &s, &m, &tok, &sp)) continue;
        int w = 0;
        while (w < W && (have[w] >= per_word || !tw_text_has_word(story, tw_sft_train_words[w]))) w++;
        if (w == W) continue;
        tw_sft_prompt(prompt, sizeof prompt, tw_sft_train_words[w]);
        int n = 0;
        if (tw_chat_encode(ids, mk, &n, max_ids, &gtok, prompt, story) != TW_OK) die(1, "cannot encode a story%s", "");
        push_example(&st, ids, mk, n);
        char line[STORY_TEXT_MAX + 256];
        tw_chat_format(line, sizeof line, prompt, story);
        fprintf(txt.f, "%s\n", line);
        have[w]++;
        kept++;
    }
    char out_path[4200];
    snprintf(out_path, sizeof out_path, "%.4000s/train.bin", outdir);
    if (tw_tokens_write(out_path, st.tok, st.n, err, sizeof err) != TW_OK) die(1, "%s", err);
    snprintf(out_path, sizeof out_path, "%.4000s/train_mask.bin", outdir);
    if (!write_bytes(out_path, st.mask, st.n)) die(1, "%s: write failed", out_path);
    if (tw_atomic_commit(&txt, 1) != TW_OK) die(1, "%s: write failed", path[2]);
    long counted = 0;
    for (long i = 0; i < st.n; i++) counted += st.mask[i];
    printf("make_sft: %ld examples (%ld per word, %d train words) from %ld sampled stories (seed %llu); "
           "%ld tokens, %ld counted by the mask, in %s/\n", kept, per_word, W, sampled, seed, st.n, counted, outdir);
    printf("make_sft: %s and %s: vocabulary %d -> %d (%s %s %s)\n", path[1], path[0], m.cfg.vocab, g.cfg.vocab,
           specials[0], specials[1], specials[2]);
    free(have); free(story); free(ids); free(mk); free(st.tok); free(st.mask);
    tw_sampler_free(&sp);
    tw_model_state_free(&s);
    tw_tokenizer_free(&gtok);
    tw_tokenizer_free(&tok);
    tw_model_free(&g);
    tw_model_free(&m);
    return 0;
}
