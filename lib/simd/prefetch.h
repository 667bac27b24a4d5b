// prefetch.h: the software prefetch of the decode matvec kernels (matvec_avx512.c, matvec_avx2.c).
// Why and how far ahead: simd.h, TW_PREFETCH_AHEAD_FLOATS.
#ifndef TW_PREFETCH_H
#define TW_PREFETCH_H
#include <stdint.h>
#include "simd.h"

// One cache line into L2. A loop that does nothing but prefetch (tw_prefetch_share) is deleted by
// gcc 12 at -O2 when written with __builtin_prefetch or _mm_prefetch, as code without effect: its
// object held no prefetch at all (nor did the training attention's row prefetch, which, made real,
// measured 5 % slower and is gone). On x86 the instruction is therefore a volatile asm, which no
// pass removes; a is only named as the operand, never read.
static inline void tw_prefetch_line_l2(const void *a) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__ volatile("prefetcht1 %0" : : "m"(*(const char *)a));
#else
    __builtin_prefetch(a, 0, 2);
#endif
}

// Asks for the `lines` cache lines (64 bytes each) that start TW_PREFETCH_AHEAD_FLOATS floats past
// w, into L1. They may lie past the end of W: a prefetch never faults, and the address is formed
// as an integer, so no pointer leaves its array. `lines` is a constant at each call, so the loop
// unrolls into that many prefetch instructions.
static inline void tw_prefetch_ahead(const float *w, int lines) {
    const uintptr_t a = (uintptr_t)w + TW_PREFETCH_AHEAD_FLOATS * sizeof(float);
    for (int l = 0; l < lines; l++) __builtin_prefetch((const void *)(a + 64 * (uintptr_t)l), 0, 3);
}

// The batched matvec's prefetch (tw_matvec_rows_avx512, tw_matvec_rows_avx2): while it works on
// one block of W's rows, it asks for the next block, cut into `parts` equal shares, one share
// before each 4-row group of each tile of X rows, so a few lines are asked for at a time and the
// whole block has been asked for when its turn comes. The hardware prefetchers, following four
// rows of W a few hundred bytes apart, stay behind: the 15M classifier ran at two thirds of the
// speed of a matrix already in cache. Into L2 (locality 2), not L1: a share of many lines asked
// into L1 at once waited on L1's few fill buffers (measured: one share per tile into L1 was 1.13 to
// 1.30 times slower on the classifier; docs/serving.md). A matrix that fits in L2 stays there
// between calls and is not prefetched at all: TW_ROWS_PREFETCH_FLOATS.
#define TW_ROWS_PREFETCH_FLOATS (1L << 18)   // 1 MiB of floats
// Asks for share `part` of `parts` of the lines of p[0 .. n) into L2.
static inline void tw_prefetch_share(const float *p, long n, int part, int parts) {
    const long lines = (n + 15) / 16, l0 = lines * part / parts, l1 = lines * (part + 1) / parts;
    for (long l = l0; l < l1; l++) tw_prefetch_line_l2((const char *)p + 64 * l);
}
#endif
