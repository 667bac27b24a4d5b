// lora_step.c: one training step of LoRA adapters (see lora_step.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "train/forward_backward.h"
#include "train/lora_step.h"
#include "train/optim.h"
#include "train/parallel.h"

tw_status tw_lora_trainer_init(tw_lora_trainer *lt, const tw_lora_set *ad, const tw_model_config *c) {
    memset(lt, 0, sizeof *lt);
    tw_status st = tw_lora_set_init(&lt->g, c, ad->r, ad->alpha, ad->targets, ad->n_targets);
    if (st != TW_OK) return st;
    lt->adam_m = calloc((size_t)ad->n_floats, sizeof(float));
    lt->adam_v = calloc((size_t)ad->n_floats, sizeof(float));
    if (!lt->adam_m || !lt->adam_v) { tw_lora_trainer_free(lt); return TW_ERR_NOMEM; }
    return TW_OK;
}

void tw_lora_trainer_free(tw_lora_trainer *lt) {
    tw_lora_set_free(&lt->g);
    free(lt->adam_m);
    free(lt->adam_v);
    memset(lt, 0, sizeof *lt);
}

tw_status tw_lora_refresh(tw_model *work, const tw_model *base, const tw_lora_set *ad) {
    if (work->n_floats != base->n_floats || !tw_lora_set_fits(ad, &base->cfg)) return TW_ERR_SHAPE;
    for (int l = 0; l < ad->n_layer; l++)
        for (int i = 0; i < ad->n_targets; i++)
            memcpy(tw_lora_base_weight(work, l, ad->targets[i]), tw_lora_base_weight(base, l, ad->targets[i]),
                   (size_t)ad->out[i] * ad->in[i] * sizeof(float));
    return tw_lora_merge_model(work, ad, +1);
}

void tw_lora_adapter_grads(tw_lora_set *g, const tw_trainer *t, const tw_model *work, const tw_lora_set *ad) {
    memset(g->memory, 0, (size_t)g->n_floats * sizeof(float));
    for (int l = 0; l < ad->n_layer; l++)
        for (int i = 0; i < ad->n_targets; i++) {
            const float *W = tw_lora_base_weight(work, l, ad->targets[i]);
            const float *G = tw_model_grad_of(&t->g, work, W);   // (out, in)
            const tw_lora *a = &ad->lin[l * ad->n_targets + i];
            tw_lora_grads_from_weight_grad(tw_lora_A(g, l, i), tw_lora_B(g, l, i), G, a->A, a->B,
                                           a->scale, ad->in[i], ad->out[i], ad->r);
        }
}

// 1 if parameter i of work is the weight of one of ad's targets.
static int is_target(const tw_model *work, const tw_lora_set *ad, int i) {
    for (int l = 0; l < ad->n_layer; l++)
        for (int k = 0; k < ad->n_targets; k++)
            if (work->params[i].data == tw_lora_base_weight(work, l, ad->targets[k])) return 1;
    return 0;
}

// The base is frozen, and of its gradients the step needs only the targets' (adapter_grads):
// every other gradient of the trainer's (and of its parts') is frozen, so the backward forms none
// of them. Idempotent: a gradient is zeroed once, when it is first frozen.
static void freeze_all_but_targets(tw_trainer *t, const tw_model *work, const tw_lora_set *ad) {
    for (int p = 0; p < t->n_parts; p++) {
        tw_model_grads *g = p == 0 ? &t->g : &t->g_part[p - 1];
        for (int i = 0; i < g->n_params; i++) tw_model_grads_freeze(g, i, !is_target(work, ad, i));
    }
}

tw_status tw_lora_train_step(tw_train_stats *st, tw_lora_trainer *lt, tw_trainer *t, tw_model *work,
                             const tw_model *base, tw_lora_set *ad, const int *inputs,
                             const int *targets, const tw_train_config *c) {
    memset(st, 0, sizeof *st);
    tw_status s = tw_lora_refresh(work, base, ad);
    if (s != TW_OK) return s;
    st->lr = tw_lr_schedule((int)lt->step, c->lr, c->min_lr, c->warmup, c->steps);
    freeze_all_but_targets(t, work, ad);
    tw_model_grads_zero_trained(&t->g);
    s = t->n_parts > 1
        ? tw_model_forward_backward_split(&st->loss, &t->g, t->g_part, t->ds_part, t->s_part, work,
                                          inputs, targets, c->B, c->T, 1.0f, t->n_parts)
        : tw_model_forward_backward(&st->loss, &t->g, &t->ds, &t->s, work, inputs, targets, c->B,
                                    c->T, 1.0f);
    if (s != TW_OK) return s;
    return tw_lora_update(&st->gnorm, lt, t, work, base, ad, st->loss, st->lr, c);
}

tw_status tw_lora_update(float *gnorm, tw_lora_trainer *lt, tw_trainer *t, tw_model *work,
                         const tw_model *base, tw_lora_set *ad, float loss, float lr,
                         const tw_train_config *c) {
    tw_lora_adapter_grads(&lt->g, t, work, ad);
    float *grads[1] = { lt->g.memory };   // the adapters are one block of floats
    const long counts[1] = { lt->g.n_floats };
    *gnorm = tw_clip_grad_norm(grads, counts, 1, c->clip);
    if (!isfinite(loss) || !isfinite(*gnorm)) return TW_ERR_ARG;
    const tw_adamw_hparams hp = { lr, c->beta1, c->beta2, c->eps, c->weight_decay };
    tw_adamw_step(ad->memory, lt->adam_m, lt->adam_v, lt->g.memory, ad->n_floats, (int)lt->step + 1, &hp);
    t->step = ++lt->step;   // the trainer's count follows, for loops written for tw_train_step
    return tw_lora_refresh(work, base, ad);
}
