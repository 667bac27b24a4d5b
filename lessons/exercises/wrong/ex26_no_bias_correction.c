// Exercise 26, a classic wrong attempt (make test-exercise-wrong-attempts expects the checker to
// reject it): Adam without the bias correction, so the early steps have the wrong size.
#include <math.h>
#include "concepts.h"

void ex_adamw_step(float *param, float *m, float *v, const float *grad, long n, int step, float lr,
                   float beta1, float beta2, float eps, float weight_decay, int decays) {
    (void)step;
    const double wd = decays ? weight_decay : 0.0;
    for (long i = 0; i < n; i++) {
        const double g = grad[i];
        m[i] = (float)(beta1 * (double)m[i] + (1.0 - beta1) * g);
        v[i] = (float)(beta2 * (double)v[i] + (1.0 - beta2) * g * g);
        param[i] = (float)(param[i] * (1.0 - lr * wd) - lr * m[i] / (sqrt((double)v[i]) + eps));
    }
}
