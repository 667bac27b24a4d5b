// grad_check.h: the comparison used by the gradient tests (test_grad_golden.c, test_grad_fd.c).
//
// A gradient is compared with its reference normwise-and-elementwise: element i passes when
//     |got_i - want_i| <= rel * (scale + |want_i|),   scale = max(case_scale, max_j |want_j|),
// i.e. atol = rel * scale and rtol = rel (check_close.h's metric). The atol is scaled because a
// gradient element is a sum of products whose terms are about as large as the largest gradient
// entry: float rounding error is proportional to the terms, not to the (possibly cancelled) sum,
// so a purely relative test would be unstable near zero and a fixed atol would depend on the
// units. case_scale (the largest gradient entry over every gradient of the same case, or 0)
// covers gradients that vanish in exact arithmetic but are computed from non-zero terms: the key
// bias of attention (softmax ignores a constant added to a row of scores) and norms of width 1.
// Each test states its rel and why.
//
// TW_GRAD_REPORT=1 in the environment prints the measured worst ratio |err| / (max|want| + |want_i|)
// per tensor, which is how the margins quoted in the tolerance comments were measured.
#ifndef GRAD_CHECK_H
#define GRAD_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include "check_close.h"

static inline double gc_maxabs(const float *a, long n) {
    double m = 0.0;
    for (long i = 0; i < n; i++)
        if (fabs((double)a[i]) > m) m = fabs((double)a[i]);
    return m;
}

static inline void gc_report(const char *what, const float *got, const float *want, long n) {
    if (!getenv("TW_GRAD_REPORT")) return;
    double m = gc_maxabs(want, n), worst = 0.0;
    for (long i = 0; i < n; i++) {
        double den = m + fabs((double)want[i]);
        double r = den > 0.0 ? fabs((double)got[i] - want[i]) / den : fabs((double)got[i]);
        if (r > worst) worst = r;
    }
    fprintf(stderr, "grad-report %-40s n=%6ld max|want|=%9.3g worst=%9.3g\n", what, n, m, worst);
}

#define ck_assert_grad(what, got, want, n, rel, case_scale) do {                      \
    const float *gg_ = (got), *ww_ = (want);                                          \
    long nn_ = (n);                                                                   \
    gc_report((what), gg_, ww_, nn_);                                                 \
    double m_ = gc_maxabs(ww_, nn_), c_ = (case_scale);                               \
    double a_ = (rel) * (c_ > m_ ? c_ : m_);                                          \
    long i_ = tw_worst_mismatch(gg_, ww_, nn_, a_, (rel));                            \
    long j_ = i_ < 0 ? 0 : i_;                                                        \
    ck_assert_msg(i_ < 0, "%s: worst mismatch at [%ld] of %ld: got %.9g want %.9g "    \
                  "(rel %g, atol %g)", (what), i_, nn_, (double)gg_[j_],              \
                  (double)ww_[j_], (double)(rel), a_);                                \
} while (0)

#endif
