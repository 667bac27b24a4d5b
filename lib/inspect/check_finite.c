// check_finite.c: the optional NaN/Inf check mode (see check_finite.h).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inspect/check_finite.h"

long tw_first_nonfinite(const float *x, long n) {
    for (long i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;   // isfinite is false for NaN and both infinities
    return -1;
}

int tw_first_nonfinite_tensor(const tw_named_tensor *tensors, int n, long *elem) {
    for (int t = 0; t < n; t++) {
        long i = tw_first_nonfinite(tensors[t].data, tensors[t].count);
        if (i >= 0) {
            if (elem) *elem = i;
            return t;
        }
    }
    if (elem) *elem = -1;
    return -1;
}

tw_status tw_check_finite(const tw_named_tensor *tensors, int n, const char *where,
                          char *err, size_t err_len) {
    long i;
    int t = tw_first_nonfinite_tensor(tensors, n, &i);
    if (t < 0) return TW_OK;
    if (err && err_len) {
        float v = tensors[t].data[i];
        const char *what = isnan(v) ? "nan" : (v > 0 ? "+inf" : "-inf");
        snprintf(err, err_len, "%s%s%s[%ld] is %s (first non-finite tensor of %d checked)",
                 where ? where : "", where ? ": " : "", tensors[t].name ? tensors[t].name : "?",
                 i, what, n);
    }
    return TW_ERR_ARG;
}

// 1 if a table row is checked: not the masked scores, not working rows or statistics.
static int checked(const tw_tensor_info *t) {
    return (t->flags & (TW_TENSOR_MASKED | TW_TENSOR_WORK | TW_TENSOR_STATS)) == 0;
}

tw_status tw_model_check_finite(const tw_model_state *s, const tw_model *m, int T, int all_logits,
                                const char *where, char *err, size_t err_len) {
    const tw_model_config *c = &m->cfg;
    const int L = c->n_layer;
    const int n_max = tw_model_n_tensors + L * tw_block_n_tensors;
    tw_named_tensor *ts = malloc((size_t)n_max * sizeof *ts);
    char (*names)[32] = malloc((size_t)n_max * sizeof *names);
    if (!ts || !names) { free(ts); free(names); return TW_ERR_NOMEM; }
    int n = 0;
    for (int i = 0; i < tw_model_n_tensors; i++) {
        if (i == tw_model_n_tensors_before) {
            for (int l = 0; l < L; l++) {
                const tw_block_acts *b = &s->layers[l];
                // the sizes of the last call: T rows, each seeing S keys
                const tw_dims d = tw_block_dims(&c->block, T, b->attn.S);
                for (int k = 0; k < tw_block_n_tensors; k++) {
                    const tw_tensor_info *t = &tw_block_tensors[k];
                    if (!checked(t) || !tw_block_has(&c->block, t->has)) continue;
                    snprintf(names[n], sizeof names[n], "L%d.%s", l, t->name);
                    ts[n] = (tw_named_tensor){ names[n], tw_block_tensor(b, t), tw_dims_count(&d, t->shape) };
                    n++;
                }
            }
        }
        const tw_tensor_info *t = &tw_model_tensors[i];
        if (!checked(t) || !tw_model_has(c, t)) continue;
        const float *data = tw_model_tensor(s, t);
        long count = (long)T * tw_dims_count(&(tw_dims){ .T = 1, .C = c->block.attn.d_model,
                                                         .V = c->vocab }, t->shape);
        if (!all_logits && strcmp(t->name, "logits") == 0) {   // only the last row was computed
            data += (size_t)(T - 1) * c->vocab;
            count = c->vocab;
        }
        snprintf(names[n], sizeof names[n], "%s", t->name);
        ts[n] = (tw_named_tensor){ names[n], data, count };
        n++;
    }
    tw_status st = tw_check_finite(ts, n, where, err, err_len);
    free(ts);
    free(names);
    return st;
}
