// Exercise 5: softmax with a temperature (lesson 6).
// y[i] = exp(x[i] / tau) / sum_j exp(x[j] / tau). A small tau sharpens the distribution towards
// the largest logit, a large tau flattens it towards uniform.
// Written literally it overflows for logits of 1000 (exp gives +inf, and inf / inf is NaN).
// Hint: subtract the largest logit first; where does the division by tau go? A row that is all
// -inf (every position masked) has no maximum to subtract: return zeros for it.
// Check it with:  make exercise5
#include <math.h>
#include "concepts.h"

void ex_softmax_temperature(float *y, const float *x, int n, float temperature) {
    // TODO: a stable softmax of x / temperature. Delete these lines.
    (void)y; (void)x; (void)n; (void)temperature;
    ex_not_implemented();
}
