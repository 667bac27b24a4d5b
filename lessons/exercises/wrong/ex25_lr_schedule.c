// Wrong attempt at exercise 25 (make test builds it and requires the checker to reject it).
// The mistake: the cosine measured from step 0 instead of from the end of the warm-up
// (r = step / decay_steps), so the rate never reaches lr and jumps down when the warm-up ends.
// The checker says: the cosine starts after the warm-up
#include <math.h>
#include "concepts.h"

float ex_lr_schedule(int step, float lr, float min_lr, int warmup, int decay_steps) {
    if (step < warmup) return (float)((double)lr * step / warmup);
    if (step > decay_steps || decay_steps <= warmup) return min_lr;
    const double r = (double)step / decay_steps;
    return (float)(min_lr + 0.5 * (1.0 + cos(3.14159265358979323846 * r)) * ((double)lr - min_lr));
}
