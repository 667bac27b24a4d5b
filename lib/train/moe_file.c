// moe_file.c: the TWMX model file of models with experts (format in moe_file.h). The dense
// part of the header and the parameter records are TWMODEL's (train/checkpoint.c).
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "train/moe_file.h"
#include "train/checkpoint.h"

enum { N_DENSE = 20, N_MOE = 4, N_MLA = 5, STYLE_BYTES = 16 };

static int write_record(FILE *f, const tw_model *m) {
    const tw_block_config *b = &m->cfg.block;
    const int mla = b->mla_kv_rank > 0;   // version 1 unless the model has latent attention
    const int32_t version = mla ? TW_MOE_FILE_VERSION_MLA : TW_MOE_FILE_VERSION;
    const int32_t mla_f[N_MLA] = { b->mla_q_rank, b->mla_kv_rank, b->mla_d_nope, b->mla_d_rope,
                                   b->mla_d_v };
    int32_t dense[N_DENSE];
    tw_checkpoint_config_to_ints(dense, &m->cfg);
    const float fl[3] = { b->attn.rope_theta, b->attn.norm_eps, b->norm_eps };
    char style[STYLE_BYTES] = { 0 };
    const char *sname = m->cfg.style ? m->cfg.style : "custom";
    for (int i = 0; i < STYLE_BYTES - 1 && sname[i]; i++) style[i] = sname[i];
    const int32_t moe[N_MOE] = { b->moe_experts, b->moe_top_k, b->moe_shared, b->moe_norm_topk };
    const int32_t n_params = m->n_params;
    return fwrite(TW_MOE_FILE_MAGIC, 4, 1, f) == 1 && fwrite(&version, 4, 1, f) == 1 &&
           fwrite(dense, sizeof dense, 1, f) == 1 && fwrite(fl, sizeof fl, 1, f) == 1 &&
           fwrite(style, STYLE_BYTES, 1, f) == 1 && fwrite(moe, sizeof moe, 1, f) == 1 &&
           (!mla || fwrite(mla_f, sizeof mla_f, 1, f) == 1) && fwrite(&n_params, 4, 1, f) == 1 && tw_checkpoint_write_params(f, m);
}

tw_status tw_moe_file_write(const char *path, const tw_model *m, char *err, size_t err_len) {
    if (m->cfg.block.moe_experts < 1 && m->cfg.block.mla_kv_rank < 1) {
        tw_set_err(err, err_len, "%s: the model has neither experts nor latent attention: write it "
                   "as TWMODEL or llama2.c", path);
        return TW_ERR_ARG;
    }
    return tw_checkpoint_write_with(path, m, write_record, err, err_len);
}

// The four expert fields, each against its range; then the whole configuration.
// none_ok: version 2, where n_experts = 0 with the other three 0 means a dense FFN.
static tw_status moe_from_ints(tw_model_config *c, char *why, size_t why_len, const int32_t v[N_MOE],
                               int none_ok) {
    static const char *const names[N_MOE] = { "n_experts", "top_k", "n_shared", "norm_topk_prob" };
    if (none_ok && v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0) return TW_OK;
    const int32_t lo[N_MOE] = { 1, 1, 0, 0 };
    const int32_t hi[N_MOE] = { TW_MOE_FILE_MAX_EXPERTS, v[0] >= 1 ? v[0] : 1,
                                TW_MOE_FILE_MAX_SHARED, 1 };
    for (int i = 0; i < N_MOE; i++)
        if (v[i] < lo[i] || v[i] > hi[i]) {
            tw_set_err(why, why_len, "moe field %s = %d is out of range [%d, %d]%s", names[i],
                       (int)v[i], (int)lo[i], (int)hi[i], i == 1 ? " (top_k <= n_experts)" : "");
            return TW_ERR_FORMAT;
        }
    c->block.moe_experts = v[0];
    c->block.moe_top_k = v[1];
    c->block.moe_shared = v[2];
    c->block.moe_norm_topk = v[3];
    return TW_OK;
}

// Version 2's five latent attention fields, each against its range.
static tw_status mla_from_ints(tw_model_config *c, char *why, size_t why_len, const int32_t v[N_MLA]) {
    static const char *const names[N_MLA] = { "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                              "qk_rope_head_dim", "v_head_dim" };
    const int32_t lo[N_MLA] = { 1, 1, 1, 2, 1 };
    const int32_t hi[N_MLA] = { TW_MOE_FILE_MAX_RANK, TW_MOE_FILE_MAX_RANK, TW_MOE_FILE_MAX_HEAD_DIM,
                                TW_MOE_FILE_MAX_HEAD_DIM, TW_MOE_FILE_MAX_HEAD_DIM };
    for (int i = 0; i < N_MLA; i++)
        if (v[i] < lo[i] || v[i] > hi[i] || (i == 3 && v[i] % 2 != 0)) {
            tw_set_err(why, why_len, "mla field %s = %d is out of range [%d, %d]%s", names[i],
                       (int)v[i], (int)lo[i], (int)hi[i], i == 3 ? " and must be even" : "");
            return TW_ERR_FORMAT;
        }
    c->block.mla_q_rank = v[0];
    c->block.mla_kv_rank = v[1];
    c->block.mla_d_nope = v[2];
    c->block.mla_d_rope = v[3];
    c->block.mla_d_v = v[4];
    return TW_OK;
}

// The configuration as a whole, once the expert and latent attention fields are in.
static tw_status whole_config(const tw_model_config *c, char *why, size_t why_len) {
    if (c->block.moe_experts < 1 && c->block.mla_kv_rank < 1) {
        tw_set_err(why, why_len, "the model has neither experts nor latent attention (a dense model "
                   "is a TWMODEL file)");
        return TW_ERR_FORMAT;
    }
    if (tw_model_config_check(c) != TW_OK) {
        tw_set_err(why, why_len, "the config describes no valid model with experts or latent "
                   "attention (experts need a SwiGLU FFN, ffn=1; latent attention no QK-norm and "
                   "no biases)");
        return TW_ERR_FORMAT;
    }
    return TW_OK;
}

static tw_status read_record(tw_model *m, FILE *f, long long left, const char *path, char *err,
                             size_t err_len) {
    char magic[4], style[STYLE_BYTES];
    int32_t version, dense[N_DENSE], moe[N_MOE], mla[N_MLA] = { 0 }, n_params;
    float fl[3];
    const long long head = 4 + 4 + sizeof dense + sizeof fl + STYLE_BYTES + sizeof moe + 4;
    if (left < head || fread(magic, 4, 1, f) != 1 || fread(&version, 4, 1, f) != 1 ||
        fread(dense, sizeof dense, 1, f) != 1 || fread(fl, sizeof fl, 1, f) != 1 ||
        fread(style, STYLE_BYTES, 1, f) != 1 || fread(moe, sizeof moe, 1, f) != 1) {
        tw_set_err(err, err_len, "%s: truncated: shorter than the %lld-byte TWMX header", path, head);
        return TW_ERR_FORMAT;
    }
    if (memcmp(magic, TW_MOE_FILE_MAGIC, 4) != 0) {
        tw_set_err(err, err_len, "%s: bad magic: not a TWMX model file", path);
        return TW_ERR_FORMAT;
    }
    if (version != TW_MOE_FILE_VERSION && version != TW_MOE_FILE_VERSION_MLA) {
        tw_set_err(err, err_len, "%s: TWMX version %d, but this build reads versions %d and %d", path,
                   (int)version, TW_MOE_FILE_VERSION, TW_MOE_FILE_VERSION_MLA);
        return TW_ERR_FORMAT;
    }
    const int v2 = version == TW_MOE_FILE_VERSION_MLA;   // the five latent attention fields follow
    const long long full = head + (v2 ? (long long)sizeof mla : 0);
    if (left < full || (v2 && fread(mla, sizeof mla, 1, f) != 1) || fread(&n_params, 4, 1, f) != 1) {
        tw_set_err(err, err_len, "%s: truncated: shorter than the %lld-byte TWMX version %d header",
                   path, full, (int)version);
        return TW_ERR_FORMAT;
    }
    left -= full;
    tw_model_config c;
    char why[160] = "";
    tw_status st = tw_checkpoint_config_from_ints(&c, why, sizeof why, dense, fl, style);
    if (st == TW_OK) st = moe_from_ints(&c, why, sizeof why, moe, v2);
    if (st == TW_OK && v2) st = mla_from_ints(&c, why, sizeof why, mla);
    if (st == TW_OK) st = whole_config(&c, why, sizeof why);
    if (st != TW_OK) {
        tw_set_err(err, err_len, "%s: %s", path, why);
        return st;
    }
    // The exact size, before anything is allocated: each parameter is 60 bytes of name and shape
    // and 4 per float (tw_model_config_floats counts without allocating; -1 if too big).
    const long floats = tw_model_config_floats(&c);
    if (floats < 0 || (long long)floats > left / 4) {
        tw_set_err(err, err_len, "%s: truncated: the config needs %ld weights, the file holds fewer "
                   "than %lld", path, floats, left / 4);
        return TW_ERR_FORMAT;
    }
    st = tw_checkpoint_read_model(m, &c, n_params, f, &left, path, err, err_len);
    if (st == TW_OK && left != 0) {
        tw_set_err(err, err_len, "%s: %lld extra bytes after the last parameter", path, left);
        tw_model_free(m);
        st = TW_ERR_FORMAT;
    }
    return st;
}

tw_status tw_moe_file_load(tw_model *m, const char *path, char *err, size_t err_len) {
    memset(m, 0, sizeof *m);
    long long left;
    tw_status st;
    FILE *f = tw_checkpoint_open_read(&left, &st, path, "a TWMX model file (.bin)", err, err_len);
    if (f == NULL) return st;
    st = read_record(m, f, left, path, err, err_len);
    fclose(f);
    if (st != TW_OK) memset(m, 0, sizeof *m);
    return st;
}

int tw_moe_file_is_moe(const char *path) {
    return tw_file_has_magic(path, TW_MOE_FILE_MAGIC, 4, "a TWMX model file");
}
