// batches.c: the training data's windows, in file order or a seeded order (see batches.h).
#include <stdlib.h>
#include <string.h>
#include "train/batches.h"
#include "core/rng.h"

void tw_split_tokens(long *n_train, long *n_val, long n, double val_frac) {
    if (!(val_frac > 0.0)) val_frac = 0.0;   // also NaN
    if (val_frac >= 1.0) val_frac = 0.0;
    long v = (long)((double)n * val_frac);
    *n_val = v;
    *n_train = n - v;
}

tw_status tw_batcher_init(tw_batcher *b, const int *tokens, long n, int B, int T, int shuffle,
                          uint64_t seed) {
    memset(b, 0, sizeof *b);
    if (B < 1 || T < 1) return TW_ERR_ARG;
    if (n < (long)T + 1) return TW_ERR_SHAPE;
    b->tokens = tokens;
    b->n = n;
    b->B = B;
    b->T = T;
    b->shuffle = shuffle != 0;
    b->seed = seed;
    b->n_windows = (n - 1) / T;
    b->perm_epoch = -1;
    if (b->shuffle) {
        b->perm = malloc((size_t)b->n_windows * sizeof *b->perm);
        if (b->perm == NULL) return TW_ERR_NOMEM;
    }
    return TW_OK;
}

void tw_batcher_free(tw_batcher *b) {
    free(b->perm);
    memset(b, 0, sizeof *b);
}

// perm = a uniformly random order of 0 .. n_windows-1 for this epoch (Fisher-Yates, drawing
// j in [0, i] as the top bits of a 64-bit draw times i + 1, which is unbiased enough for n << 2^32).
static void make_permutation(tw_batcher *b, long epoch) {
    tw_rng r;
    tw_rng_init(&r, b->seed + (uint64_t)epoch);
    for (long i = 0; i < b->n_windows; i++) b->perm[i] = i;
    for (long i = b->n_windows - 1; i > 0; i--) {
        long j = (long)(((tw_rng_next(&r) >> 32) * (uint64_t)(i + 1)) >> 32);
        long t = b->perm[i]; b->perm[i] = b->perm[j]; b->perm[j] = t;
    }
    b->perm_epoch = epoch;
}

long tw_batcher_start(tw_batcher *b, long step, int row) {
    const long k = step * b->B + row;   // the k-th window the run takes
    if (!b->shuffle) {
        // (k T) mod (n - T), without overflow for any realistic k: reduce k first.
        const long m = b->n - b->T;
        return (long)(((unsigned long long)(k % m) * (unsigned long long)b->T) % (unsigned long long)m);
    }
    const long epoch = k / b->n_windows;
    if (epoch != b->perm_epoch) make_permutation(b, epoch);
    return b->perm[k % b->n_windows] * b->T;
}

void tw_batcher_fill(int *inputs, int *targets, tw_batcher *b, long step) {
    const int T = b->T;
    for (int r = 0; r < b->B; r++) {
        const int *w = b->tokens + tw_batcher_start(b, step, r);
        memcpy(inputs + (size_t)r * T, w, (size_t)T * sizeof *inputs);
        memcpy(targets + (size_t)r * T, w + 1, (size_t)T * sizeof *targets);
    }
}
