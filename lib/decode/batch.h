// batch.h: batched decoding. One forward pass over R rows that belong to different sequences at
// different positions: row r is token tokens[r] of the sequence whose block table is tables[r], at
// position pos[r]. The Linear layers (attention's four projections, the FFN, the head) run once
// over all R rows, so each weight read from memory feeds R tokens instead of one; attention stays
// per row, against its own sequence's keys and values in a paged cache (decode/paged_cache.h).
// Rows of one sequence may appear several times in a call (a prompt's prefill, in order of
// position): every row's key and value are stored before any row attends, so row r sees its
// sequence's positions 0 .. pos[r].
//
// Each row's logits are bit for bit those of decoding its sequence alone, one position at a time
// with tw_model_forward_next, at the naive, AVX2, AVX-512 (tests/test_batch.c) and NEON levels
// (lesson 28 under qemu): the Linear layers run the decode's own matvec sums for several rows at
// once (tw_linear_forward_rows: register-blocked at AVX2 and AVX-512, the matvec on blocks of W's
// rows elsewhere), and every other step is the same function on the same row, attention
// included (the fused one-query kernel, or tw_sdpa_forward as tw_mha_forward falls back to). At
// the AVX2 and AVX-512 levels attention reads each sequence's keys and values in place in the pool
// (tw_simd_attend_one_rows: the fused kernel's bits, without copying the rows out first).
// (A prompt prefilled as rows here differs from tw_model_forward's prefill over T positions,
// which runs the matmul kernels: docs/serving.md.)
// With b->panels set (the caller's packed weights, decode/batch_panels.h) the Linear layers run
// another order of the same sums instead: within rounding of decoding alone, not bit for bit, and
// still the same bits for a row whatever other rows share its call.
// Pre-norm models only (GPT-2, Llama, Qwen3 styles): TW_ERR_ARG for the 2017 style.
#ifndef TW_BATCH_H
#define TW_BATCH_H
#include "core/status.h"
#include "nn/model.h"
#include "decode/paged_cache.h"
#include "decode/batch_panels.h"

typedef struct {
    const tw_model *m;
    tw_paged_pool   pool;      // every sequence's keys and values
    int    R_max, S_max;       // most rows per call, longest sequence
    float *x;                  // (R_max, C) the residual stream
    float *xn;                 // (R_max, C) after a norm
    float *q, *k, *v;          // (R_max, H*D), (R_max, G*D), (R_max, G*D) the projections
    float *z;                  // (R_max, H*D) attention's heads side by side
    float *sub_out;            // (R_max, C) a sub-layer's output (attention, then the FFN)
    float *f1, *f2, *f3;       // (R_max, F) SwiGLU gate, up, act; classic FFN pre, hidden
    float *kg, *vg;            // (S_max, G*D) one sequence's keys and values, gathered
    float *scores, *pattern;   // (S_max) one head's
    float *logits;             // (R_max, V) the rows that asked for logits, in row order
    float *kh, *vh;            // (S_max, D) one kv head's keys and values, contiguous (levels
                               // without a fused one-query attention kernel)
    double *rope_freq;         // (D/2) RoPE's frequencies (scaled if the model says so)
    double  rope_mag;          // and its magnitude (YaRN's attention factor, else 1)
    float *rope_cos, *rope_sin;  // (R_max, D/2) each row's angles at its position, this call
    const float **k_rows, **v_rows;  // (S_max) one sequence's key and value rows in the pool
                                     // (levels with tw_simd_attend_one_rows: no gather)
    float *head_scratch;       // tw_linear_packed_argmax_floats(R_max): the greedy head's
    const tw_batch_panels *panels;   // NULL (tw_batch_init): the decode's bits, as above; the
                                     // caller's packed weights: the fast Linear (batch_panels.h)
} tw_batch;

// 1 if batched decoding runs model m: pre-norm, with RoPE or learned positions (not 2017's).
int tw_batch_supports(const tw_model *m);

// A batch for model m: up to R_max rows per call, sequences of up to S_max positions, a pool of
// n_blocks blocks of block_size positions. TW_ERR_ARG for a post-norm model or bad sizes.
tw_status tw_batch_init(tw_batch *b, const tw_model *m, int R_max, int S_max, int block_size,
                        int n_blocks);
void      tw_batch_free(tw_batch *b);   // safe on a zeroed struct

// One forward pass over R rows. tables[r] must already hold room for position pos[r]
// (tw_block_table_reserve on b->pool). want[r] = 1 asks for row r's logits (NULL: every row); the
// j-th row that asked gets b->logits + j*V. TW_ERR_SHAPE for a token outside the vocabulary,
// TW_ERR_ARG for R or a position out of range.
tw_status tw_batch_forward(tw_batch *b, tw_block_table *const tables[], const int *tokens,
                           const int *pos, const unsigned char *want, int R);

// The same pass for greedy decoding: the j-th row that asked gets its next token, next[j] =
// tw_argmax of the logits tw_batch_forward would give it. With panels the head's argmax runs
// inside its kernel (tw_linear_packed_argmax): the logits, R x V floats, never reach memory, and
// b->logits is not written. Without, the logits are computed into b->logits and their argmax
// taken.
//   next: (R) at least the number of rows that asked
tw_status tw_batch_forward_greedy(tw_batch *b, tw_block_table *const tables[], const int *tokens,
                                  const int *pos, const unsigned char *want, int R, int *next);

#endif
