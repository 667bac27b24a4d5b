// q8model.c: version-2 (Q8_0) checkpoints to and from tw_model; see q8model.h.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "quant/q8_0.h"
#include "quant/model_q8.h"
#include "formats/regular_file.h"
#include "formats/file_kind.h"
#include "formats/llama2c.h"
#include "quant/q8model.h"

void tw_q8file_model_name(char *name, size_t len, const tw_q8file_config *c, int i) {
    static const char *const kind[7] = { "attn.wq", "attn.wk", "attn.wv", "attn.wo",
                                         "ffn.gate", "ffn.down", "ffn.up" };
    const int L = c->n_layers;
    if (i == 0) snprintf(name, len, "tok_emb");
    else if (i > 7 * L) snprintf(name, len, "head");
    else snprintf(name, len, "layers.%d.%s", (i - 1) % L, kind[(i - 1) / L]);
}

static tw_status fail(char *err, size_t len, tw_status st, const char *what) {
    if (err && len) snprintf(err, len, "%s", what);
    return st;
}

tw_status tw_q8file_from_model(tw_q8file *q, const tw_model *m, int gs, char *err, size_t err_len) {
    memset(q, 0, sizeof *q);
    const tw_model_config *mc = &m->cfg;
    const tw_mha_config *a = &mc->block.attn;
    if (mc->block.ffn != TW_FFN_SWIGLU || mc->block.norm != TW_NORM_RMS || mc->bias ||
        !mc->final_norm || mc->pos != TW_POS_NONE || a->head_dim * a->n_head != a->d_model)
        return fail(err, err_len, TW_ERR_ARG, "the model is not shaped like a llama2.c model");
    tw_q8file_config c = { a->d_model, mc->block.ffn_hidden, mc->n_layer, a->n_head, a->n_kv_head,
                           mc->vocab, mc->max_seq, mc->tied, gs };
    tw_status st = tw_q8file_alloc(q, &c, err, err_len);
    if (st != TW_OK) return st;
    char name[64];
    const size_t row = (size_t)c.dim * sizeof(float);
    for (int l = 0; l < c.n_layers; l++) {
        memcpy(q->rms_att + (size_t)l * c.dim, m->layers[l].norm1_w, row);
        memcpy(q->rms_ffn + (size_t)l * c.dim, m->layers[l].norm2_w, row);
    }
    memcpy(q->rms_final, m->final_w, row);
    for (int i = 0; i < q->n_tensors; i++) {
        const tw_q8file_tensor *t = &q->tensors[i];
        tw_q8file_model_name(name, sizeof name, &c, i);
        const tw_param *p = tw_model_param((tw_model *)(uintptr_t)m, name);
        if (!p || p->count != (long)t->rows * t->cols) {
            tw_q8file_free(q);
            return fail(err, err_len, TW_ERR_ARG, "the model's tensors do not match a llama2.c model");
        }
        if (tw_q8_quantize(t->q, t->s, p->data, t->rows, t->cols, gs) != TW_OK) {
            tw_q8file_free(q);
            if (err && err_len) snprintf(err, err_len, "%s holds a NaN or Inf weight", name);
            return TW_ERR_ARG;
        }
    }
    // The file must be one the reader accepts: weights near FLT_MAX give scales past its bound.
    char what[256];
    if (!tw_q8file_check_values(q, what, sizeof what)) {
        tw_q8file_free(q);
        return fail(err, err_len, TW_ERR_ARG, what);
    }
    return TW_OK;
}

tw_status tw_q8file_to_model(tw_model *m, const tw_q8file *q, char *err, size_t err_len) {
    const tw_q8file_config *c = &q->cfg;
    const tw_llama2c_config lc = { c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads,
                                   c->vocab_size, c->seq_len, c->shared_classifier };
    tw_model_config mc;
    tw_llama2c_model_config(&mc, &lc);
    tw_status st = tw_model_init(m, &mc);
    if (st == TW_OK) st = tw_model_q8_init(m, c->group_size);
    if (st != TW_OK) {
        tw_model_free(m);
        return fail(err, err_len, st, st == TW_ERR_NOMEM ? "out of memory for the model"
                                                          : "the header describes no valid model");
    }
    const size_t row = (size_t)c->dim * sizeof(float);
    for (int l = 0; l < c->n_layers; l++) {
        memcpy((float *)(uintptr_t)m->layers[l].norm1_w, q->rms_att + (size_t)l * c->dim, row);
        memcpy((float *)(uintptr_t)m->layers[l].norm2_w, q->rms_ffn + (size_t)l * c->dim, row);
    }
    memcpy(m->final_w, q->rms_final, row);
    char name[64];
    for (int i = 0; i < q->n_tensors; i++) {
        const tw_q8file_tensor *t = &q->tensors[i];
        tw_q8file_model_name(name, sizeof name, c, i);
        tw_param *p = tw_model_param(m, name);
        // the embedding table (i = 0) has an int8 copy only as the tied head; untied, the
        // lookup reads its dequantized values and the head is a tensor of its own (the last)
        tw_q8_matrix *dst = i > 0                 ? tw_model_q8_find(m, name)
                            : c->shared_classifier ? tw_model_q8_find(m, "head") : NULL;
        const long n = (long)t->rows * t->cols, n_groups = n / c->group_size;
        if (!p || (!dst && i > 0) || p->count != n || (dst && (long)dst->rows * dst->cols != n)) {
            tw_model_free(m);
            return fail(err, err_len, TW_ERR_FORMAT, "the file's tensors do not match its header");
        }
        tw_dequant_groups(p->data, t->q, t->s, n_groups, c->group_size);
        if (!dst) continue;
        memcpy((int8_t *)(uintptr_t)dst->q, t->q, (size_t)n);
        memcpy((float *)(uintptr_t)dst->s, t->s, (size_t)n_groups * sizeof(float));
    }
    return TW_OK;
}

// The first 4 bytes of path into b: 1, or 0 if it is not a regular file or is shorter.
static int first_bytes(unsigned char b[4], const char *path) {
    FILE *f;
    if (tw_regular_file_open(&f, NULL, 0, path, "a llama2.c checkpoint file (.bin)") != TW_FILE_OK)
        return 0;
    size_t got = fread(b, 1, 4, f);
    fclose(f);
    return got == 4;
}

tw_status tw_llama2c_load_any(tw_model *m, int *version, const char *path, char *err, size_t err_len) {
    memset(m, 0, sizeof *m);
    // The magic tells the versions apart; anything that is not a regular file, or is shorter, is
    // left to the version-0 loader to refuse (without blocking on a FIFO).
    unsigned char b[4] = { 0 };
    const int got = first_bytes(b, path);
    const uint32_t magic = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    if (!got || magic != TW_Q8FILE_MAGIC) {
        *version = 0;
        // Another file of the toolkit's (or a version-2 file whose magic is damaged) would be
        // read by the version-0 loader as a header whose dim is its magic: name it instead.
        const char *kind = got ? tw_file_kind_name(b) : NULL;
        if (kind) {
            if (err && err_len)
                snprintf(err, err_len, "%s: is %s; only llama2.c checkpoints of version 0 (fp32) and 2 (int8) are read here",
                         path, kind);
            return TW_ERR_FORMAT;
        }
        return tw_llama2c_load(m, path, err, err_len);
    }
    *version = 2;
    tw_q8file q;
    tw_status st = tw_q8file_read(&q, path, err, err_len);
    if (st != TW_OK) return st;
    char why[256];
    st = tw_q8file_to_model(m, &q, why, sizeof why);
    if (st != TW_OK && err && err_len) snprintf(err, err_len, "%s: %s", path, why);
    tw_q8file_free(&q);
    return st;
}
