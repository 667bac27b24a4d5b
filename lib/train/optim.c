// optim.c: AdamW, gradient clipping and the learning-rate schedule (see optim.h). Arithmetic is
// done in double per element and rounded to float once, so the update matches a float64
// reference to float precision whatever the size of the step. At a SIMD level the same loop runs
// on several elements a register (the level's `adamw` kernel, lib/simd/simd.h), to the same bits.
#include <math.h>
#include <stddef.h>
#include "train/optim.h"
#include "simd/simd.h"

void tw_adamw_step(float *param, float *m, float *v, const float *grad, long n, int step,
                   const tw_adamw_hparams *hp) {
    const double lr = hp->lr, b1 = hp->beta1, b2 = hp->beta2, eps = hp->eps;
    const double decay = 1.0 - lr * hp->weight_decay;
    // Bias correction: m and v start at 0, so early averages are too small by 1 - beta^step.
    const double bc1 = 1.0 - pow(b1, step), bc2_sqrt = sqrt(1.0 - pow(b2, step));
    if (tw_simd.adamw) {   // the loop below on several elements at once, to the same bits
        const tw_adamw_consts k = { b1, b2, decay, lr / bc1, bc2_sqrt, eps };
        tw_simd.adamw(param, m, v, grad, n, &k);
        return;
    }
    for (long i = 0; i < n; i++) {
        const double g = grad[i];
        const double mi = b1 * m[i] + (1.0 - b1) * g;
        const double vi = b2 * v[i] + (1.0 - b2) * g * g;
        m[i] = (float)mi;
        v[i] = (float)vi;
        const double p = param[i] * decay;   // decoupled: the decay never enters m or v
        param[i] = (float)(p - lr / bc1 * mi / (sqrt(vi) / bc2_sqrt + eps));
    }
}

int tw_adamw_decays(int ndim) { return ndim >= 2; }

// sum of x[j]^2 in double, in eight partial sums (lane k takes the j with j % 8 == k) added
// pairwise at the end: one chain of 15 million dependent adds was 3 % of a stories15M training
// step; eight chains run side by side. The order differs from one running sum by the rounding of
// double sums only (about 1e-16 of the total), far below the float the norm is returned as.
static double sum_squares(const float *x, long n) {
    double s[8] = { 0 };
    long j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) s[k] += (double)x[j + k] * x[j + k];
    for (; j < n; j++) s[0] += (double)x[j] * x[j];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

float tw_grad_global_norm(float *const *grads, const long *counts, int n_tensors) {
    double ss = 0.0;
    for (int i = 0; i < n_tensors; i++) ss += sum_squares(grads[i], counts[i]);
    return (float)sqrt(ss);
}

float tw_clip_grad_norm(float *const *grads, const long *counts, int n_tensors, float max_norm) {
    const float norm = tw_grad_global_norm(grads, counts, n_tensors);
    if (max_norm <= 0.0f || !(norm > max_norm)) return norm;   // a NaN norm is left for the caller
    const float scale = (float)((double)max_norm / ((double)norm + 1e-6));
    for (int i = 0; i < n_tensors; i++)
        for (long j = 0; j < counts[i]; j++) grads[i][j] *= scale;
    return norm;
}

float tw_lr_schedule(int step, float lr, float min_lr, int warmup, int decay_steps) {
    if (step < warmup) return (float)((double)lr * step / warmup);
    if (step > decay_steps || decay_steps <= warmup) return min_lr;
    const double r = (double)(step - warmup) / (decay_steps - warmup);
    const double coeff = 0.5 * (1.0 + cos(3.14159265358979323846 * r));
    return (float)(min_lr + coeff * ((double)lr - min_lr));
}
