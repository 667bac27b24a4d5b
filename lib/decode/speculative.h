// speculative.h: speculative decoding (Leviathan, Kalman and Matias 2023; Chen et al. 2023).
//
// A small draft model proposes k tokens one at a time; the target model scores all of them in
// one forward pass over k + 1 positions; a rule keeps a prefix of the proposals and adds one token
// of its own, so every target pass yields between 1 and k + 1 tokens. The rule, for a drafted
// token x drawn from the draft's distribution q where the target's is p:
//   accept x with probability min(1, p[x] / q[x]);
//   on the first rejection, draw from the residual r = max(0, p - q) / sum(max(0, p - q)), stop;
//   if all k are accepted, draw one more token from the target's next distribution.
// Each emitted token is then distributed exactly as p: P(y) = min(p[y], q[y]) + (rejection mass)
// * r[y] = min(p[y], q[y]) + max(0, p[y] - q[y]) = p[y] (tw_spec_emit_dist computes it). With
// temperature 0 both p and q are one-hot, so a proposal is kept exactly when it is the target's
// argmax and the residual is the target's argmax: greedy decoding of the target.
#ifndef TW_SPECULATIVE_H
#define TW_SPECULATIVE_H
#include "core/status.h"
#include "nn/model.h"
#include "decode/sampler.h"
#include "decode/batch.h"

// ---- the rule, on explicit distributions ----

// 1 if the drafted token x is accepted for the uniform draw u in [0, 1): u < p[x] / q[x], written
// u * q[x] < p[x] so that q[x] = 0 (never drawn) cannot divide by zero.   p, q: (V)
int tw_spec_accept(const float *p, const float *q, int x, float u);
// The residual r = max(0, p - q) / its sum, then a draw from it with u. If the sum is 0 (p == q:
// rejection has probability 0, reached only through rounding) r is p.   r: (V) out   p, q: (V)
int tw_spec_residual_sample(float *r, const float *p, const float *q, int V, float u);
// The exact distribution of the token one position of the rule emits, in double:
//   out[y] = q[y] min(1, p[y]/q[y]) + (sum_x q[x] (1 - min(1, p[x]/q[x]))) r[y].   out: (V)
// When p and q each sum to 1 it equals p, whatever q is (tests/test_speculative.c enumerates it
// on distributions whose floats sum to exactly 1).
void tw_spec_emit_dist(double *out, const float *p, const float *q, int V);

// ---- decoding with two models ----

// The draft and target of one generation, with their states and the counters printed at the end.
// The caller owns the models, the sampler and seq; tw_spec_init allocates the rest.
typedef struct {
    const tw_model *target, *draft;
    tw_batch        tb;              // the target's passes: rows of one sequence (decode/batch.h)
    tw_block_table  table;           // the target's cache, in tb's pool
    tw_model_state  ds;              // the draft's state, with a KV cache of `steps`
    int             k;               // most tokens drafted per round
    int             steps;           // positions to run (the caches' length)
    int             target_valid;    // positions 0 .. target_valid-1 of the target cache hold seq
    int             draft_valid;     // the same for the draft cache
    int             have_last;       // 1: last_logits is the target's output after seq[n - 1]
    float          *last_logits;     // (V) the prompt's last logits, from the prefill
    float          *p, *q;           // (k + 1, V) target, (k, V) draft distributions of a round
    float          *r;               // (V) residual scratch
    int            *drafted;         // (k) the round's proposals
    int            *rows;            // (k + 1) the tokens of the target's pass
    int            *pos;             // (k + 1) their positions
    tw_block_table **tables;         // (k + 1) each &table
    long            rounds, proposed, accepted, emitted;   // target passes and token counts
    long            tested;          // proposals the rule looked at: a round stops at its first
                                     // rejection, so accepted / tested is the acceptance rate
} tw_spec;

// TW_ERR_ARG unless both models share the vocabulary, k >= 1, 1 <= n_prompt <= steps, both
// contexts hold steps positions and the target is pre-norm (decode/batch.h); TW_ERR_NOMEM.
// Prefills the target with the prompt as plain decoding does (tw_model_forward_next over the
// n_prompt positions), so that with every later position run as rows of the batch (the decode's
// own arithmetic, decode/batch.h), greedy speculative decoding gives plain greedy decoding's
// tokens bit for bit.   prompt: (n_prompt)
tw_status tw_spec_init(tw_spec *sp, const tw_model *target, const tw_model *draft, int k, int steps,
                       const int *prompt, int n_prompt);
void      tw_spec_free(tw_spec *sp);   // safe on a zeroed struct

// A draft made of the target's own first n_layer layers, read through its final norm and head
// (the logit lens of lesson 18): a view that shares m's weights (never tw_model_free it).
// TW_ERR_ARG unless 1 <= n_layer <= m's layers.
tw_status tw_spec_layer_draft(tw_model *view, const tw_model *m, int n_layer);

// One round after seq[0 .. *n): the draft proposes up to k tokens (fewer near `steps`), the target
// scores them in one forward pass, the rule keeps a prefix and draws one more. Appends the kept
// tokens and the drawn one to seq (room for steps + 1 tokens) and advances *n by their number
// (1 .. k + 1). Needs *n <= steps. The sampler gives the temperature, top-p and random draws.
tw_status tw_spec_round(tw_spec *sp, tw_sampler *sampler, int *seq, int *n);

#endif
