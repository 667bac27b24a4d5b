// Wrong attempt at exercise 18 (make test builds it and requires the checker to reject it).
// The mistake: no bias correction: m and v, started at 0, are used as they are, so the first
// steps are too small (at step 1 by the factor sqrt(1 - beta2) / (1 - beta1) = 2.2 here).
// The checker says: bias correction
#include <math.h>
#include "concepts.h"

void ex_adamw_step(float *p, float *m, float *v, const float *g, long n, int step, float lr,
                   float beta1, float beta2, float eps, float wd) {
    (void)step;
    for (long i = 0; i < n; i++) {
        p[i] *= 1.0f - lr * wd;
        m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        p[i] -= lr * m[i] / (sqrtf(v[i]) + eps);
    }
}
