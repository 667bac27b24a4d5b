// Exercise 31: the backward of the distillation loss (lesson 22). Per counted row t (its target
// is not -100), with the teacher's softened distribution p = softmax(teacher[t] / tau), the
// student's q = softmax(student[t] / tau) and its plain s1 = softmax(student[t]):
//   loss_t = a tau^2 KL(p || q) + (1 - a) CE(student[t], targets[t])
// and the loss is the mean over the n counted rows. Its gradient with respect to student[t]:
//   dlogits[t] = (a tau (q - p) + (1 - a) (s1 - onehot(targets[t]))) / n
// (d/dz of KL(p || softmax(z / tau)) is (q - p) / tau; the tau^2 in front leaves tau.)
// Ignored rows get zeros, and so does every row when all are ignored. Subtract each row's
// maximum before exp, as a stable softmax does.
// Check it with:  make exercise31
#include "concepts.h"

void ex_distill_backward(float *dlogits, const float *student, const float *teacher,
                         const int *targets, int T, int V, float a, float tau) {
    // TODO: fill dlogits (T, V). Delete these lines.
    (void)dlogits; (void)student; (void)teacher; (void)targets; (void)T; (void)V; (void)a; (void)tau;
    ex_not_implemented();
}
