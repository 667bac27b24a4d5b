// beam.c: beam search (beam.h). Candidates are kept in a small array sorted by score, best first;
// a new candidate is inserted only if it beats the worst kept one, so the step costs
// O(width x V x width) comparisons at most, fine for the widths used in teaching (1 to 16).
#include <stdlib.h>
#include <string.h>
#include "decode/beam.h"

tw_status tw_beam_init(tw_beam *b, int width, int V, int max_len) {
    memset(b, 0, sizeof *b);
    if (width < 1 || V < 1 || max_len < 1) return TW_ERR_ARG;
    b->width = width; b->V = V; b->max_len = max_len;
    size_t seq = (size_t)width * (size_t)max_len;
    b->tokens = malloc(seq * sizeof *b->tokens);
    b->next_tokens = malloc(seq * sizeof *b->next_tokens);
    b->scores = malloc((size_t)width * sizeof *b->scores);
    b->next_scores = malloc((size_t)width * sizeof *b->next_scores);
    b->logprobs = malloc((size_t)V * sizeof *b->logprobs);
    if (!b->tokens || !b->next_tokens || !b->scores || !b->next_scores || !b->logprobs) {
        tw_beam_free(b);
        return TW_ERR_NOMEM;
    }
    return TW_OK;
}

void tw_beam_free(tw_beam *b) {
    free(b->tokens); free(b->next_tokens); free(b->scores); free(b->next_scores); free(b->logprobs);
    memset(b, 0, sizeof *b);
}

// One candidate of a step: beam `from` extended by `token`, with total score `score`.
typedef struct { float score; int from, token; } candidate;

// Inserts c into best (n kept, capacity cap, sorted best first) if it is good enough. A tie with
// a kept candidate goes after it: candidates arrive in (beam, token) order, so earlier wins.
static void keep_if_better(candidate *best, int *n, int cap, candidate c) {
    if (*n == cap && !(c.score > best[cap - 1].score)) return;
    int i = *n < cap ? (*n)++ : cap - 1;             // the slot that frees up
    while (i > 0 && c.score > best[i - 1].score) { best[i] = best[i - 1]; i--; }
    best[i] = c;
}

tw_status tw_beam_search(int *out, float *out_logprob, tw_beam *b, const int *prompt, int n_prompt,
                         int steps, tw_next_logprobs_fn next, void *ctx) {
    if (n_prompt < 1 || steps < 0 || n_prompt + steps > b->max_len) return TW_ERR_ARG;
    candidate *best = malloc((size_t)b->width * sizeof *best);   // (width)
    if (!best) return TW_ERR_NOMEM;
    const int L = b->max_len;
    memcpy(b->tokens, prompt, (size_t)n_prompt * sizeof *prompt);
    b->scores[0] = 0.0f;
    int live = 1;                                   // beams in use: 1, then up to width
    tw_status st = TW_OK;
    for (int step = 0; step < steps && st == TW_OK; step++) {
        const int len = n_prompt + step;
        int n_best = 0;
        for (int k = 0; k < live && st == TW_OK; k++) {
            st = next(b->logprobs, b->tokens + (size_t)k * L, len, ctx);
            for (int t = 0; t < b->V && st == TW_OK; t++)
                keep_if_better(best, &n_best, b->width,
                               (candidate){ b->scores[k] + b->logprobs[t], k, t });
        }
        for (int j = 0; j < n_best; j++) {          // the kept candidates become the new beams
            int *seq = b->next_tokens + (size_t)j * L;
            memcpy(seq, b->tokens + (size_t)best[j].from * L, (size_t)len * sizeof *seq);
            seq[len] = best[j].token;
            b->next_scores[j] = best[j].score;
        }
        int *tt = b->tokens; b->tokens = b->next_tokens; b->next_tokens = tt;
        float *ts = b->scores; b->scores = b->next_scores; b->next_scores = ts;
        live = n_best;
    }
    free(best);
    if (st != TW_OK) return st;
    memcpy(out, b->tokens + n_prompt, (size_t)steps * sizeof *out);   // beam 0 is the best
    if (out_logprob) *out_logprob = b->scores[0];
    return TW_OK;
}
