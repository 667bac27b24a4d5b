// fd_central.c: see fd_central.h.
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include "fd_central.h"

double *fd_to_double(const float *a, long n) {
    double *d = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    for (long i = 0; i < n; i++) d[i] = a[i];
    return d;
}

double fd_central_grads(float *want[], double *const p[], const long n[], int n_tensors, fd_objective L,
                        void *ctx) {
    double scale = 0.0;
    for (int j = 0; j < n_tensors; j++) {
        want[j] = tt_zeros(n[j]);
        for (long i = 0; i < n[j]; i++) {
            const double keep = p[j][i], h = 1e-5 * fmax(1.0, fabs(keep));
            p[j][i] = keep + h;
            const double up = L(p, ctx);
            p[j][i] = keep - h;
            const double dn = L(p, ctx);
            p[j][i] = keep;
            want[j][i] = (float)((up - dn) / (2 * h));
            scale = fmax(scale, fabs(want[j][i]));
        }
    }
    return scale;
}
