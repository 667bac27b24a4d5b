// Wrong attempt at exercise 2 (make test builds it and requires the checker to reject it).
// The mistake: W read as if it were stored column by column (W[k][i] instead of W[i][k]): right
// only when one side is 1 (size 1: 1 x 37 and 19 x 1).
// The checker says: FAIL at size 3
#include "exercise.h"

void ex_matvec(float *y, const float *W, const float *x, int N, int K) {
    for (int i = 0; i < N; i++) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += W[(long)k * N + i] * x[k];
        y[i] = acc;
    }
}
