// sampler.h: choosing the next token from logits: greedy (argmax), temperature, and top-p
// (nucleus, Holtzman et al. 2019). Reproducible: the random state is a plain struct seeded by the
// caller, and the sampling procedure follows llama2.c's observable behaviour, so that for the
// same seed, temperature and top-p the same tokens come out:
//   - temperature 0: argmax (the first index on ties); no random number is drawn.
//   - otherwise: logits / temperature, softmax, then one uniform number u in [0, 1) per token
//     from xorshift64* (Vigna 2014: x ^= x >> 12; x ^= x << 25; x ^= x >> 27; the draw is the high
//     32 bits of x * 0x2545F4914F6CDD1D, and u = (draw >> 8) / 2^24);
//   - top-p outside (0, 1): the first index whose cumulative probability exceeds u;
//   - top-p in (0, 1): candidates with probability >= (1 - p) / (V - 1) sorted by probability,
//     descending (ties: lower id first; llama2.c leaves tie order to qsort); keep the shortest
//     prefix whose mass exceeds p, and pick within it by u times that mass.
#ifndef TW_SAMPLER_H
#define TW_SAMPLER_H
#include "core/status.h"

typedef struct { float prob; int index; } tw_prob_index;

typedef struct {
    int            vocab_size;   // V
    float          temperature;  // 0: greedy
    float          topp;         // nucleus mass; <= 0 or >= 1 samples the whole distribution
    uint64_t       state;        // xorshift64* state (never 0)
    float         *probs;        // (V) scratch
    tw_prob_index *candidates;   // (V) scratch for top-p
} tw_sampler;

// seed must be non-zero (xorshift has a fixed point at 0): TW_ERR_ARG otherwise, or for V < 1,
// temperature < 0 or a NaN top-p.
tw_status tw_sampler_init(tw_sampler *s, int vocab_size, float temperature, float topp, uint64_t seed);
void      tw_sampler_free(tw_sampler *s);   // safe on a zeroed struct; zeroes it again

// The next token for logits (V), which are not modified.
int tw_sampler_sample(tw_sampler *s, const float *logits);

// The distribution tw_sampler_sample draws from for these logits (what speculative decoding needs
// of both models): a one-hot at the argmax for temperature 0; else softmax(logits / temperature),
// and with top-p in (0, 1) only the nucleus tw_sampler_sample picks from, renormalised to sum 1.
// Uses the sampler's scratch; draws no random number.
//   probs: (V) out   logits: (V)
void tw_sampler_distribution(tw_sampler *s, float *probs, const float *logits);

// The first index whose running sum of probs (n) exceeds u in [0, 1) (the last index if rounding
// leaves the total just below u): a draw from probs.
int tw_sample_cumulative(const float *probs, int n, float u);

// Index of the largest of x (n); the first one on ties; a NaN never wins (x[0] NaN: 0). The level's
// vector kernel when it has one (simd.h), else tw_argmax_naive (declared there): the same index.
int tw_argmax(const float *x, int n);
int tw_argmax_naive(const float *x, int n);   // the reference loop

// The sampler's random stream, exposed for tests: next 32-bit draw, and u in [0, 1).
uint32_t tw_sampler_next_u32(tw_sampler *s);
float    tw_sampler_next_f32(tw_sampler *s);

#endif
