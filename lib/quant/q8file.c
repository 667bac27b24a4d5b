// q8file.c: llama2.c's version-2 (Q8_0) checkpoint, read and written; see q8file.h and
// docs/quantization.md. The header is built and parsed byte by byte (its group size sits at the
// unaligned offset 37); the arrays are copied as they are, so this assumes a little-endian host,
// as llama2.c does.
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/atomic_file.h"
#include "formats/regular_file.h"
#include "quant/q8file.h"

// ---- configuration ----

static tw_status config_error(char *err, size_t len, const char *msg) {
    if (err && len) snprintf(err, len, "%s", msg);
    return TW_ERR_FORMAT;
}

tw_status tw_q8file_check_config(const tw_q8file_config *c, char *err, size_t len) {
    char m[256];
    const struct { const char *name; int v, max; } f[] = {
        { "dim", c->dim, TW_Q8FILE_MAX_DIM },          { "hidden_dim", c->hidden_dim, TW_Q8FILE_MAX_DIM },
        { "n_layers", c->n_layers, TW_Q8FILE_MAX_LAYERS }, { "n_heads", c->n_heads, TW_Q8FILE_MAX_DIM },
        { "n_kv_heads", c->n_kv_heads, TW_Q8FILE_MAX_DIM }, { "vocab_size", c->vocab_size, TW_Q8FILE_MAX_VOCAB },
        { "seq_len", c->seq_len, TW_Q8FILE_MAX_SEQ },
    };
    for (int i = 0; i < 7; i++)
        if (f[i].v <= 0 || f[i].v > f[i].max) {
            snprintf(m, sizeof m, "%s = %d in the header is outside [1, %d]", f[i].name, f[i].v, f[i].max);
            return config_error(err, len, m);
        }
    if (c->dim % c->n_heads != 0) {
        snprintf(m, sizeof m, "dim %d is not divisible by n_heads %d", c->dim, c->n_heads);
        return config_error(err, len, m);
    }
    if (c->n_heads % c->n_kv_heads != 0) {
        snprintf(m, sizeof m, "n_heads %d is not divisible by n_kv_heads %d", c->n_heads, c->n_kv_heads);
        return config_error(err, len, m);
    }
    if ((c->dim / c->n_heads) % 2 != 0) {
        snprintf(m, sizeof m, "head size %d is odd (RoPE rotates pairs)", c->dim / c->n_heads);
        return config_error(err, len, m);
    }
    if (c->shared_classifier != 0 && c->shared_classifier != 1) {
        snprintf(m, sizeof m, "shared_classifier flag is %d, not 0 or 1", c->shared_classifier);
        return config_error(err, len, m);
    }
    if (c->group_size <= 0 || c->group_size > 65536) {
        snprintf(m, sizeof m, "group size %d is outside [1, 65536]", c->group_size);
        return config_error(err, len, m);
    }
    const int widths[2] = { c->dim, c->hidden_dim };
    const char *wname[2] = { "dim", "hidden_dim" };
    for (int i = 0; i < 2; i++)
        if (widths[i] % c->group_size != 0) {
            snprintf(m, sizeof m, "group size %d does not divide %s %d (the last %d values of every "
                     "row would be left out)", c->group_size, wname[i], widths[i], widths[i] % c->group_size);
            return config_error(err, len, m);
        }
    return TW_OK;
}

// ---- the tensor table: names and shapes in file order ----

static int n_tensors_of(const tw_q8file_config *c) {
    return 1 + 7 * c->n_layers + (c->shared_classifier ? 0 : 1);
}

// Fills names and shapes (not pointers) of every tensor, in file order.
static void fill_table(tw_q8file_tensor *t, const tw_q8file_config *c) {
    const int C = c->dim, F = c->hidden_dim, KV = c->n_kv_heads * (c->dim / c->n_heads);
    static const char *const kind[7] = { "attention.wq", "attention.wk", "attention.wv", "attention.wo",
                                         "feed_forward.w1", "feed_forward.w2", "feed_forward.w3" };
    const int rows[7] = { C, KV, KV, C, F, C, F }, cols[7] = { C, C, C, C, C, F, C };
    int n = 0;
    snprintf(t[n].name, sizeof t[n].name, "tok_embeddings");
    t[n].rows = c->vocab_size; t[n].cols = C; n++;
    for (int k = 0; k < 7; k++)
        for (int l = 0; l < c->n_layers; l++, n++) {
            snprintf(t[n].name, sizeof t[n].name, "layers.%d.%s", l, kind[k]);
            t[n].rows = rows[k]; t[n].cols = cols[k];
        }
    if (!c->shared_classifier) {
        snprintf(t[n].name, sizeof t[n].name, "output");
        t[n].rows = c->vocab_size; t[n].cols = C;
    }
}

static long long norm_floats(const tw_q8file_config *c) {
    return 2LL * c->n_layers * c->dim + c->dim;
}

static long long tensor_bytes(const tw_q8file_tensor *t, int gs) {
    long long n = (long long)t->rows * t->cols;
    return n + (n / gs) * (long long)sizeof(float);
}

long long tw_q8file_size(const tw_q8file_config *c) {
    int n = n_tensors_of(c);
    tw_q8file_tensor *t = malloc((size_t)n * sizeof *t);
    if (!t) return -1;
    fill_table(t, c);
    long long bytes = TW_Q8FILE_HEADER + 4 * norm_floats(c);
    for (int i = 0; i < n; i++) bytes += tensor_bytes(&t[i], c->group_size);
    free(t);
    return bytes;
}

// In memory each int8 array is padded to a multiple of 4 bytes, so every scale array is aligned
// for float (in the file they follow each other with no padding: see read/write below).
static long long padded(long long n) { return (n + 3) / 4 * 4; }

static long long memory_bytes(const tw_q8file *m) {
    long long bytes = 4 * norm_floats(&m->cfg);
    for (int i = 0; i < m->n_tensors; i++) {
        long long n = (long long)m->tensors[i].rows * m->tensors[i].cols;
        bytes += padded(n) + 4 * (n / m->cfg.group_size);
    }
    return bytes;
}

// Points the norms and every tensor's q and s into m->memory (already allocated).
static void point_into_memory(tw_q8file *m) {
    const tw_q8file_config *c = &m->cfg;
    float *f = (float *)m->memory;
    m->rms_att = f;
    m->rms_ffn = f + (long long)c->n_layers * c->dim;
    m->rms_final = f + 2LL * c->n_layers * c->dim;
    unsigned char *p = m->memory + 4 * norm_floats(c);
    for (int i = 0; i < m->n_tensors; i++) {
        tw_q8file_tensor *t = &m->tensors[i];
        long long n = (long long)t->rows * t->cols;
        t->q = (int8_t *)p;
        t->s = (float *)(p + padded(n));
        p += padded(n) + 4 * (n / c->group_size);
    }
}

tw_status tw_q8file_alloc(tw_q8file *m, const tw_q8file_config *cfg, char *err, size_t len) {
    memset(m, 0, sizeof *m);
    tw_status st = tw_q8file_check_config(cfg, err, len);
    if (st != TW_OK) return st;
    m->cfg = *cfg;
    m->n_tensors = n_tensors_of(cfg);
    m->tensors = calloc((size_t)m->n_tensors, sizeof *m->tensors);
    if (m->tensors) {
        fill_table(m->tensors, cfg);
        m->n_bytes = memory_bytes(m);
        m->memory = calloc((size_t)m->n_bytes, 1);
    }
    if (!m->tensors || !m->memory) {
        tw_q8file_free(m);
        if (err && len) snprintf(err, len, "out of memory for a %lld-byte model", (long long)tw_q8file_size(cfg));
        return TW_ERR_NOMEM;
    }
    point_into_memory(m);
    return TW_OK;
}

void tw_q8file_free(tw_q8file *m) {
    if (!m) return;
    free(m->tensors);
    free(m->memory);
    memset(m, 0, sizeof *m);
}

const tw_q8file_tensor *tw_q8file_find(const tw_q8file *m, const char *name) {
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return &m->tensors[i];
    return NULL;
}

// ---- the header, byte by byte ----

static void put_u32(unsigned char *b, uint32_t v) {
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}
static int32_t get_i32(const unsigned char *b) {
    uint32_t u = get_u32(b);
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static void build_header(unsigned char h[TW_Q8FILE_HEADER], const tw_q8file_config *c) {
    memset(h, 0, TW_Q8FILE_HEADER);
    put_u32(h, TW_Q8FILE_MAGIC);
    put_u32(h + 4, TW_Q8FILE_VERSION);
    const int v[7] = { c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len };
    for (int i = 0; i < 7; i++) put_u32(h + 8 + 4 * i, (uint32_t)v[i]);
    h[36] = (unsigned char)c->shared_classifier;
    put_u32(h + 37, (uint32_t)c->group_size);
}

static void parse_header(tw_q8file_config *c, const unsigned char h[TW_Q8FILE_HEADER]) {
    c->dim = get_i32(h + 8);        c->hidden_dim = get_i32(h + 12); c->n_layers = get_i32(h + 16);
    c->n_heads = get_i32(h + 20);   c->n_kv_heads = get_i32(h + 24); c->vocab_size = get_i32(h + 28);
    c->seq_len = get_i32(h + 32);   c->shared_classifier = h[36];    c->group_size = get_i32(h + 37);
}

// ---- the arrays after the header, in file order ----

// Reads (write = 0) or writes (write = 1) the norms, then each tensor's q and s, back to back
// as in the file. Returns 1 on success.
static int transfer(void *p, size_t n, FILE *f, int write) {
    return (write ? fwrite(p, 1, n, f) : fread(p, 1, n, f)) == n;
}

static int transfer_arrays(tw_q8file *m, FILE *f, int write) {
    if (!transfer(m->memory, (size_t)(4 * norm_floats(&m->cfg)), f, write)) return 0;
    for (int i = 0; i < m->n_tensors; i++) {
        long long n = (long long)m->tensors[i].rows * m->tensors[i].cols;
        if (!transfer(m->tensors[i].q, (size_t)n, f, write) ||
            !transfer(m->tensors[i].s, (size_t)(4 * (n / m->cfg.group_size)), f, write))
            return 0;
    }
    return 1;
}

// ---- reading ----

static tw_status fail(tw_q8file *m, FILE *f, tw_status st, char *err, size_t len, const char *path,
                      const char *what) {
    if (f) fclose(f);
    tw_q8file_free(m);
    if (err && len) snprintf(err, len, "%s: %s", path, what);
    return st;
}

// The largest scale a file may hold. The int8 matvec's reference (tw_q8_matvec_naive,
// lib/quant/q8_0.c) computes each group's term as (float)dot * scale_w * scale_x, where dot, the
// integer dot product of the group, reaches 127 * 127 * gs in magnitude. For that first product
// to be a finite float whatever the activations, scale_w * (127 * 127 * gs) must be finite: at
// most FLT_MAX / (16129 gs), 3.3e33 for gs = 64 (the dequantized weights, scale * 127, are then
// finite too). A larger finite scale (3e38) made the weights and logits +-inf and ./generate
// print <unk> with exit 0. Checked as that float product itself.
static int scale_fits(float s, int gs) { return isfinite(s * (127.0f * 127.0f * (float)gs)); }

// Every norm weight finite; every scale finite, >= 0 and within scale_fits; no int8 value -128.
int tw_q8file_check_values(const tw_q8file *m, char *what, size_t len) {
    const long long nn = norm_floats(&m->cfg);
    const float *norms = (const float *)m->memory;
    for (long long i = 0; i < nn; i++)
        if (!isfinite(norms[i])) {
            snprintf(what, len, "norm weight %lld is %s (not finite)", i, isnan(norms[i]) ? "NaN" : "Inf");
            return 0;
        }
    const int gs = m->cfg.group_size;
    for (int i = 0; i < m->n_tensors; i++) {
        const tw_q8file_tensor *t = &m->tensors[i];
        long long n = (long long)t->rows * t->cols;
        for (long long g = 0; g < n / gs; g++) {
            float s = t->s[g];
            if (!isfinite(s) || s < 0.0f) {
                snprintf(what, len, "scale %lld of tensor %s is %g: scales must be finite and >= 0",
                         g, t->name, (double)s);
                return 0;
            }
            if (!scale_fits(s, gs)) {
                snprintf(what, len, "scale %lld of tensor %s is %g: too large, scale * 127 * 127 * group "
                         "size %d (a group's largest int8 dot product times its scale) must be a finite "
                         "float: at most %.3g", g, t->name, (double)s, gs, (double)FLT_MAX / (16129.0 * gs));
                return 0;
            }
        }
        for (long long k = 0; k < n; k++)
            if (t->q[k] == -128) {
                snprintf(what, len, "value %lld of tensor %s is -128, outside Q8_0's range [-127, 127]",
                         k, t->name);
                return 0;
            }
    }
    return 1;
}

tw_status tw_q8file_read(tw_q8file *m, const char *path, char *err, size_t len) {
    memset(m, 0, sizeof *m);
    char what[320] = "";
    FILE *f;
    tw_file_open_result fr = tw_regular_file_open(&f, what, sizeof what, path,
                                                  "a llama2.c version-2 checkpoint file (.bin)");
    if (fr == TW_FILE_NOT_REGULAR) return fail(m, NULL, TW_ERR_IO, err, len, path, what);
    if (fr != TW_FILE_OK) return fail(m, NULL, TW_ERR_IO, err, len, path, "cannot open the file");
    unsigned char h[TW_Q8FILE_HEADER];
    size_t got = fread(h, 1, sizeof h, f);
    if (got >= 4 && get_u32(h) != TW_Q8FILE_MAGIC) {
        snprintf(what, sizeof what, "bad magic 0x%08x: not a llama2.c version-2 checkpoint (expected "
                 "0x616b3432, \"ak42\"; a version-0 file is read by the fp32 loader)", (unsigned)get_u32(h));
        return fail(m, f, TW_ERR_FORMAT, err, len, path, what);
    }
    if (got >= 8 && get_i32(h + 4) != TW_Q8FILE_VERSION) {
        snprintf(what, sizeof what, "version %d is not 2 (only llama2.c's Q8_0 version 2 is read here)",
                 (int)get_i32(h + 4));
        return fail(m, f, TW_ERR_FORMAT, err, len, path, what);
    }
    if (got < sizeof h) {
        snprintf(what, sizeof what, "too short (%zu bytes) for the 256-byte version-2 header: truncated", got);
        return fail(m, f, TW_ERR_FORMAT, err, len, path, what);
    }
    tw_q8file_config cfg;
    parse_header(&cfg, h);
    if (tw_q8file_check_config(&cfg, what, sizeof what) != TW_OK)
        return fail(m, f, TW_ERR_FORMAT, err, len, path, what);
    if (fseek(f, 0, SEEK_END) != 0) return fail(m, f, TW_ERR_IO, err, len, path, "cannot seek");
    long long file_bytes = ftell(f);
    long long want = tw_q8file_size(&cfg);
    if (want < 0) return fail(m, f, TW_ERR_NOMEM, err, len, path, "out of memory");
    if (file_bytes != want) {
        snprintf(what, sizeof what, "%lld bytes, but its header implies %lld: %s", file_bytes, want,
                 file_bytes < want ? "truncated" : "extra bytes at the end");
        return fail(m, f, TW_ERR_FORMAT, err, len, path, what);
    }
    tw_status st = tw_q8file_alloc(m, &cfg, what, sizeof what);
    if (st != TW_OK) return fail(m, f, st, err, len, path, what);
    if (fseek(f, TW_Q8FILE_HEADER, SEEK_SET) != 0 || !transfer_arrays(m, f, 0))
        return fail(m, f, TW_ERR_IO, err, len, path, "read failed");
    fclose(f);
    if (!tw_q8file_check_values(m, what, sizeof what)) return fail(m, NULL, TW_ERR_FORMAT, err, len, path, what);
    return TW_OK;
}

// ---- writing ----

tw_status tw_q8file_write(const char *path, const tw_q8file *m, char *err, size_t len) {
    char what[256];
    if (tw_q8file_check_config(&m->cfg, what, sizeof what) != TW_OK) {
        if (err && len) snprintf(err, len, "%s: not written: %s", path, what);
        return TW_ERR_ARG;
    }
    unsigned char h[TW_Q8FILE_HEADER];
    build_header(h, &m->cfg);
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "wb") != TW_OK) {
        if (err && len) snprintf(err, len, "%s: cannot create the file", path);
        return TW_ERR_IO;
    }
    int ok = fwrite(h, 1, sizeof h, af.f) == sizeof h;
    ok = ok && transfer_arrays((tw_q8file *)m, af.f, 1);
    if (tw_atomic_commit(&af, ok) != TW_OK) {
        if (err && len) snprintf(err, len, "%s: write failed (disk full?); no file was left behind", path);
        return TW_ERR_IO;
    }
    return TW_OK;
}
