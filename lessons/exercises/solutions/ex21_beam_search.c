// Exercise 21, a worked answer: beams as rows of a table, the best `width` candidates kept in a
// small sorted list (insertion only when strictly better keeps ties in visiting order).
#include <stdlib.h>
#include <string.h>
#include "concepts.h"

typedef struct { float score; int from, token; } candidate;

int ex_beam_search(int *out, float *out_logprob, const int *prompt, int n_prompt, int steps,
                   int width, int V, ex_next_logprobs next, void *ctx) {
    const int L = n_prompt + steps;
    int *seq = malloc((size_t)2 * width * L * sizeof *seq);             // (2, width, L)
    float *score = malloc((size_t)2 * width * sizeof *score), *lp = malloc((size_t)V * sizeof *lp);
    candidate *best = malloc((size_t)width * sizeof *best);
    if (!seq || !score || !lp || !best) { free(seq); free(score); free(lp); free(best); return -1; }
    int *cur = seq, *nxt = seq + width * L;
    float *cur_s = score, *nxt_s = score + width;
    memcpy(cur, prompt, (size_t)n_prompt * sizeof *cur);
    cur_s[0] = 0.0f;
    int live = 1;
    for (int step = 0; step < steps; step++) {
        const int len = n_prompt + step;
        int kept = 0;
        for (int k = 0; k < live; k++) {
            next(lp, cur + k * L, len, ctx);
            for (int t = 0; t < V; t++) {
                candidate c = { cur_s[k] + lp[t], k, t };
                if (kept == width && !(c.score > best[width - 1].score)) continue;
                int i = kept < width ? kept++ : width - 1;
                while (i > 0 && c.score > best[i - 1].score) { best[i] = best[i - 1]; i--; }
                best[i] = c;
            }
        }
        for (int j = 0; j < kept; j++) {
            memcpy(nxt + j * L, cur + best[j].from * L, (size_t)len * sizeof *nxt);
            nxt[j * L + len] = best[j].token;
            nxt_s[j] = best[j].score;
        }
        int *ts = cur; cur = nxt; nxt = ts;
        float *tf = cur_s; cur_s = nxt_s; nxt_s = tf;
        live = kept;
    }
    memcpy(out, cur + n_prompt, (size_t)steps * sizeof *out);
    *out_logprob = cur_s[0];
    free(seq); free(score); free(lp); free(best);
    return 0;
}
