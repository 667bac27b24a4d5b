// rng.h: a seeded, portable random generator (splitmix64), so every lesson and test prints the
// same numbers on every machine. The state is a plain struct the caller owns: no hidden globals.
#ifndef TW_RNG_H
#define TW_RNG_H
#include <stdint.h>

typedef struct { uint64_t state; } tw_rng;

// Starts a generator; the same seed gives the same stream everywhere.
void     tw_rng_init(tw_rng *r, uint64_t seed);
// Next 64 random bits (splitmix64: state += 0x9e3779b97f4a7c15, then a mixing function).
uint64_t tw_rng_next(tw_rng *r);
// Uniform float in [0, 1): the top 24 bits of the next draw times 2^-24 (exact in float32).
float    tw_rng_uniform(tw_rng *r);
// Standard normal N(0, 1) by Box-Muller from two uniform draws, computed in double and rounded to
// float (so a 1-ulp difference between libm implementations almost never shows).
float    tw_rng_normal(tw_rng *r);
// Fills x (n) with uniform values in [lo, hi).
void     tw_rng_fill_uniform(tw_rng *r, float *x, long n, float lo, float hi);
// Fills x (n) with normal values of mean 0 and standard deviation std.
void     tw_rng_fill_normal(tw_rng *r, float *x, long n, float std);

#endif
