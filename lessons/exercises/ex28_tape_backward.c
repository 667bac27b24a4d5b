// Exercise 28: the backward pass of a scalar autograd tape (lesson 20's ag_backward, without the
// topological sort: the tape's own order is already topological). concepts.h lists the
// operations; the local derivatives are: add 1 and 1, mul the other input's value, exp its own
// value, log 1 / its input, recip -1 / input^2 (= -value^2).
// The classic mistake the checker catches: writing an input's gradient (=) instead of adding to
// it (+=), which loses all but one use of a value used twice.
// Check it with:  make exercise28
#include <math.h>
#include "concepts.h"

void ex_tape_backward(double *grad, const int *op, const int *a, const int *b, const double *val, int n) {
    // TODO: fill grad (n). Delete these lines.
    (void)grad; (void)op; (void)a; (void)b; (void)val; (void)n;
    ex_not_implemented();
}
