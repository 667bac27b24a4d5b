// Exercise 37: top-k routing of one token (lesson 26), Mixtral's rule.
// p = softmax(logits) over all E experts (subtract the largest logit first: logits of 1000 must
// not overflow). Choose the k largest p, best first; among equal p the lower expert index comes
// first. Each chosen expert's weight is its p divided by the sum of the chosen p.
// Hint: k passes, each taking the best expert not chosen yet; compare with > (not >=) so that
// the first of equal values wins.
// Check it with:  make exercise37
#include <math.h>
#include "concepts.h"

void ex_top_k_route(int *sel, float *w, const float *logits, int E, int k) {
    // TODO: fill sel (k) and w (k). Delete these lines.
    (void)sel; (void)w; (void)logits; (void)E; (void)k;
    ex_not_implemented();
}
