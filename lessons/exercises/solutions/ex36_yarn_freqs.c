// Exercise 36, a worked answer: the band edges from the number of turns, then the linear ramp.
#include <math.h>
#include "concepts.h"

static double pair_of_turns(double r, int D, double theta, int L) {
    return D * log(L / (r * 2.0 * 3.14159265358979323846)) / (2.0 * log(theta));
}

void ex_yarn_freqs(double *freq, int D, double theta, double s, int L, double beta_fast,
                   double beta_slow) {
    double lo = floor(pair_of_turns(beta_fast, D, theta, L));
    double hi = ceil(pair_of_turns(beta_slow, D, theta, L));
    if (lo < 0) lo = 0;
    if (hi > D - 1) hi = D - 1;
    if (hi == lo) hi += 0.001;
    for (int i = 0; i < D / 2; i++) {
        const double f = pow(theta, -2.0 * i / D);
        double ramp = (i - lo) / (hi - lo);
        ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
        freq[i] = f / s * ramp + f * (1.0 - ramp);
    }
}
