// Exercise 12, a worked answer: count the rows with a target, then per row a stable softmax
// minus the one-hot, divided by that count.
#include <math.h>
#include "concepts.h"

void ex_cross_entropy_backward(float *dlogits, const float *logits, const int *targets, int T, int V) {
    int n = 0;
    for (int t = 0; t < T; t++) n += targets[t] != -100;
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
            d[v] = (float)((exp((double)z[v] - mx) / sum - (v == targets[t])) / n);
    }
}
