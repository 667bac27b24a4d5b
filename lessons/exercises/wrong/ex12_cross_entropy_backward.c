// Wrong attempt at exercise 12 (make test builds it and requires the checker to reject it).
// The mistake: the mean taken over all T rows, ignored ones included (divide by T, not by the
// number of counted rows).
// The checker says: not T = 4
#include <math.h>
#include "concepts.h"

void ex_cross_entropy_backward(float *dlogits, const float *logits, const int *targets, int T, int V) {
    for (int t = 0; t < T; t++) {
        float *d = dlogits + (long)t * V;
        const float *z = logits + (long)t * V;
        if (targets[t] == -100) {
            for (int v = 0; v < V; v++) d[v] = 0.0f;
            continue;
        }
        float mx = z[0];
        for (int v = 1; v < V; v++) if (z[v] > mx) mx = z[v];
        double sum = 0.0;
        for (int v = 0; v < V; v++) sum += exp((double)z[v] - mx);
        for (int v = 0; v < V; v++)
            d[v] = (float)((exp((double)z[v] - mx) / sum - (v == targets[t])) / T);
    }
}
