// Exercise 27, a classic wrong attempt (make test-exercise-wrong-attempts expects the checker to
// reject it): rms treated as a constant, so dx misses the path through rms.
// The checker says: the mean(g * xhat) term is the path through rms
#include <math.h>
#include "concepts.h"

void ex_rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w,
                         int C, float eps) {
    double ss = 0.0;
    for (int i = 0; i < C; i++) ss += (double)x[i] * x[i];
    const double rms = sqrt(ss / C + eps);
    for (int i = 0; i < C; i++) {
        dw[i] = (float)(dy[i] * (x[i] / rms));
        dx[i] = (float)((double)dy[i] * w[i] / rms);
    }
}
