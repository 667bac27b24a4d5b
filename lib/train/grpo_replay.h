// grpo_replay.h: the samples and rewards of a GRPO run, as four .npy files in a folder
// (./train --grpo-dump DIR writes them, --grpo-replay DIR trains on them instead of sampling;
// tests/golden/gen_grpo.py writes them for its PyTorch run):
//   tokens.npy      (steps, n, T) int32: row i of step s is sample i's prompt then its completion,
//                   padded with anything after its length
//   prompt_len.npy  (steps, n) int32   len.npy (steps, n) int32   rewards.npy (steps, n) float32
// n = prompts per step x G. A reader of untrusted files: every shape, length, token and reward is
// checked before use.
#ifndef TW_GRPO_REPLAY_H
#define TW_GRPO_REPLAY_H
#include <stddef.h>
#include "core/status.h"
#include "formats/npy.h"
#include "train/grpo.h"

typedef struct {
    tw_npy tokens, prompt_len, len, rewards;
    long   steps;
    int    n, T_max;
} tw_grpo_replay;

// Reads and checks the folder dir for n samples a step, a vocabulary of V and a context of
// max_seq: 1 <= prompt_len < len <= T <= max_seq, tokens in [0, V) within each length, finite
// rewards. On failure one line in err naming the file and the problem, *r zeroed, and
// TW_ERR_IO (a file cannot be read) or TW_ERR_FORMAT.
tw_status tw_grpo_replay_read(tw_grpo_replay *r, const char *dir, int n, int V, int max_seq,
                              char *err, size_t err_len);
void      tw_grpo_replay_free(tw_grpo_replay *r);   // safe on a zeroed struct

// Step s's samples as a batch that points into r (nothing copied). 0 <= s < r->steps.
tw_grpo_batch tw_grpo_replay_batch(const tw_grpo_replay *r, long s);

#endif
