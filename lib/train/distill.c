// distill.c: knowledge distillation (see distill.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train/distill.h"
#include "train/loss.h"
#include "train/optim.h"
#include "train/parallel.h"

// softmax(z / tau) of one row, in double, and its log-sum-exp.   out: (V)   z: (V)
static double soft_row(double *out, const float *z, int V, double tau) {
    double max = z[0];
    for (int v = 1; v < V; v++) if (z[v] > max) max = z[v];
    double sum = 0.0;
    for (int v = 0; v < V; v++) sum += exp(((double)z[v] - max) / tau);
    const double lse = max / tau + log(sum);
    for (int v = 0; v < V; v++) out[v] = exp((double)z[v] / tau - lse);
    return lse;
}

tw_status tw_distill_loss(float *loss, float *dlogits, float dloss, const float *student,
                          const float *teacher, const int *targets, int T, int V, float a, float tau) {
    *loss = 0.0f;
    if (!(a >= 0.0f && a <= 1.0f) || !(tau > 0.0f) || !isfinite(tau)) return TW_ERR_ARG;
    int n = 0;
    for (int t = 0; t < T; t++) {
        if (targets[t] == TW_IGNORE_INDEX) continue;
        if (targets[t] < 0 || targets[t] >= V) return TW_ERR_SHAPE;
        n++;
    }
    if (n == 0) return TW_OK;
    double *p = malloc((size_t)V * sizeof *p), *q = malloc((size_t)V * sizeof *q),
           *s1 = malloc((size_t)V * sizeof *s1);   // (V) teacher soft, student soft, student at 1
    if (!p || !q || !s1) { free(p); free(q); free(s1); return TW_ERR_NOMEM; }
    double total = 0.0;
    for (int t = 0; t < T; t++) {
        const int y = targets[t];
        if (y == TW_IGNORE_INDEX) continue;
        const float *zs = student + (size_t)t * V, *zt = teacher + (size_t)t * V;   // (V) each
        const double lse_p = soft_row(p, zt, V, tau), lse_q = soft_row(q, zs, V, tau);
        const double lse_1 = soft_row(s1, zs, V, 1.0);
        double kl = 0.0;   // sum_v p (log p - log q), log p = zt/tau - lse_p
        for (int v = 0; v < V; v++)
            if (p[v] > 0.0) kl += p[v] * (((double)zt[v] / tau - lse_p) - ((double)zs[v] / tau - lse_q));
        const double ce = lse_1 - zs[y];
        total += (double)a * tau * tau * kl + (1.0 - a) * ce;
        if (!dlogits) continue;
        float *d = dlogits + (size_t)t * V;
        const double scale = (double)dloss / n;
        for (int v = 0; v < V; v++)
            d[v] += (float)(scale * ((double)a * tau * (q[v] - p[v]) + (1.0 - a) * (s1[v] - (v == y))));
    }
    free(p); free(q); free(s1);
    *loss = (float)(total / n);
    return TW_OK;
}

static long count_targets(const int *targets, int T) {
    long n = 0;
    for (int t = 0; t < T; t++) n += targets[t] != TW_IGNORE_INDEX;
    return n;
}

tw_status tw_distill_forward_backward(float *loss, tw_model_grads *g, tw_model_state *ds,
                                      tw_model_state *s, const tw_model *m, tw_model_state *ts,
                                      const tw_model *teacher, const int *tokens, const int *targets,
                                      int B, int T, float a, float tau) {
    const int V = m->cfg.vocab;
    if (teacher->cfg.vocab != V) return TW_ERR_SHAPE;
    long n = 0;
    for (int b = 0; b < B; b++) n += count_targets(targets + (size_t)b * T, T);
    double sum = 0.0;
    for (int b = 0; b < B; b++) {
        const int *tok = tokens + (size_t)b * T, *tgt = targets + (size_t)b * T;
        const long nb = count_targets(tgt, T);
        tw_status st = tw_model_forward(ts, teacher, tok, T, 0);
        if (st == TW_OK) st = tw_model_forward(s, m, tok, T, 0);
        if (st != TW_OK) return st;
        tw_model_grad_state_zero(ds, m);
        float lb;
        // Sequence b's mean loss has weight nb / n in the batch's mean.
        st = tw_distill_loss(&lb, nb > 0 ? ds->logits : NULL, n > 0 ? (float)nb / (float)n : 0.0f,
                             s->logits, ts->logits, tgt, T, V, a, tau);
        if (st != TW_OK) return st;
        sum += (double)lb * nb;
        if (nb > 0) st = tw_model_backward(g, ds, s, m, tok, T);
        if (st != TW_OK) return st;
    }
    *loss = n > 0 ? (float)(sum / n) : 0.0f;
    return TW_OK;
}

tw_status tw_distill_train_step(tw_train_stats *st, tw_trainer *t, tw_model *m, tw_model_state *ts,
                                const tw_model *teacher, const int *inputs, const int *targets,
                                const tw_train_config *c, float a, float tau) {
    memset(st, 0, sizeof *st);
    st->lr = tw_lr_schedule((int)t->step, c->lr, c->min_lr, c->warmup, c->steps);
    tw_model_grads_zero(&t->g);
    tw_status s = tw_distill_forward_backward(&st->loss, &t->g, &t->ds, &t->s, m, ts, teacher, inputs,
                                              targets, c->B, c->T, a, tau);
    if (s != TW_OK) return s;
    return tw_train_update(&st->gnorm, t, m, st->loss, st->lr, c);
}
