// pairs.h: the preference pairs file of ./train --dpo (train/dpo.h): for each pair a prompt, the
// completion people (or a rule) chose, and the one they rejected, as token ids.
//
// Layout, little-endian (the issue fixed it; outside programs write it):
//   "pref"                           4 bytes
//   int32 version                    1
//   int32 n                          number of pairs, >= 1
//   n times:
//     int32 n_prompt, n_chosen, n_rejected     each >= 1
//     uint16 tokens: the prompt's n_prompt, then the chosen's n_chosen, then the rejected's
// and nothing after the last pair. A completion is read after its prompt: the model sees
// n_prompt + n_completion - 1 positions (the last token is only a target), which must fit its
// context (max_seq); every token must be below its vocabulary.
#ifndef TW_PAIRS_H
#define TW_PAIRS_H
#include <stddef.h>
#include "core/status.h"

#define TW_PAIRS_VERSION 1

typedef struct {
    long  n;       // pairs
    int  *len;     // (n, 3) the lengths of pair i: prompt, chosen, rejected
    long *off;     // (n) where pair i's prompt starts in tok; its chosen follows, then its rejected
    int  *tok;     // (n_tok) every token, pair after pair, in file order
    long  n_tok;
    long  cap_pairs, cap_tok;   // allocated room (tw_pairs_add grows it)
} tw_pairs;

// Reads path. Checks: the magic and version, n >= 1, every length >= 1, prompt + completion - 1
// <= max_seq for both completions, every token < vocab, and the file size exactly. One line in err
// naming the path and what to do on failure: TW_ERR_IO (unreadable, not a regular file),
// TW_ERR_FORMAT (not a pairs file, bad count or length, truncated, bytes after the last pair),
// TW_ERR_SHAPE (a pair longer than the context, a token outside the vocabulary), TW_ERR_NOMEM.
// On failure *p is zeroed; on success the caller frees it with tw_pairs_free.
tw_status tw_pairs_read(tw_pairs *p, const char *path, int vocab, int max_seq, char *err, size_t err_len);

// Appends one pair (copies the tokens; each length >= 1). TW_ERR_ARG, TW_ERR_NOMEM.
tw_status tw_pairs_add(tw_pairs *p, const int *prompt, int n_prompt, const int *chosen, int n_chosen,
                       const int *rejected, int n_rejected);

// Writes p to path atomically (formats/atomic_file.h): whole or not at all. TW_ERR_ARG (no pairs,
// a token outside uint16), TW_ERR_IO; one line in err.
tw_status tw_pairs_write(const char *path, const tw_pairs *p, char *err, size_t err_len);

void tw_pairs_free(tw_pairs *p);   // safe on a zeroed struct; zeroes it

// Pair i's token arrays.
static inline const int *tw_pairs_prompt(const tw_pairs *p, long i) { return p->tok + p->off[i]; }
static inline const int *tw_pairs_chosen(const tw_pairs *p, long i) { return p->tok + p->off[i] + p->len[3 * i]; }
static inline const int *tw_pairs_rejected(const tw_pairs *p, long i) {
    return p->tok + p->off[i] + p->len[3 * i] + p->len[3 * i + 1];
}

#endif
