// router.c: the mixture-of-experts router (router.h): scores, top-k choice, gate weights, the
// load-balancing loss and their backward, as plain loops over one token's E scores.
#include <assert.h>
#include <math.h>
#include "nn/router.h"
#include "nn/softmax.h"

void tw_router_scores(float *probs, const float *logits, int T, const tw_router_config *cfg) {
    const int E = cfg->E;
    if (cfg->score == TW_ROUTER_SOFTMAX) {
        tw_softmax_rows(probs, logits, T, E, 1.0f);
        return;
    }
    for (long i = 0; i < (long)T * E; i++) probs[i] = 1.0f / (1.0f + expf(-logits[i]));
}

// 1 if a beats b as a choice: a higher score, or an equal one at a lower index.
static int better(float score_a, int a, float score_b, int b) {
    return score_a > score_b || (score_a == score_b && a < b);
}

static int chosen(const int *list, int n, int i) {
    for (int j = 0; j < n; j++)
        if (list[j] == i) return 1;
    return 0;
}

// The score that decides the choice of expert e: its probability plus its bias.
static float choice_score(const float *p, const float *bias, int e) {
    return bias ? p[e] + bias[e] : p[e];
}

// A group's score: the sum of its two best choice scores (its only one if it has one).
//   p: (E) one token's probabilities   first: the group's first expert   size: experts in it
static float group_score(const float *p, const float *bias, int first, int size) {
    int best = first;
    for (int e = first + 1; e < first + size; e++)
        if (better(choice_score(p, bias, e), e, choice_score(p, bias, best), best)) best = e;
    float s = choice_score(p, bias, best);
    if (size == 1) return s;
    int second = best == first ? first + 1 : first;
    for (int e = first; e < first + size; e++)
        if (e != best && better(choice_score(p, bias, e), e, choice_score(p, bias, second), second))
            second = e;
    return s + choice_score(p, bias, second);
}

// The topk_group best groups of one token (1 in allowed[g] for those).
static void select_groups(int *allowed, const float *p, const float *bias,
                          const tw_router_config *cfg) {
    const int G = cfg->n_group, size = cfg->E / G;
    float gs[TW_ROUTER_MAX_GROUPS];
    int picked[TW_ROUTER_MAX_GROUPS];
    for (int g = 0; g < G; g++) { gs[g] = group_score(p, bias, g * size, size); allowed[g] = 0; }
    for (int n = 0; n < cfg->topk_group; n++) {
        int best = -1;
        for (int g = 0; g < G; g++)
            if (!chosen(picked, n, g) && (best < 0 || better(gs[g], g, gs[best], best))) best = g;
        picked[n] = best;
        allowed[best] = 1;
    }
}

void tw_router_select(int *sel, const float *probs, const float *bias, int T,
                      const tw_router_config *cfg) {
    const int E = cfg->E, k = cfg->k, G = cfg->n_group > 1 ? cfg->n_group : 1;
    assert(k >= 1 && k <= E && G <= TW_ROUTER_MAX_GROUPS && E % G == 0);
    int allowed[TW_ROUTER_MAX_GROUPS];
    for (int t = 0; t < T; t++) {
        const float *p = probs + (long)t * E;
        int *s = sel + (long)t * k;
        if (G > 1) select_groups(allowed, p, bias, cfg);
        // k passes, each taking the best expert not yet chosen (k * E steps; E is small here)
        for (int j = 0; j < k; j++) {
            int best = -1;
            for (int e = 0; e < E; e++) {
                if ((G > 1 && !allowed[e / (E / G)]) || chosen(s, j, e)) continue;
                if (best < 0 || better(choice_score(p, bias, e), e, choice_score(p, bias, best), best))
                    best = e;
            }
            assert(best >= 0);   // k <= experts in the allowed groups (checked by the caller)
            s[j] = best;
        }
    }
}

void tw_router_gates(float *w, const float *probs, const int *sel, int T,
                     const tw_router_config *cfg) {
    const int E = cfg->E, k = cfg->k;
    for (int t = 0; t < T; t++) {
        const float *p = probs + (long)t * E;
        float sum = 0.0f;
        for (int j = 0; j < k; j++) sum += p[sel[t * k + j]];
        for (int j = 0; j < k; j++) {
            float v = p[sel[t * k + j]];
            if (cfg->norm_topk) v /= sum;
            w[t * k + j] = v * cfg->scale;
        }
    }
}

void tw_router_counts(int *count, const int *sel, int T, const tw_router_config *cfg) {
    for (int e = 0; e < cfg->E; e++) count[e] = 0;
    for (long i = 0; i < (long)T * cfg->k; i++) count[sel[i]]++;
}

float tw_router_aux_loss(const float *probs, const int *sel, int T, const tw_router_config *cfg) {
    const int E = cfg->E, k = cfg->k;
    float loss = 0.0f;
    for (int e = 0; e < E; e++) {
        int c = 0;
        for (long i = 0; i < (long)T * k; i++) c += sel[i] == e;
        float P = 0.0f;
        for (int t = 0; t < T; t++) P += probs[(long)t * E + e];
        loss += ((float)c / ((float)T * k)) * (P / (float)T);
    }
    return (float)E * loss;
}

void tw_router_backward(float *dlogits, const float *dw, const float *probs, const int *sel,
                        int T, const tw_router_config *cfg, float aux_coef) {
    const int E = cfg->E, k = cfg->k;
    for (int t = 0; t < T; t++) {
        const float *p = probs + (long)t * E;
        const int *s = sel + (long)t * k;
        const float *dwt = dw + (long)t * k;
        float *dp = dlogits + (long)t * E;   // first d probs, then turned into d logits in place
        for (int e = 0; e < E; e++) dp[e] = 0.0f;
        if (cfg->norm_topk) {
            // w_j = scale p_j / S, S = sum_l p_l:  dp_j = scale (dw_j - sum_l dw_l p_l / S) / S
            float S = 0.0f, dot = 0.0f;
            for (int j = 0; j < k; j++) { S += p[s[j]]; dot += dwt[j] * p[s[j]]; }
            for (int j = 0; j < k; j++) dp[s[j]] += cfg->scale * (dwt[j] - dot / S) / S;
        } else {
            for (int j = 0; j < k; j++) dp[s[j]] += cfg->scale * dwt[j];
        }
    }
    // d aux / d probs[t][e] = E f_e / T, the same for every token
    if (aux_coef != 0.0f)
        for (int e = 0; e < E; e++) {
            int c = 0;
            for (long i = 0; i < (long)T * k; i++) c += sel[i] == e;
            const float g = aux_coef * (float)E * ((float)c / ((float)T * k)) / (float)T;
            for (int t = 0; t < T; t++) dlogits[(long)t * E + e] += g;
        }
    for (int t = 0; t < T; t++) {
        const float *p = probs + (long)t * E;
        float *d = dlogits + (long)t * E;
        if (cfg->score == TW_ROUTER_SOFTMAX) {
            float dot = 0.0f;   // softmax backward: dl = p (dp - sum_e p_e dp_e)
            for (int e = 0; e < E; e++) dot += p[e] * d[e];
            for (int e = 0; e < E; e++) d[e] = p[e] * (d[e] - dot);
        } else {
            for (int e = 0; e < E; e++) d[e] *= p[e] * (1.0f - p[e]);   // sigmoid' = p (1 - p)
        }
    }
}
