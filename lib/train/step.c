// step.c: one step of training (see step.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train/step.h"
#include "train/parallel.h"

tw_status tw_trainer_init(tw_trainer *t, const tw_model *m, int T_max) {
    return tw_trainer_init_split(t, m, T_max, 1);
}

tw_status tw_trainer_init_split(tw_trainer *t, const tw_model *m, int T_max, int n_parts) {
    memset(t, 0, sizeof *t);
    if (n_parts < 1 || n_parts > 64) return TW_ERR_ARG;
    t->n_parts = n_parts;
    tw_status st = tw_model_grads_init(&t->g, m);
    if (st == TW_OK) st = tw_model_state_init(&t->s, m, T_max, 0);
    if (st == TW_OK) st = tw_model_state_init(&t->ds, m, T_max, 0);
    if (st != TW_OK) { tw_trainer_free(t); return st; }
    t->adam_m = calloc((size_t)m->n_floats, sizeof(float));
    t->adam_v = calloc((size_t)m->n_floats, sizeof(float));
    t->grad_ptrs = calloc((size_t)m->n_params, sizeof *t->grad_ptrs);
    t->counts = calloc((size_t)m->n_params, sizeof *t->counts);
    if (!t->adam_m || !t->adam_v || !t->grad_ptrs || !t->counts) { tw_trainer_free(t); return TW_ERR_NOMEM; }
    for (int i = 0; i < m->n_params; i++) {
        t->grad_ptrs[i] = t->g.params[i].data;
        t->counts[i] = t->g.params[i].count;
    }
    if (n_parts == 1) return TW_OK;
    t->g_part = calloc((size_t)n_parts - 1, sizeof *t->g_part);
    t->s_part = calloc((size_t)n_parts, sizeof *t->s_part);
    t->ds_part = calloc((size_t)n_parts, sizeof *t->ds_part);
    if (!t->g_part || !t->s_part || !t->ds_part) { tw_trainer_free(t); return TW_ERR_NOMEM; }
    for (int p = 0; p < n_parts; p++) {
        st = p > 0 ? tw_model_grads_init(&t->g_part[p - 1], m) : TW_OK;
        if (st == TW_OK) st = tw_model_state_init(&t->s_part[p], m, T_max, 0);
        if (st == TW_OK) st = tw_model_state_init(&t->ds_part[p], m, T_max, 0);
        if (st != TW_OK) { tw_trainer_free(t); return st; }
    }
    return TW_OK;
}

void tw_trainer_free(tw_trainer *t) {
    tw_model_grads_free(&t->g);
    tw_model_state_free(&t->s);
    tw_model_state_free(&t->ds);
    free(t->adam_m);
    free(t->adam_v);
    free(t->grad_ptrs);
    free(t->counts);
    for (int p = 0; p < t->n_parts && t->s_part; p++) {   // calloc'd: unmade ones are zeroed
        if (p > 0 && t->g_part) tw_model_grads_free(&t->g_part[p - 1]);
        tw_model_state_free(&t->s_part[p]);
        if (t->ds_part) tw_model_state_free(&t->ds_part[p]);
    }
    free(t->g_part);
    free(t->s_part);
    free(t->ds_part);
    memset(t, 0, sizeof *t);
}

tw_status tw_train_step(tw_train_stats *st, tw_trainer *t, tw_model *m, const int *inputs,
                        const int *targets, const tw_train_config *c) {
    memset(st, 0, sizeof *st);
    st->lr = tw_lr_schedule((int)t->step, c->lr, c->min_lr, c->warmup, c->steps);
    tw_model_grads_zero(&t->g);
    tw_status s = t->n_parts > 1
        ? tw_model_forward_backward_split(&st->loss, &t->g, t->g_part, t->ds_part, t->s_part, m, inputs,
                                  targets, c->B, c->T, 1.0f, t->n_parts)
        : tw_model_forward_backward(&st->loss, &t->g, &t->ds, &t->s, m, inputs, targets, c->B, c->T, 1.0f);
    if (s != TW_OK) return s;
    return tw_train_update(&st->gnorm, t, m, st->loss, st->lr, c);
}

tw_status tw_train_update(float *gnorm, tw_trainer *t, tw_model *m, float loss, float lr,
                          const tw_train_config *c) {
    // The norm before clipping, as torch.nn.utils.clip_grad_norm_ returns it (clip 0: no clipping).
    *gnorm = tw_clip_grad_norm(t->grad_ptrs, t->counts, m->n_params, c->clip);
    if (!isfinite(loss) || !isfinite(*gnorm)) return TW_ERR_ARG;
    const tw_adamw_hparams hp = { lr, c->beta1, c->beta2, c->eps, c->weight_decay };
    tw_adamw_step_model(m, t->adam_m, t->adam_v, &t->g, (int)t->step + 1, &hp);
    t->step++;
    return TW_OK;
}
