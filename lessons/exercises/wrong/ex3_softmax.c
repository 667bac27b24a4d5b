// Wrong attempt at exercise 3 (make test builds it and requires the checker to reject it).
// The mistake: the textbook formula exp(x_i) / sum exp(x_j) without subtracting the max first:
// exp(1000) is inf in float, and inf / inf is NaN. (The all -inf row is handled.)
// The checker says: logits of 1000
#include <math.h>
#include "exercise.h"

void ex_softmax(float *y, const float *x, int n) {
    float sum = 0.0f;
    for (int i = 0; i < n; i++) { y[i] = expf(x[i]); sum += y[i]; }
    for (int i = 0; i < n; i++) y[i] = sum > 0.0f ? y[i] / sum : 0.0f;
}
