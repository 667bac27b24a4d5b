// Exercise 2: matrix-vector multiply, the decode path of every Linear layer.
// y[i] = sum_k W[i][k] x[k]. Every weight is read once per call, so speed is set by how fast W
// streams from memory. Hint: compute four rows at a time so each x[k] you load serves four
// products, and use several partial sums per row as in exercise 1.
// Check and time it with:  make exercise2
#include "exercise.h"

void ex_matvec(float *y, const float *W, const float *x, int N, int K) {
    // TODO: fill y (N) with W (N, K) times x (K). Delete these lines.
    (void)y; (void)W; (void)x; (void)N; (void)K;
    ex_not_implemented();
}
