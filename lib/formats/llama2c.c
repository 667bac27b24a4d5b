// llama2c.c: loading llama2.c legacy checkpoints into a tw_model (see llama2c.h). The model then
// runs on tw_model_forward like any other; nothing here computes.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/llama2c.h"
#include "formats/regular_file.h"
#include "formats/file_kind.h"

static const float LLAMA_NORM_EPS   = 1e-5f;    // RMSNorm eps of every llama2.c model
static const float LLAMA_ROPE_THETA = 10000.0f; // RoPE base of Llama 2

// ---- header validation ----

// a * b, or -1 if either is negative or the product would exceed 2^62 (never for valid limits).
static long long mul_checked(long long a, long long b) {
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > (1LL << 62) / a) return -1;
    return a * b;
}

static long long add_checked(long long a, long long b) {
    if (a < 0 || b < 0 || a > (1LL << 62) - b) return -1;
    return a + b;
}

// Floats the file must hold after the header, or -1 on overflow.
static long long expected_floats(const tw_llama2c_config *c) {
    long long C = c->dim, F = c->hidden_dim, L = c->n_layers, V = c->vocab_size;
    long long D = c->dim / c->n_heads, KV = (long long)c->n_kv_heads * D;
    long long n = mul_checked(V, C);                                   // token embedding
    n = add_checked(n, mul_checked(L, C));                             // rms_att
    n = add_checked(n, mul_checked(L, mul_checked(C, C)));             // wq
    n = add_checked(n, mul_checked(2 * L, mul_checked(KV, C)));        // wk, wv
    n = add_checked(n, mul_checked(L, mul_checked(C, C)));             // wo
    n = add_checked(n, mul_checked(L, C));                             // rms_ffn
    n = add_checked(n, mul_checked(3 * L, mul_checked(F, C)));         // w1, w2, w3
    n = add_checked(n, C);                                             // rms_final
    n = add_checked(n, mul_checked(c->seq_len, D));                    // freq_cis real + imag: 2 * (D/2)
    if (!c->shared_classifier) n = add_checked(n, mul_checked(V, C));  // classifier
    return n;
}

tw_status tw_llama2c_check_header(tw_llama2c_config *cfg, const int32_t h[7],
                                  long long file_bytes, char *err, size_t err_len) {
    static const char *const names[7] = { "dim", "hidden_dim", "n_layers", "n_heads",
                                          "n_kv_heads", "vocab_size", "seq_len" };
    static const int32_t limits[7] = { TW_LLAMA2C_MAX_DIM, 16 * TW_LLAMA2C_MAX_DIM,
                                       TW_LLAMA2C_MAX_LAYERS, TW_LLAMA2C_MAX_DIM,
                                       TW_LLAMA2C_MAX_DIM, TW_LLAMA2C_MAX_VOCAB, TW_LLAMA2C_MAX_SEQ };
    memset(cfg, 0, sizeof *cfg);
    for (int i = 0; i < 7; i++) {
        // vocab_size alone may be negative: that flags a separate classifier.
        long long v = h[i];
        if (i == 5 && v < 0) v = -v;
        if (v <= 0) {
            tw_set_err(err, err_len, "header field %s = %d must be positive (not a llama2.c checkpoint, "
                    "or a corrupted one)", names[i], (int)h[i]);
            return TW_ERR_FORMAT;
        }
        if (v > limits[i]) {
            tw_set_err(err, err_len, "header field %s = %lld exceeds the limit %d (corrupted file?)",
                    names[i], v, (int)limits[i]);
            return TW_ERR_FORMAT;
        }
    }
    tw_llama2c_config c = { h[0], h[1], h[2], h[3], h[4], h[5] < 0 ? -h[5] : h[5], h[6], h[5] > 0 };
    if (c.dim % c.n_heads != 0) {
        tw_set_err(err, err_len, "dim %d is not divisible by n_heads %d", c.dim, c.n_heads);
        return TW_ERR_FORMAT;
    }
    if (c.n_heads % c.n_kv_heads != 0) {
        tw_set_err(err, err_len, "n_heads %d is not divisible by n_kv_heads %d", c.n_heads, c.n_kv_heads);
        return TW_ERR_FORMAT;
    }
    if ((c.dim / c.n_heads) % 2 != 0) {
        tw_set_err(err, err_len, "head size %d (dim / n_heads) is odd; RoPE needs pairs", c.dim / c.n_heads);
        return TW_ERR_FORMAT;
    }
    long long n = expected_floats(&c);
    long long want = n < 0 ? -1 : add_checked(28, mul_checked(n, 4));
    if (want < 0) {
        tw_set_err(err, err_len, "the sizes in the header overflow");
        return TW_ERR_FORMAT;
    }
    if (file_bytes != want) {
        tw_set_err(err, err_len, "file is %lld bytes but its header (dim %d, hidden %d, layers %d, "
                "heads %d, kv heads %d, vocab %d%s, seq_len %d) implies %lld bytes: %s",
                file_bytes, c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size,
                c.shared_classifier ? "" : " separate classifier", c.seq_len, want,
                file_bytes < want ? "truncated" : "extra bytes at the end");
        return TW_ERR_FORMAT;
    }
    *cfg = c;
    return TW_OK;
}

// ---- loading ----

static int host_is_little_endian(void) {
    const uint32_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

void tw_llama2c_model_config(tw_model_config *mc, const tw_llama2c_config *c) {
    memset(mc, 0, sizeof *mc);
    mc->style   = "llama";
    mc->vocab   = c->vocab_size;
    mc->max_seq = c->seq_len;
    mc->n_layer = c->n_layers;
    tw_block_config *b = &mc->block;
    b->attn.d_model    = c->dim;
    b->attn.n_head     = c->n_heads;
    b->attn.n_kv_head  = c->n_kv_heads;
    b->attn.head_dim   = c->dim / c->n_heads;
    b->attn.causal     = 1;
    b->attn.rope       = TW_ROPE_ADJACENT;   // llama2.c rotates (x[2i], x[2i+1])
    b->attn.rope_theta = LLAMA_ROPE_THETA;
    b->attn.qk_norm    = 0;
    b->attn.norm_eps   = LLAMA_NORM_EPS;
    b->prenorm    = 1;
    b->norm       = TW_NORM_RMS;
    b->norm_eps   = LLAMA_NORM_EPS;
    b->ffn        = TW_FFN_SWIGLU;
    b->act        = TW_ACT_SILU;
    b->ffn_hidden = c->hidden_dim;
    mc->pos         = TW_POS_NONE;
    mc->embed_scale = 0;
    mc->final_norm  = 1;
    mc->tied        = c->shared_classifier;
    mc->bias        = 0;
}

// The file's per-layer arrays, in file order, each (L, ...) and named as the model names one
// layer's slice ("layers.<l>.<leaf>", model.h). Llama's w1 is the gate (through SiLU), w3 the
// linear "up" branch, w2 the way back to C.
static const char *const LAYER_ARRAYS_BEFORE_FFN[] = { "norm1.w", "attn.wq", "attn.wk", "attn.wv",
                                                       "attn.wo", "norm2.w" };
static const char *const LAYER_ARRAYS_FFN[] = { "ffn.gate", "ffn.down", "ffn.up" };   // w1, w2, w3

// Reads the next n floats of the file (float index *at after the header) into dst and checks
// that each is finite. Returns TW_OK or a status with one line in err.
static tw_status read_floats(float *dst, size_t n, FILE *f, long long *at, const char *path,
                             char *err, size_t err_len) {
    if (fread(dst, sizeof(float), n, f) != n) {
        tw_set_err(err, err_len, "%s: read error", path);
        return TW_ERR_IO;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(dst[i])) {
            long long k = *at + (long long)i;
            tw_set_err(err, err_len, "%s: weight %lld (byte offset %lld) is %g: corrupted file",
                    path, k, 28 + 4 * k, (double)dst[i]);
            return TW_ERR_FORMAT;
        }
    }
    *at += (long long)n;
    return TW_OK;
}

static tw_status read_param(tw_model *m, const char *name, FILE *f, long long *at, const char *path,
                            char *err, size_t err_len) {
    tw_param *p = tw_model_param(m, name);
    return read_floats(p->data, (size_t)p->count, f, at, path, err, err_len);
}

// Every array of the file after the header, in file order, into m's parameters.
static tw_status read_weights(tw_model *m, FILE *f, const char *path, char *err, size_t err_len) {
    const tw_model_config *c = &m->cfg;
    long long at = 0;
    char name[48];
    tw_status st = read_param(m, "tok_emb", f, &at, path, err, err_len);
    for (int k = 0; k < 6 && st == TW_OK; k++)
        for (int l = 0; l < c->n_layer && st == TW_OK; l++) {
            snprintf(name, sizeof name, "layers.%d.%s", l, LAYER_ARRAYS_BEFORE_FFN[k]);
            st = read_param(m, name, f, &at, path, err, err_len);
        }
    for (int k = 0; k < 3 && st == TW_OK; k++)
        for (int l = 0; l < c->n_layer && st == TW_OK; l++) {
            snprintf(name, sizeof name, "layers.%d.%s", l, LAYER_ARRAYS_FFN[k]);
            st = read_param(m, name, f, &at, path, err, err_len);
        }
    if (st == TW_OK) st = read_param(m, "final_norm.w", f, &at, path, err, err_len);
    // freq_cis_real, freq_cis_imag (seq_len, D/2) each: RoPE is recomputed, but a corrupted
    // table still marks a corrupted file, so they are read and checked, then dropped.
    const size_t n_freq = (size_t)c->max_seq * (size_t)c->block.attn.head_dim;
    float *freq = st == TW_OK ? malloc(n_freq * sizeof(float)) : NULL;
    if (st == TW_OK && freq == NULL) {
        tw_set_err(err, err_len, "%s: out of memory", path);
        st = TW_ERR_NOMEM;
    }
    if (st == TW_OK) st = read_floats(freq, n_freq, f, &at, path, err, err_len);
    free(freq);
    if (st == TW_OK && !c->tied) st = read_param(m, "head", f, &at, path, err, err_len);
    return st;
}

tw_status tw_llama2c_load(tw_model *m, const char *path, char *err, size_t err_len) {
    memset(m, 0, sizeof *m);
    char why[400] = "";
    if (!host_is_little_endian()) {
        tw_set_err(err, err_len, "%s: llama2.c checkpoints are little-endian; this host is not", path);
        return TW_ERR_FORMAT;
    }
    long long bytes = -1;
    FILE *f = tw_regular_file_open_measured(&bytes, err, err_len, path,
                                            "a llama2.c checkpoint file (.bin)",
                                            "cannot open the model file");
    if (f == NULL) return TW_ERR_IO;
    int32_t header[7];
    if (bytes < 28 || fread(header, sizeof(int32_t), 7, f) != 7) {
        fclose(f);
        tw_set_err(err, err_len, "%s: file is %lld bytes, too short for the 28-byte header", path, bytes);
        return TW_ERR_FORMAT;
    }
    // The toolkit's other files start with a magic where a llama2.c header has dim and
    // hidden_dim: name them, instead of "dim = 1634415666 exceeds the limit".
    const char *kind = tw_file_kind_name((const unsigned char *)header);
    if (kind != NULL) {
        fclose(f);
        const char *what_to_do =
            memcmp(header, "TWST", 4) == 0 ? "a training-state file goes to ./train --resume"
          : memcmp(header, "TWMO", 4) == 0 ? "load it with tw_model_load_file"
          : strstr(kind, "damaged") ? "pass an undamaged llama2.c checkpoint (.bin)"
          : strstr(kind, "version-2") ? "it is already quantized to int8 (version-2): pass the float32 model it was quantized from"
          : "pass a llama2.c checkpoint (.bin, e.g. data/models/stories260K.bin)";
        tw_set_err(err, err_len, "%s: is %s: %s", path, kind, what_to_do);
        return TW_ERR_FORMAT;
    }
    tw_llama2c_config hc;
    tw_status st = tw_llama2c_check_header(&hc, header, bytes, why, sizeof why);
    if (st != TW_OK) {
        fclose(f);
        tw_set_err(err, err_len, "%s: %s", path, why);
        return st;
    }
    tw_model_config mc;
    tw_llama2c_model_config(&mc, &hc);
    st = tw_model_init(m, &mc);
    if (st != TW_OK) {
        fclose(f);
        if (st == TW_ERR_NOMEM)
            tw_set_err(err, err_len, "%s: out of memory for %lld weights", path, (bytes - 28) / 4);
        else
            tw_set_err(err, err_len, "%s: the header describes no valid model: %s", path, tw_status_str(st));
        return st;
    }
    st = read_weights(m, f, path, err, err_len);
    fclose(f);
    if (st != TW_OK) tw_model_free(m);
    return st;
}
