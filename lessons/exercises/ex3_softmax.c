// Exercise 3: softmax of one row, y[i] = exp(x[i]) / sum_j exp(x[j]).
// Written literally it overflows: exp(1000) is +inf in float, and inf / inf is NaN. The checker
// feeds logits of 1000. Hint: softmax(x) = softmax(x - c) for any c; which c keeps every exp()
// argument <= 0? A row that is all -inf (every position masked) must give zeros, not NaN.
// Check and time it with:  make exercise3
#include <math.h>
#include "exercise.h"

void ex_softmax(float *y, const float *x, int n) {
    // TODO: a numerically stable softmax. Delete these lines.
    (void)y; (void)x; (void)n;
    ex_not_implemented();
}
