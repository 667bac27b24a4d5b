// check_close.h: closeness assertions for float arrays, with the metric stated.
// A pair passes when |got - want| <= atol + rtol * |want|, elementwise. NaN or Inf mismatches
// always fail (an Inf passes only where the reference holds the same Inf).
#ifndef CHECK_CLOSE_H
#define CHECK_CLOSE_H
#include <check.h>
#include <math.h>

// Index of the element that most exceeds the tolerance, or -1 if every element is within it.
long tw_worst_mismatch(const float *got, const float *want, long n, double atol, double rtol);

#define ck_assert_allclose(got, want, n, atol, rtol) do {                                  \
    const float *g_ = (got), *w_ = (want);                                                 \
    long i_ = tw_worst_mismatch(g_, w_, (n), (atol), (rtol));                               \
    long j_ = i_ < 0 ? 0 : i_;                                                             \
    ck_assert_msg(i_ < 0, "%s vs %s: worst mismatch at [%ld] of %ld: got %.9g want %.9g "   \
                  "(atol %g, rtol %g)", #got, #want, i_, (long)(n), (double)g_[j_],         \
                  (double)w_[j_], (double)(atol), (double)(rtol));                          \
} while (0)

#endif
