// Exercise 10, a worked answer: sort ids by probability, cut the nucleus, walk it with u.
#include <stdlib.h>
#include "concepts.h"

static const float *g_probs;   // qsort has no context argument in C11

static int by_prob_desc(const void *a, const void *b) {
    int i = *(const int *)a, j = *(const int *)b;
    if (g_probs[i] != g_probs[j]) return g_probs[i] < g_probs[j] ? 1 : -1;
    return i - j;
}

int ex_top_p(const float *probs, int n, float p, float u) {
    int *ids = malloc((size_t)n * sizeof *ids);   // (n)
    if (!ids) return 0;
    const float cutoff = n > 1 ? (1.0f - p) / (float)(n - 1) : 0.0f;
    int m = 0;
    for (int i = 0; i < n; i++) if (probs[i] >= cutoff) ids[m++] = i;
    g_probs = probs;
    qsort(ids, (size_t)m, sizeof *ids, by_prob_desc);
    int last = m - 1;
    float mass = 0.0f;
    for (int i = 0; i < m; i++) {
        mass += probs[ids[i]];
        if (mass > p) { last = i; break; }
    }
    float r = u * mass, cdf = 0.0f;
    int pick = ids[last];
    for (int i = 0; i <= last; i++) {
        cdf += probs[ids[i]];
        if (r < cdf) { pick = ids[i]; break; }
    }
    free(ids);
    return pick;
}
