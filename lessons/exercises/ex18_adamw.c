// Exercise 18: one step of AdamW, the optimizer that trains these models (lesson 14).
// m and v are running averages of the gradient and of its square. They start at 0, so early on
// they are too small by the factors (1 - beta1^step) and (1 - beta2^step): dividing by those
// (bias correction) fixes it. Weight decay is "decoupled": it shrinks p directly by lr * wd, it
// is not added to the gradient (that would be L2 regularisation, which Adam then rescales).
// Check it with:  make exercise18
#include "concepts.h"

void ex_adamw_step(float *p, float *m, float *v, const float *g, long n, int step, float lr,
                   float beta1, float beta2, float eps, float wd) {
    // TODO: update p, m and v in place. Delete these lines.
    (void)p; (void)m; (void)v; (void)g; (void)n; (void)step; (void)lr; (void)beta1; (void)beta2;
    (void)eps; (void)wd;
    ex_not_implemented();
}
