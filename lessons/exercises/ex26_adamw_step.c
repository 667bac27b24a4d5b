// Exercise 26: one AdamW step (lesson 14). Lesson 14's section "AdamW, one step at a time, by
// hand" works the same formulas on four weights; concepts.h has them in full.
// Three classic mistakes the checker catches: forgetting the bias correction (the first step is
// then 0.1 / sqrt(1 - beta2) times too large or small), adding the decay to the gradient (Adam
// then normalises it into a full step), and decaying a norm gain (decays == 0).
// Hint: keep the raw m and v in the arrays; correct only the copies you divide.
// Check it with:  make exercise26
#include <math.h>
#include "concepts.h"

void ex_adamw_step(float *param, float *m, float *v, const float *grad, long n, int step, float lr,
                   float beta1, float beta2, float eps, float weight_decay, int decays) {
    // TODO: update param, m and v (n). Delete these lines.
    (void)param; (void)m; (void)v; (void)grad; (void)n; (void)step; (void)lr; (void)beta1;
    (void)beta2; (void)eps; (void)weight_decay; (void)decays;
    ex_not_implemented();
}
