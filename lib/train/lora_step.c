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

tw_status tw_lora_train_step(tw_train_stats *st, tw_lora_trainer *lt, tw_trainer *t, tw_model *work,
                             const tw_model *base, tw_lora_set *ad, const int *inputs,
                             const int *targets, const tw_train_config *c) {
    memset(st, 0, sizeof *st);
    tw_status s = tw_lora_refresh(work, base, ad);
    if (s != TW_OK) return s;
    st->lr = tw_lr_schedule((int)lt->step, c->lr, c->min_lr, c->warmup, c->steps);
    tw_model_grads_zero(&t->g);
    s = t->n_parts > 1
        ? tw_model_forward_backward_split(&st->loss, &t->g, t->g_part, t->ds_part, t->s_part, work,
                                          inputs, targets, c->B, c->T, 1.0f, t->n_parts)
        : tw_model_forward_backward(&st->loss, &t->g, &t->ds, &t->s, work, inputs, targets, c->B,
                                    c->T, 1.0f);
    if (s != TW_OK) return s;
    tw_lora_adapter_grads(&lt->g, t, work, ad);
    float *grads[1] = { lt->g.memory };
    const long counts[1] = { lt->g.n_floats };
    st->gnorm = tw_clip_grad_norm(grads, counts, 1, c->clip);
    if (!isfinite(st->loss) || !isfinite(st->gnorm)) return TW_ERR_ARG;
    const tw_adamw_hparams hp = { st->lr, c->beta1, c->beta2, c->eps, c->weight_decay };
    tw_adamw_step(ad->memory, lt->adam_m, lt->adam_v, lt->g.memory, ad->n_floats, (int)lt->step + 1, &hp);
    t->step = ++lt->step;   // the trainer's count follows, for loops written for tw_train_step
    return tw_lora_refresh(work, base, ad);
}
