// Exercise 42, a solution: the DPO loss of one pair and its gradient (docs/preferences.md).
#include <math.h>
#include "concepts.h"

double ex_dpo_loss(double *d_dw, double *d_dl, double dw, double dl, double beta) {
    const double z = beta * (dw - dl);
    // log(1 + e^-z) = max(-z, 0) + log(1 + e^-|z|): the exponential's argument is never positive.
    const double loss = fmax(-z, 0.0) + log1p(exp(-fabs(z)));
    // d loss / dz = -sigma(-z) = -1 / (1 + e^z), also from e^-|z| only.
    const double e = exp(-fabs(z));
    const double s = z >= 0.0 ? e / (1.0 + e) : 1.0 / (1.0 + e);   // sigma(-z)
    *d_dw = -beta * s;   // dz / d dw = beta
    *d_dl = beta * s;    // dz / d dl = -beta
    return loss;
}
