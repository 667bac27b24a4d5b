// checkpoint.c: the toolkit's own model file and the training state (formats in checkpoint.h).
#define _POSIX_C_SOURCE 200809L   // strnlen
// Every size read from a file is checked against the file's length before anything of that size
// is allocated, and every parameter against the name and shape the model's table gives it.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train/checkpoint.h"
#include "train/moe_file.h"
#include "formats/llama2c.h"
#include "formats/atomic_file.h"
#include "formats/regular_file.h"

enum { N_CONFIG = 20, NAME_BYTES = 48, STYLE_BYTES = 16 };
static const int32_t VERSION = 1;
// Limits far above any model this toolkit trains, so that no product of sizes overflows.
static const int32_t MAX_SIZE = 1 << 20, MAX_LAYERS = 1024, MAX_VOCAB = 1 << 22;

static int host_is_little_endian(void) {
    const uint32_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

// ---- the model record ----

void tw_checkpoint_config_to_ints(int32_t v[N_CONFIG], const tw_model_config *c) {
    const tw_block_config *b = &c->block;
    const tw_mha_config *a = &b->attn;
    const int32_t x[N_CONFIG] = { c->vocab, c->max_seq, c->n_layer, a->d_model, a->n_head,
                                  a->n_kv_head, a->head_dim, a->causal, (int32_t)a->rope, a->qk_norm,
                                  b->prenorm, (int32_t)b->norm, (int32_t)b->ffn, (int32_t)b->act,
                                  b->ffn_hidden, (int32_t)c->pos, c->embed_scale, c->final_norm,
                                  c->tied, c->bias };
    memcpy(v, x, sizeof x);
}

static const char *const STYLES[] = { "2017", "gpt2", "llama", "qwen3" };

// Fills c with the configuration the ints describe: TW_OK, or TW_ERR_FORMAT with a sentence in
// why (the caller's buffer) naming the first field out of range.
tw_status tw_checkpoint_config_from_ints(tw_model_config *c, char *why, size_t why_len,
                                         const int32_t v[N_CONFIG], const float f[3],
                                         const char style[STYLE_BYTES]) {
    static const char *const names[N_CONFIG] = { "vocab", "max_seq", "n_layer", "d_model", "n_head",
        "n_kv_head", "head_dim", "causal", "rope", "qk_norm", "prenorm", "norm", "ffn", "act",
        "ffn_hidden", "pos", "embed_scale", "final_norm", "tied", "bias" };
    static const int32_t lo[N_CONFIG] = { 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0 };
    const int32_t hi[N_CONFIG] = { MAX_VOCAB, MAX_SIZE, MAX_LAYERS, MAX_SIZE, MAX_SIZE, MAX_SIZE,
                                   MAX_SIZE, 1, 2, 1, 1, 1, 1, 3, MAX_SIZE, 2, 1, 1, 1, 1 };
    for (int i = 0; i < N_CONFIG; i++)
        if (v[i] < lo[i] || v[i] > hi[i]) {
            tw_set_err(why, why_len, "config field %s = %d is out of range [%d, %d]", names[i],
                       (int)v[i], (int)lo[i], (int)hi[i]);
            return TW_ERR_FORMAT;
        }
    for (int i = 0; i < 3; i++)
        if (!isfinite(f[i]) || f[i] < 0.0f) {
            tw_set_err(why, why_len, "a RoPE base or norm eps is negative or not finite");
            return TW_ERR_FORMAT;
        }
    memset(c, 0, sizeof *c);
    c->style = "custom";
    for (int i = 0; i < 4; i++)
        if (strncmp(style, STYLES[i], STYLE_BYTES) == 0) c->style = STYLES[i];
    // The file holds no field for the embedding initialisation (it only matters to
    // tw_model_randomize): it is the named style's preset's, the zero value for "custom".
    tw_model_config preset;
    if (tw_model_config_preset(&preset, c->style) == TW_OK) c->embed_init = preset.embed_init;
    c->vocab = v[0]; c->max_seq = v[1]; c->n_layer = v[2];
    tw_block_config *b = &c->block;
    tw_mha_config *a = &b->attn;
    a->d_model = v[3]; a->n_head = v[4]; a->n_kv_head = v[5]; a->head_dim = v[6]; a->causal = v[7];
    a->rope = (tw_rope_kind)v[8]; a->qk_norm = v[9]; a->rope_theta = f[0]; a->norm_eps = f[1];
    b->prenorm = v[10]; b->norm = (tw_norm_kind)v[11]; b->ffn = (tw_ffn_kind)v[12];
    b->act = (tw_act)v[13]; b->ffn_hidden = v[14]; b->norm_eps = f[2];
    c->pos = (tw_pos_kind)v[15]; c->embed_scale = v[16]; c->final_norm = v[17]; c->tied = v[18];
    c->bias = v[19];
    return TW_OK;
}

static int write_model_record(FILE *f, const tw_model *m) {
    char magic[8] = TW_CHECKPOINT_MAGIC, style[STYLE_BYTES] = { 0 };
    int32_t cfg[N_CONFIG];
    tw_checkpoint_config_to_ints(cfg, &m->cfg);
    const float fl[3] = { m->cfg.block.attn.rope_theta, m->cfg.block.attn.norm_eps, m->cfg.block.norm_eps };
    const char *sname = m->cfg.style ? m->cfg.style : "custom";
    memcpy(style, sname, strnlen(sname, STYLE_BYTES - 1));
    const int32_t n_params = m->n_params;
    // The format has no field for experts: such a model is refused (train/moe_file.h holds it).
    int ok = m->cfg.block.moe_experts == 0 && m->cfg.block.mla_kv_rank == 0 &&
             fwrite(magic, 8, 1, f) == 1 && fwrite(&VERSION, 4, 1, f) == 1 &&
             fwrite(cfg, sizeof cfg, 1, f) == 1 && fwrite(fl, sizeof fl, 1, f) == 1 &&
             fwrite(style, STYLE_BYTES, 1, f) == 1 && fwrite(&n_params, 4, 1, f) == 1;
    return ok && tw_checkpoint_write_params(f, m);
}

int tw_checkpoint_write_params(FILE *f, const tw_model *m) {
    int ok = 1;
    for (int i = 0; i < m->n_params && ok; i++) {
        const tw_param *p = &m->params[i];
        char name[NAME_BYTES] = { 0 };
        memcpy(name, p->name, strnlen(p->name, NAME_BYTES - 1));
        const int32_t dims[3] = { p->ndim, (int32_t)p->shape[0], (int32_t)p->shape[1] };
        ok = fwrite(name, NAME_BYTES, 1, f) == 1 && fwrite(dims, sizeof dims, 1, f) == 1 &&
             fwrite(p->data, sizeof(float), (size_t)p->count, f) == (size_t)p->count;
    }
    return ok;
}

// A lower bound on the floats a configuration's parameters take (embedding table and the
// attention and FFN matrices), so a hostile header is refused before tw_model_init allocates.
static long long floats_lower_bound(const tw_model_config *c) {
    const long long C = c->block.attn.d_model, HD = (long long)c->block.attn.n_head * c->block.attn.head_dim;
    const long long GD = (long long)c->block.attn.n_kv_head * c->block.attn.head_dim;
    const long long F = c->block.ffn_hidden;
    return (long long)c->vocab * C + (long long)c->n_layer * (2 * C * HD + 2 * GD * C + 2 * F * C);
}

// Reads one model record at f's position; *left: bytes of the file not yet read (updated).
static tw_status read_model_record(tw_model *m, FILE *f, long long *left, const char *path,
                                   char *err, size_t err_len) {
    char magic[8], style[STYLE_BYTES];
    int32_t version, cfg[N_CONFIG], n_params;
    float fl[3];
    const long long head = 8 + 4 + sizeof cfg + sizeof fl + STYLE_BYTES + 4;
    if (*left < head || fread(magic, 8, 1, f) != 1 || fread(&version, 4, 1, f) != 1 ||
        fread(cfg, sizeof cfg, 1, f) != 1 || fread(fl, sizeof fl, 1, f) != 1 ||
        fread(style, STYLE_BYTES, 1, f) != 1 || fread(&n_params, 4, 1, f) != 1) {
        tw_set_err(err, err_len, "%s: truncated: shorter than the %lld-byte model header", path, head);
        return TW_ERR_FORMAT;
    }
    *left -= head;
    if (memcmp(magic, TW_CHECKPOINT_MAGIC, 8) != 0) {
        tw_set_err(err, err_len, "%s: bad magic: not a TWMODEL checkpoint", path);
        return TW_ERR_FORMAT;
    }
    if (version != VERSION) {
        tw_set_err(err, err_len, "%s: version %d, but this build reads version %d", path, (int)version,
                (int)VERSION);
        return TW_ERR_FORMAT;
    }
    tw_model_config c;
    char why[128] = "";
    tw_status st = tw_checkpoint_config_from_ints(&c, why, sizeof why, cfg, fl, style);
    if (st == TW_OK && tw_model_config_check(&c) != TW_OK) {
        tw_set_err(why, sizeof why, "the config describes no valid model");
        st = TW_ERR_FORMAT;
    }
    if (st != TW_OK) {
        tw_set_err(err, err_len, "%s: %s", path, why);
        return st;
    }
    if (floats_lower_bound(&c) > *left / 4) {
        tw_set_err(err, err_len, "%s: truncated: the config needs at least %lld weights, the file "
                "holds fewer than %lld", path, floats_lower_bound(&c), *left / 4);
        return TW_ERR_FORMAT;
    }
    return tw_checkpoint_read_model(m, &c, n_params, f, left, path, err, err_len);
}

tw_status tw_checkpoint_read_model(tw_model *m, const tw_model_config *c, int32_t n_params, FILE *f,
                                   long long *left, const char *path, char *err, size_t err_len) {
    const tw_status st = tw_model_init(m, c);
    if (st != TW_OK) {
        tw_set_err(err, err_len, "%s: cannot build the model: %s", path, tw_status_str(st));
        return st;
    }
    if (n_params != m->n_params) {
        tw_set_err(err, err_len, "%s: n_params is %d but the config has %d parameters", path,
                (int)n_params, m->n_params);
        tw_model_free(m);
        return TW_ERR_FORMAT;
    }
    for (int i = 0; i < m->n_params; i++) {
        const tw_param *p = &m->params[i];
        char name[NAME_BYTES];
        int32_t dims[3];
        const long long bytes = NAME_BYTES + (long long)sizeof dims + 4LL * p->count;
        if (*left < bytes || fread(name, NAME_BYTES, 1, f) != 1 || fread(dims, sizeof dims, 1, f) != 1 ||
            fread(p->data, sizeof(float), (size_t)p->count, f) != (size_t)p->count) {
            tw_set_err(err, err_len, "%s: truncated in parameter %d (%s)", path, i, p->name);
            tw_model_free(m);
            return TW_ERR_FORMAT;
        }
        *left -= bytes;
        name[NAME_BYTES - 1] = '\0';
        if (strcmp(name, p->name) != 0 || dims[0] != p->ndim || dims[1] != p->shape[0] ||
            dims[2] != p->shape[1]) {
            // The name comes from the file: printed with anything unprintable (a newline would
            // break the one-line message) shown as '?'.
            for (char *ch = name; *ch; ch++)
                if ((unsigned char)*ch < 0x20 || (unsigned char)*ch >= 0x7f) *ch = '?';
            tw_set_err(err, err_len, "%s: parameter %d is '%s' (%d, %d) but the config's table has "
                    "'%s' (%ld, %ld) there", path, i, name, (int)dims[1], (int)dims[2], p->name,
                    p->shape[0], p->shape[1]);
            tw_model_free(m);
            return TW_ERR_FORMAT;
        }
        for (long j = 0; j < p->count; j++)
            if (!isfinite(p->data[j])) {
                tw_set_err(err, err_len, "%s: %s[%ld] is %g: corrupted file", path, p->name, j,
                        (double)p->data[j]);
                tw_model_free(m);
                return TW_ERR_FORMAT;
            }
    }
    return TW_OK;
}

tw_status tw_checkpoint_write(const char *path, const tw_model *m, char *err, size_t err_len) {
    if (m->cfg.block.moe_experts > 0 || m->cfg.block.mla_kv_rank > 0) {
        tw_set_err(err, err_len, "%s: a model with experts or latent attention is written as a "
                   "TWMX file (train/moe_file.h), not TWMODEL", path);
        return TW_ERR_ARG;
    }
    return tw_checkpoint_write_with(path, m, write_model_record, err, err_len);
}

tw_status tw_checkpoint_write_with(const char *path, const tw_model *m,
                                   int (*write_record)(FILE *f, const tw_model *m), char *err,
                                   size_t err_len) {
    if (!host_is_little_endian()) {
        tw_set_err(err, err_len, "%s: the format is little-endian; this host is not", path);
        return TW_ERR_IO;
    }
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "wb") != TW_OK) {
        tw_set_err(err, err_len, "%s: cannot create: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    if (tw_atomic_commit(&af, write_record(af.f, m)) != TW_OK) {
        tw_set_err(err, err_len, "%s: write failed: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    return TW_OK;
}

FILE *tw_checkpoint_open_read(long long *left, tw_status *st, const char *path, const char *what,
                              char *err, size_t err_len) {
    *left = 0;
    if (!host_is_little_endian()) {
        tw_set_err(err, err_len, "%s: the format is little-endian; this host is not", path);
        *st = TW_ERR_FORMAT;
        return NULL;
    }
    FILE *f = tw_regular_file_open_measured(left, err, err_len, path, what, "cannot open");
    *st = f ? TW_OK : TW_ERR_IO;
    return f;
}

int tw_file_has_magic(const char *path, const char *magic, size_t n, const char *what) {
    char head[16];
    FILE *f;   // not plain fopen: opening a FIFO for reading would wait for a writer
    if (n > sizeof head || tw_regular_file_open(&f, NULL, 0, path, what) != TW_FILE_OK) return 0;
    const int has = fread(head, n, 1, f) == 1 && memcmp(head, magic, n) == 0;
    fclose(f);
    return has;
}

tw_status tw_checkpoint_load(tw_model *m, const char *path, char *err, size_t err_len) {
    memset(m, 0, sizeof *m);
    long long left;
    tw_status st;
    FILE *f = tw_checkpoint_open_read(&left, &st, path, "a TWMODEL checkpoint file (.bin)", err, err_len);
    if (f == NULL) return st;
    st = read_model_record(m, f, &left, path, err, err_len);
    fclose(f);
    if (st == TW_OK && left != 0) {
        tw_set_err(err, err_len, "%s: %lld extra bytes after the last parameter", path, left);
        tw_model_free(m);
        st = TW_ERR_FORMAT;
    }
    return st;
}

int tw_checkpoint_is_ours(const char *path) {
    return tw_file_has_magic(path, TW_CHECKPOINT_MAGIC, 8, "a checkpoint");
}

tw_status tw_model_load_file(tw_model *m, const char *path, char *err, size_t err_len) {
    if (tw_checkpoint_is_ours(path)) return tw_checkpoint_load(m, path, err, err_len);
    if (tw_moe_file_is_moe(path)) return tw_moe_file_load(m, path, err, err_len);
    return tw_llama2c_load(m, path, err, err_len);
}

// ---- the training state ----

tw_status tw_train_state_write(const char *path, const tw_train_progress *pr, const tw_model *m,
                               const float *adam_m, const float *adam_v, char *err, size_t err_len) {
    if (!host_is_little_endian()) {
        tw_set_err(err, err_len, "%s: the format is little-endian; this host is not", path);
        return TW_ERR_IO;
    }
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "wb") != TW_OK) {
        tw_set_err(err, err_len, "%s: cannot create: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    char magic[8] = TW_TRAIN_STATE_MAGIC;
    const size_t n = (size_t)m->n_floats;
    if (m->cfg.block.moe_experts > 0 || m->cfg.block.mla_kv_rank > 0) {   // a TWMODEL record
        tw_atomic_commit(&af, 0);
        tw_set_err(err, err_len, "%s: a training state cannot hold a model with experts or latent "
                   "attention yet", path);
        return TW_ERR_ARG;
    }
    int ok = fwrite(magic, 8, 1, af.f) == 1 && fwrite(&VERSION, 4, 1, af.f) == 1 &&
             fwrite(&pr->step, 8, 1, af.f) == 1 && fwrite(&pr->data_pos, 8, 1, af.f) == 1 &&
             fwrite(&pr->shuffle_seed, 8, 1, af.f) == 1 && fwrite(&pr->sampler_state, 8, 1, af.f) == 1 &&
             fwrite(&pr->B, 4, 1, af.f) == 1 && fwrite(&pr->T, 4, 1, af.f) == 1;
    ok = ok && write_model_record(af.f, m);
    ok = ok && fwrite(adam_m, sizeof(float), n, af.f) == n && fwrite(adam_v, sizeof(float), n, af.f) == n;
    if (tw_atomic_commit(&af, ok) != TW_OK) {
        tw_set_err(err, err_len, "%s: write failed: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    return TW_OK;
}

// AdamW's first moment m is a running mean of gradients: any finite value. The second moment v
// is a running mean of squared gradients: finite and never negative (a negative v makes
// sqrt(v) NaN in the very first update). The first bad element is named by its parameter.
static tw_status check_moments(const float *adam_m, const float *adam_v, const tw_model *m,
                               const char *path, char *err, size_t err_len) {
    for (int i = 0; i < m->n_params; i++) {
        const tw_param *p = &m->params[i];
        const long off = (long)(p->data - m->memory);
        for (long j = 0; j < p->count; j++) {
            const float mj = adam_m[off + j], vj = adam_v[off + j];
            if (!isfinite(mj) || !isfinite(vj) || vj < 0.0f) {
                tw_set_err(err, err_len, "%s: AdamW's %s moment of %s[%ld] is %g (%s): corrupted file",
                        path, isfinite(mj) ? "second" : "first", p->name, j,
                        isfinite(mj) ? (double)vj : (double)mj,
                        isfinite(mj) && isfinite(vj) ? "a mean of squares cannot be negative"
                                                     : "must be finite");
                return TW_ERR_FORMAT;
            }
        }
    }
    return TW_OK;
}

tw_status tw_train_state_load(tw_train_progress *pr, tw_model *m, float **adam_m, float **adam_v,
                              const char *path, char *err, size_t err_len) {
    memset(pr, 0, sizeof *pr);
    memset(m, 0, sizeof *m);
    *adam_m = *adam_v = NULL;
    long long left = 0;
    FILE *f = tw_regular_file_open_measured(&left, err, err_len, path,
                                            "a TWSTATE training state file", "cannot open");
    if (f == NULL) return TW_ERR_IO;
    char magic[8];
    int32_t version;
    const long long head = 8 + 4 + 4 * 8 + 2 * 4;
    tw_status st = TW_OK;
    if (left < head || fread(magic, 8, 1, f) != 1 || fread(&version, 4, 1, f) != 1 ||
        fread(&pr->step, 8, 1, f) != 1 || fread(&pr->data_pos, 8, 1, f) != 1 ||
        fread(&pr->shuffle_seed, 8, 1, f) != 1 || fread(&pr->sampler_state, 8, 1, f) != 1 ||
        fread(&pr->B, 4, 1, f) != 1 || fread(&pr->T, 4, 1, f) != 1) {
        tw_set_err(err, err_len, "%s: truncated: shorter than the %lld-byte state header", path, head);
        st = TW_ERR_FORMAT;
    } else if (memcmp(magic, TW_TRAIN_STATE_MAGIC, 8) != 0) {
        tw_set_err(err, err_len, "%s: bad magic: not a TWSTATE training state", path);
        st = TW_ERR_FORMAT;
    } else if (version != VERSION) {
        tw_set_err(err, err_len, "%s: version %d, but this build reads version %d", path, (int)version,
                (int)VERSION);
        st = TW_ERR_FORMAT;
    } else if (pr->step < 0 || pr->data_pos < 0 || pr->B < 1 || pr->T < 1) {
        tw_set_err(err, err_len, "%s: step, data position or batch shape is negative", path);
        st = TW_ERR_FORMAT;
    } else if (pr->step > INT32_MAX || pr->B > TW_TRAIN_STATE_MAX_BATCH ||
               pr->data_pos / pr->B > pr->step) {
        // ./train counts steps in an int, and consumes B windows per step.
        tw_set_err(err, err_len, "%s: step %lld, batch %d or data position %lld out of range "
                "(step <= 2^31 - 1, batch <= %d, data position <= step * batch): corrupted file",
                path, (long long)pr->step, (int)pr->B, (long long)pr->data_pos, TW_TRAIN_STATE_MAX_BATCH);
        st = TW_ERR_FORMAT;
    }
    if (st == TW_OK) {
        left -= head;
        st = read_model_record(m, f, &left, path, err, err_len);
    }
    if (st == TW_OK && pr->T > m->cfg.max_seq) {
        tw_set_err(err, err_len, "%s: the batch rows of %d positions are longer than the model's "
                "max_seq %d: corrupted file", path, (int)pr->T, m->cfg.max_seq);
        st = TW_ERR_FORMAT;
    }
    if (st == TW_OK) {
        const size_t n = (size_t)m->n_floats;
        if (left != 8LL * (long long)n) {
            tw_set_err(err, err_len, "%s: the AdamW moments take %lld bytes, expected %lld (%s)", path,
                    left, 8LL * (long long)n, left < 8LL * (long long)n ? "truncated" : "extra bytes");
            st = TW_ERR_FORMAT;
        } else {
            *adam_m = malloc(n * sizeof(float));
            *adam_v = malloc(n * sizeof(float));
            if (*adam_m == NULL || *adam_v == NULL) {
                tw_set_err(err, err_len, "%s: out of memory for the AdamW moments", path);
                st = TW_ERR_NOMEM;
            } else if (fread(*adam_m, sizeof(float), n, f) != n || fread(*adam_v, sizeof(float), n, f) != n) {
                tw_set_err(err, err_len, "%s: read error in the AdamW moments", path);
                st = TW_ERR_IO;
            } else {
                st = check_moments(*adam_m, *adam_v, m, path, err, err_len);
            }
        }
    }
    fclose(f);
    if (st != TW_OK) {
        free(*adam_m);
        free(*adam_v);
        *adam_m = *adam_v = NULL;
        tw_model_free(m);
        memset(pr, 0, sizeof *pr);
    }
    return st;
}
