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
                       int n_prompt) {
    memset(sp, 0, sizeof *sp);
    const int V = target->cfg.vocab;
    if (draft->cfg.vocab != V || k < 1 || n_prompt < 1 || n_prompt > steps ||
        steps > target->cfg.max_seq || steps > draft->cfg.max_seq)
        return TW_ERR_ARG;
    sp->target = target;
    sp->draft = draft;
    sp->k = k;
    sp->steps = steps;
    // The target's state takes the prompt's prefill or a round's k + 1 rows; the draft's the
    // prefill, one row at a time after it.
    const int t_rows = n_prompt > k + 1 ? n_prompt : k + 1;
    tw_status st = tw_model_state_init(&sp->ts, target, t_rows < steps ? t_rows : steps, steps);
    if (st == TW_OK) st = tw_model_state_init(&sp->ds, draft, n_prompt, steps);
    if (st != TW_OK) { tw_spec_free(sp); return st; }
    sp->p = malloc((size_t)(k + 1) * V * sizeof *sp->p);
    sp->q = malloc((size_t)k * V * sizeof *sp->q);
    sp->r = malloc((size_t)V * sizeof *sp->r);
    sp->drafted = malloc((size_t)k * sizeof *sp->drafted);
    sp->rows = malloc((size_t)(k + 1) * sizeof *sp->rows);
    if (!sp->p || !sp->q || !sp->r || !sp->drafted || !sp->rows) { tw_spec_free(sp); return TW_ERR_NOMEM; }
    return TW_OK;
}

void tw_spec_free(tw_spec *sp) {
    tw_model_state_free(&sp->ts);
    tw_model_state_free(&sp->ds);
    free(sp->p);
    free(sp->q);
    free(sp->r);
    free(sp->drafted);
    free(sp->rows);
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
    // Positions n0-1 .. n0-1+k are run by the target: they must stay below steps.
    const int k = sp->k < sp->steps - n0 ? sp->k : sp->steps - n0;
    // Both caches hold every token but the last, seq[n0 - 1], which this round runs first.
    tw_status st = catch_up(&sp->ts, sp->target, &sp->target_valid, seq, n0 - 1);
    if (st == TW_OK) st = catch_up(&sp->ds, sp->draft, &sp->draft_valid, seq, n0 - 1);
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

    // 2. The target scores seq[n0-1], d_0 .. d_{k-1} in one pass: row i is p_i, its distribution
    // for the token after them.
    sp->rows[0] = seq[n0 - 1];
    memcpy(sp->rows + 1, sp->drafted, (size_t)k * sizeof *sp->rows);
    st = tw_model_forward(&sp->ts, sp->target, sp->rows, k + 1, n0 - 1);
    if (st != TW_OK) return st;
    for (int i = 0; i <= k; i++)
        tw_sampler_distribution(sampler, sp->p + (size_t)i * V, sp->ts.logits + (size_t)i * V);

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
