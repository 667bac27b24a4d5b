// pref_eval.c: measures what preference training changed (make dpo-eval; docs/preferences.md).
// For each prompt of the instruction set, "a story about WORD" (tools/pref_common.h: in the chat
// template if the tokenizer holds its special tokens), first for the words the pairs were made for
// (tw_sft_train_words: the rates and the goal), then for the held-out words (tw_sft_heldout_words:
// reported apart, they show whether the change reaches prompts no pair asked), it samples
// completions from the reference (before) and from the trained model (after), with the same seed, temperature 1 and the
// whole distribution, and counts those that satisfy the rule (the story contains WORD). It also
// prints the KL the training paid: for each completion sampled from the trained model pi, the sum
// over its positions of KL(pi(. | prefix) || pi_ref(. | prefix)), exact over the vocabulary, in
// nats, averaged over the completions (the sequence-level KL(pi || pi_ref) that DPO's beta bounds).
//
//   pref_eval --model AFTER.bin --ref BEFORE.bin -z TOKENIZER.bin [--samples N] [--len L] [--seed S]
//     --samples N   completions per word and model (default 64)   --len L   tokens at most (48)
//     --seed S      the sampler's seed (default 31: not make pref-data's 30, so these are fresh samples)
//     --min-ratio R exit 1 (one line) if after / before is below R (make dpo-eval: 2, the goal)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pref_common.h"
#include "simd/simd.h"
#include "train/chat_template.h"
#include "train/checkpoint.h"

static int usage(const char *why, const char *what) {
    fprintf(stderr, "pref_eval: %s%s (usage: pref_eval --model AFTER.bin --ref BEFORE.bin -z TOKENIZER.bin "
            "[--samples N] [--len L] [--seed S])\n", why, what);
    return 2;
}

// KL(p || q) summed over the positions that predict the completion: rows np-1 .. np+n-2 of the
// forward over prompt ++ completion (without its last token). In double.
static double completion_kl(tw_model_state *sp, tw_model_state *sq, const tw_model *p, const tw_model *q,
                            const int *seq, int np, int n) {
    const int T = np + n - 1, V = p->cfg.vocab;
    if (tw_model_forward(sp, p, seq, T, 0) != TW_OK || tw_model_forward(sq, q, seq, T, 0) != TW_OK) return NAN;
    double kl = 0.0;
    for (int t = np - 1; t < T; t++) {
        const float *a = sp->logits + (size_t)t * V, *b = sq->logits + (size_t)t * V;
        double ma = a[0], mb = b[0], za = 0.0, zb = 0.0;
        for (int v = 1; v < V; v++) { if (a[v] > ma) ma = a[v]; if (b[v] > mb) mb = b[v]; }
        for (int v = 0; v < V; v++) { za += exp(a[v] - ma); zb += exp(b[v] - mb); }
        const double la = ma + log(za), lb = mb + log(zb);
        for (int v = 0; v < V; v++) {
            const double lpa = a[v] - la, lpb = b[v] - lb;
            kl += exp(lpa) * (lpa - lpb);
        }
    }
    return kl;
}

// What every word's measurement shares: the two models, the tokenizer, the buffers and the flags;
// kl_sum and tokens add up the KL of the trained model's completions (the pairs' words only).
typedef struct {
    const tw_model *after, *ref;
    const tw_tokenizer *tok;
    tw_model_state *sa, *sr;   // full-sequence states of after and ref (completion_kl)
    int *seq;                  // (cap) the prompt, then the completion
    int cap;
    long samples, len, seed;
    int end;                   // tw_chat_end_token: -1 for a plain model
    double kl_sum;
    long tokens;
} eval_run;

// For each of the n words: samples from the reference (before) and the trained model (after), the
// same seed per word (seed + the word's index), and prints the share that satisfy the rule;
// ok[0], ok[1] add up the counts before and after. with_kl: add the KL of after's completions.
// Returns 0, or 1 after one line on stderr.
static int eval_words(long ok[2], eval_run *r, const char *const *words, int n_words, int with_kl) {
    for (int w = 0; w < n_words; w++) {
        const char *word = words[w];
        const int np = pref_prompt_tokens(r->seq, 64, r->tok, word);
        if (np < 1) { fprintf(stderr, "pref_eval: cannot encode the prompt for '%s'\n", word); return 1; }
        int n_ok[2] = { 0, 0 };
        for (int which = 0; which < 2; which++) {   // 0: the reference (before), 1: the trained model
            const tw_model *m = which ? r->after : r->ref;
            tw_model_state st;
            tw_sampler sp;
            if (tw_model_state_init(&st, m, 64, r->cap) != TW_OK ||
                tw_sampler_init(&sp, m->cfg.vocab, 1.0f, 0.0f, (uint64_t)r->seed + (uint64_t)w) != TW_OK) {
                fprintf(stderr, "pref_eval: out of memory\n");
                return 1;
            }
            for (long k = 0; k < r->samples; k++) {
                const int n = pref_sample(r->seq + np, (int)r->len, &st, m, &sp, r->seq, np, r->end);
                if (n < 0) { fprintf(stderr, "pref_eval: sampling failed\n"); return 1; }
                n_ok[which] += n > 0 && pref_rule(r->tok, r->seq[np - 1], r->seq + np, n, word);
                if (with_kl && which == 1 && n > 0) {
                    r->kl_sum += completion_kl(r->sa, r->sr, r->after, r->ref, r->seq, np, n);
                    r->tokens += n;
                }
            }
            tw_sampler_free(&sp);
            tw_model_state_free(&st);
        }
        printf("  %-8s %5.1f %% %9.1f %%\n", word, 100.0 * n_ok[0] / r->samples, 100.0 * n_ok[1] / r->samples);
        ok[0] += n_ok[0];
        ok[1] += n_ok[1];
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *after_path = NULL, *ref_path = NULL, *tok_path = NULL;
    long samples = 64, len = 48, seed = 31;
    double min_ratio = 0.0;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i];
        if (i + 1 >= argc) return usage("a value must follow ", a);
        const char *v = argv[i + 1];
        if (!strcmp(a, "--model")) after_path = v;
        else if (!strcmp(a, "--ref")) ref_path = v;
        else if (!strcmp(a, "-z")) tok_path = v;
        else if (!strcmp(a, "--min-ratio")) {
            char *end;
            min_ratio = strtod(v, &end);
            if (end == v || *end || !(min_ratio >= 0.0 && min_ratio <= 1e6)) return usage("a ratio >= 0 must follow ", a);
        }
        else {
            long *dst = !strcmp(a, "--samples") ? &samples : !strcmp(a, "--len") ? &len : !strcmp(a, "--seed") ? &seed : NULL;
            if (!dst) return usage("unknown flag ", a);
            char *end;
            errno = 0;
            *dst = strtol(v, &end, 10);
            if (end == v || *end || errno || *dst < 1 || *dst > (dst == &seed ? 2000000000L : 4096))
                return usage("a whole number from 1 to 4096 (the seed: to 2e9) must follow ", a);
        }
    }
    if (!after_path || !ref_path || !tok_path) return usage("needs --model, --ref and -z", "");
    tw_simd_init(NULL);
    char err[512] = "";
    tw_model after, ref;
    tw_tokenizer tok;
    memset(&after, 0, sizeof after);
    memset(&ref, 0, sizeof ref);
    memset(&tok, 0, sizeof tok);
    int bad = tw_model_load_file(&after, after_path, err, sizeof err) != TW_OK ||
              tw_model_load_file(&ref, ref_path, err, sizeof err) != TW_OK;
    if (!bad && after.cfg.vocab != ref.cfg.vocab) {
        snprintf(err, sizeof err, "%s and %s have different vocabularies", after_path, ref_path);
        bad = 1;
    }
    if (!bad) bad = tw_tokenizer_load(&tok, tok_path, after.cfg.vocab, err, sizeof err) != TW_OK;
    if (bad) {
        fprintf(stderr, "pref_eval: %s\n", err);
        tw_model_free(&after);
        tw_model_free(&ref);
        return 1;
    }
    const int cap = 64 + (int)len;
    int *seq = malloc((size_t)cap * sizeof *seq);
    tw_model_state s, sa, sr;
    if (!seq || tw_model_state_init(&s, &after, 64, cap) != TW_OK || tw_model_state_init(&sa, &after, cap, 0) != TW_OK ||
        tw_model_state_init(&sr, &ref, cap, 0) != TW_OK) {
        fprintf(stderr, "pref_eval: out of memory\n");
        return 1;
    }
    printf("pref_eval: rule: the completion contains WORD (a whole word, any case); %ld samples of up to %ld tokens "
           "per word and model, temperature 1, seed %ld\n", samples, len, seed);
    const int end = tw_chat_end_token(&tok);
    printf("pref_eval: prompts: %s\n", end >= 0 ? "the chat template, BOS <|user|>a story about WORD<|assistant|>, "
           "answers end at <|end|>" : "plain text, BOS \"a story about WORD\" (the tokenizer has no chat tokens)");
    eval_run r = { &after, &ref, &tok, &sa, &sr, seq, cap, samples, len, seed, end, 0.0, 0 };
    long ok[2] = { 0, 0 }, held[2] = { 0, 0 };
    printf("  %-8s %12s %12s   (the words of the pairs, tw_sft_train_words)\n", "word", "before", "after");
    if (eval_words(ok, &r, tw_sft_train_words, tw_sft_n_train_words, 1) != 0) return 1;
    printf("  %-8s %12s %12s   (held-out words, tw_sft_heldout_words: no pair asks about them)\n", "word", "before", "after");
    if (eval_words(held, &r, tw_sft_heldout_words, tw_sft_n_heldout_words, 0) != 0) return 1;
    const long total = samples * tw_sft_n_train_words, total_held = samples * tw_sft_n_heldout_words;
    const double before = (double)ok[0] / total, after_rate = (double)ok[1] / total;
    printf("pref_eval: held-out words: before %ld of %ld = %.1f %%, after %ld of %ld = %.1f %%\n", held[0], total_held,
           100.0 * held[0] / total_held, held[1], total_held, 100.0 * held[1] / total_held);
    printf("pref_eval: before %ld of %ld = %.1f %%, after %ld of %ld = %.1f %%: x%.2f\n", ok[0], total, 100 * before,
           ok[1], total, 100 * after_rate, before > 0 ? after_rate / before : INFINITY);
    printf("pref_eval: KL(after || before) on the trained model's samples: %.4f nats per completion, %.4f per token "
           "(%ld completions, %ld tokens)\n", r.kl_sum / total, r.tokens ? r.kl_sum / r.tokens : 0.0, total, r.tokens);
    int rc = 0;
    if (min_ratio > 0.0 && !(after_rate >= min_ratio * before)) {
        fprintf(stderr, "pref_eval: the rate rose x%.2f, below --min-ratio %g: the goal is not met\n",
                before > 0 ? after_rate / before : 0.0, min_ratio);
        rc = 1;
    }
    free(seq);
    tw_model_state_free(&s);
    tw_model_state_free(&sa);
    tw_model_state_free(&sr);
    tw_tokenizer_free(&tok);
    tw_model_free(&after);
    tw_model_free(&ref);
    return rc;
}
