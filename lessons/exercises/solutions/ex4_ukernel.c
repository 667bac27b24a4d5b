// Solution to exercise 4: a 4 x 8 register tile in plain C. The 32 sums live in c[][] for the
// whole k loop (the compiler keeps them in registers and, at -O2 on x86-64, uses SSE for the
// rows of 8), so each k costs 4 + 8 loads for 32 multiply-adds, and C is read and written once.
#include "exercise.h"

void ex_ukernel(int kc, const float *Ap, const float *Bp, float *C, long ldc, int accumulate) {
    float c[EX_MR][EX_NR] = { { 0 } };
    for (int k = 0; k < kc; k++) {
        const float *a = Ap + k * EX_MR, *b = Bp + k * EX_NR;
        for (int i = 0; i < EX_MR; i++)
            for (int j = 0; j < EX_NR; j++) c[i][j] += a[i] * b[j];
    }
    for (int i = 0; i < EX_MR; i++)
        for (int j = 0; j < EX_NR; j++)
            C[i * ldc + j] = (accumulate ? C[i * ldc + j] : 0.0f) + c[i][j];
}
