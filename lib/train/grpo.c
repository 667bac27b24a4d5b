// grpo.c: group relative policy optimisation (see grpo.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train/grpo.h"
#include "train/optim.h"
#include "train/parallel.h"

tw_status tw_grpo_advantages(float *adv, const float *rewards, int n_groups, int G, float eps_adv) {
    if (n_groups < 1 || G < 1 || !(eps_adv >= 0.0f)) return TW_ERR_ARG;
    for (int g = 0; g < n_groups; g++) {
        const float *r = rewards + (size_t)g * G;
        double mean = 0.0, var = 0.0;
        for (int i = 0; i < G; i++) mean += r[i];
        mean /= G;
        for (int i = 0; i < G; i++) var += (r[i] - mean) * (r[i] - mean);
        const double sd = sqrt(var / G);   // population: divide by G (grpo.h)
        float *a = adv + (size_t)g * G;
        for (int i = 0; i < G; i++) a[i] = (float)((r[i] - mean) / (sd + eps_adv));
    }
    return TW_OK;
}

// The clipped surrogate of one token and its derivative with respect to lp.
static double surrogate(double *d, double lp, double lp_old, double A, double eps) {
    const double rho = exp(lp - lp_old);
    const double clipped = rho < 1.0 - eps ? 1.0 - eps : rho > 1.0 + eps ? 1.0 + eps : rho;
    // min(rho A, clipped A): where the unclipped term is the minimum (ties included, where both
    // branches have the same slope) d/dlp = rho A; where the clipped one is, rho is outside the
    // range, so the clipped term is a constant.
    if (rho * A <= clipped * A) { *d = rho * A; return rho * A; }
    *d = 0.0;
    return clipped * A;
}

tw_status tw_grpo_loss(float *loss, float *kl, float *dlp, const float *lp, const float *lp_old,
                       const float *lp_ref, const float *adv, const int *lens, int n, float eps,
                       float beta) {
    *loss = *kl = 0.0f;
    if (n < 1 || !(eps >= 0.0f) || !(beta >= 0.0f)) return TW_ERR_ARG;
    for (int i = 0; i < n; i++) if (lens[i] < 1) return TW_ERR_ARG;
    double J = 0.0, K = 0.0;
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        const double w = 1.0 / ((double)n * lens[i]);   // the token's share of J
        for (int t = 0; t < lens[i]; t++, off++) {
            double ds;
            const double s = surrogate(&ds, lp[off], lp_old[off], adv[i], eps);
            const double x = (double)lp_ref[off] - lp[off];
            const double k3 = exp(x) - x - 1.0;
            J += w * (s - beta * k3);
            K += w * k3;
            // d k3 / d lp = 1 - exp(lp_ref - lp); the loss is -J.
            if (dlp) dlp[off] = (float)(-w * (ds - beta * (1.0 - exp(x))));
        }
    }
    *loss = (float)-J;
    *kl = (float)K;
    return TW_OK;
}

// One row's softmax(z / tau), in double, and its log-sum-exp.   p: (V)   z: (V)
static double tempered_softmax(double *p, const float *z, int V, double tau) {
    double max = z[0];
    for (int v = 1; v < V; v++) if (z[v] > max) max = z[v];
    double sum = 0.0;
    for (int v = 0; v < V; v++) sum += exp(((double)z[v] - max) / tau);
    const double lse = max / tau + log(sum);
    if (p) for (int v = 0; v < V; v++) p[v] = exp((double)z[v] / tau - lse);
    return lse;
}

static tw_status check_completion(const int *tokens, int T, int V, int start, float tau) {
    if (start < 1 || start >= T || !(tau > 0.0f) || !isfinite(tau)) return TW_ERR_ARG;
    for (int t = 0; t < T; t++) if (tokens[t] < 0 || tokens[t] >= V) return TW_ERR_SHAPE;
    return TW_OK;
}

tw_status tw_completion_logprobs(float *lp, const float *logits, const int *tokens, int T, int V,
                                 int start, float tau) {
    tw_status st = check_completion(tokens, T, V, start, tau);
    if (st != TW_OK) return st;
    for (int t = start; t < T; t++) {
        const float *z = logits + (size_t)(t - 1) * V;   // (V): the prediction of token t
        lp[t - start] = (float)((double)z[tokens[t]] / tau - tempered_softmax(NULL, z, V, tau));
    }
    return TW_OK;
}

tw_status tw_completion_logprobs_backward(float *dlogits, const float *dlp, const float *logits,
                                          const int *tokens, int T, int V, int start, float tau) {
    tw_status st = check_completion(tokens, T, V, start, tau);
    if (st != TW_OK) return st;
    double *p = malloc((size_t)V * sizeof *p);   // (V)
    if (!p) return TW_ERR_NOMEM;
    for (int t = start; t < T; t++) {
        const float *z = logits + (size_t)(t - 1) * V;
        float *d = dlogits + (size_t)(t - 1) * V;
        tempered_softmax(p, z, V, tau);
        const double g = (double)dlp[t - start] / tau;
        for (int v = 0; v < V; v++) d[v] += (float)(g * ((v == tokens[t]) - p[v]));
    }
    free(p);
    return TW_OK;
}

tw_status tw_grpo_sample(int *len, int *tokens, int prompt_len, int T_max, tw_model_state *cs,
                         const tw_model *m, tw_sampler *sp) {
    return tw_grpo_sample_until(len, tokens, prompt_len, T_max, cs, m, sp, -1);
}

tw_status tw_grpo_sample_until(int *len, int *tokens, int prompt_len, int T_max, tw_model_state *cs,
                               const tw_model *m, tw_sampler *sp, int stop) {
    *len = prompt_len;
    if (prompt_len < 1 || prompt_len >= T_max || !cs->cache) return TW_ERR_ARG;
    // The prompt in one forward (prefill), then one token at a time.
    // tw_model_forward_next leaves only its last row's logits, row T - 1 of its T tokens.
    tw_status st = tw_model_forward_next(cs, m, tokens, prompt_len, 0);
    int n = prompt_len, rows = prompt_len;
    while (st == TW_OK) {
        const int next = tw_sampler_sample(sp, cs->logits + (size_t)(rows - 1) * m->cfg.vocab);
        tokens[n++] = next;
        if (next == 1 || next == 2 || next == stop || n == T_max) break;   // BOS, EOS (tokenize/tokenizer.h), stop
        st = tw_model_forward_next(cs, m, &tokens[n - 1], 1, n - 1);
        rows = 1;
    }
    *len = n;
    return st;
}

// The log-probs of sequence i's completion under model m (forward through s).   lp: (len - prompt_len)
static tw_status sequence_logprobs(float *lp, tw_model_state *s, const tw_model *m,
                                   const tw_grpo_batch *b, int i, float tau) {
    const int *tok = b->tokens + (size_t)i * b->T_max;
    tw_status st = tw_model_forward(s, m, tok, b->len[i], 0);
    if (st != TW_OK) return st;
    return tw_completion_logprobs(lp, s->logits, tok, b->len[i], m->cfg.vocab, b->prompt_len[i], tau);
}

static tw_status check_batch(const tw_grpo_batch *b, const tw_grpo_config *gc, const tw_model_state *s) {
    if (gc->G < 1 || b->n < 1 || b->n % gc->G != 0 || b->T_max > s->T_max) return TW_ERR_ARG;
    for (int i = 0; i < b->n; i++)
        if (b->prompt_len[i] < 1 || b->prompt_len[i] >= b->len[i] || b->len[i] > b->T_max) return TW_ERR_ARG;
    return TW_OK;
}

// Share of the groups whose rewards are not all equal, and the mean reward.
static void reward_summary(tw_grpo_stats *st, const float *r, int n, int G) {
    double sum = 0.0;
    int live = 0;
    for (int g = 0; g < n / G; g++) {
        int differs = 0;
        for (int i = 0; i < G; i++) {
            sum += r[g * G + i];
            differs |= r[g * G + i] != r[g * G];
        }
        live += differs;
    }
    st->reward = (float)(sum / n);
    st->signal = (float)live / (float)(n / G);
}

tw_status tw_grpo_forward_backward(tw_grpo_stats *st, tw_model_grads *g, tw_model_state *ds,
                                  tw_model_state *s, const tw_model *m, tw_model_state *rs,
                                  const tw_model *ref, const tw_grpo_batch *b, const tw_grpo_config *gc) {
    memset(st, 0, sizeof *st);
    tw_status e = check_batch(b, gc, s);
    if (e != TW_OK || ref->cfg.vocab != m->cfg.vocab || rs->T_max < b->T_max || ds->T_max < b->T_max)
        return TW_ERR_ARG;
    const int n = b->n;
    long N = 0;
    for (int i = 0; i < n; i++) N += b->len[i] - b->prompt_len[i];
    float *adv = malloc((size_t)n * sizeof *adv);                 // (n)
    int *lens = malloc((size_t)n * sizeof *lens);                 // (n) completion lengths
    float *lp = malloc((size_t)N * 4 * sizeof *lp);               // (4, N): lp, lp_old, lp_ref, dlp
    if (!adv || !lens || !lp) { free(adv); free(lens); free(lp); return TW_ERR_NOMEM; }
    float *lp_old = lp + N, *lp_ref = lp + 2 * N, *dlp = lp + 3 * N;
    reward_summary(st, b->rewards, n, gc->G);
    e = tw_grpo_advantages(adv, b->rewards, n / gc->G, gc->G, gc->eps_adv);
    long off = 0;
    for (int i = 0; i < n && e == TW_OK; i++) {
        lens[i] = b->len[i] - b->prompt_len[i];
        e = sequence_logprobs(lp_ref + off, rs, ref, b, i, gc->tau);
        if (e == TW_OK) e = sequence_logprobs(lp + off, s, m, b, i, gc->tau);
        off += lens[i];
    }
    // One update per batch of samples: the sampling policy is the policy, lp_old = lp, rho = 1.
    if (e == TW_OK) memcpy(lp_old, lp, (size_t)N * sizeof *lp);
    if (e == TW_OK) e = tw_grpo_loss(&st->loss, &st->kl, dlp, lp, lp_old, lp_ref, adv, lens, n, gc->eps, gc->beta);
    // The backward of every sequence: upstream weight dlp on each completion token's log-prob.
    off = 0;
    for (int i = 0; i < n && e == TW_OK; i++) {
        const int *tok = b->tokens + (size_t)i * b->T_max;
        e = tw_model_forward(s, m, tok, b->len[i], 0);
        tw_model_grad_state_zero(ds, m);
        if (e == TW_OK) e = tw_completion_logprobs_backward(ds->logits, dlp + off, s->logits, tok,
                                                            b->len[i], m->cfg.vocab, b->prompt_len[i], gc->tau);
        if (e == TW_OK) e = tw_model_backward(g, ds, s, m, tok, b->len[i]);
        off += lens[i];
    }
    free(adv); free(lens); free(lp);
    return e;
}

tw_status tw_grpo_train_step(tw_grpo_stats *st, tw_trainer *t, tw_model *m, tw_model_state *rs,
                             const tw_model *ref, const tw_grpo_batch *b, const tw_grpo_config *gc,
                             const tw_train_config *c) {
    tw_model_grads_zero(&t->g);
    tw_status e = tw_grpo_forward_backward(st, &t->g, &t->ds, &t->s, m, rs, ref, b, gc);
    st->lr = tw_lr_schedule((int)t->step, c->lr, c->min_lr, c->warmup, c->steps);
    if (e != TW_OK) return e;
    return tw_train_update(&st->gnorm, t, m, st->loss, st->lr, c);
}

tw_status tw_grpo_lora_train_step(tw_grpo_stats *st, tw_lora_trainer *lt, tw_trainer *t, tw_model *work,
                                  const tw_model *base, tw_lora_set *ad, tw_model_state *rs,
                                  const tw_model *ref, const tw_grpo_batch *b, const tw_grpo_config *gc,
                                  const tw_train_config *c) {
    memset(st, 0, sizeof *st);
    tw_status e = tw_lora_refresh(work, base, ad);
    if (e != TW_OK) return e;
    tw_model_grads_zero(&t->g);
    e = tw_grpo_forward_backward(st, &t->g, &t->ds, &t->s, work, rs, ref, b, gc);
    st->lr = tw_lr_schedule((int)lt->step, c->lr, c->min_lr, c->warmup, c->steps);
    if (e != TW_OK) return e;
    return tw_lora_update(&st->gnorm, lt, t, work, base, ad, st->loss, st->lr, c);
}
