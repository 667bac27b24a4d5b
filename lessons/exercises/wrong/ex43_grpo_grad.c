// Exercise 43, a classic wrong attempt (make test-concept-exercises checks the checker rejects it):
// the clip forgotten in the gradient, rho A everywhere, as if the objective were the unclipped
// rho A. Right wherever rho is inside [1 - eps, 1 + eps] (so at rho = 1, the first update), wrong
// where a ratio has left the range in the direction the advantage pushes.
// The checker says: 2 groups of 4, clipped ratios, beta 0.04: element
#include <math.h>
#include "concepts.h"

void ex_grpo_grad(float *dlp, const float *lp, const float *lp_old, const float *lp_ref,
                  const float *rewards, const int *lens, int n_groups, int G, float eps, float beta) {
    (void)eps;
    const int n = n_groups * G;
    int off = 0;
    for (int i = 0; i < n; i++) {
        const float *r = rewards + (i / G) * G;
        double mean = 0.0, var = 0.0;
        for (int j = 0; j < G; j++) mean += r[j];
        mean /= G;
        for (int j = 0; j < G; j++) var += (r[j] - mean) * (r[j] - mean);
        const double A = (rewards[i] - mean) / (sqrt(var / G) + 1e-4);
        for (int t = off; t < off + lens[i]; t++) {
            const double rho = exp((double)lp[t] - lp_old[t]);
            const double kl = 1.0 - exp((double)lp_ref[t] - lp[t]);
            dlp[t] = (float)(-(rho * A - beta * kl) / ((double)n * lens[i]));
        }
        off += lens[i];
    }
}
