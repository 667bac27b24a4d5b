// Wrong attempt at exercise 39 (make test builds it and requires the checker to reject it).
// The mistake: on rejection it draws from the target's p instead of the
// residual max(0, p - q). The tokens the draft over-proposed then come out too often.
// The checker says: not from p
#include "concepts.h"

int ex_spec_step(const float *p, const float *q, int V, int x, float u_accept, float u_resid) {
    if (u_accept * q[x] < p[x]) return x;
    float sum = 0.0f;
    for (int i = 0; i < V; i++) {
        sum += p[i];
        if (u_resid < sum) return i;
    }
    return V - 1;
}
