// Exercise 36: YaRN's RoPE frequencies (lesson 25; the formulas are in lib/nn/rope_scaling.h).
// For each pair i: f = theta^(-2i/D). Find the band edges lo and hi (pair indices, rounded down and
// up, clipped to [0, D - 1]) from d(r) = D ln(L / (2 pi r)) / (2 ln theta) at r = beta_fast and
// r = beta_slow. The ramp (i - lo) / (hi - lo), clipped to [0, 1], is 0 for fast pairs (keep f)
// and 1 for slow pairs (f / s): freq[i] = f / s * ramp + f * (1 - ramp).
// Hint: if lo == hi, add 0.001 to hi (as Hugging Face does) so the ramp does not divide by 0.
// Check it with:  make exercise36
#include <math.h>
#include "concepts.h"

void ex_yarn_freqs(double *freq, int D, double theta, double s, int L, double beta_fast,
                   double beta_slow) {
    // TODO: fill freq (D/2). Delete these lines.
    (void)freq; (void)D; (void)theta; (void)s; (void)L; (void)beta_fast; (void)beta_slow;
    ex_not_implemented();
}
