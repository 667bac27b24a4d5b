// prefetch.h: the software prefetch of the decode matvec kernels (matvec_avx512.c, matvec_avx2.c)
// and of the packed batch kernels (linear_packed_avx512.c, linear_packed_avx2.c).
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
// one block of W's rows, it asks for the next block into L2, cut into equal shares of `share`
// lines, one share before each 4-row group of each tile of X rows, so a few lines are asked for at
// a time and the whole block has been asked for when its turn comes. The hardware prefetchers,
// following four rows of W a few hundred bytes apart, stay behind on a matrix that comes from
// memory, and in a decode step every matrix does (the 15M model's 60 MB pass through the caches
// once a step): on this Xeon, with the caches flushed before each call, the 15M classifier
// (32000 x 288) ran 1.3 to 1.4 times faster and an FFN matrix (768 x 288) 1.1 to 1.25 times
// faster with this prefetch than without any (docs/serving.md). Only matrices under
// TW_MATVEC_SMALL_FLOATS (256 KiB: all of stories260K, which stays in L2 whole) go without.
// The block's `lines` lines cut into `parts` equal shares (the last one shorter): lines per share.
static inline long tw_share_size(long lines, long parts) { return (lines + parts - 1) / parts; }

// Share `part` of `lines` lines in shares of `share`: its first line in *first, and how many lines
// it has (0 for a part past the last).
static inline long tw_share_lines(long *first, long lines, long share, long part) {
    *first = share * part;
    const long end = *first + share < lines ? *first + share : lines;
    return end > *first ? end - *first : 0;
}

// Share `part` of p's `lines` lines, into L2, all at once.
static inline void tw_prefetch_share(const float *p, long lines, long share, long part) {
    long l0;
    const long n = tw_share_lines(&l0, lines, share, part);
    for (long l = l0; l < l0 + n; l++) tw_prefetch_line_l2((const char *)p + 64 * l);
}
#endif
