// dist.h: data-parallel training over P processes, with exact gradient accumulation and ZeRO-1.
//
// Every process holds the whole model. A step's global batch has G = B * P * K rows: process p,
// micro-step j (of K), row r (of B) takes global row g = (j P + p) B + r, whose window comes from
// a batcher made for G rows (train/batches.h): row g of step s. Each micro-batch's gradient is
// computed into a zeroed buffer (the first into the trainer's own, zeroed), a process adds its K
// micro-batches in order, and the P processes' sums are added in rank order by a deterministic
// reduce-scatter (each process receives every process's copy of its own shard and adds them
// p = 0, 1, .., P-1). So for K = 1 the gradient is ((b_0 + b_1) + b_2) + ..., exactly what one
// process with K' = P micro-batches computes: `mpirun -np P` and `--grad-accum P` give the same bits.
//
// Buckets: the gradient is cut into buckets that the backward pass finishes one after another:
// the final norm and head, layer L-1, ..., layer 0, the embeddings (the parameters' table order
// keeps each layer's tensors together). Each bucket is reduced on its own, and with a whole batch
// on one thread (no --threads split) its exchange starts (nonblocking) as soon as the backward
// pass has finished that layer for the last sequence, overlapping the layers below.
//
// The gradient norm is the square root of the sum, in order, of the float64 sums of squares of
// blocks of TW_DIST_CHUNK floats counted from each bucket's start; each process's shard of a
// bucket is a run of whole blocks, so a sharded process computes its blocks' sums itself and the
// norm has the same bits on any P. Then either
//   zero = 0: the summed shards are all-gathered into the whole gradient, every process clips it
//             and runs AdamW on every parameter with its own copy of the moments (same bits on all);
//   zero = 1: ZeRO-1: each process clips its shard and runs AdamW on it with moments it alone holds
//             (n / P floats each), then the updated weights are all-gathered.
// AdamW is elementwise, so both give the same weights, bit for bit.
//
// The processes talk through a tw_comm: a few collectives as function pointers. tw_comm_single is
// the one-process communicator (copies and no-ops), so this file needs no MPI; tools/comm_mpi.c
// is the MPI one (./train-mpi).
#ifndef TW_TRAIN_DIST_H
#define TW_TRAIN_DIST_H
#include "core/status.h"
#include "nn/model.h"
#include "train/batches.h"
#include "train/step.h"

enum { TW_DIST_CHUNK = 4096 };   // floats in a block of the gradient norm; shards start on blocks

typedef struct tw_comm tw_comm;
struct tw_comm {
    int   rank, size;   // this process, of size (0 .. size - 1)
    void *impl;         // the implementation's own (an MPI communicator, ...)
    // Each process sends send[start[q] .. start[q+1]) to process q and receives, from every
    // process p, its copy of this process's shard into recv + p * len (len = start[rank+1] - start[rank]).
    //   send: (start[size]) floats   recv: (size, len)   start: (size + 1), the shards' bounds
    tw_status (*exchange_shards)(const tw_comm *c, const float *send, float *recv, const long *start);
    // In place: process q's elements [start[q], start[q+1]) (each elem_bytes long) of buf are sent
    // to every process, so that every buf ends up whole. elem_bytes: 4 (float) or 8 (double).
    tw_status (*allgather_shards)(const tw_comm *c, void *buf, const long *start, int elem_bytes);
    // Every process's n doubles: recv (size, n), in rank order.
    tw_status (*allgather_doubles)(const tw_comm *c, const double *send, double *recv, int n);
    // bytes from process root to every other.
    tw_status (*broadcast)(const tw_comm *c, void *buf, long bytes, int root);
    // exchange_shards, started without waiting: *req is a handle for wait (which frees it).
    tw_status (*exchange_start)(const tw_comm *c, const float *send, float *recv, const long *start, void **req);
    tw_status (*wait)(const tw_comm *c, void *req);
    void      (*progress)(const tw_comm *c);   // lets started exchanges advance (may do nothing)
};

// The one-process communicator: rank 0 of 1. Needs no freeing.
tw_comm tw_comm_single(void);

// 1 on every process if flag is nonzero on any (a Ctrl-C that reached one process, a failure).
int tw_comm_any(const tw_comm *c, int flag);

typedef struct {
    const tw_comm *comm;
    int      B, T, K;         // rows per micro-batch, positions per row, micro-batches per process
    int      zero;            // 1: ZeRO-1 (AdamW moments sharded)
    int      overlap;         // 1: buckets are sent while the backward pass goes on (default 1)
    long     n;               // floats in the model
    int      n_buckets, n_layer;
    long    *bucket;          // (n_buckets + 1) bucket k is floats [bucket[k], bucket[k+1]) of the model
    long    *shard;           // (n_buckets, P + 1) process q's shard of bucket k: offsets
                              //   [shard[k(P+1) + q], shard[k(P+1) + q + 1]) from the bucket's start
    long    *block_base;      // (n_buckets + 1) the norm's blocks: bucket k's are block_base[k] ..
    long    *own_at;          // (n_buckets + 1) where bucket k's own shard starts in m_shard, v_shard
    long    *recv_at;         // (n_buckets + 1) where bucket k's part of recv starts
    long    *packed_start;    // (P + 1) process q's blocks' sums in packed_ss
    tw_model_grads acc;       // a micro-batch's gradient when K > 1 (else unallocated)
    float   *recv;            // per bucket (P, own shard) every process's copy of this process's shard
    double  *block_ss, *packed_ss;   // (n blocks) sums of squares of the gradient's blocks
    double  *per_rank;        // (P, 2) every process's loss sum and "all finite" flag
    float   *m_shard, *v_shard;  // ZeRO-1: (own_at[n_buckets]) AdamW's moments; NULL otherwise
    int     *in, *tg;         // (B, T) one micro-batch
    void   **req;             // (n_buckets) started exchanges (NULL: not started)
    int     *layer_calls;     // (n_layer) backward calls of each layer in the last micro-batch
    float   *sending;         // the gradient buffer whose buckets are being sent (t->g)
    const float *adding;      // the last micro-batch's buffer to add first, or NULL (K = 1)
    long     nan_rank, nan_step;  // testing: that process's gradient is made NaN at that step (-1: never)
    // Filled by each tw_dist_step:
    double   wait_seconds;    // time this process waited for the collectives (excluding overlap)
    int      bad_rank;        // after a non-finite step: the first process whose loss or gradient was not (-1)
} tw_dist;

// For trainer t of model m (its moments are used when zero is 0; with zero 1 the slice of
// t->adam_m/adam_v this process owns is copied into m_shard/v_shard: free t's then if you like).
// TW_ERR_NOMEM, TW_ERR_ARG (K < 1, zero not 0 or 1).
tw_status tw_dist_init(tw_dist *d, const tw_comm *c, const tw_trainer *t, const tw_model *m, int B, int T,
                       int K, int zero);
void      tw_dist_free(tw_dist *d);   // safe on a zeroed struct

// Rows of the global batch: G = B * P * K.
long tw_dist_global_batch(const tw_dist *d);

// Fills d->in, d->tg with this process's micro-batch j of step s: global rows (j P + p) B + r.
// b: a batcher made for G rows (tw_batcher_init(.., G, T, ..)).
void tw_dist_fill(tw_dist *d, tw_batcher *b, long step, int j);

// One data-parallel step, on every process at once (a collective): K micro-batches each, the
// deterministic reduction, the global norm and clipping, AdamW (whole or sharded), t->step + 1.
// st->loss is the mean over the global batch. If the global loss or norm is not finite the
// weights and moments are untouched, d->bad_rank names the first process that went bad, and
// TW_ERR_ARG is returned on every process. Other errors as tw_model_forward_backward.
tw_status tw_dist_step(tw_train_stats *st, tw_dist *d, tw_trainer *t, tw_model *m, tw_batcher *b,
                       const tw_train_config *c);

// ZeRO-1: every process's moment shards gathered into adam_m, adam_v (n floats each) on every
// process (a collective), for a training state. With zero 0 a copy of t's.
tw_status tw_dist_gather_moments(tw_dist *d, const tw_trainer *t, float *adam_m, float *adam_v);

// Bytes this process holds for training, by kind, for the memory line ./train prints.
typedef struct { double weights, grads, moments, comm; } tw_dist_memory;
tw_dist_memory tw_dist_memory_per_process(const tw_dist *d);

#endif
