// Exercise 26, a classic wrong attempt (make test-exercise-wrong-attempts expects the checker to
// reject it): weight decay as L2, added to the gradient (Adam, not AdamW), so Adam's
// normalisation turns the decay into a step of its own.
#include <math.h>
#include "concepts.h"

void ex_adamw_step(float *param, float *m, float *v, const float *grad, long n, int step, float lr,
                   float beta1, float beta2, float eps, float weight_decay, int decays) {
    const double bc1 = 1.0 - pow(beta1, step), bc2 = 1.0 - pow(beta2, step);
    const double wd = decays ? weight_decay : 0.0;
    for (long i = 0; i < n; i++) {
        const double g = grad[i] + wd * param[i];
        m[i] = (float)(beta1 * (double)m[i] + (1.0 - beta1) * g);
        v[i] = (float)(beta2 * (double)v[i] + (1.0 - beta2) * g * g);
        param[i] = (float)(param[i] - lr * (m[i] / bc1) / (sqrt(v[i] / bc2) + eps));
    }
}
