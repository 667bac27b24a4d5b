// beam.h: beam search, the decoding strategy that keeps the `width` most likely continuations
// instead of one.
//
// At every step each kept sequence (a beam) is extended by every token of the vocabulary, and of
// these width x V candidates the `width` with the largest total log-probability are kept. Width 1
// is greedy decoding (argmax at every step). A width of V^(steps-1) or more keeps every sequence
// that could still win, so the search is then exhaustive and returns the most likely sequence
// of `steps` tokens. Between those, beam search is a heuristic: it can miss the best sequence.
//
// The model is a callback that returns the log-probabilities of the next token after a prefix,
// so the same function decodes a real checkpoint (lesson 17) or a tiny table (tests/test_beam.c).
// Sequences have a fixed length: an end-of-text token is an ordinary token here.
// Ties are broken towards the earlier beam, then the lower token id, so results are reproducible.
#ifndef TW_BEAM_H
#define TW_BEAM_H
#include "core/status.h"

// Writes logprobs (V): log P(next token | prefix), prefix holding len tokens. Returns TW_OK, or
// an error that stops the search and is passed back to the caller.
typedef tw_status (*tw_next_logprobs_fn)(float *logprobs, const int *prefix, int len, void *ctx);

typedef struct {
    int    width, V, max_len;   // beams kept, vocabulary size, longest sequence (prompt + steps)
    int   *tokens;              // (width, max_len) the kept sequences
    int   *next_tokens;         // (width, max_len) the sequences being chosen for the next step
    float *scores;              // (width) total log-probability of each kept sequence's new tokens
    float *next_scores;         // (width)
    float *logprobs;            // (V) scratch for the callback
} tw_beam;

// TW_ERR_ARG unless width >= 1, V >= 1, max_len >= 1; TW_ERR_NOMEM if allocation fails.
tw_status tw_beam_init(tw_beam *b, int width, int V, int max_len);
void      tw_beam_free(tw_beam *b);   // safe on a zeroed struct; zeroes it again

// Continues prompt (n_prompt >= 1 tokens) by `steps` tokens.
//   out: (steps) the new tokens of the most likely kept sequence
//   out_logprob: its total log-probability (sum over the steps), or NULL
// TW_ERR_ARG if n_prompt + steps > b->max_len or steps < 0; otherwise the callback's status.
tw_status tw_beam_search(int *out, float *out_logprob, tw_beam *b, const int *prompt, int n_prompt,
                         int steps, tw_next_logprobs_fn next, void *ctx);

#endif
