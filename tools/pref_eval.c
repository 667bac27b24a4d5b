// pref_eval.c: measures what preference training changed (make dpo-eval; docs/preferences.md).
// For each prompt "a story about WORD" (tools/pref_common.h) it samples completions from the
// reference (before) and from the trained model (after), with the same seed, temperature 1 and the
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
    printf("  %-8s %12s %12s\n", "word", "before", "after");
    long ok[2] = { 0, 0 }, total = 0, tokens = 0;
    double kl_sum = 0.0;
    for (int w = 0; w < PREF_N_WORDS; w++) {
        const char *word = PREF_WORDS[w];
        const int np = pref_prompt_tokens(seq, 64, &tok, word);
        if (np < 1) { fprintf(stderr, "pref_eval: cannot encode the prompt for '%s'\n", word); return 1; }
        int n_ok[2] = { 0, 0 };
        for (int which = 0; which < 2; which++) {   // 0: the reference (before), 1: the trained model
            const tw_model *m = which ? &after : &ref;
            tw_model_state st;
            tw_sampler sp;
            if (tw_model_state_init(&st, m, 64, cap) != TW_OK ||
                tw_sampler_init(&sp, m->cfg.vocab, 1.0f, 0.0f, (uint64_t)seed + (uint64_t)w) != TW_OK) {
                fprintf(stderr, "pref_eval: out of memory\n");
                return 1;
            }
            for (long k = 0; k < samples; k++) {
                const int n = pref_sample(seq + np, (int)len, &st, m, &sp, seq, np);
                if (n < 0) { fprintf(stderr, "pref_eval: sampling failed\n"); return 1; }
                n_ok[which] += n > 0 && pref_rule(&tok, seq[np - 1], seq + np, n, word);
                if (which == 1 && n > 0) {
                    kl_sum += completion_kl(&sa, &sr, &after, &ref, seq, np, n);
                    tokens += n;
                }
            }
            tw_sampler_free(&sp);
            tw_model_state_free(&st);
        }
        printf("  %-8s %5.1f %% %9.1f %%\n", word, 100.0 * n_ok[0] / samples, 100.0 * n_ok[1] / samples);
        ok[0] += n_ok[0];
        ok[1] += n_ok[1];
        total += samples;
    }
    const double before = (double)ok[0] / total, after_rate = (double)ok[1] / total;
    printf("pref_eval: before %ld of %ld = %.1f %%, after %ld of %ld = %.1f %%: x%.2f\n", ok[0], total, 100 * before,
           ok[1], total, 100 * after_rate, before > 0 ? after_rate / before : INFINITY);
    printf("pref_eval: KL(after || before) on the trained model's samples: %.4f nats per completion, %.4f per token "
           "(%ld completions, %ld tokens)\n", kl_sum / total, tokens ? kl_sum / tokens : 0.0, total, tokens);
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
