// Exercise 5, a worked answer: softmax(x / tau) = exp((x - max) / tau) / sum, because subtracting
// the same number from every logit multiplies numerator and denominator by the same factor. Then
// every exp() argument is <= 0 and nothing overflows.
#include <math.h>
#include "concepts.h"

void ex_softmax_temperature(float *y, const float *x, int n, float temperature) {
    float max = -INFINITY;
    for (int i = 0; i < n; i++) if (x[i] > max) max = x[i];
    if (max == -INFINITY) {                 // every entry masked: no distribution, return zeros
        for (int i = 0; i < n; i++) y[i] = 0.0f;
        return;
    }
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        y[i] = expf((x[i] - max) / temperature);
        sum += y[i];
    }
    for (int i = 0; i < n; i++) y[i] = (float)(y[i] / sum);
}
