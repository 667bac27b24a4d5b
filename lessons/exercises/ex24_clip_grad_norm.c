// Exercise 24: gradient clipping by the global norm (lesson 14).
// A bad batch can give a gradient hundreds of times larger than usual, and one step along it
// undoes hours of training (the loss spikes). Clipping bounds the step: measure the length of the
// WHOLE gradient, every tensor together, as one vector, and if it is longer than max_norm, shrink
// every tensor by the same factor. The direction is kept; only the length changes.
// Check it with:  make exercise24
#include "concepts.h"

float ex_clip_grad_norm(float *const *grads, const long *counts, int n_tensors, float max_norm) {
    // TODO: return the norm before clipping, after scaling grads if needed. Delete these lines.
    (void)grads; (void)counts; (void)n_tensors; (void)max_norm;
    ex_not_implemented();
    return 0.0f;
}
