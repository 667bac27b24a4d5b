// Exercise 42: the DPO loss of one preference pair (docs/preferences.md). With the policy's and
// the reference's log-probabilities of the chosen completion y_w and the rejected one y_l, the two
// differences are dw = log pi(y_w|x) - log pi_ref(y_w|x) and dl = log pi(y_l|x) - log pi_ref(y_l|x);
//   z = beta (dw - dl),   loss = -log sigma(z) = log(1 + e^-z)
// Return the loss, and write its derivatives with respect to dw and dl (chain rule through z).
// For z far below 0, e^-z overflows a double: find a form of log(1 + e^-z) that stays finite.
// Check it with:  make exercise42
#include "concepts.h"

double ex_dpo_loss(double *d_dw, double *d_dl, double dw, double dl, double beta) {
    // TODO: return the loss and set *d_dw, *d_dl. Delete these lines.
    (void)d_dw; (void)d_dl; (void)dw; (void)dl; (void)beta;
    ex_not_implemented();
    return 0.0;
}
