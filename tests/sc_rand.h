// sc_rand.h: seeded uniform random floats for the kernel cases that also run without Check (the
// qemu self-tests): simd_cases.h and q8_cases.h, which therefore cannot use testutil.h's
// tt_rand (it fails a Check test when out of memory).
#ifndef SC_RAND_H
#define SC_RAND_H
#include <stdint.h>
#include <stdlib.h>
#include "core/rng.h"

// n floats uniform in [lo, hi) from tw_rng seeded with seed, malloc'd (at least one float; the
// caller frees), or NULL if out of memory.
static float *sc_rand(long n, float lo, float hi, uint64_t seed) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!p) return NULL;
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_rng_fill_uniform(&r, p, n, lo, hi);
    return p;
}

#endif
