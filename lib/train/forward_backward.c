// forward_backward.c: the loss of a batch and its gradient: each sequence run forward, its
// cross-entropy (loss.c), then the model's backward from the gradient of the logits (nn/model.c).
#include <string.h>
#include "train/forward_backward.h"
#include "train/loss.h"

// Checks what tw_model_loss and tw_model_forward_backward share; n receives the number of positions
// with a target.
static tw_status check_batch(long *n, const tw_model_state *s, const tw_model *m, const int *tokens,
                             const int *targets, int B, int T) {
    if (B < 1 || T < 1 || T > s->T_max || s->cache) return TW_ERR_ARG;
    *n = 0;
    for (long i = 0; i < (long)B * T; i++) {
        if (tokens[i] < 0 || tokens[i] >= m->cfg.vocab) return TW_ERR_SHAPE;
        if (targets[i] == TW_IGNORE_INDEX) continue;
        if (targets[i] < 0 || targets[i] >= m->cfg.vocab) return TW_ERR_SHAPE;
        (*n)++;
    }
    return TW_OK;
}

// Positions of one sequence that have a target.
static long count_targets(const int *targets, int T) {
    long n = 0;
    for (int t = 0; t < T; t++) n += targets[t] != TW_IGNORE_INDEX;
    return n;
}

// Forward of sequence b and its loss (mean over its own targets); the logits become probabilities.
static tw_status sequence_loss(float *loss, tw_model_state *s, const tw_model *m,
                               const int *tokens, const int *targets, int T) {
    tw_status st = tw_model_forward(s, m, tokens, T, 0);
    if (st != TW_OK) return st;
    return tw_cross_entropy_forward(loss, NULL, s->logits, s->logits, targets, T, m->cfg.vocab,
                                    TW_IGNORE_INDEX);
}

tw_status tw_model_loss(float *loss, tw_model_state *s, const tw_model *m,
                        const int *tokens, const int *targets, int B, int T) {
    long n;
    tw_status st = check_batch(&n, s, m, tokens, targets, B, T);
    if (st != TW_OK) return st;
    double sum = 0.0;   // sum over the batch's positions of their losses
    for (int b = 0; b < B; b++) {
        float lb;
        st = sequence_loss(&lb, s, m, tokens + (size_t)b * T, targets + (size_t)b * T, T);
        if (st != TW_OK) return st;
        sum += (double)lb * count_targets(targets + (size_t)b * T, T);
    }
    *loss = n > 0 ? (float)(sum / n) : 0.0f;
    return TW_OK;
}

// Backward of one sequence whose forward and probabilities are in s: d loss = dloss.
static tw_status sequence_backward(tw_model_grads *g, tw_model_state *ds, const tw_model_state *s,
                                   const tw_model *m, const int *tokens, const int *targets,
                                   int T, float dloss) {
    // d logits written whole (=) rather than added onto zeros: no memset of the largest tensor.
    tw_model_grad_state_zero_but_logits(ds, m);
    ds->aux_weight = dloss;   // the load-balancing loss weighs as the sequence's cross-entropy
    tw_status st = tw_cross_entropy_grad(ds->logits, dloss, s->logits, targets, T, m->cfg.vocab,
                                         TW_IGNORE_INDEX);
    if (st != TW_OK) return st;
    return tw_model_backward(g, ds, s, m, tokens, T);
}

tw_status tw_model_forward_backward(float *loss, tw_model_grads *g, tw_model_state *ds,
                                    tw_model_state *s, const tw_model *m, const int *tokens,
                                    const int *targets, int B, int T, float loss_scale) {
    long n;
    tw_status st = check_batch(&n, s, m, tokens, targets, B, T);
    if (st != TW_OK) return st;
    if (ds->T_max < T || ds->cache || ds->n_floats != s->n_floats || g->n_floats != m->n_floats)
        return TW_ERR_ARG;
    if (s->head_off) return TW_ERR_ARG;   // the backward does not model switched-off heads
    double sum = 0.0;
    for (int b = 0; b < B; b++) {
        const int *tok = tokens + (size_t)b * T, *tgt = targets + (size_t)b * T;
        const long nb = count_targets(tgt, T);
        float lb;
        st = sequence_loss(&lb, s, m, tok, tgt, T);
        if (st != TW_OK) return st;
        sum += (double)lb * nb;
        // The batch loss is sum_b (nb / n) * loss_b, so sequence b's mean loss has weight nb / n.
        if (nb > 0) st = sequence_backward(g, ds, s, m, tok, tgt, T, (float)(loss_scale * nb / n));
        if (st != TW_OK) return st;
    }
    *loss = n > 0 ? (float)(sum / n) : 0.0f;
    return TW_OK;
}
