// Wrong attempt at exercise 21 (make test builds it and requires the checker to reject it).
// The mistake: each beam extended only by its own best token, as `width` separate greedy
// searches started from the best first tokens: the best `width` of all candidates may be two
// children of the same beam.
// The checker says: each beam's best child misses
#include <stdlib.h>
#include <string.h>
#include "concepts.h"

int ex_beam_search(int *out, float *out_logprob, const int *prompt, int n_prompt, int steps,
                   int width, int V, ex_next_logprobs next, void *ctx) {
    const int L = n_prompt + steps;
    int *seq = calloc((size_t)width * L, sizeof *seq);
    float *score = calloc((size_t)width, sizeof *score), *lp = malloc((size_t)V * sizeof *lp);
    if (!seq || !score || !lp) { free(seq); free(score); free(lp); return -1; }
    int live = steps > 0 ? (width < V ? width : V) : 1;
    for (int k = 0; k < live; k++) memcpy(seq + k * L, prompt, (size_t)n_prompt * sizeof *seq);
    if (steps > 0) {   // the first step: the best `live` tokens after the prompt, one per beam
        next(lp, prompt, n_prompt, ctx);
        for (int k = 0; k < live; k++) {
            int best = -1;
            for (int t = 0; t < V; t++) {
                int used = 0;
                for (int j = 0; j < k; j++) used |= seq[j * L + n_prompt] == t;
                if (!used && (best < 0 || lp[t] > lp[best])) best = t;
            }
            seq[k * L + n_prompt] = best;
            score[k] = lp[best];
        }
    }
    for (int step = 1; step < steps; step++)
        for (int k = 0; k < live; k++) {
            next(lp, seq + k * L, n_prompt + step, ctx);
            int best = 0;
            for (int t = 1; t < V; t++) if (lp[t] > lp[best]) best = t;
            seq[k * L + n_prompt + step] = best;
            score[k] += lp[best];
        }
    int win = 0;
    for (int k = 1; k < live; k++) if (score[k] > score[win]) win = k;
    memcpy(out, seq + win * L + n_prompt, (size_t)steps * sizeof *out);
    *out_logprob = steps > 0 ? score[win] : 0.0f;
    free(seq); free(score); free(lp);
    return 0;
}
