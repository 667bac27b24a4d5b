// dist.c: data-parallel steps with a deterministic reduction, and ZeRO-1 (see dist.h).
#define _POSIX_C_SOURCE 199309L   // clock_gettime
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "train/dist.h"
#include "train/forward_backward.h"
#include "train/parallel.h"

// ---- the one-process communicator ----

static tw_status single_exchange(const tw_comm *c, const float *send, float *recv, const long *start) {
    (void)c;
    memcpy(recv, send + start[0], (size_t)(start[1] - start[0]) * sizeof *recv);
    return TW_OK;
}
static tw_status single_allgather(const tw_comm *c, void *buf, const long *start, int elem_bytes) {
    (void)c; (void)buf; (void)start; (void)elem_bytes;
    return TW_OK;   // the one process already holds everything
}
static tw_status single_doubles(const tw_comm *c, const double *send, double *recv, int n) {
    (void)c;
    memcpy(recv, send, (size_t)n * sizeof *recv);
    return TW_OK;
}
static tw_status single_broadcast(const tw_comm *c, void *buf, long bytes, int root) {
    (void)c; (void)buf; (void)bytes; (void)root;
    return TW_OK;
}

tw_comm tw_comm_single(void) {
    tw_comm c = { 0, 1, NULL, single_exchange, single_allgather, single_doubles, single_broadcast };
    return c;
}

int tw_comm_any(const tw_comm *c, int flag) {
    double mine = flag != 0, all[1024];
    double *every = c->size <= 1024 ? all : malloc((size_t)c->size * sizeof *every);
    int any = flag != 0;
    if (every && c->allgather_doubles(c, &mine, every, 1) == TW_OK)
        for (int p = 0; p < c->size; p++) any |= every[p] != 0.0;
    if (every != all) free(every);
    return any;
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// ---- set-up ----

tw_status tw_dist_init(tw_dist *d, const tw_comm *c, const tw_trainer *t, const tw_model *m, int B, int T,
                       int K, int zero) {
    memset(d, 0, sizeof *d);
    if (K < 1 || B < 1 || T < 1 || (zero != 0 && zero != 1) || c->size < 1) return TW_ERR_ARG;
    const int P = c->size;
    d->comm = c;
    d->B = B; d->T = T; d->K = K; d->zero = zero;
    d->n = (long)m->n_floats;
    d->nan_rank = d->nan_step = -1;
    d->bad_rank = -1;
    const long n_blocks = (d->n + TW_DIST_CHUNK - 1) / TW_DIST_CHUNK;
    d->start = malloc((size_t)(P + 1) * sizeof *d->start);
    d->block_start = malloc((size_t)(P + 1) * sizeof *d->block_start);
    d->block_ss = calloc((size_t)n_blocks + 1, sizeof *d->block_ss);
    d->per_rank = calloc((size_t)P * 2, sizeof *d->per_rank);
    d->in = malloc((size_t)B * T * sizeof *d->in);
    d->tg = malloc((size_t)B * T * sizeof *d->tg);
    if (!d->start || !d->block_start || !d->block_ss || !d->per_rank || !d->in || !d->tg) {
        tw_dist_free(d);
        return TW_ERR_NOMEM;
    }
    // Shard q: blocks [q nb / P, (q + 1) nb / P): as even as whole blocks allow.
    for (int q = 0; q <= P; q++) {
        d->block_start[q] = (long)((double)q * n_blocks / P);
        if (q == P) d->block_start[q] = n_blocks;
        const long f = d->block_start[q] * TW_DIST_CHUNK;
        d->start[q] = f < d->n ? f : d->n;
    }
    const long own = d->start[c->rank + 1] - d->start[c->rank];
    d->recv = malloc(((size_t)P * own + 1) * sizeof *d->recv);
    if (!d->recv) { tw_dist_free(d); return TW_ERR_NOMEM; }
    if (K > 1 && tw_model_grads_init(&d->acc, m) != TW_OK) { tw_dist_free(d); return TW_ERR_NOMEM; }
    if (zero) {
        d->m_shard = malloc(((size_t)own + 1) * sizeof *d->m_shard);
        d->v_shard = malloc(((size_t)own + 1) * sizeof *d->v_shard);
        if (!d->m_shard || !d->v_shard) { tw_dist_free(d); return TW_ERR_NOMEM; }
        memcpy(d->m_shard, t->adam_m + d->start[c->rank], (size_t)own * sizeof(float));
        memcpy(d->v_shard, t->adam_v + d->start[c->rank], (size_t)own * sizeof(float));
    }
    return TW_OK;
}

void tw_dist_free(tw_dist *d) {
    free(d->start); free(d->block_start); free(d->block_ss); free(d->per_rank);
    free(d->in); free(d->tg); free(d->recv); free(d->m_shard); free(d->v_shard);
    tw_model_grads_free(&d->acc);
    memset(d, 0, sizeof *d);
}

long tw_dist_global_batch(const tw_dist *d) { return (long)d->B * d->comm->size * d->K; }

void tw_dist_fill(tw_dist *d, tw_batcher *b, long step, int j) {
    const int T = d->T, P = d->comm->size, p = d->comm->rank;
    for (int r = 0; r < d->B; r++) {
        const int g = (j * P + p) * d->B + r;   // the global row
        const int *w = b->tokens + tw_batcher_start(b, step, g);
        memcpy(d->in + (size_t)r * T, w, (size_t)T * sizeof *d->in);
        memcpy(d->tg + (size_t)r * T, w + 1, (size_t)T * sizeof *d->tg);
    }
}

// ---- the step ----

// This process's K micro-batches: their gradients summed in order into t->g (zeroed first), the
// sum of their losses weighted by their target counts into *loss_sum.
static tw_status local_gradient(double *loss_sum, tw_dist *d, tw_trainer *t, const tw_model *m,
                                tw_batcher *b, long step) {
    const long n_global = tw_dist_global_batch(d) * d->T;   // every target of a token file counts
    const long n_micro = (long)d->B * d->T;
    const float scale = (float)((double)n_micro / (double)n_global);
    *loss_sum = 0.0;
    tw_model_grads_zero(&t->g);
    for (int j = 0; j < d->K; j++) {
        tw_model_grads *g = j == 0 ? &t->g : &d->acc;
        if (j > 0) tw_model_grads_zero(g);
        tw_dist_fill(d, b, step, j);
        float loss = 0.0f;
        const tw_status s = t->n_parts > 1
            ? tw_model_forward_backward_split(&loss, g, t->g_part, t->ds_part, t->s_part, m, d->in, d->tg,
                                              d->B, d->T, scale, t->n_parts)
            : tw_model_forward_backward(&loss, g, &t->ds, &t->s, m, d->in, d->tg, d->B, d->T, scale);
        if (s != TW_OK) return s;
        *loss_sum += (double)loss * (double)n_micro;
        if (j > 0)
            for (long i = 0; i < d->n; i++) t->g.memory[i] += d->acc.memory[i];
    }
    return TW_OK;
}

static int all_finite(const float *x, long n) {
    for (long i = 0; i < n; i++) if (!isfinite(x[i])) return 0;
    return 1;
}

// The norm from this process's blocks (their sums of squares, gathered), added in block order.
static tw_status global_norm(float *norm, tw_dist *d, const float *g) {
    const tw_comm *c = d->comm;
    const long b0 = d->block_start[c->rank], b1 = d->block_start[c->rank + 1];
    for (long b = b0; b < b1; b++) {
        const long i0 = b * TW_DIST_CHUNK, i1 = i0 + TW_DIST_CHUNK < d->n ? i0 + TW_DIST_CHUNK : d->n;
        double ss = 0.0;
        for (long i = i0; i < i1; i++) ss += (double)g[i] * g[i];
        d->block_ss[b] = ss;
    }
    const tw_status s = c->allgather_shards(c, d->block_ss, d->block_start, 8);
    if (s != TW_OK) return s;
    double ss = 0.0;
    for (long b = 0; b < d->block_start[c->size]; b++) ss += d->block_ss[b];
    *norm = (float)sqrt(ss);
    return TW_OK;
}

// AdamW on this process's shard [s0, s1) only, parameter by parameter (each has its own decay).
static void adamw_shard(tw_dist *d, tw_model *m, const float *grad, int step, const tw_adamw_hparams *hp) {
    const long s0 = d->start[d->comm->rank], s1 = d->start[d->comm->rank + 1];
    for (int i = 0; i < m->n_params; i++) {
        tw_param *p = &m->params[i];
        const long off = (long)(p->data - m->memory);
        const long a = off > s0 ? off : s0, e = off + p->count < s1 ? off + p->count : s1;
        if (a >= e) continue;
        tw_adamw_hparams h = *hp;
        h.weight_decay = tw_adamw_decays(p->ndim) ? hp->weight_decay : 0.0f;
        tw_adamw_step(m->memory + a, d->m_shard + (a - s0), d->v_shard + (a - s0), grad + a, e - a, step, &h);
    }
}

#define TIMED(call) do { const double t0_ = seconds_now(); s = (call); d->wait_seconds += seconds_now() - t0_; \
                         if (s != TW_OK) return s; } while (0)

tw_status tw_dist_step(tw_train_stats *st, tw_dist *d, tw_trainer *t, tw_model *m, tw_batcher *b,
                       const tw_train_config *c) {
    const tw_comm *comm = d->comm;
    const int P = comm->size, rank = comm->rank;
    tw_status s;
    memset(st, 0, sizeof *st);
    d->wait_seconds = 0.0;
    d->bad_rank = -1;
    st->lr = tw_lr_schedule((int)t->step, c->lr, c->min_lr, c->warmup, c->steps);
    double mine[2];
    s = local_gradient(&mine[0], d, t, m, b, t->step);
    if (s != TW_OK) return s;
    if (d->nan_rank == rank && d->nan_step == t->step + 1) t->g.memory[0] = NAN;
    mine[1] = isfinite(mine[0]) && all_finite(t->g.memory, d->n);
    // The loss: every process's sum, added in rank order.
    TIMED(comm->allgather_doubles(comm, mine, d->per_rank, 2));
    double loss_sum = 0.0;
    for (int p = 0; p < P; p++) {
        loss_sum += d->per_rank[2 * p];
        if (d->per_rank[2 * p + 1] == 0.0 && d->bad_rank < 0) d->bad_rank = p;
    }
    st->loss = (float)(loss_sum / ((double)tw_dist_global_batch(d) * d->T));
    // The deterministic reduce-scatter: this process's shard of every process's gradient, added
    // in rank order into t->g's own shard.
    const long s0 = d->start[rank], len = d->start[rank + 1] - s0;
    TIMED(comm->exchange_shards(comm, t->g.memory, d->recv, d->start));
    float *own = t->g.memory + s0;
    memcpy(own, d->recv, (size_t)len * sizeof *own);
    for (int p = 1; p < P; p++) {
        const float *r = d->recv + (size_t)p * len;
        for (long i = 0; i < len; i++) own[i] += r[i];
    }
    const double tn = seconds_now();
    s = global_norm(&st->gnorm, d, t->g.memory);
    d->wait_seconds += seconds_now() - tn;   // mostly the gather of the blocks' sums
    if (s != TW_OK) return s;
    if (!isfinite(st->loss) || !isfinite(st->gnorm)) {
        if (d->bad_rank < 0) d->bad_rank = 0;
        return TW_ERR_ARG;
    }
    // Clipping, as tw_clip_grad_norm scales (the same float factor on every element).
    const int clip = c->clip > 0.0f && st->gnorm > c->clip;
    const float factor = clip ? (float)((double)c->clip / ((double)st->gnorm + 1e-6)) : 1.0f;
    const tw_adamw_hparams hp = { st->lr, c->beta1, c->beta2, c->eps, c->weight_decay };
    if (d->zero) {
        if (clip) for (long i = 0; i < len; i++) own[i] *= factor;
        adamw_shard(d, m, t->g.memory, (int)t->step + 1, &hp);
        TIMED(comm->allgather_shards(comm, m->memory, d->start, 4));
    } else {
        TIMED(comm->allgather_shards(comm, t->g.memory, d->start, 4));
        if (clip) for (long i = 0; i < d->n; i++) t->g.memory[i] *= factor;
        tw_adamw_step_model(m, t->adam_m, t->adam_v, &t->g, (int)t->step + 1, &hp);
    }
    t->step++;
    return TW_OK;
}

tw_status tw_dist_gather_moments(tw_dist *d, const tw_trainer *t, float *adam_m, float *adam_v) {
    if (!d->zero) {
        memcpy(adam_m, t->adam_m, (size_t)d->n * sizeof *adam_m);
        memcpy(adam_v, t->adam_v, (size_t)d->n * sizeof *adam_v);
        return TW_OK;
    }
    const long s0 = d->start[d->comm->rank], len = d->start[d->comm->rank + 1] - s0;
    memcpy(adam_m + s0, d->m_shard, (size_t)len * sizeof *adam_m);
    memcpy(adam_v + s0, d->v_shard, (size_t)len * sizeof *adam_v);
    tw_status s = d->comm->allgather_shards(d->comm, adam_m, d->start, 4);
    if (s == TW_OK) s = d->comm->allgather_shards(d->comm, adam_v, d->start, 4);
    return s;
}

tw_dist_memory tw_dist_memory_per_process(const tw_dist *d) {
    const double own = (double)(d->start[d->comm->rank + 1] - d->start[d->comm->rank]);
    tw_dist_memory mem;
    mem.weights = 4.0 * (double)d->n;
    mem.grads = 4.0 * (double)d->n * (d->K > 1 ? 2 : 1);
    mem.moments = 8.0 * (d->zero ? own : (double)d->n);
    mem.comm = 4.0 * own * d->comm->size;
    return mem;
}
