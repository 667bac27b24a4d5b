// Exercise 18, a worked answer: AdamW, each element in double.
#include <math.h>
#include "concepts.h"

void ex_adamw_step(float *p, float *m, float *v, const float *g, long n, int step, float lr,
                   float beta1, float beta2, float eps, float wd) {
    const double c1 = 1.0 - pow(beta1, step), c2 = 1.0 - pow(beta2, step);   // bias corrections
    for (long i = 0; i < n; i++) {
        double pi = (double)p[i] * (1.0 - (double)lr * wd);                 // decoupled decay
        double mi = beta1 * (double)m[i] + (1.0 - beta1) * g[i];
        double vi = beta2 * (double)v[i] + (1.0 - beta2) * (double)g[i] * g[i];
        pi -= lr * (mi / c1) / (sqrt(vi / c2) + eps);
        p[i] = (float)pi; m[i] = (float)mi; v[i] = (float)vi;
    }
}
