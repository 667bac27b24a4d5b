// Exercise 43, a worked answer: the advantages group by group, then each token's gradient.
#include <math.h>
#include "concepts.h"

void ex_grpo_grad(float *dlp, const float *lp, const float *lp_old, const float *lp_ref,
                  const float *rewards, const int *lens, int n_groups, int G, float eps, float beta) {
    const int n = n_groups * G;
    int off = 0;
    for (int i = 0; i < n; i++) {
        const float *r = rewards + (i / G) * G;   // i's group
        double mean = 0.0, var = 0.0;
        for (int j = 0; j < G; j++) mean += r[j];
        mean /= G;
        for (int j = 0; j < G; j++) var += (r[j] - mean) * (r[j] - mean);
        const double A = (rewards[i] - mean) / (sqrt(var / G) + 1e-4);
        for (int t = off; t < off + lens[i]; t++) {
            const double rho = exp((double)lp[t] - lp_old[t]);
            const double c = rho < 1.0 - eps ? 1.0 - eps : rho > 1.0 + eps ? 1.0 + eps : rho;
            const double surr = rho * A <= c * A ? rho * A : 0.0;   // d/dlp of the minimum
            const double kl = 1.0 - exp((double)lp_ref[t] - lp[t]);  // d k3 / d lp
            dlp[t] = (float)(-(surr - beta * kl) / ((double)n * lens[i]));
        }
        off += lens[i];
    }
}
