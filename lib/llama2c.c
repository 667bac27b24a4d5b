// llama2c.c: loading llama2.c legacy checkpoints, the forward pass assembled from the library's
// functions, and the dump of every intermediate tensor (see llama2c.h).
#define _POSIX_C_SOURCE 200809L   // mkdtemp, rmdir, stat
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tw.h"
#include "llama2c.h"

static const float LLAMA_NORM_EPS   = 1e-5f;    // RMSNorm eps of every llama2.c model
static const float LLAMA_ROPE_THETA = 10000.0f; // RoPE base of Llama 2

static void set_err(char *err, size_t len, const char *fmt, ...) {
    if (err == NULL || len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

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
            set_err(err, err_len, "header field %s = %d must be positive (not a llama2.c checkpoint, "
                    "or a corrupted one)", names[i], (int)h[i]);
            return TW_ERR_FORMAT;
        }
        if (v > limits[i]) {
            set_err(err, err_len, "header field %s = %lld exceeds the limit %d (corrupted file?)",
                    names[i], v, (int)limits[i]);
            return TW_ERR_FORMAT;
        }
    }
    tw_llama2c_config c = { h[0], h[1], h[2], h[3], h[4], h[5] < 0 ? -h[5] : h[5], h[6], h[5] > 0 };
    if (c.dim % c.n_heads != 0) {
        set_err(err, err_len, "dim %d is not divisible by n_heads %d", c.dim, c.n_heads);
        return TW_ERR_FORMAT;
    }
    if (c.n_heads % c.n_kv_heads != 0) {
        set_err(err, err_len, "n_heads %d is not divisible by n_kv_heads %d", c.n_heads, c.n_kv_heads);
        return TW_ERR_FORMAT;
    }
    if ((c.dim / c.n_heads) % 2 != 0) {
        set_err(err, err_len, "head size %d (dim / n_heads) is odd; RoPE needs pairs", c.dim / c.n_heads);
        return TW_ERR_FORMAT;
    }
    long long n = expected_floats(&c);
    long long want = n < 0 ? -1 : add_checked(28, mul_checked(n, 4));
    if (want < 0) {
        set_err(err, err_len, "the sizes in the header overflow");
        return TW_ERR_FORMAT;
    }
    if (file_bytes != want) {
        set_err(err, err_len, "file is %lld bytes but its header (dim %d, hidden %d, layers %d, "
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

static void make_block_config(tw_block_config *b, const tw_llama2c_config *c) {
    memset(b, 0, sizeof *b);
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
}

// Points tok_emb, layers, final_norm and classifier into m->memory, in file order.
static void map_weights(tw_llama2c *m) {
    const tw_llama2c_config *c = &m->cfg;
    const size_t C = (size_t)c->dim, F = (size_t)c->hidden_dim, L = (size_t)c->n_layers;
    const size_t D = C / (size_t)c->n_heads, KV = (size_t)c->n_kv_heads * D;
    const float *p = m->memory;
    m->tok_emb = p;                 p += (size_t)c->vocab_size * C;
    const float *rms_att = p;       p += L * C;
    const float *wq = p;            p += L * C * C;
    const float *wk = p;            p += L * KV * C;
    const float *wv = p;            p += L * KV * C;
    const float *wo = p;            p += L * C * C;
    const float *rms_ffn = p;       p += L * C;
    const float *w1 = p;            p += L * F * C;
    const float *w2 = p;            p += L * C * F;
    const float *w3 = p;            p += L * F * C;
    m->final_norm = p;              p += C;
    p += (size_t)c->seq_len * D;    // freq_cis_real, freq_cis_imag: unused
    m->classifier = c->shared_classifier ? m->tok_emb : p;
    for (size_t l = 0; l < L; l++) {
        tw_block_weights *w = &m->layers[l];
        memset(w, 0, sizeof *w);    // NULL biases, NULL LayerNorm betas, no QK-norm
        w->norm1_w = rms_att + l * C;
        w->attn.wq = wq + l * C * C;
        w->attn.wk = wk + l * KV * C;
        w->attn.wv = wv + l * KV * C;
        w->attn.wo = wo + l * C * C;
        w->norm2_w = rms_ffn + l * C;
        w->ffn_gate = w1 + l * F * C;   // Llama's w1: the gate, through SiLU
        w->ffn_down = w2 + l * C * F;   // w2: back to C
        w->ffn_up   = w3 + l * F * C;   // w3: the linear "up" branch
    }
}

tw_status tw_llama2c_load(tw_llama2c *m, const char *path, char *err, size_t err_len) {
    memset(m, 0, sizeof *m);
    char why[400] = "";
    if (!host_is_little_endian()) {
        set_err(err, err_len, "%s: llama2.c checkpoints are little-endian; this host is not", path);
        return TW_ERR_FORMAT;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        set_err(err, err_len, "%s: cannot open the model file: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    long long bytes = -1;
    if (fseek(f, 0, SEEK_END) == 0) bytes = ftell(f);
    int32_t header[7];
    if (bytes < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        set_err(err, err_len, "%s: cannot determine the file size", path);
        return TW_ERR_IO;
    }
    if (bytes < 28 || fread(header, sizeof(int32_t), 7, f) != 7) {
        fclose(f);
        set_err(err, err_len, "%s: file is %lld bytes, too short for the 28-byte header", path, bytes);
        return TW_ERR_FORMAT;
    }
    tw_status st = tw_llama2c_check_header(&m->cfg, header, bytes, why, sizeof why);
    if (st != TW_OK) {
        fclose(f);
        set_err(err, err_len, "%s: %s", path, why);
        memset(m, 0, sizeof *m);
        return st;
    }
    m->n_floats = (bytes - 28) / 4;
    // 64-byte aligned (one cache line; aligned_alloc wants a multiple of it): every tensor of a
    // model whose dims are multiples of 16 then starts on a line, so no vector load of a weight
    // row straddles two lines. malloc's 16-byte alignment made every 64-byte load a split load:
    // measured on the Xeon, matvec from L2 at half speed and from L3 about 10% slower.
    m->memory = aligned_alloc(64, ((size_t)m->n_floats * sizeof(float) + 63) / 64 * 64);
    m->layers = malloc((size_t)m->cfg.n_layers * sizeof *m->layers);
    if (m->memory == NULL || m->layers == NULL) {
        fclose(f);
        set_err(err, err_len, "%s: out of memory for %lld weights", path, m->n_floats);
        tw_llama2c_free(m);
        return TW_ERR_NOMEM;
    }
    if (fread(m->memory, sizeof(float), (size_t)m->n_floats, f) != (size_t)m->n_floats) {
        fclose(f);
        set_err(err, err_len, "%s: read error", path);
        tw_llama2c_free(m);
        return TW_ERR_IO;
    }
    fclose(f);
    for (long long i = 0; i < m->n_floats; i++) {
        if (!isfinite(m->memory[i])) {
            set_err(err, err_len, "%s: weight %lld (byte offset %lld) is %g: corrupted file",
                    path, i, 28 + 4 * i, (double)m->memory[i]);
            tw_llama2c_free(m);
            return TW_ERR_FORMAT;
        }
    }
    make_block_config(&m->block, &m->cfg);
    map_weights(m);
    return TW_OK;
}

void tw_llama2c_free(tw_llama2c *m) {
    free(m->memory);
    free(m->layers);
    memset(m, 0, sizeof *m);
}

// ---- state and forward pass ----

size_t tw_llama2c_cache_bytes(const tw_llama2c *m, int S_max) {
    return (size_t)m->cfg.n_layers *
           tw_kv_cache_bytes(S_max, m->cfg.n_kv_heads, m->cfg.dim / m->cfg.n_heads);
}

tw_status tw_llama2c_state_init(tw_llama2c_state *s, const tw_llama2c *m, int T_max, int S_max,
                                int with_cache, int keep_all) {
    memset(s, 0, sizeof *s);
    const tw_llama2c_config *c = &m->cfg;
    if (S_max == 0 || !with_cache) S_max = with_cache ? c->seq_len : T_max;
    if (T_max < 1 || T_max > c->seq_len || S_max < T_max || S_max > c->seq_len) return TW_ERR_ARG;
    s->T_max = T_max;
    s->S_max = S_max;
    s->keep_all = keep_all ? 1 : 0;
    s->n_layers = c->n_layers;
    const size_t TC = (size_t)T_max * (size_t)c->dim;
    int n_scratch = keep_all ? c->n_layers : 1;
    s->embed  = malloc(TC * sizeof(float));
    s->resid  = malloc(TC * sizeof(float));
    s->final  = malloc(TC * sizeof(float));
    s->rms    = malloc((size_t)T_max * sizeof(float));
    s->logits = malloc((size_t)T_max * (size_t)c->vocab_size * sizeof(float));
    s->layers = calloc((size_t)n_scratch, sizeof *s->layers);
    if (!s->embed || !s->resid || !s->final || !s->rms || !s->logits || !s->layers) goto nomem;
    for (int l = 0; l < n_scratch; l++) {
        tw_status st = tw_block_scratch_init(&s->layers[l], &m->block, T_max, S_max);
        if (st != TW_OK) { tw_llama2c_state_free(s); return st; }
    }
    if (with_cache) {
        s->cache = calloc((size_t)c->n_layers, sizeof *s->cache);
        if (s->cache == NULL) goto nomem;
        for (int l = 0; l < c->n_layers; l++) {
            tw_status st = tw_kv_cache_init(&s->cache[l], S_max, c->n_kv_heads, c->dim / c->n_heads);
            if (st != TW_OK) { tw_llama2c_state_free(s); return st; }
        }
    }
    return TW_OK;
nomem:
    tw_llama2c_state_free(s);
    return TW_ERR_NOMEM;
}

void tw_llama2c_state_free(tw_llama2c_state *s) {
    int n_scratch = s->keep_all ? s->n_layers : 1;
    if (s->layers) for (int l = 0; l < n_scratch; l++) tw_block_scratch_free(&s->layers[l]);
    if (s->cache) for (int l = 0; l < s->n_layers; l++) tw_kv_cache_free(&s->cache[l]);
    free(s->layers);
    free(s->cache);
    free(s->embed);
    free(s->resid);
    free(s->final);
    free(s->rms);
    free(s->logits);
    memset(s, 0, sizeof *s);
}

tw_status tw_llama2c_forward(tw_llama2c_state *s, const tw_llama2c *m, const int *tokens, int T,
                             int pos0, int all_logits) {
    const tw_llama2c_config *c = &m->cfg;
    const int C = c->dim, V = c->vocab_size;
    if (T < 1 || T > s->T_max || pos0 < 0) return TW_ERR_ARG;
    if (s->cache ? pos0 + T > s->S_max : pos0 != 0) return TW_ERR_ARG;

    tw_status st = tw_embedding_forward(s->embed, tokens, m->tok_emb, T, V, C);
    if (st != TW_OK) return st;
    for (int l = 0; l < c->n_layers; l++) {
        tw_block_scratch *scr = &s->layers[s->keep_all ? l : 0];
        tw_kv_cache *cache = s->cache ? &s->cache[l] : NULL;
        tw_block_forward(s->resid, scr, cache, l == 0 ? s->embed : s->resid,
                         &m->block, &m->layers[l], T, pos0);
    }
    tw_rmsnorm_forward(s->final, s->rms, s->resid, m->final_norm, T, C, LLAMA_NORM_EPS);
    if (all_logits) {
        tw_linear_forward(s->logits, s->final, m->classifier, NULL, T, C, V);
    } else {   // generation needs only the next token after the last position
        tw_linear_forward(s->logits + (size_t)(T - 1) * V, s->final + (size_t)(T - 1) * C,
                          m->classifier, NULL, 1, C, V);
    }
    return TW_OK;
}

// ---- the dump ----

// One tensor of the dump: a (T, ...) array assembled from the scratch structs.
typedef struct {
    char        name[32];
    int         ndim;
    long        shape[3];
    const char *meaning;
    float      *data;
} dump_tensor;

enum { PER_LAYER = 18 };
static const struct { const char *name, *shape, *meaning; } LAYER_TENSORS[PER_LAYER] = {
    { "attn_in",    "Td",  "residual stream entering the block" },
    { "attn_norm",  "Td",  "RMSNorm(attn_in) * rms_att gain: the attention input" },
    { "q",          "THD", "queries x Wq^T, before RoPE" },
    { "k",          "TGD", "keys x Wk^T, before RoPE" },
    { "v",          "TGD", "values x Wv^T" },
    { "q_rot",      "THD", "queries after RoPE (adjacent pairs, base 10000)" },
    { "k_rot",      "TGD", "keys after RoPE: what the KV cache stores" },
    { "scores",     "HTT", "q_rot . k_rot / sqrt(head size), -inf above the diagonal (causal mask)" },
    { "pattern",    "HTT", "softmax of scores: the attention map, rows sum to 1" },
    { "z",          "THD", "pattern @ v per head (query head h reads kv head h / (H/G))" },
    { "attn_out",   "Td",  "z Wo^T: the attention sub-layer's output" },
    { "resid_mid",  "Td",  "attn_in + attn_out" },
    { "ffn_norm",   "Td",  "RMSNorm(resid_mid) * rms_ffn gain: the FFN input" },
    { "ffn_gate",   "TF",  "ffn_norm W1^T, before SiLU" },
    { "ffn_up",     "TF",  "ffn_norm W3^T" },
    { "ffn_act",    "TF",  "silu(ffn_gate) * ffn_up" },
    { "ffn_out",    "Td",  "ffn_act W2^T: the FFN sub-layer's output" },
    { "resid_post", "Td",  "resid_mid + ffn_out: the stream leaving the block" },
};

static void set_shape(dump_tensor *d, const char *letters, const tw_llama2c_config *c, int T) {
    const int D = c->dim / c->n_heads;
    d->ndim = (int)strlen(letters);
    for (int i = 0; i < d->ndim; i++) {
        switch (letters[i]) {
        case 'T': d->shape[i] = T; break;
        case 'd': d->shape[i] = c->dim; break;
        case 'H': d->shape[i] = c->n_heads; break;
        case 'G': d->shape[i] = c->n_kv_heads; break;
        case 'D': d->shape[i] = D; break;
        case 'F': d->shape[i] = c->hidden_dim; break;
        case 'V': d->shape[i] = c->vocab_size; break;
        }
    }
}

static long tensor_count(const dump_tensor *d) {
    long n = 1;
    for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
    return n;
}

// Rows t0 .. t0+n-1 of a (T, row) tensor from a (n, row) scratch array.
static void copy_rows(dump_tensor *d, int t0, const float *src, int n) {
    long row = tensor_count(d) / d->shape[0];
    memcpy(d->data + (size_t)t0 * row, src, (size_t)n * row * sizeof(float));
}

// Rows t0 .. t0+n-1 of an (H, T, T) attention tensor from the scratch's (H, n, S) array; columns
// S .. T-1 (positions not yet seen when decoding with a cache) get `fill`.
static void copy_attention(dump_tensor *d, int t0, const float *src, int n, int S, float fill) {
    const long H = d->shape[0], T = d->shape[1];
    for (long h = 0; h < H; h++) {
        for (int i = 0; i < n; i++) {
            float *dst = d->data + (h * T + t0 + i) * T;
            memcpy(dst, src + ((size_t)h * n + i) * S, (size_t)S * sizeof(float));
            for (long s = S; s < T; s++) dst[s] = fill;
        }
    }
}

// Copies rows t0 .. t0+n-1 of every tensor from the state after a forward call over n tokens.
static void collect(dump_tensor *ts, const tw_llama2c_state *s, int L, int t0, int n) {
    copy_rows(&ts[0], t0, s->embed, n);
    for (int l = 0; l < L; l++) {
        dump_tensor *d = ts + 1 + l * PER_LAYER;
        const tw_block_scratch *b = &s->layers[l];
        const tw_attn_scratch *a = &b->attn;
        copy_rows(&d[0], t0, b->attn_in, n);
        copy_rows(&d[1], t0, b->norm1, n);
        copy_rows(&d[2], t0, a->q, n);
        copy_rows(&d[3], t0, a->k, n);
        copy_rows(&d[4], t0, a->v, n);
        copy_rows(&d[5], t0, a->q_rot, n);
        copy_rows(&d[6], t0, a->k_rot, n);
        copy_attention(&d[7], t0, a->scores, n, a->S, -INFINITY);
        copy_attention(&d[8], t0, a->weights, n, a->S, 0.0f);
        copy_rows(&d[9], t0, a->z, n);
        copy_rows(&d[10], t0, b->attn_out, n);
        copy_rows(&d[11], t0, b->resid_mid, n);
        copy_rows(&d[12], t0, b->norm2, n);
        copy_rows(&d[13], t0, b->ffn_hidden, n);
        copy_rows(&d[14], t0, b->ffn_up, n);
        copy_rows(&d[15], t0, b->ffn_act, n);
        copy_rows(&d[16], t0, b->ffn_out, n);
        copy_rows(&d[17], t0, l + 1 < L ? s->layers[l + 1].attn_in : s->resid, n);
    }
    copy_rows(&ts[1 + L * PER_LAYER], t0, s->final, n);
    copy_rows(&ts[2 + L * PER_LAYER], t0, s->logits, n);
}

// Writes s with control bytes, backslash and tab escaped (\n, \t, \\, \xHH), so one token is one line.
static void write_escaped(FILE *f, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\\') fputs("\\\\", f);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\x%02X", *p);
        else fputc(*p, f);
    }
}

static void shape_str(char *out, size_t len, const long *shape, int ndim) {
    size_t k = (size_t)snprintf(out, len, "[");
    for (int i = 0; i < ndim && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, "%s%ld", i ? ", " : "", shape[i]);
    if (k < len) snprintf(out + k, len - k, "]");
}

// path = dir/name; returns TW_ERR_ARG (and an empty path) if it would not fit in len bytes.
static tw_status join_path(char *path, size_t len, const char *dir, const char *name) {
    int n = snprintf(path, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len) { path[0] = '\0'; return TW_ERR_ARG; }
    return TW_OK;
}

static tw_status write_text_files(const char *tmp, const dump_tensor *ts, int n_tensors, int T,
                                  const int *tokens, const char *const *token_strings) {
    char path[4096], shp[64];
    if (join_path(path, sizeof path, tmp, "manifest.tsv") != TW_OK) return TW_ERR_ARG;
    FILE *f = fopen(path, "w");
    if (f == NULL) return TW_ERR_IO;
    fprintf(f, "name\tshape\tmeaning\n");
    fprintf(f, "tokens\t[%d]\tint32 token ids of the prompt, BOS first\n", T);
    for (int i = 0; i < n_tensors; i++) {
        shape_str(shp, sizeof shp, ts[i].shape, ts[i].ndim);
        fprintf(f, "%s\t%s\t%s\n", ts[i].name, shp, ts[i].meaning);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return TW_ERR_IO;

    if (join_path(path, sizeof path, tmp, "tokens.txt") != TW_OK) return TW_ERR_ARG;
    f = fopen(path, "w");
    if (f == NULL) return TW_ERR_IO;
    fprintf(f, "# position\tid\tstring (escaped: \\n \\t \\\\ \\xHH)\n");
    for (int t = 0; t < T; t++) {
        fprintf(f, "%d\t%d\t", t, tokens[t]);
        write_escaped(f, token_strings && token_strings[t] ? token_strings[t] : "");
        fputc('\n', f);
    }
    bad = ferror(f);
    if (fclose(f) != 0 || bad) return TW_ERR_IO;
    return TW_OK;
}

// Removes what a failed dump wrote into tmp, then tmp itself.
static void remove_partial(const char *tmp, const dump_tensor *ts, int n_tensors) {
    char path[4096];
    const char *extra[] = { "tokens.npy", "manifest.tsv", "tokens.txt" };
    char file[64];
    for (int i = 0; i < 3; i++)
        if (join_path(path, sizeof path, tmp, extra[i]) == TW_OK) remove(path);
    for (int i = 0; i < n_tensors; i++) {
        snprintf(file, sizeof file, "%.59s.npy", ts[i].name);
        if (join_path(path, sizeof path, tmp, file) == TW_OK) remove(path);
    }
    rmdir(tmp);
}

// 0 if dir does not exist or is an empty folder (removed so the rename can take its place).
static int prepare_target(const char *dir, char *err, size_t err_len) {
    struct stat sb;
    if (stat(dir, &sb) != 0) return 0;
    if (!S_ISDIR(sb.st_mode)) {
        set_err(err, err_len, "--dump %s: exists and is not a folder", dir);
        return -1;
    }
    if (rmdir(dir) != 0) {
        set_err(err, err_len, "--dump %s: folder exists and is not empty; remove it or choose another", dir);
        return -1;
    }
    return 0;
}

tw_status tw_llama2c_dump(const char *dir, const tw_llama2c *m, const int *tokens, int T,
                          const char *const *token_strings, int use_cache, char *err, size_t err_len) {
    const tw_llama2c_config *c = &m->cfg;
    const int L = c->n_layers;
    if (T < 1 || T > c->seq_len) {
        set_err(err, err_len, "--dump: %d tokens, but the model takes 1 .. %d", T, c->seq_len);
        return TW_ERR_ARG;
    }
    for (int t = 0; t < T; t++) {
        if (tokens[t] < 0 || tokens[t] >= c->vocab_size) {
            set_err(err, err_len, "--dump: token %d at position %d is outside the vocabulary of %d",
                    tokens[t], t, c->vocab_size);
            return TW_ERR_SHAPE;
        }
    }
    struct stat sb;
    if (stat(dir, &sb) == 0 && (!S_ISDIR(sb.st_mode))) {
        set_err(err, err_len, "--dump %s: exists and is not a folder", dir);
        return TW_ERR_IO;
    }

    // The tensor list, in file order.
    const int n_tensors = 3 + L * PER_LAYER;
    dump_tensor *ts = calloc((size_t)n_tensors, sizeof *ts);
    tw_llama2c_state s;
    memset(&s, 0, sizeof s);
    tw_status st = TW_ERR_NOMEM;
    char tmp[4096] = "";
    if (ts == NULL) { set_err(err, err_len, "--dump: out of memory"); return st; }
    snprintf(ts[0].name, sizeof ts[0].name, "embed");
    set_shape(&ts[0], "Td", c, T);
    ts[0].meaning = "token embeddings (rows of the embedding table)";
    for (int l = 0; l < L; l++) {
        for (int i = 0; i < PER_LAYER; i++) {
            dump_tensor *d = &ts[1 + l * PER_LAYER + i];
            snprintf(d->name, sizeof d->name, "L%d.%s", l, LAYER_TENSORS[i].name);
            set_shape(d, LAYER_TENSORS[i].shape, c, T);
            d->meaning = LAYER_TENSORS[i].meaning;
        }
    }
    dump_tensor *fin = &ts[1 + L * PER_LAYER], *lg = &ts[2 + L * PER_LAYER];
    snprintf(fin->name, sizeof fin->name, "final_norm");
    set_shape(fin, "Td", c, T);
    fin->meaning = "RMSNorm(last resid_post) * rms_final gain";
    snprintf(lg->name, sizeof lg->name, "logits");
    set_shape(lg, "TV", c, T);
    lg->meaning = "final_norm classifier^T: row t scores the token after position t";
    for (int i = 0; i < n_tensors; i++) {
        ts[i].data = malloc((size_t)tensor_count(&ts[i]) * sizeof(float));
        if (ts[i].data == NULL) { set_err(err, err_len, "--dump: out of memory"); goto done; }
    }

    // The forward pass: all at once, or one token at a time through the KV cache.
    st = tw_llama2c_state_init(&s, m, use_cache ? 1 : T, T, use_cache, 1);
    if (st != TW_OK) { set_err(err, err_len, "--dump: cannot allocate activations: %s", tw_status_str(st)); goto done; }
    if (use_cache) {
        for (int t = 0; t < T && st == TW_OK; t++) {
            st = tw_llama2c_forward(&s, m, tokens + t, 1, t, 1);
            if (st == TW_OK) collect(ts, &s, L, t, 1);
        }
    } else {
        st = tw_llama2c_forward(&s, m, tokens, T, 0, 1);
        if (st == TW_OK) collect(ts, &s, L, 0, T);
    }
    if (st != TW_OK) { set_err(err, err_len, "--dump: forward pass failed: %s", tw_status_str(st)); goto done; }

    // Write into a fresh temporary folder beside dir, then rename it into place.
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    if (dl + 16 > sizeof tmp) { st = TW_ERR_ARG; set_err(err, err_len, "--dump: path too long"); goto done; }
    snprintf(tmp, sizeof tmp, "%.*s.tmp-XXXXXX", (int)dl, dir);
    if (mkdtemp(tmp) == NULL) {
        st = TW_ERR_IO;
        set_err(err, err_len, "--dump %s: cannot create a folder beside it: %s", dir, strerror(errno));
        tmp[0] = '\0';
        goto done;
    }
    char path[4096];
    long tshape[1] = { T };
    int32_t *tok32 = malloc((size_t)T * sizeof *tok32);
    if (tok32 == NULL) { st = TW_ERR_NOMEM; set_err(err, err_len, "--dump: out of memory"); goto done; }
    for (int t = 0; t < T; t++) tok32[t] = tokens[t];
    st = join_path(path, sizeof path, tmp, "tokens.npy");
    if (st == TW_OK) st = tw_npy_write_i32(path, tok32, tshape, 1);
    free(tok32);
    for (int i = 0; i < n_tensors && st == TW_OK; i++) {
        char file[64];
        snprintf(file, sizeof file, "%.59s.npy", ts[i].name);
        st = join_path(path, sizeof path, tmp, file);
        if (st == TW_OK) st = tw_npy_write_f32(path, ts[i].data, ts[i].shape, ts[i].ndim);
    }
    if (st == TW_OK) st = write_text_files(tmp, ts, n_tensors, T, tokens, token_strings);
    if (st != TW_OK) { set_err(err, err_len, "--dump %s: cannot write %s: %s", dir, path, strerror(errno)); goto done; }
    if (prepare_target(dir, err, err_len) != 0) { st = TW_ERR_IO; goto done; }
    if (rename(tmp, dir) != 0) {
        st = TW_ERR_IO;
        set_err(err, err_len, "--dump %s: cannot rename %s into place: %s", dir, tmp, strerror(errno));
        goto done;
    }
    tmp[0] = '\0';   // now owned by dir: nothing to clean up
done:
    if (st != TW_OK && tmp[0] != '\0') remove_partial(tmp, ts, n_tensors);
    tw_llama2c_state_free(&s);
    for (int i = 0; i < n_tensors; i++) free(ts[i].data);
    free(ts);
    return st;
}
