// loss.c: cross-entropy over the vocabulary, fused with the softmax. Fusing them is both cheaper
// and better conditioned: d loss / d logits = probs - onehot needs no division by a probability,
// and log softmax is computed as x - logsumexp(x), which never takes log(0).
// After tw_simd_init with a SIMD level, a row's exponentials go to the level's vector exp, in
// float (tw_simd_cross_entropy_row, lib/simd/simd.h); the loop below is the naive level's.
#include <math.h>
#include <stddef.h>
#include "train/loss.h"
#include "simd/simd.h"

static tw_status check_targets(const int *targets, int T, int V, int ignore_index, int *n_counted) {
    int n = 0;
    for (int t = 0; t < T; t++) {
        if (targets[t] == ignore_index) continue;
        if (targets[t] < 0 || targets[t] >= V) return TW_ERR_SHAPE;
        n++;
    }
    *n_counted = n;
    return TW_OK;
}

// One row: *lse = log sum_v exp(z[v]) and p = exp(z - lse), in double. p, z: (V), may alias.
static void row_lse_and_probs(double *lse, float *p, const float *z, int V) {
    float max = z[0];
    for (int v = 1; v < V; v++) if (z[v] > max) max = z[v];
    double sum = 0.0;
    for (int v = 0; v < V; v++) sum += exp((double)z[v] - max);
    *lse = max + log(sum);
    for (int v = 0; v < V; v++) p[v] = (float)exp((double)z[v] - *lse);
}

tw_status tw_cross_entropy_forward(float *loss, float *losses, float *probs, const float *logits,
                                   const int *targets, int T, int V, int ignore_index) {
    int n = 0;
    tw_status st = check_targets(targets, T, V, ignore_index, &n);
    if (st != TW_OK) return st;
    double total = 0.0;
    for (int t = 0; t < T; t++) {
        const float *z = logits + (size_t)t * V;   // (V)
        float *p = probs + (size_t)t * V;          // (V), may be z
        const int y = targets[t];
        const float z_y = y == ignore_index ? 0.0f : z[y];   // read before p overwrites it
        double lse;
        if (!tw_simd_cross_entropy_row(&lse, p, z, V)) row_lse_and_probs(&lse, p, z, V);
        const double l = y == ignore_index ? 0.0 : lse - z_y;
        if (losses) losses[t] = (float)l;
        total += l;
    }
    *loss = n > 0 ? (float)(total / n) : 0.0f;
    return TW_OK;
}

tw_status tw_cross_entropy_backward(float *dlogits, float dloss, const float *probs,
                                    const int *targets, int T, int V, int ignore_index) {
    int n = 0;
    tw_status st = check_targets(targets, T, V, ignore_index, &n);
    if (st != TW_OK || n == 0) return st;
    const float scale = dloss / (float)n;   // the mean spreads the upstream gradient over n
    for (int t = 0; t < T; t++) {
        const int y = targets[t];
        if (y == ignore_index) continue;
        const float *p = probs + (size_t)t * V;
        float *d = dlogits + (size_t)t * V;
        for (int v = 0; v < V; v++) d[v] += scale * (p[v] - (v == y ? 1.0f : 0.0f));
    }
    return TW_OK;
}

tw_status tw_cross_entropy_grad(float *dlogits, float dloss, const float *probs,
                                const int *targets, int T, int V, int ignore_index) {
    int n = 0;
    tw_status st = check_targets(targets, T, V, ignore_index, &n);
    if (st != TW_OK) return st;
    const float scale = n > 0 ? dloss / (float)n : 0.0f;   // as the backward's
    for (int t = 0; t < T; t++) {
        const int y = targets[t];
        float *d = dlogits + (size_t)t * V;
        if (y == ignore_index || n == 0) {
            for (int v = 0; v < V; v++) d[v] = 0.0f;
            continue;
        }
        // 0.0f + x: the bits of x added onto a zeroed element (a -0 product becomes +0); and
        // p - 0.0f is p. The target's element apart, so that the two loops carry no test.
        const float *p = probs + (size_t)t * V;
        for (int v = 0; v < y; v++) d[v] = 0.0f + scale * p[v];
        d[y] = 0.0f + scale * (p[y] - 1.0f);
        for (int v = y + 1; v < V; v++) d[v] = 0.0f + scale * p[v];
    }
    return TW_OK;
}
