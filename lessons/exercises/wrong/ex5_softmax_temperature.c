// Wrong attempt at exercise 5 (make test builds it and requires the checker to reject it).
// The mistake: no max subtraction: exp(1000 / 0.5) overflows to inf and inf / inf is NaN.
// The checker says: does exp overflow?
#include <math.h>
#include "concepts.h"

void ex_softmax_temperature(float *y, const float *x, int n, float temperature) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) { y[i] = expf(x[i] / temperature); sum += y[i]; }
    for (int i = 0; i < n; i++) y[i] = sum > 0.0 ? (float)(y[i] / sum) : 0.0f;
}
