// exercise.h: what each kernel exercise implements, and the one helper a stub calls.
// Exercise N lives in exN_<topic>.c (your file, with a TODO) and solutions/exN_<topic>.c (a worked
// answer; read it after trying). `make exerciseN` builds your file with the checker (check.c),
// which tests it against the library's naive kernel on awkward sizes and, if it passes, times it
// beside the naive and the optimised kernels. `make exerciseN SOLUTION=1` builds the solution.
#ifndef EXERCISE_H
#define EXERCISE_H

// Exercise 1: sum_i a[i] b[i].                                  a, b: (n)
float ex_dot(const float *a, const float *b, int n);

// Exercise 2: y = W x.                                          y: (N)  W: (N, K)  x: (K)
void ex_matvec(float *y, const float *W, const float *x, int N, int K);

// Exercise 3: y = softmax(x), stable for large logits; a row that is all -inf gives zeros.
//                                                               y, x: (n); y may alias x
void ex_softmax(float *y, const float *x, int n);

// Exercise 4: the micro-kernel of the packed matmul (lib/simd/matmul_4_packed.c), a 4 x 8 tile:
//   C[i*ldc + j] = (accumulate ? C[i*ldc + j] : 0) + sum_k Ap[k*4 + i] * Bp[k*8 + j]
//   for i < 4, j < 8.   Ap: (kc, 4) packed A   Bp: (kc, 8) packed B   C: 4 rows of stride ldc
enum { EX_MR = 4, EX_NR = 8 };
void ex_ukernel(int kc, const float *Ap, const float *Bp, float *C, long ldc, int accumulate);

// A stub calls this instead of computing; the checker then says "not implemented yet".
void ex_not_implemented(void);

// The path of the file this binary was built from (source_name.c, set by the Makefile).
extern const char ex_source_file[];

#endif
