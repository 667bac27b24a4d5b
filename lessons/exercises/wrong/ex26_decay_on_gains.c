// Exercise 26, a classic wrong attempt (make test-exercise-wrong-attempts expects the checker to
// reject it): decoupled decay applied to every tensor, norm gains included (decays ignored).
#include <math.h>
#include "concepts.h"

void ex_adamw_step(float *param, float *m, float *v, const float *grad, long n, int step, float lr,
                   float beta1, float beta2, float eps, float weight_decay, int decays) {
    (void)decays;
    const double bc1 = 1.0 - pow(beta1, step), bc2 = 1.0 - pow(beta2, step);
    for (long i = 0; i < n; i++) {
        const double g = grad[i];
        m[i] = (float)(beta1 * (double)m[i] + (1.0 - beta1) * g);
        v[i] = (float)(beta2 * (double)v[i] + (1.0 - beta2) * g * g);
        param[i] = (float)(param[i] * (1.0 - lr * weight_decay) - lr * (m[i] / bc1) / (sqrt(v[i] / bc2) + eps));
    }
}
