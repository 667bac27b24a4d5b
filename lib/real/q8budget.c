// q8budget.c: the error budget of a quantized model against its fp32 original; see q8budget.h.
// Sums in double, so the statistics themselves add no error worth mentioning.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "real/q8budget.h"
#include "real/sampler.h"

// Logits (T, V) of the whole text from one forward pass without a cache, into out.
static tw_status text_logits(float *out, const tw_model *m, const int *text, int T) {
    tw_model_state s;
    tw_status st = tw_model_state_init(&s, m, T, 0);
    if (st != TW_OK) return st;
    st = tw_model_forward(&s, m, text, T, 0);
    if (st == TW_OK) memcpy(out, s.logits, sizeof(float) * (size_t)T * (size_t)m->cfg.vocab);
    tw_model_state_free(&s);
    return st;
}

// log softmax of one row, in double.   lp: (V)   logits: (V)
static void log_softmax(double *lp, const float *logits, int V) {
    double mx = logits[0], sum = 0;
    for (int v = 1; v < V; v++) mx = fmax(mx, logits[v]);
    for (int v = 0; v < V; v++) sum += exp(logits[v] - mx);
    for (int v = 0; v < V; v++) lp[v] = logits[v] - mx - log(sum);
}

// seq[n_prompt .. n_prompt+steps-1] = greedy continuation of seq[0 .. n_prompt-1], with a KV cache.
static tw_status greedy(int *seq, const tw_model *m, int n_prompt, int steps) {
    tw_model_state s;
    tw_status st = tw_model_state_init(&s, m, n_prompt, n_prompt + steps);
    if (st != TW_OK) return st;
    const int V = m->cfg.vocab;
    st = tw_model_forward_next(&s, m, seq, n_prompt, 0);
    const float *last = s.logits + (size_t)(n_prompt - 1) * V;
    for (int n = n_prompt; n < n_prompt + steps && st == TW_OK; n++) {
        seq[n] = tw_argmax(last, V);
        if (n + 1 == n_prompt + steps) break;
        st = tw_model_forward_next(&s, m, &seq[n], 1, n);
        last = s.logits;   // T = 1: row 0
    }
    tw_model_state_free(&s);
    return st;
}

static void text_statistics(tw_q8_budget *b, const float *la, const float *lb, double *lpa,
                            double *lpb, const int *text, int T, int V) {
    double max_err = 0, kl = 0, nll_a = 0, nll_b = 0;
    for (int t = 0; t < T; t++) {
        const float *a = la + (size_t)t * V, *c = lb + (size_t)t * V;
        for (int v = 0; v < V; v++) max_err = fmax(max_err, fabs((double)a[v] - c[v]));
        log_softmax(lpa, a, V);
        log_softmax(lpb, c, V);
        for (int v = 0; v < V; v++) kl += exp(lpa[v]) * (lpa[v] - lpb[v]);
        if (t + 1 < T) { nll_a -= lpa[text[t + 1]]; nll_b -= lpb[text[t + 1]]; }
    }
    b->max_logit_err = max_err;
    b->mean_kl = kl / T;
    b->ppl_ref = exp(nll_a / (T - 1));
    b->ppl_test = exp(nll_b / (T - 1));
}

tw_status tw_q8_budget_measure(tw_q8_budget *b, const tw_model *ref, const tw_model *test,
                               const int *text, int T, const int *prompt, int n_prompt, int steps) {
    memset(b, 0, sizeof *b);
    const int V = ref->cfg.vocab;
    if (test->cfg.vocab != V || T < 2 || T > ref->cfg.max_seq || T > test->cfg.max_seq ||
        n_prompt < 1 || steps < 1 || n_prompt + steps > ref->cfg.max_seq ||
        n_prompt + steps > test->cfg.max_seq)
        return TW_ERR_ARG;
    float *la = malloc(sizeof(float) * (size_t)T * V), *lb = malloc(sizeof(float) * (size_t)T * V);
    double *lpa = malloc(sizeof(double) * (size_t)V), *lpb = malloc(sizeof(double) * (size_t)V);
    int *sa = malloc(sizeof(int) * (size_t)(n_prompt + steps));
    int *sb = malloc(sizeof(int) * (size_t)(n_prompt + steps));
    tw_status st = la && lb && lpa && lpb && sa && sb ? TW_OK : TW_ERR_NOMEM;
    if (st == TW_OK) st = text_logits(la, ref, text, T);
    if (st == TW_OK) st = text_logits(lb, test, text, T);
    if (st == TW_OK) {
        b->T = T;
        text_statistics(b, la, lb, lpa, lpb, text, T, V);
        memcpy(sa, prompt, sizeof(int) * (size_t)n_prompt);
        memcpy(sb, prompt, sizeof(int) * (size_t)n_prompt);
        st = greedy(sa, ref, n_prompt, steps);
    }
    if (st == TW_OK) st = greedy(sb, test, n_prompt, steps);
    if (st == TW_OK) {
        b->steps = steps;
        while (b->agree < steps && sa[n_prompt + b->agree] == sb[n_prompt + b->agree]) b->agree++;
    }
    free(la); free(lb); free(lpa); free(lpb); free(sa); free(sb);
    return st;
}
