// dist.c: data-parallel steps with a deterministic reduction, and ZeRO-1 (see dist.h).
#define _POSIX_C_SOURCE 199309L   // clock_gettime
#include <math.h>
#include <stdio.h>
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

static tw_status single_start(const tw_comm *c, const float *send, float *recv, const long *start, void **req) {
    *req = NULL;
    return single_exchange(c, send, recv, start);
}
static tw_status single_wait(const tw_comm *c, void *req) { (void)c; (void)req; return TW_OK; }
static void single_progress(const tw_comm *c) { (void)c; }

tw_comm tw_comm_single(void) {
    tw_comm c = { 0, 1, NULL, single_exchange, single_allgather, single_doubles, single_broadcast,
                  single_start, single_wait, single_progress };
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

// The layer a parameter belongs to ("layers.3.attn.wq" -> 3), or -1.
static int layer_of(const char *name) {
    int l = -1;
    return strncmp(name, "layers.", 7) == 0 && sscanf(name + 7, "%d", &l) == 1 ? l : -1;
}

// Bucket bounds: [0, layer 0), layer 0, .., layer L-1, [end of layer L-1, n): L + 2 buckets when
// every layer's tensors are contiguous, in layer order, with nothing else between them; else one
// bucket (and no overlap). bucket: (L + 3) longs.
static int make_buckets(long *bucket, const tw_model *m) {
    const int L = m->cfg.n_layer;
    const long n = (long)m->n_floats;
    long *lo = bucket + 1;   // lo[l] = layer l's first float, lo[L] = the end of layer L-1
    for (int l = 0; l <= L; l++) lo[l] = -1;
    long last_end = 0;
    for (int i = 0; i < m->n_params; i++) {
        const tw_param *p = &m->params[i];
        const long off = (long)(p->data - m->memory), end = off + p->count;
        const int l = layer_of(p->name);
        if (l >= 0 && l < L && (lo[l] < 0 || off < lo[l])) lo[l] = off;
        if (l == L - 1 && end > last_end) last_end = end;
    }
    lo[L] = last_end;
    int ok = L > 0;
    for (int l = 0; l < L && ok; l++) ok = lo[l] >= 0 && lo[l] <= lo[l + 1];
    for (int i = 0; i < m->n_params && ok; i++) {   // every tensor inside its own layer's range
        const tw_param *p = &m->params[i];
        const long off = (long)(p->data - m->memory), end = off + p->count;
        const int l = layer_of(p->name);
        ok = l >= 0 ? off >= lo[l] && end <= lo[l + 1] : end <= lo[0] || off >= lo[L];
    }
    if (!ok) { bucket[0] = 0; bucket[1] = n; return 1; }
    bucket[0] = 0;
    bucket[L + 2] = n;
    return L + 2;
}

tw_status tw_dist_init(tw_dist *d, const tw_comm *c, const tw_trainer *t, const tw_model *m, int B, int T,
                       int K, int zero) {
    memset(d, 0, sizeof *d);
    if (K < 1 || B < 1 || T < 1 || (zero != 0 && zero != 1) || c->size < 1) return TW_ERR_ARG;
    const int P = c->size, r = c->rank, L = m->cfg.n_layer;
    d->comm = c;
    d->B = B; d->T = T; d->K = K; d->zero = zero;
    d->n = (long)m->n_floats;
    d->n_layer = L;
    d->nan_rank = d->nan_step = -1;
    d->bad_rank = -1;
    d->bucket = malloc((size_t)(L + 3) * sizeof *d->bucket);
    if (!d->bucket) return TW_ERR_NOMEM;
    d->n_buckets = make_buckets(d->bucket, m);
    d->overlap = d->n_buckets > 1;
    const int nb = d->n_buckets;
    d->shard = malloc((size_t)nb * (P + 1) * sizeof *d->shard);
    d->block_base = malloc((size_t)(nb + 1) * sizeof *d->block_base);
    d->own_at = malloc((size_t)(nb + 1) * sizeof *d->own_at);
    d->recv_at = malloc((size_t)(nb + 1) * sizeof *d->recv_at);
    d->packed_start = calloc((size_t)P + 1, sizeof *d->packed_start);
    d->per_rank = calloc((size_t)P * 2, sizeof *d->per_rank);
    d->req = calloc((size_t)nb, sizeof *d->req);
    d->layer_calls = calloc((size_t)L + 1, sizeof *d->layer_calls);
    d->in = malloc((size_t)B * T * sizeof *d->in);
    d->tg = malloc((size_t)B * T * sizeof *d->tg);
    if (!d->shard || !d->block_base || !d->own_at || !d->recv_at || !d->packed_start || !d->per_rank ||
        !d->req || !d->layer_calls || !d->in || !d->tg) { tw_dist_free(d); return TW_ERR_NOMEM; }
    // Bucket k's blocks are cut among the processes as evenly as whole blocks allow.
    d->block_base[0] = d->own_at[0] = d->recv_at[0] = 0;
    for (int k = 0; k < nb; k++) {
        const long len = d->bucket[k + 1] - d->bucket[k], blocks = (len + TW_DIST_CHUNK - 1) / TW_DIST_CHUNK;
        long *sh = d->shard + (size_t)k * (P + 1);
        for (int q = 0; q <= P; q++) {
            const long b = (long)((double)q * blocks / P);
            sh[q] = q == P ? len : (b * TW_DIST_CHUNK < len ? b * TW_DIST_CHUNK : len);
            if (q < P) {   // process q's blocks of this bucket, in the packed sums
                const long b1 = (long)((double)(q + 1) * blocks / P);
                d->packed_start[q + 1] += (q + 1 == P ? blocks : b1) - b;
            }
        }
        d->block_base[k + 1] = d->block_base[k] + blocks;
        d->own_at[k + 1] = d->own_at[k] + (sh[r + 1] - sh[r]);
        d->recv_at[k + 1] = d->recv_at[k] + (long)P * (sh[r + 1] - sh[r]);
    }
    for (int q = 0; q < P; q++) d->packed_start[q + 1] += d->packed_start[q];
    const long n_blocks = d->block_base[nb];
    d->block_ss = calloc((size_t)n_blocks + 1, sizeof *d->block_ss);
    d->packed_ss = calloc((size_t)n_blocks + 1, sizeof *d->packed_ss);
    d->recv = malloc(((size_t)d->recv_at[nb] + 1) * sizeof *d->recv);
    if (!d->block_ss || !d->packed_ss || !d->recv) { tw_dist_free(d); return TW_ERR_NOMEM; }
    if (K > 1 && tw_model_grads_init(&d->acc, m) != TW_OK) { tw_dist_free(d); return TW_ERR_NOMEM; }
    if (zero) {
        const long own = d->own_at[nb];
        d->m_shard = malloc(((size_t)own + 1) * sizeof *d->m_shard);
        d->v_shard = malloc(((size_t)own + 1) * sizeof *d->v_shard);
        if (!d->m_shard || !d->v_shard) { tw_dist_free(d); return TW_ERR_NOMEM; }
        for (int k = 0; k < nb; k++) {
            const long *sh = d->shard + (size_t)k * (P + 1), a = d->bucket[k] + sh[r], len = sh[r + 1] - sh[r];
            memcpy(d->m_shard + d->own_at[k], t->adam_m + a, (size_t)len * sizeof(float));
            memcpy(d->v_shard + d->own_at[k], t->adam_v + a, (size_t)len * sizeof(float));
        }
    }
    return TW_OK;
}

void tw_dist_free(tw_dist *d) {
    for (int k = 0; k < d->n_buckets && d->req && d->comm; k++)
        if (d->req[k] && d->req[k] != (void *)d) d->comm->wait(d->comm, d->req[k]);   // d: done already
    free(d->bucket); free(d->shard); free(d->block_base); free(d->own_at); free(d->recv_at);
    free(d->packed_start); free(d->block_ss); free(d->packed_ss); free(d->per_rank);
    free(d->in); free(d->tg); free(d->recv); free(d->m_shard); free(d->v_shard);
    free(d->req); free(d->layer_calls);
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

static double seconds_since(double t0) { return seconds_now() - t0; }

static const long *shard_of(const tw_dist *d, int k) { return d->shard + (size_t)k * (d->comm->size + 1); }

// Bucket k of this process's gradient is complete: add the last micro-batch's part (K > 1) and
// start sending each process its shard.
static tw_status launch(tw_dist *d, int k) {
    if (k < 0 || k >= d->n_buckets || d->req[k]) return TW_OK;
    const long lo = d->bucket[k], hi = d->bucket[k + 1];
    if (d->adding)
        for (long i = lo; i < hi; i++) d->sending[i] += d->adding[i];
    const double t0 = seconds_now();
    void *req = NULL;
    const tw_status s = d->comm->exchange_start(d->comm, d->sending + lo, d->recv + d->recv_at[k], shard_of(d, k), &req);
    d->wait_seconds += seconds_since(t0);
    d->req[k] = req ? req : (void *)d;   // non-NULL: launched (d: already complete)
    return s;
}

// tw_model_backward's hook: layer l is done for one more sequence; after the micro-batch's last
// sequence its bucket (l + 1) is complete, and with layer L-1 the final norm and head (L + 1).
static void on_layer_done(void *ctx, int l) {
    tw_dist *d = ctx;
    d->comm->progress(d->comm);
    if (++d->layer_calls[l] < d->B) return;
    if (l == d->n_layer - 1) launch(d, d->n_layer + 1);
    launch(d, l + 1);
}

// This process's K micro-batches: their gradients summed in order into t->g (zeroed first), the
// sum of their losses weighted by their target counts into *loss_sum; every bucket's exchange
// started (during the last micro-batch's backward when d->overlap and the batch is not split).
static tw_status local_gradient(double *loss_sum, tw_dist *d, tw_trainer *t, const tw_model *m,
                                tw_batcher *b, long step) {
    const long n_global = tw_dist_global_batch(d) * d->T;   // every target of a token file counts
    const long n_micro = (long)d->B * d->T;
    const float scale = (float)((double)n_micro / (double)n_global);
    *loss_sum = 0.0;
    tw_model_grads_zero(&t->g);
    for (int k = 0; k < d->n_buckets; k++) d->req[k] = NULL;
    d->sending = t->g.memory;
    d->adding = NULL;
    for (int j = 0; j < d->K; j++) {
        const int last = j == d->K - 1;
        tw_model_grads *g = j == 0 ? &t->g : &d->acc;
        if (j > 0) tw_model_grads_zero(g);
        tw_dist_fill(d, b, step, j);
        const int hook = last && d->overlap && t->n_parts == 1;
        if (hook) {
            memset(d->layer_calls, 0, (size_t)d->n_layer * sizeof *d->layer_calls);
            d->adding = j > 0 ? d->acc.memory : NULL;
            t->ds.layer_done = on_layer_done;
            t->ds.layer_ctx = d;
        }
        float loss = 0.0f;
        const tw_status s = t->n_parts > 1
            ? tw_model_forward_backward_split(&loss, g, t->g_part, t->ds_part, t->s_part, m, d->in, d->tg,
                                              d->B, d->T, scale, t->n_parts)
            : tw_model_forward_backward(&loss, g, &t->ds, &t->s, m, d->in, d->tg, d->B, d->T, scale);
        t->ds.layer_done = NULL;
        t->ds.layer_ctx = NULL;
        if (s != TW_OK) return s;
        *loss_sum += (double)loss * (double)n_micro;
        if (j > 0) {   // the buckets not sent yet get this micro-batch's part added here
            d->adding = d->acc.memory;
            if (!last || !hook) {
                for (long i = 0; i < d->n; i++) t->g.memory[i] += d->acc.memory[i];
                d->adding = NULL;
            }
        }
    }
    if (d->nan_rank == d->comm->rank && d->nan_step == step + 1) t->g.memory[0] = NAN;
    tw_status s = TW_OK;
    for (int k = d->n_buckets - 1; k >= 0 && s == TW_OK; k--) s = launch(d, k);   // the rest, embeddings last
    d->adding = NULL;
    return s;
}

static int all_finite(const float *x, long n) {
    for (long i = 0; i < n; i++) if (!isfinite(x[i])) return 0;
    return 1;
}

// Bucket k: wait for every process's copy of this process's shard, add them in rank order.
static tw_status reduce_bucket(tw_dist *d, float *g, int k) {
    const int P = d->comm->size, r = d->comm->rank;
    const long *sh = shard_of(d, k), len = sh[r + 1] - sh[r];
    const double t0 = seconds_now();
    const tw_status s = d->req[k] && d->req[k] != (void *)d ? d->comm->wait(d->comm, d->req[k]) : TW_OK;
    d->wait_seconds += seconds_since(t0);
    d->req[k] = NULL;
    if (s != TW_OK) return s;
    float *own = g + d->bucket[k] + sh[r];
    const float *rv = d->recv + d->recv_at[k];
    memcpy(own, rv, (size_t)len * sizeof *own);
    for (int p = 1; p < P; p++)
        for (long i = 0; i < len; i++) own[i] += rv[(size_t)p * len + i];
    return TW_OK;
}

// The norm from this process's blocks (their sums of squares, gathered), added in block order.
static tw_status global_norm(float *norm, tw_dist *d, const float *g) {
    const tw_comm *c = d->comm;
    const int P = c->size, r = c->rank;
    long at = d->packed_start[r];
    for (int k = 0; k < d->n_buckets; k++) {
        const long *sh = shard_of(d, k), lo = d->bucket[k], hi = d->bucket[k + 1];
        for (long i0 = lo + sh[r]; i0 < lo + sh[r + 1]; i0 += TW_DIST_CHUNK) {
            const long i1 = i0 + TW_DIST_CHUNK < hi ? i0 + TW_DIST_CHUNK : hi;
            double ss = 0.0;
            for (long i = i0; i < i1; i++) ss += (double)g[i] * g[i];
            d->packed_ss[at++] = ss;
        }
    }
    const double t0 = seconds_now();
    const tw_status s = c->allgather_shards(c, d->packed_ss, d->packed_start, 8);
    d->wait_seconds += seconds_since(t0);
    if (s != TW_OK) return s;
    // Unpack into block order: process q's blocks of bucket 0, 1, .. follow each other.
    for (int q = 0; q < P; q++) {
        long from = d->packed_start[q];
        for (int k = 0; k < d->n_buckets; k++) {
            const long *sh = shard_of(d, k);
            const long b0 = sh[q] / TW_DIST_CHUNK, b1 = (sh[q + 1] + TW_DIST_CHUNK - 1) / TW_DIST_CHUNK;
            for (long b = b0; b < b1; b++) d->block_ss[d->block_base[k] + b] = d->packed_ss[from++];
        }
    }
    double ss = 0.0;
    for (long b = 0; b < d->block_base[d->n_buckets]; b++) ss += d->block_ss[b];
    *norm = (float)sqrt(ss);
    return TW_OK;
}

// AdamW on this process's shards only, parameter by parameter (each has its own decay).
static void adamw_shard(tw_dist *d, tw_model *m, const float *grad, int step, const tw_adamw_hparams *hp) {
    const int r = d->comm->rank;
    for (int k = 0; k < d->n_buckets; k++) {
        const long *sh = shard_of(d, k), s0 = d->bucket[k] + sh[r], s1 = d->bucket[k] + sh[r + 1];
        for (int i = 0; i < m->n_params && s0 < s1; i++) {
            tw_param *p = &m->params[i];
            const long off = (long)(p->data - m->memory);
            const long a = off > s0 ? off : s0, e = off + p->count < s1 ? off + p->count : s1;
            if (a >= e) continue;
            tw_adamw_hparams h = *hp;
            h.weight_decay = tw_adamw_decays(p->ndim) ? hp->weight_decay : 0.0f;
            const long at = d->own_at[k] + (a - s0);
            tw_adamw_step(m->memory + a, d->m_shard + at, d->v_shard + at, grad + a, e - a, step, &h);
        }
    }
}

// Every bucket of buf whole on every process, each process sending its shards.
static tw_status gather_buckets(tw_dist *d, float *buf) {
    const double t0 = seconds_now();
    tw_status s = TW_OK;
    for (int k = 0; k < d->n_buckets && s == TW_OK; k++)
        s = d->comm->allgather_shards(d->comm, buf + d->bucket[k], shard_of(d, k), 4);
    d->wait_seconds += seconds_since(t0);
    return s;
}

tw_status tw_dist_step(tw_train_stats *st, tw_dist *d, tw_trainer *t, tw_model *m, tw_batcher *b,
                       const tw_train_config *c) {
    const tw_comm *comm = d->comm;
    const int P = comm->size;
    tw_status s;
    memset(st, 0, sizeof *st);
    d->wait_seconds = 0.0;
    d->bad_rank = -1;
    st->lr = tw_lr_schedule((int)t->step, c->lr, c->min_lr, c->warmup, c->steps);
    double mine[2];
    s = local_gradient(&mine[0], d, t, m, b, t->step);
    if (s != TW_OK) return s;
    mine[1] = isfinite(mine[0]) && all_finite(t->g.memory, d->n);
    // The loss: every process's sum, added in rank order.
    const double t0 = seconds_now();
    s = comm->allgather_doubles(comm, mine, d->per_rank, 2);
    d->wait_seconds += seconds_since(t0);
    if (s != TW_OK) return s;
    double loss_sum = 0.0;
    for (int p = 0; p < P; p++) {
        loss_sum += d->per_rank[2 * p];
        if (d->per_rank[2 * p + 1] == 0.0 && d->bad_rank < 0) d->bad_rank = p;
    }
    st->loss = (float)(loss_sum / ((double)tw_dist_global_batch(d) * d->T));
    // The deterministic reduce-scatter, bucket by bucket: this process's shard of every
    // process's gradient, added in rank order into t->g's own shards.
    for (int k = 0; k < d->n_buckets; k++)
        if ((s = reduce_bucket(d, t->g.memory, k)) != TW_OK) return s;
    if ((s = global_norm(&st->gnorm, d, t->g.memory)) != TW_OK) return s;
    if (!isfinite(st->loss) || !isfinite(st->gnorm)) {
        if (d->bad_rank < 0) d->bad_rank = 0;
        return TW_ERR_ARG;
    }
    // Clipping, as tw_clip_grad_norm scales (the same float factor on every element).
    const int clip = c->clip > 0.0f && st->gnorm > c->clip;
    const float factor = clip ? (float)((double)c->clip / ((double)st->gnorm + 1e-6)) : 1.0f;
    const tw_adamw_hparams hp = { st->lr, c->beta1, c->beta2, c->eps, c->weight_decay };
    if (d->zero) {
        if (clip)
            for (int k = 0; k < d->n_buckets; k++) {
                const long *sh = shard_of(d, k);
                for (long i = d->bucket[k] + sh[comm->rank]; i < d->bucket[k] + sh[comm->rank + 1]; i++)
                    t->g.memory[i] *= factor;
            }
        adamw_shard(d, m, t->g.memory, (int)t->step + 1, &hp);
        if ((s = gather_buckets(d, m->memory)) != TW_OK) return s;
    } else {
        if ((s = gather_buckets(d, t->g.memory)) != TW_OK) return s;
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
    const int r = d->comm->rank;
    for (int k = 0; k < d->n_buckets; k++) {
        const long *sh = shard_of(d, k), a = d->bucket[k] + sh[r], len = sh[r + 1] - sh[r];
        memcpy(adam_m + a, d->m_shard + d->own_at[k], (size_t)len * sizeof *adam_m);
        memcpy(adam_v + a, d->v_shard + d->own_at[k], (size_t)len * sizeof *adam_v);
    }
    tw_status s = TW_OK;
    for (int k = 0; k < d->n_buckets && s == TW_OK; k++) {
        s = d->comm->allgather_shards(d->comm, adam_m + d->bucket[k], shard_of(d, k), 4);
        if (s == TW_OK) s = d->comm->allgather_shards(d->comm, adam_v + d->bucket[k], shard_of(d, k), 4);
    }
    return s;
}

tw_dist_memory tw_dist_memory_per_process(const tw_dist *d) {
    const double own = (double)d->own_at[d->n_buckets];
    tw_dist_memory mem;
    mem.weights = 4.0 * (double)d->n;
    mem.grads = 4.0 * (double)d->n * (d->K > 1 ? 2 : 1);
    mem.moments = 8.0 * (d->zero ? own : (double)d->n);
    mem.comm = 4.0 * (double)d->recv_at[d->n_buckets];
    return mem;
}
