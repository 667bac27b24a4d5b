// check_finite.c: the optional NaN/Inf check mode (see check_finite.h).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "real/check_finite.h"

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

// Per layer: 13 tensors, named "L{l}.<suffix>".
enum { PER_LAYER = 13 };

tw_status tw_llama2c_check_finite(const tw_llama2c_state *s, const tw_llama2c *m, int T,
                                  int all_logits, const char *where, char *err, size_t err_len) {
    const tw_llama2c_config *c = &m->cfg;
    const long C = c->dim, F = c->hidden_dim, V = c->vocab_size, H = c->n_heads;
    const long D = C / H, KV = (long)c->n_kv_heads * D;
    const int L = s->keep_all ? c->n_layers : 1;
    const int n_max = 3 + PER_LAYER * L;
    tw_named_tensor *ts = malloc((size_t)n_max * sizeof *ts);
    char (*names)[32] = malloc((size_t)n_max * sizeof *names);
    if (!ts || !names) { free(ts); free(names); return TW_ERR_NOMEM; }
    int n = 0;
    ts[n++] = (tw_named_tensor){ "embed", s->embed, T * C };
    for (int l = 0; l < L; l++) {
        const tw_block_scratch *b = &s->layers[l];
        const int shown = s->keep_all ? l : c->n_layers - 1;
        const struct { const char *suffix; const float *data; long count; } parts[PER_LAYER] = {
            { "norm1", b->norm1, T * C },          { "q", b->attn.q, T * H * D },
            { "k", b->attn.k, T * KV },            { "v", b->attn.v, T * KV },
            { "weights", b->attn.weights, H * (long)b->attn.T * b->attn.S },
            { "z", b->attn.z, T * H * D },         { "attn_out", b->attn_out, T * C },
            { "resid_mid", b->resid_mid, T * C },  { "norm2", b->norm2, T * C },
            { "ffn_gate", b->ffn_hidden, T * F },  { "ffn_up", b->ffn_up, T * F },
            { "ffn_act", b->ffn_act, T * F },      { "ffn_out", b->ffn_out, T * C },
        };
        for (int k = 0; k < PER_LAYER; k++) {
            snprintf(names[n], sizeof names[n], "L%d.%s", shown, parts[k].suffix);
            ts[n] = (tw_named_tensor){ names[n], parts[k].data, parts[k].count };
            n++;
        }
    }
    ts[n++] = (tw_named_tensor){ "final_norm", s->final, T * C };
    ts[n++] = all_logits ? (tw_named_tensor){ "logits", s->logits, T * V }
                         : (tw_named_tensor){ "logits", s->logits + (size_t)(T - 1) * V, V };
    tw_status st = tw_check_finite(ts, n, where, err, err_len);
    free(ts);
    free(names);
    return st;
}
