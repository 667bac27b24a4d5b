// Exercise 21: beam search (lesson 17).
// Greedy decoding keeps one sequence; beam search keeps the `width` best. At each step, every
// kept sequence is extended by every token of the vocabulary (next() gives their log-probabilities
// after that sequence), each candidate's score is its sequence's score plus the token's
// log-probability, and the `width` best candidates of ALL of them (width x V) survive: two of them
// may extend the same sequence while another sequence dies. On a tie, the earlier sequence wins,
// then the lower token id. Keep the sequences best first, so the answer is the first one.
// Check it with:  make exercise21
#include "concepts.h"

int ex_beam_search(int *out, float *out_logprob, const int *prompt, int n_prompt, int steps,
                   int width, int V, ex_next_logprobs next, void *ctx) {
    // TODO: write the best sequence's new tokens to out and its log-probability. Delete these lines.
    (void)out; (void)out_logprob; (void)prompt; (void)n_prompt; (void)steps; (void)width; (void)V;
    (void)next; (void)ctx;
    ex_not_implemented();
    return 0;
}
