// softmax.h: numerically stable softmax over the last axis.
#ifndef TW_SOFTMAX_H
#define TW_SOFTMAX_H

// y[r] = softmax(x[r] / temperature), computed as exp((x - max) / temperature) / sum so that
// large logits (1e4, 1e30) never overflow.
//   y: (rows, cols)   x: (rows, cols); y may alias x.   temperature > 0 (1.0f for plain softmax).
// A row whose entries are all -inf (every position masked) has no defined softmax; this function
// returns a row of zeros for it, so attention over it contributes nothing and no NaN appears.
// A row with +inf entries gets the limit as those logits grow together: the +inf entries share
// the mass equally and the rest get 0 (PyTorch gives NaN). A NaN anywhere makes the row NaN.
void tw_softmax_rows(float *y, const float *x, int rows, int cols, float temperature);

// One row at temperature 1, always by the loop above (never a SIMD kernel): the reference the
// SIMD softmax kernels are tested against.   y, x: (n), may alias
void tw_softmax_row(float *y, const float *x, int n);

// Backward of y = softmax(x / temperature), row by row, from the forward's output y:
//   dx[r] += (y[r] * (dy[r] - sum_j y[r][j] dy[r][j])) / temperature      (accumulates, see tw.h)
//   dx, dy, y: (rows, cols); dx must not alias dy or y. A fully masked row (all zeros in y) gets
// no gradient, and entries with y = 0 (masked, -inf logits) get none either.
void tw_softmax_rows_backward(float *dx, const float *dy, const float *y, int rows, int cols,
                              float temperature);

#endif
