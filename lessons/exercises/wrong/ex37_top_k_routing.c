// Exercise 37, a classic wrong attempt (make test shows the checker rejects it): the scan keeps
// the LAST of equal probabilities (>= instead of >), so ties go to the higher expert index.
// Everything else is right, which is why only the checker's tie case catches it.
// The checker says: (lower index first)
#include <math.h>
#include "concepts.h"

void ex_top_k_route(int *sel, float *w, const float *logits, int E, int k) {
    float p[256];
    float mx = logits[0], sum = 0.0f;
    for (int e = 1; e < E; e++) if (logits[e] > mx) mx = logits[e];
    for (int e = 0; e < E; e++) { p[e] = expf(logits[e] - mx); sum += p[e]; }
    for (int e = 0; e < E; e++) p[e] /= sum;
    float chosen_sum = 0.0f;
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int e = 0; e < E; e++) {
            int taken = 0;
            for (int i = 0; i < j; i++) taken |= sel[i] == e;
            if (!taken && (best < 0 || p[e] >= p[best])) best = e;
        }
        sel[j] = best;
        chosen_sum += p[best];
    }
    for (int j = 0; j < k; j++) w[j] = p[sel[j]] / chosen_sum;
}
