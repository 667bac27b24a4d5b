// prefetch.h: the software prefetch of the decode matvec kernels (matvec_avx512.c, matvec_avx2.c).
// Why and how far ahead: simd.h, TW_PREFETCH_AHEAD_FLOATS.
#ifndef TW_PREFETCH_H
#define TW_PREFETCH_H
#include <stdint.h>
#include "simd.h"

// Asks for the `lines` cache lines (64 bytes each) that start TW_PREFETCH_AHEAD_FLOATS floats past
// w, into L1. They may lie past the end of W: a prefetch never faults, and the address is formed
// as an integer, so no pointer leaves its array. `lines` is a constant at each call, so the loop
// unrolls into that many prefetch instructions.
static inline void tw_prefetch_ahead(const float *w, int lines) {
    const uintptr_t a = (uintptr_t)w + TW_PREFETCH_AHEAD_FLOATS * sizeof(float);
    for (int l = 0; l < lines; l++) __builtin_prefetch((const void *)(a + 64 * (uintptr_t)l), 0, 3);
}

// Asks for part `part` of `parts` of the lines of p[0 .. n) into L1: the batched matvec
// (tw_matvec_rows_avx512) spreads the next block of W over the tiles it runs on this one, so that
// block is in cache when its turn comes (the hardware prefetchers, following four rows of W a
// few hundred bytes apart, stayed behind: the 15M classifier ran at two thirds of the speed of
// a matrix already in cache).
static inline void tw_prefetch_share(const float *p, long n, int part, int parts) {
    const long lines = (n + 15) / 16, l0 = lines * part / parts, l1 = lines * (part + 1) / parts;
    for (long l = l0; l < l1; l++) __builtin_prefetch((const void *)((uintptr_t)p + 64 * (uintptr_t)l), 0, 3);
}
#endif
