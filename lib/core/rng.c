// rng.c: splitmix64 (Steele, Lea and Flood 2014): a 64-bit counter passed through a mixing
// function. Small, fast, statistically good enough for initialising weights, and bit-exact on
// every platform because it uses only 64-bit integer arithmetic.
#include <math.h>
#include "core/rng.h"

void tw_rng_init(tw_rng *r, uint64_t seed) { r->state = seed; }

uint64_t tw_rng_next(tw_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

float tw_rng_uniform(tw_rng *r) {
    return (float)(tw_rng_next(r) >> 40) * (1.0f / 16777216.0f);   // 24 bits: exact in float
}

float tw_rng_normal(tw_rng *r) {
    // Box-Muller. u1 is moved into (0, 1] so log(u1) is finite.
    double u1 = ((double)(tw_rng_next(r) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    double u2 = (double)(tw_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    const double two_pi = 6.283185307179586476925;
    return (float)(sqrt(-2.0 * log(u1)) * cos(two_pi * u2));
}

void tw_rng_fill_uniform(tw_rng *r, float *x, long n, float lo, float hi) {
    for (long i = 0; i < n; i++) x[i] = lo + (hi - lo) * tw_rng_uniform(r);
}

void tw_rng_fill_normal(tw_rng *r, float *x, long n, float std) {
    for (long i = 0; i < n; i++) x[i] = std * tw_rng_normal(r);
}
