// fd_central.h: the derivatives of a double-precision objective by central differences, over
// every element of a list of tensors, for the suites that check a float backward against a
// double forward they write themselves (tests/test_mla.c, tests/test_moe.c).
//
// want[j][i] = (L(p + h e_ji) - L(p - h e_ji)) / 2h,   h = 1e-5 max(1, |p[j][i]|):
// truncation h^2 |L'''| / 6 and rounding 2^-53 |L| / h both near 1e-10 (tests/test_grad_fd.c
// works it out), far below float precision, so a comparison measures the float backward's error.
#ifndef FD_CENTRAL_H
#define FD_CENTRAL_H
#include "testutil.h"

// The objective: L at the tensors p (p[j] has the n[j] elements given to fd_central_grads), and
// whatever else it needs in ctx. It may keep scratch in ctx; it must not change p.
typedef double (*fd_objective)(double *const p[], void *ctx);

// A double copy of a float tensor of n elements (n = 0 allowed); the caller frees it.
double *fd_to_double(const float *a, long n);

// Fills want[j] (allocated here with tt_zeros, n[j] elements, at least one; the caller frees
// them) with L's derivative in every element of p[j], for j < n_tensors, perturbing p in place
// and restoring every element after. Returns the largest |want| over all tensors: the scale of
// grad_check.h's metric.
double fd_central_grads(float *want[], double *const p[], const long n[], int n_tensors, fd_objective L,
                        void *ctx);

#endif
