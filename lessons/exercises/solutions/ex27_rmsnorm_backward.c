// Exercise 27, a worked answer: rms as the forward computes it, then the mean of g * xhat, then
// each element.
#include <math.h>
#include "concepts.h"

void ex_rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w,
                         int C, float eps) {
    double ss = 0.0;
    for (int i = 0; i < C; i++) ss += (double)x[i] * x[i];
    const double rms = sqrt(ss / C + eps);
    double mean_gx = 0.0;   // mean of g * xhat, g = dy * w
    for (int i = 0; i < C; i++) mean_gx += (double)dy[i] * w[i] * (x[i] / rms);
    mean_gx /= C;
    for (int i = 0; i < C; i++) {
        const double xhat = x[i] / rms;
        dw[i] = (float)(dy[i] * xhat);
        dx[i] = (float)(((double)dy[i] * w[i] - xhat * mean_gx) / rms);
    }
}
