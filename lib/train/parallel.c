// parallel.c: a batch's backward as parallel micro-batches (see parallel.h).
#include <stddef.h>
#include "train/parallel.h"
#include "train/loss.h"

// Elementwise loops shorter than this stay on one thread: starting the threads would cost more.
enum { PARALLEL_FLOATS = 1L << 15, ADAMW_BLOCK = 1L << 13 };

static long count_targets(const int *targets, long n) {
    long c = 0;
    for (long i = 0; i < n; i++) c += targets[i] != TW_IGNORE_INDEX;
    return c;
}

// The sequences [*b0, *b1) of a batch of B that part p of n_parts takes (possibly none).
static void part_sequences(int *b0, int *b1, int p, int n_parts, int B) {
    *b0 = (int)((long)p * B / n_parts);
    *b1 = (int)((long)(p + 1) * B / n_parts);
}

// The first part's failure, if any; else TW_OK and *sum = the parts' losses added in part order.
static tw_status sum_parts(double *sum, const tw_status *status, const double *part_loss, int n_parts) {
    *sum = 0.0;
    for (int p = 0; p < n_parts; p++) {
        if (status[p] != TW_OK) return status[p];
        *sum += part_loss[p];
    }
    return TW_OK;
}

tw_status tw_model_forward_backward_split(float *loss, tw_model_grads *g, tw_model_grads *g_part,
                                  tw_model_state *ds, tw_model_state *s, const tw_model *m,
                                  const int *tokens, const int *targets, int B, int T,
                                  float loss_scale, int n_parts) {
    if (n_parts < 1 || B < 1 || T < 1) return TW_ERR_ARG;
    const long n = count_targets(targets, (long)B * T);   // the batch's positions with a target
    tw_status status[64];
    double part_loss[64];
    if (n_parts > 64) return TW_ERR_ARG;
    // Part p's mean loss has weight n_p / n in the batch's: its gradient is scaled so, as a
    // micro-batch's is (model.h), and the parts' sum is the batch's gradient.
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1)
#endif
    for (int p = 0; p < n_parts; p++) {
        int b0, b1;
        part_sequences(&b0, &b1, p, n_parts, B);
        status[p] = TW_OK;
        part_loss[p] = 0.0;
        if (p > 0) tw_model_grads_zero(&g_part[p - 1]);
        if (b1 == b0) continue;
        const int *tok = tokens + (size_t)b0 * T, *tgt = targets + (size_t)b0 * T;
        const long np = count_targets(tgt, (long)(b1 - b0) * T);
        float lp = 0.0f;
        status[p] = tw_model_forward_backward(&lp, p == 0 ? g : &g_part[p - 1], &ds[p], &s[p], m, tok, tgt,
                                      b1 - b0, T, n > 0 ? (float)((double)loss_scale * np / n) : 0.0f);
        part_loss[p] = (double)lp * np;
    }
    double sum;
    const tw_status st = sum_parts(&sum, status, part_loss, n_parts);
    if (st != TW_OK) return st;
    // The parts' gradients, in part order (part 0 already accumulated into g); each element's sum
    // is in that order whichever thread takes it.
    const long nf = g->n_floats;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (nf >= PARALLEL_FLOATS)
#endif
    for (long i = 0; i < nf; i++)
        for (int p = 1; p < n_parts; p++) g->memory[i] += g_part[p - 1].memory[i];
    *loss = n > 0 ? (float)(sum / n) : 0.0f;
    return TW_OK;
}

tw_status tw_model_loss_split(float *loss, tw_model_state *s, const tw_model *m, const int *tokens,
                              const int *targets, int B, int T, int n_parts) {
    if (n_parts < 1 || n_parts > 64 || B < 1 || T < 1) return TW_ERR_ARG;
    const long n = count_targets(targets, (long)B * T);
    tw_status status[64];
    double part_loss[64];
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1)
#endif
    for (int p = 0; p < n_parts; p++) {
        int b0, b1;
        part_sequences(&b0, &b1, p, n_parts, B);
        status[p] = TW_OK;
        part_loss[p] = 0.0;
        if (b1 == b0) continue;
        const int *tgt = targets + (size_t)b0 * T;
        float lp = 0.0f;
        status[p] = tw_model_loss(&lp, &s[p], m, tokens + (size_t)b0 * T, tgt, b1 - b0, T);
        part_loss[p] = (double)lp * count_targets(tgt, (long)(b1 - b0) * T);
    }
    double sum;
    const tw_status st = sum_parts(&sum, status, part_loss, n_parts);
    if (st != TW_OK) return st;
    *loss = n > 0 ? (float)(sum / n) : 0.0f;
    return TW_OK;
}

void tw_adamw_step_model(tw_model *m, float *adam_m, float *adam_v, const tw_model_grads *g,
                         int step, const tw_adamw_hparams *hp) {
    for (int i = 0; i < m->n_params; i++) {
        tw_param *p = &m->params[i];
        const long off = (long)(p->data - m->memory), count = p->count;
        tw_adamw_hparams h = *hp;
        h.weight_decay = tw_adamw_decays(p->ndim) ? hp->weight_decay : 0.0f;
        const float *grad = g->params[i].data;
        const long blocks = (count + ADAMW_BLOCK - 1) / ADAMW_BLOCK;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (count >= PARALLEL_FLOATS)
#endif
        for (long b = 0; b < blocks; b++) {
            const long j0 = b * ADAMW_BLOCK, nj = count - j0 < ADAMW_BLOCK ? count - j0 : ADAMW_BLOCK;
            tw_adamw_step(p->data + j0, adam_m + off + j0, adam_v + off + j0, grad + j0, nj, step, &h);
        }
    }
}
