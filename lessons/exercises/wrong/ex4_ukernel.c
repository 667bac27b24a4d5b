// Wrong attempt at exercise 4 (make test builds it and requires the checker to reject it).
// The mistake: the `accumulate` flag is ignored, so C is overwritten by every panel of k: right
// while K fits in one panel (kc = 256), wrong once K needs several.
// The checker says: accumulate = 1 means add to C
#include "exercise.h"

void ex_ukernel(int kc, const float *Ap, const float *Bp, float *C, long ldc, int accumulate) {
    (void)accumulate;
    for (int i = 0; i < EX_MR; i++)
        for (int j = 0; j < EX_NR; j++) {
            float acc = 0.0f;
            for (int k = 0; k < kc; k++) acc += Ap[k * EX_MR + i] * Bp[k * EX_NR + j];
            C[i * ldc + j] = acc;
        }
}
