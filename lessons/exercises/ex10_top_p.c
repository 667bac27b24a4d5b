// Exercise 10: top-p (nucleus) sampling (lesson 11, and lesson 17 on decoding).
// Drop the tokens below (1 - p) / (n - 1): they can never be in the nucleus. Sort the rest by
// probability, largest first (ties: lower id first). Keep the shortest
// prefix whose mass exceeds p: the nucleus. Then walk down the nucleus adding probabilities
// and return the first token at which the running sum exceeds u * (the nucleus's mass).
// If no prefix exceeds p (rounding), the nucleus is every token kept; if the walk finds no token
// (rounding again), return the nucleus's last token.
// Hint: an index array sorted with qsort and a comparison on probs; accumulate in float.
// Check it with:  make exercise10
#include <stdlib.h>
#include "concepts.h"

int ex_top_p(const float *probs, int n, float p, float u) {
    // TODO: return the chosen token id. Delete these lines.
    (void)probs; (void)n; (void)p; (void)u;
    ex_not_implemented();
    return 0;
}
