// Exercise 28, a classic wrong attempt (make test-exercise-wrong-attempts expects the checker to
// reject it): each input's gradient is written (=), not added to (+=), so a value used twice
// keeps only the last contribution.
// The checker says: add, do not write
#include <math.h>
#include "concepts.h"

void ex_tape_backward(double *grad, const int *op, const int *a, const int *b, const double *val, int n) {
    for (int i = 0; i < n; i++) grad[i] = 0.0;
    grad[n - 1] = 1.0;
    for (int i = n - 1; i >= 0; i--) {
        const double g = grad[i];
        switch (op[i]) {
        case EX_AG_ADD:   grad[a[i]] = g; grad[b[i]] = g; break;
        case EX_AG_MUL:   grad[a[i]] = g * val[b[i]]; grad[b[i]] = g * val[a[i]]; break;
        case EX_AG_EXP:   grad[a[i]] = g * val[i]; break;
        case EX_AG_LOG:   grad[a[i]] = g / val[a[i]]; break;
        case EX_AG_RECIP: grad[a[i]] = -g * val[i] * val[i]; break;
        default: break;
        }
    }
}
