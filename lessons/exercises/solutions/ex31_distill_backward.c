// Exercise 31, a worked answer: three stable softmaxes per counted row, then the formula.
#include <math.h>
#include "concepts.h"

// out = softmax(z / tau) of one row (V <= 128 here), in double.
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
            d[v] = (float)((a * tau * (q[v] - p[v]) + (1.0 - a) * (s1[v] - (v == targets[t]))) / n);
    }
}
