// mask.h: the loss mask of supervised fine-tuning (./train --mask FILE.bin): one byte per token
// of the --tokens file, 1 where that token counts as a target, 0 where it does not (the prompt
// of an instruction, which the model reads but is not trained to write). A target whose byte is 0
// becomes TW_IGNORE_INDEX (train/loss.h), so the step's loss is the mean over the counted targets
// of all its rows together (train/forward_backward.h), and a step with none has no loss at all.
#ifndef TW_MASK_H
#define TW_MASK_H
#include <stddef.h>
#include "core/status.h"
#include "train/batches.h"

// Reads a mask file of exactly n_tokens bytes, each 0 or 1. One line in err naming the path on
// failure (TW_ERR_IO: unreadable; TW_ERR_FORMAT: wrong length or a byte that is not 0 or 1).
// *mask is malloc'd (the caller frees) on success, NULL otherwise.
tw_status tw_mask_read(unsigned char **mask, const char *path, long n_tokens, char *err, size_t err_len);

// Applies the mask to the targets of step `step` that b filled (tw_batcher_fill): target t of
// row r is the token at tw_batcher_start(b, step, r) + t + 1, ignored when its mask byte is 0.
// Returns the number of targets still counted.   targets: (B, T)   mask: (b->n) at least
long tw_mask_apply(int *targets, const unsigned char *mask, tw_batcher *b, long step);

#endif
