// q8budget.c: the error budget of a quantized model against its fp32 original; see q8budget.h.
// Sums in double, so the statistics themselves add no error worth mentioning.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "quant/q8budget.h"
#include "decode/sampler.h"

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

// Sums over the positions of one or more windows of text, from which the budget's averages come.
typedef struct {
    double max_err;      // largest |logit difference| so far
    double kl;           // KL(ref || test) added over positions
    double nll_a, nll_b; // negative log-likelihood of each next token, added up
    long   positions;    // positions whose KL was added
    long   predicted;    // next tokens whose likelihood was added
} text_sums;

// Adds one window's statistics into *sums.   la, lb: (T, V) logits   lpa, lpb: (V) scratch
static void add_window(text_sums *sums, const float *la, const float *lb, double *lpa, double *lpb,
                       const int *text, int T, int V) {
    for (int t = 0; t < T; t++) {
        const float *a = la + (size_t)t * V, *c = lb + (size_t)t * V;
        for (int v = 0; v < V; v++) sums->max_err = fmax(sums->max_err, fabs((double)a[v] - c[v]));
        log_softmax(lpa, a, V);
        log_softmax(lpb, c, V);
        for (int v = 0; v < V; v++) sums->kl += exp(lpa[v]) * (lpa[v] - lpb[v]);
        if (t + 1 < T) { sums->nll_a -= lpa[text[t + 1]]; sums->nll_b -= lpb[text[t + 1]]; }
    }
    sums->positions += T;
    sums->predicted += T - 1;
}

static void set_statistics(tw_q8_budget *b, const text_sums *sums) {
    b->T = (int)(sums->positions < 2147483647L ? sums->positions : 2147483647L);
    b->max_logit_err = sums->max_err;
    b->mean_kl = sums->kl / (double)sums->positions;
    b->ppl_ref = exp(sums->nll_a / (double)sums->predicted);
    b->ppl_test = exp(sums->nll_b / (double)sums->predicted);
}

// The windows of a text of n tokens: consecutive, W tokens each, the last one shorter (a last
// piece of one token predicts nothing, so it is left out).
static long n_windows(long n, int W) { return (n - 1 + W - 1) / W; }

// The greedy agreement of the two models from prompt (n_prompt) over steps tokens, into b.
static tw_status greedy_agreement(tw_q8_budget *b, const tw_model *ref, const tw_model *test,
                                  const int *prompt, int n_prompt, int steps) {
    int *sa = malloc(sizeof(int) * (size_t)(n_prompt + steps));
    int *sb = malloc(sizeof(int) * (size_t)(n_prompt + steps));
    tw_status st = sa && sb ? TW_OK : TW_ERR_NOMEM;
    if (st == TW_OK) {
        memcpy(sa, prompt, sizeof(int) * (size_t)n_prompt);
        memcpy(sb, prompt, sizeof(int) * (size_t)n_prompt);
        st = greedy(sa, ref, n_prompt, steps);
    }
    if (st == TW_OK) st = greedy(sb, test, n_prompt, steps);
    if (st == TW_OK) {
        b->steps = steps;
        b->agree = 0;
        while (b->agree < steps && sa[n_prompt + b->agree] == sb[n_prompt + b->agree]) b->agree++;
    }
    free(sa); free(sb);
    return st;
}

// The statistics of the text (n tokens) in windows of at most W tokens, into b.
static tw_status text_budget(tw_q8_budget *b, const tw_model *ref, const tw_model *test,
                             const int *text, long n, int W) {
    const int V = ref->cfg.vocab;
    float *la = malloc(sizeof(float) * (size_t)W * V), *lb = malloc(sizeof(float) * (size_t)W * V);
    double *lpa = malloc(sizeof(double) * (size_t)V), *lpb = malloc(sizeof(double) * (size_t)V);
    tw_status st = la && lb && lpa && lpb ? TW_OK : TW_ERR_NOMEM;
    text_sums sums = { 0 };
    for (long w = 0; w < n_windows(n, W) && st == TW_OK; w++) {
        const int *win = text + w * W;
        const int T = (int)(n - w * W < W ? n - w * W : W);
        st = text_logits(la, ref, win, T);
        if (st == TW_OK) st = text_logits(lb, test, win, T);
        if (st == TW_OK) add_window(&sums, la, lb, lpa, lpb, win, T, V);
    }
    if (st == TW_OK) set_statistics(b, &sums);
    free(la); free(lb); free(lpa); free(lpb);
    return st;
}

tw_status tw_q8_budget_measure(tw_q8_budget *b, const tw_model *ref, const tw_model *test,
                               const int *text, int T, const int *prompt, int n_prompt, int steps) {
    memset(b, 0, sizeof *b);
    if (test->cfg.vocab != ref->cfg.vocab || T < 2 || T > ref->cfg.max_seq || T > test->cfg.max_seq ||
        n_prompt < 1 || steps < 1 || n_prompt + steps > ref->cfg.max_seq ||
        n_prompt + steps > test->cfg.max_seq)
        return TW_ERR_ARG;
    tw_status st = text_budget(b, ref, test, text, T, T);
    return st == TW_OK ? greedy_agreement(b, ref, test, prompt, n_prompt, steps) : st;
}

tw_status tw_q8_budget_measure_text(tw_q8_budget *b, const tw_model *ref, const tw_model *test,
                                    const int *text, long n, int n_prompt, int steps) {
    memset(b, 0, sizeof *b);
    const int W = ref->cfg.max_seq < test->cfg.max_seq ? ref->cfg.max_seq : test->cfg.max_seq;
    if (test->cfg.vocab != ref->cfg.vocab || n < 2 || W < 2 || n_prompt < 1 || steps < 1 ||
        n_prompt > n || n_prompt + steps > W)
        return TW_ERR_ARG;
    tw_status st = text_budget(b, ref, test, text, n, W);
    return st == TW_OK ? greedy_agreement(b, ref, test, text, n_prompt, steps) : st;
}
