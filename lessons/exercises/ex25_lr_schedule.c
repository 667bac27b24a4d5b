// Exercise 25: the learning-rate schedule: warm-up, then cosine decay (lesson 14).
// At the start Adam's moment estimates are noisy and the weights random, so the rate climbs
// linearly from 0 over `warmup` steps; then it follows half a cosine from lr down to min_lr,
// reached at decay_steps, and stays there.
// Check it with:  make exercise25
#include "concepts.h"

float ex_lr_schedule(int step, float lr, float min_lr, int warmup, int decay_steps) {
    // TODO: return the learning rate of this step. Delete these lines.
    (void)step; (void)lr; (void)min_lr; (void)warmup; (void)decay_steps;
    ex_not_implemented();
    return 0.0f;
}
