// Exercise 39: one proposal of speculative decoding (lesson 28).
// The draft proposed token x from its distribution q; p is the target's. Keep x when
// u_accept < p[x] / q[x]. Otherwise draw a token from the residual max(0, p - q), renormalised
// to sum 1: walk the tokens in order adding the residual's probabilities and return the first at
// which the running sum exceeds u_resid (the last one with a non-zero residual if rounding leaves
// the total just below u_resid). If the residual is all zero (p == q), draw from p the same way.
// Why the residual and not p: lesson 28 adds up the two ways each token can come out.
// Check it with:  make exercise39
#include "concepts.h"

int ex_spec_step(const float *p, const float *q, int V, int x, float u_accept, float u_resid) {
    // TODO: return the token this proposal gives. Delete these lines.
    (void)p; (void)q; (void)V; (void)x; (void)u_accept; (void)u_resid;
    ex_not_implemented();
    return 0;
}
