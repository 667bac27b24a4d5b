// llama2c_write.c: a tw_model as a llama2.c legacy checkpoint (see llama2c_write.h and, for the
// layout, llama2c.h). The array order mirrors the loader's, array by array.
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/llama2c_write.h"
#include "formats/atomic_file.h"

int tw_llama2c_can_write(const tw_model *m, char *why, size_t why_len) {
    const tw_model_config *c = &m->cfg;
    const tw_block_config *b = &c->block;
    const tw_mha_config *a = &b->attn;
    const char *bad = NULL;
    if (!b->prenorm) bad = "post-norm blocks";
    else if (b->norm != TW_NORM_RMS) bad = "LayerNorm (llama2.c has RMSNorm)";
    else if (b->norm_eps != 1e-5f) bad = "a norm eps other than 1e-5";
    else if (a->rope != TW_ROPE_ADJACENT) bad = "RoPE other than on adjacent pairs";
    else if (a->rope_theta != 10000.0f) bad = "a RoPE base other than 10000";
    else if (a->head_dim * a->n_head != a->d_model) bad = "head_dim * n_head != d_model";
    else if (a->qk_norm) bad = "QK-norm";
    else if (!a->causal) bad = "non-causal attention";
    else if (b->ffn != TW_FFN_SWIGLU) bad = "a classic FFN (llama2.c has SwiGLU)";
    else if (b->moe_experts > 0) bad = "mixture-of-experts FFNs (a TWMX file holds them)";
    else if (b->mla_kv_rank > 0) bad = "latent attention (a TWMX file holds it)";
    else if (c->bias) bad = "biases";
    else if (c->pos != TW_POS_NONE) bad = "learned or sinusoidal positions";
    else if (c->embed_scale) bad = "scaled embeddings";
    else if (!c->final_norm) bad = "no final norm";
    if (bad == NULL) return 1;
    tw_set_err(why, why_len, "style %s has %s, which llama2.c's format cannot hold",
            c->style ? c->style : "?", bad);
    return 0;
}

void tw_llama2c_freq_cis(float *re, float *im, int seq_len, int D) {
    for (int i = 0; i < D / 2; i++) {
        const float freq = 1.0f / powf(10000.0f, (float)(2 * i) / (float)D);
        for (int p = 0; p < seq_len; p++) {
            const float angle = (float)p * freq;
            re[(size_t)p * (D / 2) + i] = (float)cos((double)angle);
            im[(size_t)p * (D / 2) + i] = (float)sin((double)angle);
        }
    }
}

static int write_param(FILE *f, const tw_model *m, const char *name) {
    tw_param *p = tw_model_param((tw_model *)(void *)m, name);   // looked up, not modified
    return p != NULL && fwrite(p->data, sizeof(float), (size_t)p->count, f) == (size_t)p->count;
}

// The per-layer arrays, each written for every layer before the next (llama2c.c's order).
static const char *const LAYER_ARRAYS[] = { "norm1.w", "attn.wq", "attn.wk", "attn.wv", "attn.wo",
                                            "norm2.w", "ffn.gate", "ffn.down", "ffn.up" };

tw_status tw_llama2c_write(const char *path, const tw_model *m, char *err, size_t err_len) {
    char why[200];
    if (!tw_llama2c_can_write(m, why, sizeof why)) {
        tw_set_err(err, err_len, "%s: %s", path, why);
        return TW_ERR_ARG;
    }
    const tw_model_config *c = &m->cfg;
    const tw_mha_config *a = &c->block.attn;
    const int D = a->head_dim;
    const size_t n_freq = (size_t)c->max_seq * (size_t)(D / 2);
    float *re = malloc(n_freq * sizeof *re), *im = malloc(n_freq * sizeof *im);
    if (re == NULL || im == NULL) {
        free(re); free(im);
        tw_set_err(err, err_len, "%s: out of memory for the freq_cis tables", path);
        return TW_ERR_NOMEM;
    }
    tw_llama2c_freq_cis(re, im, c->max_seq, D);
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "wb") != TW_OK) {
        free(re); free(im);
        tw_set_err(err, err_len, "%s: cannot create: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    // vocab_size > 0: the classifier is the token embedding table; < 0: stored at the end.
    const int32_t header[7] = { a->d_model, c->block.ffn_hidden, c->n_layer, a->n_head,
                                a->n_kv_head, c->tied ? c->vocab : -c->vocab, c->max_seq };
    int ok = fwrite(header, sizeof header, 1, af.f) == 1;
    ok = ok && write_param(af.f, m, "tok_emb");
    char name[48];
    for (int k = 0; k < 9 && ok; k++)
        for (int l = 0; l < c->n_layer && ok; l++) {
            snprintf(name, sizeof name, "layers.%d.%s", l, LAYER_ARRAYS[k]);
            ok = write_param(af.f, m, name);
        }
    ok = ok && write_param(af.f, m, "final_norm.w");
    ok = ok && fwrite(re, sizeof(float), n_freq, af.f) == n_freq;
    ok = ok && fwrite(im, sizeof(float), n_freq, af.f) == n_freq;
    if (!c->tied) ok = ok && write_param(af.f, m, "head");
    free(re);
    free(im);
    if (tw_atomic_commit(&af, ok) != TW_OK) {
        tw_set_err(err, err_len, "%s: write failed: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    return TW_OK;
}
