// Wrong attempt at exercise 24 (make test builds it and requires the checker to reject it).
// The mistake: each tensor clipped by its own norm, so the tensors are scaled by different
// factors (the gradient's direction changes) and the returned norm is the largest tensor's.
// The checker says: not per tensor
#include <math.h>
#include "concepts.h"

float ex_clip_grad_norm(float *const *grads, const long *counts, int n_tensors, float max_norm) {
    float largest = 0.0f;
    for (int i = 0; i < n_tensors; i++) {
        double ss = 0.0;
        for (long j = 0; j < counts[i]; j++) ss += (double)grads[i][j] * grads[i][j];
        const float norm = (float)sqrt(ss);
        if (norm > largest) largest = norm;
        if (max_norm > 0.0f && norm > max_norm)
            for (long j = 0; j < counts[i]; j++) grads[i][j] *= (float)(max_norm / (norm + 1e-6));
    }
    return largest;
}
