// check_finite.h: an optional check mode that finds the first NaN or Inf in a set of tensors and
// names it, so a run that goes wrong says where instead of printing garbage.
//
// Nothing in lib/ calls these on its own: the kernels stay branch-free and fast, and a NaN in an
// input propagates through them as IEEE arithmetic says (tw_softmax_rows documents its NaN/+inf
// contract). A program opts in (./generate --check-finite or TW_CHECK_FINITE=1) and checks the
// tensors of each step in the order they were computed, so the first tensor reported is where the
// problem appeared, not where it ended up.
#ifndef TW_CHECK_FINITE_H
#define TW_CHECK_FINITE_H
#include <stddef.h>
#include "core/status.h"
#include "nn/model.h"

// Index of the first element of x (n) that is NaN, +Inf or -Inf; -1 if every element is finite
// (also for n <= 0).
long tw_first_nonfinite(const float *x, long n);

// One tensor to check: a name for messages (e.g. "L3.attn_out") and its elements.
typedef struct {
    const char  *name;
    const float *data;    // (count); NULL is allowed when count is 0
    long         count;
} tw_named_tensor;

// Checks tensors[0 .. n) in order. Returns the index of the first tensor holding a non-finite
// value (and its element index in *elem, if elem is not NULL), or -1 when all are finite.
int tw_first_nonfinite_tensor(const tw_named_tensor *tensors, int n, long *elem);

// The same, as a status: TW_OK when everything is finite, else TW_ERR_ARG with one line in err,
// e.g. "L1.ffn_out[37] is nan (first non-finite tensor of 21 checked)". `where` (may be NULL)
// is prepended, e.g. "position 12".
tw_status tw_check_finite(const tw_named_tensor *tensors, int n, const char *where,
                          char *err, size_t err_len);

// Checks every intermediate of the last tw_model_forward(s, m, tokens, T, pos0) call (all_logits
// 1) or tw_model_forward_next (all_logits 0: only the last logits row exists), in the order they
// were computed, named exactly as the dump names its files: "embed", then for each layer l every
// tensor of tw_block_tensors the model has as "L{l}.<name>" (attn_in, attn_norm, q, ..., ffn_out,
// resid_post), then "final_norm" and "logits". Attention scores are skipped (-inf is how they
// mark hidden keys), and so are working rows and norm statistics. Returns TW_OK, TW_ERR_ARG with
// one line in err (as tw_check_finite), or TW_ERR_NOMEM.
tw_status tw_model_check_finite(const tw_model_state *s, const tw_model *m, int T, int all_logits,
                                const char *where, char *err, size_t err_len);

#endif
