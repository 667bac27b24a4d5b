// batches.h: which tokens each training step sees. A token stream of n tokens is split into a
// training part and a validation part; a step of B rows of T positions takes, for row r, the
// T + 1 tokens starting at some position: inputs are the first T, targets the last T (each
// target is the token after its input).
//
// In file order (shuffle 0), row r of step s (both from 0) starts at
//     ((s*B + r) * T) mod (n - T)
// where n is the training part's token count: the rule of ./train --no-shuffle, simple enough to
// reproduce in any framework. Shuffled (shuffle 1), the windows starting at 0, T, 2T, ... (every
// one with T + 1 tokens inside the data: n_windows = (n - 1) / T of them) are visited in a seeded
// random order, a fresh permutation per epoch (Fisher-Yates with tw_rng seeded by seed + epoch),
// so the start of window number k = s*B + r is a pure function of (seed, k): a resumed run sees
// exactly the batches an uninterrupted one would.
#ifndef TW_BATCHES_H
#define TW_BATCHES_H
#include <stdint.h>
#include "core/status.h"

typedef struct {
    const int *tokens;   // (n) the training tokens (not owned)
    long       n;
    int        B, T;
    int        shuffle;  // 0: file order; 1: seeded permutation per epoch
    uint64_t   seed;
    long       n_windows;   // shuffled: windows per epoch
    long      *perm;        // (n_windows) the current epoch's order, when shuffled
    long       perm_epoch;  // which epoch perm holds (-1: none yet)
} tw_batcher;

// The validation split: the last val_frac of n tokens (rounded down) are held out, the rest
// trains. *n_train + *n_val = n. val_frac in [0, 1).
void tw_split_tokens(long *n_train, long *n_val, long n, double val_frac);

// TW_ERR_SHAPE if n < T + 1 (too short for one row), TW_ERR_ARG for B < 1 or T < 1,
// TW_ERR_NOMEM. Free with tw_batcher_free.
tw_status tw_batcher_init(tw_batcher *b, const int *tokens, long n, int B, int T, int shuffle,
                          uint64_t seed);
void      tw_batcher_free(tw_batcher *b);   // safe on a zeroed struct

// The first token of row r of step s.
long tw_batcher_start(tw_batcher *b, long step, int row);

// Fills inputs and targets, both (B, T), for step s.
void tw_batcher_fill(int *inputs, int *targets, tw_batcher *b, long step);

#endif
