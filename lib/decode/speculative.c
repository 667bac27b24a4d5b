// speculative.c: speculative decoding (see speculative.h).
#include <stdlib.h>
#include <string.h>
#include "decode/speculative.h"

int tw_spec_accept(const float *p, const float *q, int x, float u) {
    return u * q[x] < p[x];
}

int tw_spec_residual_sample(float *r, const float *p, const float *q, int V, float u) {
    double sum = 0.0;
    for (int i = 0; i < V; i++) {
        r[i] = p[i] > q[i] ? p[i] - q[i] : 0.0f;
        sum += r[i];
    }
    if (sum <= 0.0) return tw_sample_cumulative(p, V, u);
    for (int i = 0; i < V; i++) r[i] = (float)(r[i] / sum);
    return tw_sample_cumulative(r, V, u);
}

void tw_spec_emit_dist(double *out, const float *p, const float *q, int V) {
    // P(reject) = sum_x q[x] (1 - min(1, p[x]/q[x])) = sum_x (q[x] - min(p[x], q[x]))
    double reject = 0.0, residual = 0.0;   // and the residual's mass, sum max(0, p - q)
    for (int y = 0; y < V; y++) {
        reject += p[y] < q[y] ? (double)q[y] - p[y] : 0.0;
        residual += p[y] > q[y] ? (double)p[y] - q[y] : 0.0;
    }
    for (int y = 0; y < V; y++) {
        const double accept_y = p[y] < q[y] ? (double)p[y] : (double)q[y];   // q[y] min(1, p[y]/q[y])
        const double r_y = residual > 0.0 ? (p[y] > q[y] ? ((double)p[y] - q[y]) / residual : 0.0)
                                          : (double)p[y];
        out[y] = accept_y + reject * r_y;
    }
}

tw_status tw_spec_init(tw_spec *sp, const tw_model *target, const tw_model *draft, int k, int steps,
                       const int *prompt, int n_prompt) {
    enum { BLOCK = 16 };
    memset(sp, 0, sizeof *sp);
    const int V = target->cfg.vocab;
    if (draft->cfg.vocab != V || k < 1 || n_prompt < 1 || n_prompt > steps ||
        steps > target->cfg.max_seq || steps > draft->cfg.max_seq)
        return TW_ERR_ARG;
    sp->target = target;
    sp->draft = draft;
    sp->k = k;
    sp->steps = steps;
    tw_status st = tw_batch_init(&sp->tb, target, k + 1, steps, BLOCK, (steps + BLOCK - 1) / BLOCK);
    if (st == TW_OK) st = tw_block_table_init(&sp->table, &sp->tb.pool, steps);
    if (st == TW_OK) st = tw_block_table_reserve(&sp->table, &sp->tb.pool, steps);
    if (st == TW_OK) st = tw_model_state_init(&sp->ds, draft, n_prompt, steps);
    if (st != TW_OK) { tw_spec_free(sp); return st; }
    sp->p = malloc((size_t)(k + 1) * V * sizeof *sp->p);
    sp->q = malloc((size_t)k * V * sizeof *sp->q);
    sp->r = malloc((size_t)V * sizeof *sp->r);
    sp->last_logits = malloc((size_t)V * sizeof *sp->last_logits);
    sp->drafted = malloc((size_t)k * sizeof *sp->drafted);
    sp->rows = malloc((size_t)(k + 1) * sizeof *sp->rows);
    sp->pos = malloc((size_t)(k + 1) * sizeof *sp->pos);
    sp->tables = malloc((size_t)(k + 1) * sizeof *sp->tables);
    if (!sp->p || !sp->q || !sp->r || !sp->last_logits || !sp->drafted || !sp->rows || !sp->pos ||
        !sp->tables) {
        tw_spec_free(sp);
        return TW_ERR_NOMEM;
    }
    for (int i = 0; i <= k; i++) sp->tables[i] = &sp->table;
    // The prompt's prefill, as ./generate runs it: one call over every prompt position. Its keys
    // and values are copied into the batch's paged cache, and its last logits kept.
    tw_model_state pre;
    st = tw_model_state_init(&pre, target, n_prompt, n_prompt);
    if (st == TW_OK) st = tw_model_forward_next(&pre, target, prompt, n_prompt, 0);
    if (st == TW_OK) {
        const tw_mha_config *a = &target->cfg.block.attn;
        const size_t row = (size_t)a->n_kv_head * a->head_dim * sizeof(float);
        for (int l = 0; l < target->cfg.n_layer; l++)
            for (int p = 0; p < n_prompt; p++) {
                memcpy(tw_paged_key(&sp->tb.pool, &sp->table, l, p), pre.cache[l].k + p * row / sizeof(float), row);
                memcpy(tw_paged_value(&sp->tb.pool, &sp->table, l, p), pre.cache[l].v + p * row / sizeof(float), row);
            }
        memcpy(sp->last_logits, pre.logits + (size_t)(n_prompt - 1) * V, (size_t)V * sizeof(float));
        sp->target_valid = n_prompt;
        sp->have_last = 1;
    }
    tw_model_state_free(&pre);
    if (st != TW_OK) tw_spec_free(sp);
    return st;
}

void tw_spec_free(tw_spec *sp) {
    tw_batch_free(&sp->tb);
    tw_block_table_free(&sp->table);
    tw_model_state_free(&sp->ds);
    free(sp->p);
    free(sp->q);
    free(sp->r);
    free(sp->last_logits);
    free(sp->drafted);
    free(sp->rows);
    free(sp->pos);
    free(sp->tables);
    memset(sp, 0, sizeof *sp);
}

tw_status tw_spec_layer_draft(tw_model *view, const tw_model *m, int n_layer) {
    if (n_layer < 1 || n_layer > m->cfg.n_layer) return TW_ERR_ARG;
    *view = *m;   // the same weights; only the forward's layer count differs
    view->cfg.n_layer = n_layer;
    return TW_OK;
}

// Brings a cache up to seq[0 .. upto) by running the positions it has not seen (the prompt's
// prefill, or the one token the draft has not run after a round that kept all k proposals).
static tw_status catch_up(tw_model_state *s, const tw_model *m, int *valid, const int *seq, int upto) {
    if (*valid >= upto) return TW_OK;
    tw_status st = tw_model_forward_next(s, m, seq + *valid, upto - *valid, *valid);
    if (st == TW_OK) *valid = upto;
    return st;
}

tw_status tw_spec_round(tw_spec *sp, tw_sampler *sampler, int *seq, int *n) {
    const int V = sp->target->cfg.vocab, n0 = *n;
    if (n0 < 1 || n0 > sp->steps) return TW_ERR_ARG;
    // The target runs positions up to n0-1+k (n0+k-1 when it already has the prompt's logits):
    // they must stay below steps.
    const int k = sp->k < sp->steps - n0 ? sp->k : sp->steps - n0;
    // The draft's cache holds every token but the last, seq[n0 - 1], which it runs first.
    tw_status st = catch_up(&sp->ds, sp->draft, &sp->draft_valid, seq, n0 - 1);
    if (st != TW_OK) return st;

    // 1. The draft proposes k tokens, one forward pass each: d_i ~ q_i.
    int token = seq[n0 - 1];
    for (int i = 0; i < k; i++) {
        st = tw_model_forward_next(&sp->ds, sp->draft, &token, 1, n0 - 1 + i);
        if (st != TW_OK) return st;
        float *q_i = sp->q + (size_t)i * V;
        tw_sampler_distribution(sampler, q_i, sp->ds.logits);
        token = sp->drafted[i] = tw_sample_cumulative(q_i, V, tw_sampler_next_f32(sampler));
    }
    // The draft ran seq[n0-1], d_0 .. d_{k-2} at positions n0-1 .. n0+k-2.
    sp->draft_valid = n0 - 1 + k;

    // 2. The target scores the proposals in one pass. Row i of the distributions is p_i, the
    // target's distribution for the token after seq[n0-1], d_0 .. d_{i-1}. After the prefill the
    // target already has p_0 (the prompt's last logits) and runs d_0 .. d_{k-1}; later it runs
    // seq[n0-1] (the token the last round drew) first.
    const int first = sp->have_last && sp->target_valid == n0;
    int R = 0;
    if (!first) { sp->rows[R] = seq[n0 - 1]; sp->pos[R] = n0 - 1; R++; }
    for (int i = 0; i < k; i++) { sp->rows[R] = sp->drafted[i]; sp->pos[R] = n0 + i; R++; }
    if (first) tw_sampler_distribution(sampler, sp->p, sp->last_logits);
    if (R > 0) {
        st = tw_batch_forward(&sp->tb, sp->tables, sp->rows, sp->pos, NULL, R);
        if (st != TW_OK) return st;
    }
    for (int r = 0; r < R; r++)
        tw_sampler_distribution(sampler, sp->p + (size_t)(first + r) * V, sp->tb.logits + (size_t)r * V);
    sp->have_last = 0;

    // 3. The rule: keep proposals while they are accepted, then draw one token.
    int kept = 0, extra;
    while (kept < k && tw_spec_accept(sp->p + (size_t)kept * V, sp->q + (size_t)kept * V,
                                      sp->drafted[kept], tw_sampler_next_f32(sampler)))
        kept++;
    if (kept < k)
        extra = tw_spec_residual_sample(sp->r, sp->p + (size_t)kept * V, sp->q + (size_t)kept * V, V,
                                        tw_sampler_next_f32(sampler));
    else
        extra = tw_sample_cumulative(sp->p + (size_t)k * V, V, tw_sampler_next_f32(sampler));

    memcpy(seq + n0, sp->drafted, (size_t)kept * sizeof *seq);
    seq[n0 + kept] = extra;
    *n = n0 + kept + 1;
    // Cache rows past the kept tokens hold rejected proposals: they are simply written over,
    // since a position only ever attends to the positions before it.
    sp->target_valid = n0 + kept;
    if (sp->draft_valid > n0 + kept) sp->draft_valid = n0 + kept;
    sp->rounds++;
    sp->proposed += k;
    sp->accepted += kept;
    sp->tested += kept < k ? kept + 1 : kept;
    sp->emitted += kept + 1;
    return TW_OK;
}
