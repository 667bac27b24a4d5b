// Exercise 25, a worked answer: three pieces, the cosine measured from the end of the warm-up.
#include <math.h>
#include "concepts.h"

#define M_PI_VALUE 3.14159265358979323846   // M_PI is not in C11

float ex_lr_schedule(int step, float lr, float min_lr, int warmup, int decay_steps) {
    if (step < warmup) return (float)((double)lr * step / warmup);
    if (step > decay_steps || decay_steps <= warmup) return min_lr;
    const double r = (double)(step - warmup) / (decay_steps - warmup);   // 0 .. 1
    return (float)(min_lr + 0.5 * (1.0 + cos(M_PI_VALUE * r)) * ((double)lr - min_lr));
}
