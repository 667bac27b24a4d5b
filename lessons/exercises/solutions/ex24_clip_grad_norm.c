// Exercise 24, a worked answer: one norm for all tensors, one scale for all tensors.
#include <math.h>
#include "concepts.h"

float ex_clip_grad_norm(float *const *grads, const long *counts, int n_tensors, float max_norm) {
    double ss = 0.0;                                   // double: squares of 1e20 overflow float
    for (int i = 0; i < n_tensors; i++)
        for (long j = 0; j < counts[i]; j++) ss += (double)grads[i][j] * grads[i][j];
    const float norm = (float)sqrt(ss);
    if (max_norm <= 0.0f || !(norm > max_norm)) return norm;
    const float scale = (float)((double)max_norm / ((double)norm + 1e-6));
    for (int i = 0; i < n_tensors; i++)
        for (long j = 0; j < counts[i]; j++) grads[i][j] *= scale;
    return norm;
}
