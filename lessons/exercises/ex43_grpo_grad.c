// Exercise 43: GRPO's gradient for fixed samples (docs/grpo.md). For each of n_groups groups of G
// completions, with rewards r:
//   A_i = (r_i - mean of its group) / (std of its group + 1e-4), the POPULATION std (divide by G)
// Completion i has lens[i] tokens, packed one after another in lp (the policy's log-probs),
// lp_old (the sampling policy's) and lp_ref (the reference's). Per token:
//   rho = exp(lp - lp_old)
//   J_t = min(rho A_i, clip(rho, 1 - eps, 1 + eps) A_i) - beta k3,
//   k3  = exp(lp_ref - lp) - (lp_ref - lp) - 1
// J = the mean over the n = n_groups * G completions of the mean over each one's own tokens, and
// the loss is -J. Write dlp[t] = d loss / d lp[t]. Hints: where the clipped term is the smaller,
// it is a constant (rho is outside the range); d k3 / d lp = 1 - exp(lp_ref - lp); each token of
// completion i weighs 1 / (n lens[i]).
// Check it with:  make exercise43
#include "concepts.h"

void ex_grpo_grad(float *dlp, const float *lp, const float *lp_old, const float *lp_ref,
                  const float *rewards, const int *lens, int n_groups, int G, float eps, float beta) {
    // TODO: fill dlp (sum of lens). Delete these lines.
    (void)dlp; (void)lp; (void)lp_old; (void)lp_ref; (void)rewards; (void)lens; (void)n_groups;
    (void)G; (void)eps; (void)beta;
    ex_not_implemented();
}
