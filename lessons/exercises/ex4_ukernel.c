// Exercise 4: the micro-kernel of a packed matrix multiply (the BLIS/GotoBLAS scheme).
// lib/simd/matmul_4_packed.c packs A into micro-panels of 4 rows and B into micro-panels of 8
// columns, both k-major, and calls your kernel for each 4 x 8 tile of C. Your job: the tile.
//   C[i*ldc + j] = (accumulate ? C[i*ldc + j] : 0) + sum_{k < kc} Ap[k*4 + i] * Bp[k*8 + j]
// Hint: keep the 32 sums in local variables (float c[4][8]) for the whole k loop and touch C
// only at the end: that is the whole trick of register blocking. Intrinsics are allowed but
// not needed; plain C already runs several times faster than the naive loop.
// Check and time it with:  make exercise4
#include "exercise.h"

void ex_ukernel(int kc, const float *Ap, const float *Bp, float *C, long ldc, int accumulate) {
    // TODO: compute the 4 x 8 tile described above. Delete these lines.
    (void)kc; (void)Ap; (void)Bp; (void)C; (void)ldc; (void)accumulate;
    ex_not_implemented();
}
