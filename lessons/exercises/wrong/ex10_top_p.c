// Wrong attempt at exercise 10 (make test builds it and requires the checker to reject it).
// The mistake: the nucleus taken in id order, without sorting by probability first.
// The checker says: sort, largest first
#include "concepts.h"

int ex_top_p(const float *probs, int n, float p, float u) {
    const float cutoff = n > 1 ? (1.0f - p) / (float)(n - 1) : 0.0f;
    int last = n - 1;
    float mass = 0.0f;
    for (int i = 0; i < n; i++) {
        if (probs[i] < cutoff) continue;
        mass += probs[i];
        if (mass > p) { last = i; break; }
    }
    float r = u * mass, cdf = 0.0f;
    for (int i = 0; i <= last; i++) {
        if (probs[i] < cutoff) continue;
        cdf += probs[i];
        if (r < cdf) return i;
    }
    return last;
}
