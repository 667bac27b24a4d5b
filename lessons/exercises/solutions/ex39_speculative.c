// Exercise 39, a worked answer: accept with u * q[x] < p[x]; else walk the renormalised residual.
#include "concepts.h"

// The first token whose running sum of w (V) exceeds u; the last token if rounding leaves the
// total just below u.
static int draw(const float *w, int V, float u) {
    float sum = 0.0f;
    for (int i = 0; i < V; i++) {
        sum += w[i];
        if (u < sum) return i;
    }
    return V - 1;
}

int ex_spec_step(const float *p, const float *q, int V, int x, float u_accept, float u_resid) {
    if (u_accept * q[x] < p[x]) return x;   // u < p/q, without dividing by a q of 0
    float r[64];                            // the residual (V <= 64 here)
    double total = 0.0;
    for (int i = 0; i < V; i++) {
        r[i] = p[i] > q[i] ? p[i] - q[i] : 0.0f;
        total += r[i];
    }
    if (total <= 0.0) return draw(p, V, u_resid);
    for (int i = 0; i < V; i++) r[i] = (float)(r[i] / total);
    return draw(r, V, u_resid);
}
