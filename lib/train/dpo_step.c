// dpo_step.c: one DPO step on a batch of preference pairs (see dpo_step.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train/dpo.h"
#include "train/dpo_step.h"
#include "train/optim.h"
#include "train/parallel.h"
#include "train/seq_logprob.h"

tw_status tw_dpo_scratch_init(tw_dpo_scratch *d, const tw_model *m, int T_max) {
    memset(d, 0, sizeof *d);
    if (T_max < 1) return TW_ERR_ARG;
    d->T_max = T_max;
    tw_status st = tw_model_state_init(&d->s_rejected, m, T_max, 0);
    if (st != TW_OK) return st;
    d->in_w = malloc((size_t)T_max * sizeof(int));
    d->tg_w = malloc((size_t)T_max * sizeof(int));
    d->in_l = malloc((size_t)T_max * sizeof(int));
    d->tg_l = malloc((size_t)T_max * sizeof(int));
    if (!d->in_w || !d->tg_w || !d->in_l || !d->tg_l) { tw_dpo_scratch_free(d); return TW_ERR_NOMEM; }
    return TW_OK;
}

void tw_dpo_scratch_free(tw_dpo_scratch *d) {
    tw_model_state_free(&d->s_rejected);
    free(d->in_w); free(d->tg_w); free(d->in_l); free(d->tg_l);
    memset(d, 0, sizeof *d);
}

// The inputs and targets of pair i's chosen (into in_w, tg_w) and rejected (in_l, tg_l); *Tw, *Tl
// their lengths. TW_ERR_ARG if either is longer than the scratch holds.
static tw_status pair_sequences(int *Tw, int *Tl, tw_dpo_scratch *d, const tw_pairs *p, long i) {
    const int *len = p->len + 3 * i;
    if (len[0] + len[1] - 1 > d->T_max || len[0] + len[2] - 1 > d->T_max) return TW_ERR_ARG;
    *Tw = tw_seq_targets(d->in_w, d->tg_w, tw_pairs_prompt(p, i), len[0], tw_pairs_chosen(p, i), len[1]);
    *Tl = tw_seq_targets(d->in_l, d->tg_l, tw_pairs_prompt(p, i), len[0], tw_pairs_rejected(p, i), len[2]);
    return TW_OK;
}

tw_status tw_dpo_reference(double *ref, tw_dpo_scratch *d, const tw_model *ref_model, const tw_pairs *p) {
    for (long i = 0; i < p->n; i++) {
        int Tw, Tl;
        tw_status st = pair_sequences(&Tw, &Tl, d, p, i);
        if (st == TW_OK) st = tw_model_seq_logprob(&ref[2 * i], &d->s_rejected, ref_model, d->in_w, d->tg_w, Tw);
        if (st == TW_OK) st = tw_model_seq_logprob(&ref[2 * i + 1], &d->s_rejected, ref_model, d->in_l, d->tg_l, Tl);
        if (st != TW_OK) return st;
    }
    return TW_OK;
}

tw_status tw_dpo_forward_backward(tw_dpo_stats *st, tw_model_grads *g, tw_trainer *t, tw_dpo_scratch *d,
                                  const tw_model *m, const tw_pairs *p, const long *idx, int B,
                                  const double *ref, float beta) {
    if (B < 1) return TW_ERR_ARG;
    double loss = 0.0, margin = 0.0;
    int right = 0;
    for (int b = 0; b < B; b++) {
        const long i = idx[b];
        if (i < 0 || i >= p->n) return TW_ERR_ARG;
        int Tw, Tl;
        double pw, pl;
        tw_status s = pair_sequences(&Tw, &Tl, d, p, i);
        if (s == TW_OK) s = tw_model_seq_logprob(&pw, &t->s, m, d->in_w, d->tg_w, Tw);
        if (s == TW_OK) s = tw_model_seq_logprob(&pl, &d->s_rejected, m, d->in_l, d->tg_l, Tl);
        if (s != TW_OK) return s;
        tw_dpo_result r;
        tw_dpo_pair_loss(&r, pw, pl, ref[2 * i], ref[2 * i + 1], beta);
        loss += r.loss;
        margin += r.margin;
        right += r.margin > 0.0;
        // The step's loss is the mean over its B pairs.
        s = tw_model_seq_logprob_backward(g, &t->ds, &t->s, m, d->in_w, d->tg_w, Tw, (float)(r.d_chosen / B));
        if (s == TW_OK)
            s = tw_model_seq_logprob_backward(g, &t->ds, &d->s_rejected, m, d->in_l, d->tg_l, Tl,
                                              (float)(r.d_rejected / B));
        if (s != TW_OK) return s;
    }
    st->loss = (float)(loss / B);
    st->margin = (float)(margin / B);
    st->accuracy = (float)right / (float)B;
    return TW_OK;
}

tw_status tw_dpo_train_step(tw_dpo_stats *st, tw_trainer *t, tw_dpo_scratch *d, tw_model *m,
                            const tw_pairs *p, const long *idx, int B, const double *ref, float beta,
                            const tw_train_config *c) {
    memset(st, 0, sizeof *st);
    st->lr = tw_lr_schedule((int)t->step, c->lr, c->min_lr, c->warmup, c->steps);
    tw_model_grads_zero(&t->g);
    tw_status s = tw_dpo_forward_backward(st, &t->g, t, d, m, p, idx, B, ref, beta);
    if (s != TW_OK) return s;
    return tw_train_update(&st->gnorm, t, m, st->loss, st->lr, c);
}

tw_status tw_dpo_lora_train_step(tw_dpo_stats *st, tw_lora_trainer *lt, tw_trainer *t, tw_dpo_scratch *d,
                                 tw_model *work, const tw_model *base, tw_lora_set *ad, const tw_pairs *p,
                                 const long *idx, int B, const double *ref, float beta,
                                 const tw_train_config *c) {
    memset(st, 0, sizeof *st);
    tw_status s = tw_lora_refresh(work, base, ad);
    if (s != TW_OK) return s;
    st->lr = tw_lr_schedule((int)lt->step, c->lr, c->min_lr, c->warmup, c->steps);
    tw_model_grads_zero(&t->g);
    s = tw_dpo_forward_backward(st, &t->g, t, d, work, p, idx, B, ref, beta);
    if (s != TW_OK) return s;
    return tw_lora_update(&st->gnorm, lt, t, work, base, ad, st->loss, st->lr, c);
}
