// serve.h: serving a stream of requests with batched decoding (decode/batch.h): static batching
// against continuous batching (Yu et al. 2022, "Orca"; the vLLM paper, Kwon et al. 2023).
//
//   static      take up to `slots` requests that have arrived, prefill them together, decode until
//               the longest is done (a finished request keeps its slot, idle), then the next batch;
//   continuous  at every step, a finished request leaves and gives its cache blocks back, and a
//               waiting request that has arrived takes the free slot at once: its prompt is
//               prefilled in the same step as the others' decoding.
//
// A finished request of a static batch holds its slot but adds no rows (no padding is computed):
// what static batching loses here is the idle slots, not wasted arithmetic.
//
// The clock of the schedule is the engine's step (one tw_batch_forward call): arrivals are given
// in steps, so a run's decisions, and every figure counted in steps, are the same on every
// machine and every run. Seconds are the measured durations of those steps, summed.
#ifndef TW_SERVE_H
#define TW_SERVE_H
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "decode/batch.h"

typedef struct {
    int arrival;      // the step from which it can be admitted
    int prompt_len;   // tokens of its prompt (random ids, seeded by its index)
    int output_len;   // tokens it asks for (decoding does not stop earlier)
} tw_request;

// n requests, seeded: the gaps between arrivals exponential with mean `gap` steps (rounded down,
// so several can arrive at one step), prompt lengths uniform in [p_min, p_max], output lengths
// uniform in [o_min, o_max].
void tw_requests_generate(tw_request *r, int n, uint64_t seed, double gap, int p_min, int p_max,
                          int o_min, int o_max);

// The prompt of request i: BOS (id 1), then len - 1 ids in 3 .. V-1 drawn from a stream seeded
// by i.   tokens: (len)
void tw_request_prompt(int *tokens, int len, int i, int V);

// A request stream file (docs/serving.md): text, one request a line, "ARRIVAL PROMPT_LEN OUTPUT_LEN"
// (integers: the arrival step >= 0, in order; the lengths >= 1); blank lines and lines starting
// with '#' are skipped. On success *r (malloc'ed: the caller frees it) holds *n >= 1 requests.
// Otherwise one line in err naming the file, the line and the problem: TW_ERR_IO (cannot open,
// not a regular file), TW_ERR_FORMAT (a line that does not parse, arrivals out of order, no
// requests), TW_ERR_NOMEM.
tw_status tw_requests_read(tw_request **r, int *n, const char *path, char *err, size_t err_len);
// Writes requests in that format (atomically: a complete file or none). TW_ERR_IO with err.
tw_status tw_requests_write(const char *path, const tw_request *r, int n, char *err, size_t err_len);

typedef enum { TW_BATCH_STATIC = 0, TW_BATCH_CONTINUOUS } tw_batching;

// What happened to one request: steps are counted on the engine's clock, seconds measured.
typedef struct {
    int    admit_step;            // the step it was admitted (its prompt's prefill)
    int    first_step, last_step; // the steps that produced its first and its last token
    double arrival_s;             // seconds when its arrival step began
    double first_s, last_s;       // seconds at the end of the steps of its first and last token
} tw_request_timing;

typedef struct {
    long   steps;        // forward passes
    long   rows;         // rows over all passes (prefill and decode)
    long   tokens;       // output tokens
    double seconds;      // sum of the passes' measured durations
    int    peak_blocks;  // most cache blocks held at once
} tw_serve_stats;

// Runs every request to completion, at most `slots` at once, greedy. A step takes one row for
// every decoding sequence first, then prompt rows of newly admitted ones up to b->R_max (a long
// prompt is prefilled over several steps). b's pool must hold `slots` sequences of the longest
// prompt + output; slots < b->R_max. tokens_out, if not NULL: (n) arrays receiving each request's
// output_len tokens. Requests must come in order of arrival. TW_ERR_ARG for a request that does
// not fit, TW_ERR_NOMEM (also when the pool runs out of blocks).
tw_status tw_serve_run(tw_batch *b, const tw_request *req, int n, int slots, tw_batching kind,
                       tw_request_timing *timing, tw_serve_stats *stats, int *const tokens_out[]);

// The p-th percentile (0..100) of x (n > 0) by the nearest-rank rule; x is sorted in place.
double tw_percentile(double *x, int n, double p);

#endif
