// seq_logprob.c: log pi(completion | prompt) and its backward (see seq_logprob.h).
#include <math.h>
#include <stddef.h>
#include "simd/simd.h"
#include "train/loss.h"
#include "train/seq_logprob.h"

int tw_seq_targets(int *inputs, int *targets, const int *prompt, int n_prompt, const int *completion,
                   int n_completion) {
    const int T = n_prompt + n_completion - 1;
    for (int t = 0; t < T; t++) {
        inputs[t] = t < n_prompt ? prompt[t] : completion[t - n_prompt];
        const int next = t + 1;   // the token position t predicts
        targets[t] = next < n_prompt ? TW_IGNORE_INDEX : completion[next - n_prompt];
    }
    return T;
}

static int targets_fit(const int *targets, int T, int V) {
    for (int t = 0; t < T; t++)
        if (targets[t] != TW_IGNORE_INDEX && (targets[t] < 0 || targets[t] >= V)) return 0;
    return 1;
}

// One row: *lse = log sum_v exp(z[v]) and p = exp(z - lse), in double. p, z: (V), may alias.
static void row_lse_and_probs(double *lse, float *p, const float *z, int V) {
    float max = z[0];
    for (int v = 1; v < V; v++) if (z[v] > max) max = z[v];
    double sum = 0.0;
    for (int v = 0; v < V; v++) sum += exp((double)z[v] - max);
    *lse = max + log(sum);
    for (int v = 0; v < V; v++) p[v] = (float)exp((double)z[v] - *lse);
}

tw_status tw_seq_logprob_forward(double *logp, float *probs, const float *logits, const int *targets,
                                 int T, int V) {
    if (!targets_fit(targets, T, V)) return TW_ERR_SHAPE;
    double total = 0.0;
    for (int t = 0; t < T; t++) {
        const float *z = logits + (size_t)t * V;   // (V)
        float *p = probs + (size_t)t * V;          // (V), may be z
        const int y = targets[t];
        const float z_y = y == TW_IGNORE_INDEX ? 0.0f : z[y];   // read before p overwrites it
        double lse;
        if (!tw_simd_cross_entropy_row(&lse, p, z, V)) row_lse_and_probs(&lse, p, z, V);
        if (y != TW_IGNORE_INDEX) total += (double)z_y - lse;   // log softmax(z)[y]
    }
    *logp = total;
    return TW_OK;
}

tw_status tw_seq_logprob_backward(float *dlogits, float dlogp, const float *probs, const int *targets,
                                  int T, int V) {
    if (!targets_fit(targets, T, V)) return TW_ERR_SHAPE;
    for (int t = 0; t < T; t++) {
        const int y = targets[t];
        if (y == TW_IGNORE_INDEX) continue;
        const float *p = probs + (size_t)t * V;
        float *d = dlogits + (size_t)t * V;
        for (int v = 0; v < V; v++) d[v] += dlogp * ((v == y ? 1.0f : 0.0f) - p[v]);
    }
    return TW_OK;
}

tw_status tw_model_seq_logprob(double *logp, tw_model_state *s, const tw_model *m, const int *inputs,
                               const int *targets, int T) {
    if (T < 1 || T > s->T_max || s->cache) return TW_ERR_ARG;
    if (!targets_fit(targets, T, m->cfg.vocab)) return TW_ERR_SHAPE;
    tw_status st = tw_model_forward(s, m, inputs, T, 0);
    if (st != TW_OK) return st;
    return tw_seq_logprob_forward(logp, s->logits, s->logits, targets, T, m->cfg.vocab);
}

tw_status tw_model_seq_logprob_backward(tw_model_grads *g, tw_model_state *ds, const tw_model_state *s,
                                        const tw_model *m, const int *inputs, const int *targets, int T,
                                        float dlogp) {
    if (T < 1 || T > ds->T_max || ds->cache || ds->n_floats != s->n_floats) return TW_ERR_ARG;
    tw_model_grad_state_zero(ds, m);
    tw_status st = tw_seq_logprob_backward(ds->logits, dlogp, s->logits, targets, T, m->cfg.vocab);
    if (st != TW_OK) return st;
    return tw_model_backward(g, ds, s, m, inputs, T);
}
