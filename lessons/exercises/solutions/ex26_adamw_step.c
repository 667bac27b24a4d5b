// Exercise 26, a worked answer: the raw moments stored, their bias-corrected copies divided, the
// decay applied to the weight itself (and only where decays says so).
#include <math.h>
#include "concepts.h"

void ex_adamw_step(float *param, float *m, float *v, const float *grad, long n, int step, float lr,
                   float beta1, float beta2, float eps, float weight_decay, int decays) {
    const double bc1 = 1.0 - pow(beta1, step), bc2 = 1.0 - pow(beta2, step);
    const double wd = decays ? weight_decay : 0.0;
    for (long i = 0; i < n; i++) {
        const double g = grad[i];
        m[i] = (float)(beta1 * (double)m[i] + (1.0 - beta1) * g);
        v[i] = (float)(beta2 * (double)v[i] + (1.0 - beta2) * g * g);
        const double m_hat = m[i] / bc1, v_hat = v[i] / bc2;
        param[i] = (float)(param[i] * (1.0 - lr * wd) - lr * m_hat / (sqrt(v_hat) + eps));
    }
}
