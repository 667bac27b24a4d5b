// Exercise 31, a classic wrong attempt (make test-concept-exercises checks the checker rejects it):
// the soft term's gradient taken as a tau^2 (q - p), copying the loss's factor and forgetting that
// z / tau brings a 1 / tau of its own (chain rule). Right at tau = 1, wrong by a factor tau elsewhere.
// The checker says: a = 1, tau = 2: element [0]
#include <math.h>
#include "concepts.h"

static void soft(double *out, const float *z, int V, double tau) {
    double max = z[0], sum = 0.0;
    for (int v = 1; v < V; v++) if (z[v] > max) max = z[v];
    for (int v = 0; v < V; v++) sum += out[v] = exp((z[v] - max) / tau);
    for (int v = 0; v < V; v++) out[v] /= sum;
}

void ex_distill_backward(float *dlogits, const float *student, const float *teacher,
                         const int *targets, int T, int V, float a, float tau) {
    int n = 0;
    for (int t = 0; t < T; t++) n += targets[t] != -100;
    for (int t = 0; t < T; t++) {
        float *d = dlogits + (long)t * V;
        if (targets[t] == -100) {
            for (int v = 0; v < V; v++) d[v] = 0.0f;
            continue;
        }
        double p[128], q[128], s1[128];
        soft(p, teacher + (long)t * V, V, tau);
        soft(q, student + (long)t * V, V, tau);
        soft(s1, student + (long)t * V, V, 1.0);
        for (int v = 0; v < V; v++)
            d[v] = (float)((a * tau * tau * (q[v] - p[v]) + (1.0 - a) * (s1[v] - (v == targets[t]))) / n);
    }
}
