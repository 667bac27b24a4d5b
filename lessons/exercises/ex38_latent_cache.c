// Exercise 38: attention scores over a latent KV cache, absorbed (lesson 27).
// Each cached token s is one row [c_s (r numbers) ; k_pe_s (d_rope numbers)]. The head's key
// would be [W_uk c_s ; k_pe_s], but expanding it for every cached token is what MLA avoids:
// fold W_uk into the query once, q~ = W_uk^T q_nope (r numbers, W_uk is (d_nope, r)), then
//   scores[s] = (q~ . c_s + q_pe . k_pe_s) / sqrt(d_nope + d_rope)
// The scale counts every dimension of the key, the RoPE part included.
// Check it with:  make exercise38
#include <math.h>
#include "concepts.h"

void ex_latent_scores(float *scores, const float *q_nope, const float *q_pe, const float *W_uk,
                      const float *cache, int S, int d_nope, int d_rope, int r) {
    // TODO: fill scores (S). Delete these lines.
    (void)scores; (void)q_nope; (void)q_pe; (void)W_uk; (void)cache; (void)S; (void)d_nope;
    (void)d_rope; (void)r;
    ex_not_implemented();
}
