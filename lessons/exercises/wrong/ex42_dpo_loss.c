// Exercise 42, a classic wrong attempt (make test-concept-exercises checks the checker rejects it):
// the formula typed as written, -log(sigmoid(z)) with sigmoid(z) = 1 / (1 + exp(-z)). Right for
// moderate z; for z = -1000, exp(1000) is inf, sigmoid is 0 and the loss inf instead of 1000.
// The checker says: not finite
#include <math.h>
#include "concepts.h"

double ex_dpo_loss(double *d_dw, double *d_dl, double dw, double dl, double beta) {
    const double z = beta * (dw - dl);
    const double sig = 1.0 / (1.0 + exp(-z));
    *d_dw = -beta * (1.0 - sig);
    *d_dl = beta * (1.0 - sig);
    return -log(sig);
}
