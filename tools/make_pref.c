// make_pref.c: a preference set made here, with no download (make pref-data). For each prompt of
// the instruction set, "a story about WORD" for the words of tw_sft_train_words (in the chat
// template if the tokenizer holds its special tokens; tools/pref_common.h), samples completions
// from the model (temperature 1, the whole distribution, a fixed seed), judges each by the rule
// "the story contains WORD" and pairs a completion that satisfies it (chosen) with one that does
// not (rejected). Writes the pairs file of ./train --dpo (lib/train/pairs.h) atomically, and
// prints each word's count.
//
//   make_pref MODEL.bin TOKENIZER.bin OUT.bin [--samples N] [--pairs K] [--len L] [--seed S]
//     --samples N   completions sampled per word (default 64)
//     --pairs K     at most K pairs per word (default 16); fewer when the samples hold fewer of
//                   either kind
//     --len L       tokens per completion at most (default 48)
//     --seed S      the sampler's seed (default 30)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/same_file.h"
#include "pref_common.h"
#include "simd/simd.h"
#include "train/checkpoint.h"
#include "train/chat_template.h"
#include "train/pairs.h"

static int usage(const char *why, const char *what) {
    fprintf(stderr, "make_pref: %s%s (usage: make_pref MODEL.bin TOKENIZER.bin OUT.bin [--samples N] [--pairs K] "
            "[--len L] [--seed S])\n", why, what);
    return 2;
}

static int parse_whole(long *v, const char *s, long lo, long hi) {
    char *end;
    errno = 0;
    const long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > hi) return 0;
    *v = x;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 4) return usage("needs a model, a tokenizer and an output path", "");
    const char *model_path = argv[1], *tok_path = argv[2], *out_path = argv[3];
    long samples = 64, per_word = 16, len = 48, seed = 30;
    for (int i = 4; i < argc; i += 2) {
        long *dst = !strcmp(argv[i], "--samples") ? &samples : !strcmp(argv[i], "--pairs") ? &per_word
                  : !strcmp(argv[i], "--len") ? &len : !strcmp(argv[i], "--seed") ? &seed : NULL;
        if (!dst) return usage("unknown flag ", argv[i]);
        if (i + 1 >= argc || !parse_whole(dst, argv[i + 1], dst == &seed ? 1 : 1, dst == &seed ? 2000000000L : 4096))
            return usage("a whole number from 1 to 4096 (the seed: to 2e9) must follow ", argv[i]);
    }
    if (tw_same_file(out_path, model_path) || tw_same_file(out_path, tok_path))
        return usage("the output is one of the inputs: give another path for ", out_path);
    tw_simd_init(NULL);
    char err[512] = "";
    tw_model m;
    if (tw_model_load_file(&m, model_path, err, sizeof err) != TW_OK) {
        fprintf(stderr, "make_pref: %s\n", err);
        return 1;
    }
    tw_tokenizer tok;
    if (tw_tokenizer_load(&tok, tok_path, m.cfg.vocab, err, sizeof err) != TW_OK) {
        fprintf(stderr, "make_pref: %s\n", err);
        tw_model_free(&m);
        return 1;
    }
    int prompt[64];
    int *done = malloc((size_t)samples * len * sizeof *done), *n_done = malloc((size_t)samples * sizeof *n_done);
    char *ok = malloc((size_t)samples);
    tw_model_state s;
    tw_sampler sp;
    tw_pairs pairs;
    memset(&pairs, 0, sizeof pairs);
    if (!done || !n_done || !ok || tw_model_state_init(&s, &m, 64, 64 + (int)len) != TW_OK ||
        tw_sampler_init(&sp, m.cfg.vocab, 1.0f, 0.0f, (uint64_t)seed) != TW_OK) {
        fprintf(stderr, "make_pref: out of memory\n");
        return 1;
    }
    long total_ok = 0, total = 0;
    printf("make_pref: rule: the completion contains WORD (a whole word, any case); %ld samples of up to %ld "
           "tokens per word, temperature 1, seed %ld\n", samples, len, seed);
    const int end = tw_chat_end_token(&tok);   // -1 for a plain model: its stories end at BOS
    printf("make_pref: prompts: %s\n", end >= 0 ? "the chat template, BOS <|user|>a story about WORD<|assistant|>, "
           "answers end at <|end|>" : "plain text, BOS \"a story about WORD\" (the tokenizer has no chat tokens)");
    for (int w = 0; w < tw_sft_n_train_words; w++) {
        const char *word = tw_sft_train_words[w];
        const int np = pref_prompt_tokens(prompt, 64, &tok, word);
        if (np < 1) { fprintf(stderr, "make_pref: cannot encode the prompt for '%s'\n", word); return 1; }
        int n_ok = 0;
        for (long k = 0; k < samples; k++) {
            int *c = done + k * len;
            n_done[k] = pref_sample(c, (int)len, &s, &m, &sp, prompt, np, end);
            if (n_done[k] < 0) { fprintf(stderr, "make_pref: sampling failed\n"); return 1; }
            ok[k] = n_done[k] > 0 && pref_rule(&tok, prompt[np - 1], c, n_done[k], word);
            n_ok += ok[k];
        }
        // Pair the i-th satisfying completion with the i-th other one (both non-empty).
        long made = 0, a = 0, b = 0;
        while (made < per_word) {
            while (a < samples && !ok[a]) a++;
            while (b < samples && (ok[b] || n_done[b] == 0)) b++;
            if (a >= samples || b >= samples) break;
            if (tw_pairs_add(&pairs, prompt, np, done + a * len, n_done[a], done + b * len, n_done[b]) != TW_OK) {
                fprintf(stderr, "make_pref: out of memory for the pairs\n");
                return 1;
            }
            made++; a++; b++;
        }
        printf("  %-8s %3d of %ld samples satisfy the rule (%5.1f %%): %ld pairs\n", word, n_ok, samples,
               100.0 * n_ok / samples, made);
        total_ok += n_ok;
        total += samples;
    }
    printf("make_pref: %ld of %ld samples satisfy the rule (%.1f %%); %ld pairs\n", total_ok, total,
           100.0 * total_ok / total, pairs.n);
    int rc = 0;
    if (pairs.n == 0) {
        fprintf(stderr, "make_pref: no pair: no word had both kinds of completion; sample more (--samples)\n");
        rc = 1;
    } else if (tw_pairs_write(out_path, &pairs, err, sizeof err) != TW_OK) {
        fprintf(stderr, "make_pref: %s\n", err);
        rc = 1;
    } else {
        printf("make_pref: wrote %s\n", out_path);
    }
    tw_pairs_free(&pairs);
    tw_sampler_free(&sp);
    tw_model_state_free(&s);
    free(done); free(n_done); free(ok);
    tw_tokenizer_free(&tok);
    tw_model_free(&m);
    return rc;
}
