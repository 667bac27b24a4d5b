// dump.c: every intermediate of a forward pass as .npy files (see dump.h). The list of tensors,
// their names, shapes and meanings all come from the tables tw_model_tensors and tw_block_tensors.
#define _POSIX_C_SOURCE 200809L   // mkdtemp, rmdir, stat
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "inspect/dump.h"
#include "formats/npy.h"

int tw_dump_includes(const tw_tensor_info *t) {
    return (t->flags & (TW_TENSOR_WORK | TW_TENSOR_STATS)) == 0;
}

// One tensor of the dump: a (T, ...) array assembled from the state after each forward call.
typedef struct {
    char                  name[32];
    const tw_tensor_info *info;
    int                   layer;    // -1 for the model's own tensors
    int                   ndim;
    long                  shape[3];
    float                *data;
} dumped;

static long dumped_count(const dumped *d) {
    long n = 1;
    for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
    return n;
}

// Rows t0 .. t0+n-1 of a (T, row) tensor from an (n, row) array.
static void copy_rows(dumped *d, int t0, const float *src, int n) {
    long row = dumped_count(d) / d->shape[0];
    memcpy(d->data + (size_t)t0 * row, src, (size_t)n * row * sizeof(float));
}

// Rows t0 .. t0+n-1 of an (H, T, T) attention tensor from the state's (H, n, S) array; columns
// S .. T-1 (positions not yet seen when decoding with a cache) get `fill`.
static void copy_attention(dumped *d, int t0, const float *src, int n, int S, float fill) {
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
static void collect(dumped *ts, int n_tensors, const tw_model_state *s, int t0, int n) {
    for (int i = 0; i < n_tensors; i++) {
        dumped *d = &ts[i];
        if (d->layer < 0) {
            copy_rows(d, t0, tw_model_tensor(s, d->info), n);
        } else {
            const tw_block_acts *b = &s->layers[d->layer];
            const float *src = tw_block_tensor(b, d->info);
            if (strcmp(d->info->shape, "HTT") == 0)   // latent attention's map: no cache, t0 0
                memcpy(d->data, src, (size_t)dumped_count(d) * sizeof(float));
            else if (strcmp(d->info->shape, "HTS") == 0)   // an attention map over this call's S keys
                copy_attention(d, t0, src, n, b->attn.S,
                               d->info->flags & TW_TENSOR_MASKED ? -INFINITY : 0.0f);
            else
                copy_rows(d, t0, src, n);
        }
    }
}

// The dump's shape of a table row: its letters at T rows, with S = T (the whole sequence).
static void set_shape(dumped *d, const tw_dims *dims) {
    d->ndim = (int)strlen(d->info->shape);
    for (int i = 0; i < d->ndim; i++) d->shape[i] = tw_dims_of(dims, d->info->shape[i]);
}

// The tensor list in file order: the model's tensors before the layers, each layer's, the rest.
// With ts == NULL only counts.
static int list_tensors(dumped *ts, const tw_model *m, int T) {
    const tw_model_config *c = &m->cfg;
    const tw_dims dims = tw_model_dims(c, T, T);
    int n = 0;
    for (int i = 0; i < tw_model_n_tensors; i++) {
        if (i == tw_model_n_tensors_before) {
            for (int l = 0; l < c->n_layer; l++) {
                for (int k = 0; k < tw_block_n_tensors; k++) {
                    const tw_tensor_info *t = &tw_block_tensors[k];
                    if (!tw_dump_includes(t) || !tw_block_has(&c->block, t->has)) continue;
                    if (ts) {
                        ts[n].info = t;
                        ts[n].layer = l;
                        snprintf(ts[n].name, sizeof ts[n].name, "L%d.%s", l, t->name);
                        set_shape(&ts[n], &dims);
                    }
                    n++;
                }
            }
        }
        const tw_tensor_info *t = &tw_model_tensors[i];
        if (!tw_dump_includes(t) || !tw_model_has(c, t)) continue;
        if (ts) {
            ts[n].info = t;
            ts[n].layer = -1;
            snprintf(ts[n].name, sizeof ts[n].name, "%s", t->name);
            set_shape(&ts[n], &dims);
        }
        n++;
    }
    return n;
}

int tw_model_dump_count(const tw_model *m) {
    return list_tensors(NULL, m, 1);
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

static tw_status write_text_files(const char *tmp, const dumped *ts, int n_tensors, int T,
                                  const int *tokens, const char *const *token_strings) {
    char path[4096], shp[64];
    if (join_path(path, sizeof path, tmp, "manifest.tsv") != TW_OK) return TW_ERR_ARG;
    FILE *f = fopen(path, "w");
    if (f == NULL) return TW_ERR_IO;
    fprintf(f, "name\tshape\tmeaning\n");
    fprintf(f, "tokens\t[%d]\tint32 token ids of the prompt, BOS first\n", T);
    for (int i = 0; i < n_tensors; i++) {
        shape_str(shp, sizeof shp, ts[i].shape, ts[i].ndim);
        fprintf(f, "%s\t%s\t%s\n", ts[i].name, shp, ts[i].info->meaning);
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
static void remove_partial(const char *tmp, const dumped *ts, int n_tensors) {
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
        tw_set_err(err, err_len, "%s: exists and is not a folder", dir);
        return -1;
    }
    if (rmdir(dir) != 0) {
        tw_set_err(err, err_len, "%s: folder exists and is not empty; remove it or choose another", dir);
        return -1;
    }
    return 0;
}

tw_status tw_model_dump(const char *dir, const tw_model *m, const int *tokens, int T,
                        const char *const *token_strings, int use_cache, char *err, size_t err_len) {
    const tw_model_config *c = &m->cfg;
    if (T < 1 || T > c->max_seq) {
        tw_set_err(err, err_len, "%s: %d tokens, but the model takes 1 .. %d", dir, T, c->max_seq);
        return TW_ERR_ARG;
    }
    for (int t = 0; t < T; t++) {
        if (tokens[t] < 0 || tokens[t] >= c->vocab) {
            tw_set_err(err, err_len, "%s: token %d at position %d is outside the vocabulary of %d",
                    dir, tokens[t], t, c->vocab);
            return TW_ERR_SHAPE;
        }
    }
    struct stat sb;
    if (stat(dir, &sb) == 0 && (!S_ISDIR(sb.st_mode))) {
        tw_set_err(err, err_len, "%s: exists and is not a folder", dir);
        return TW_ERR_IO;
    }

    const int n_tensors = list_tensors(NULL, m, T);
    dumped *ts = calloc((size_t)n_tensors, sizeof *ts);
    tw_model_state s;
    memset(&s, 0, sizeof s);
    tw_status st = TW_ERR_NOMEM;
    char tmp[4096] = "";
    if (ts == NULL) { tw_set_err(err, err_len, "%s: out of memory", dir); return st; }
    list_tensors(ts, m, T);
    for (int i = 0; i < n_tensors; i++) {
        ts[i].data = malloc((size_t)dumped_count(&ts[i]) * sizeof(float));
        if (ts[i].data == NULL) { tw_set_err(err, err_len, "%s: out of memory", dir); goto done; }
    }

    // The forward pass: all at once, or one token at a time through the KV cache.
    st = tw_model_state_init(&s, m, use_cache ? 1 : T, use_cache ? T : 0);
    if (st != TW_OK) { tw_set_err(err, err_len, "%s: cannot allocate activations: %s", dir, tw_status_str(st)); goto done; }
    if (use_cache) {
        for (int t = 0; t < T && st == TW_OK; t++) {
            st = tw_model_forward(&s, m, tokens + t, 1, t);
            if (st == TW_OK) collect(ts, n_tensors, &s, t, 1);
        }
    } else {
        st = tw_model_forward(&s, m, tokens, T, 0);
        if (st == TW_OK) collect(ts, n_tensors, &s, 0, T);
    }
    if (st != TW_OK) { tw_set_err(err, err_len, "%s: forward pass failed: %s", dir, tw_status_str(st)); goto done; }

    // Write into a fresh temporary folder beside dir, then rename it into place.
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    if (dl + 16 > sizeof tmp) { st = TW_ERR_ARG; tw_set_err(err, err_len, "%s: path too long", dir); goto done; }
    snprintf(tmp, sizeof tmp, "%.*s.tmp-XXXXXX", (int)dl, dir);
    if (mkdtemp(tmp) == NULL) {
        st = TW_ERR_IO;
        tw_set_err(err, err_len, "%s: cannot create a folder beside it: %s", dir, strerror(errno));
        tmp[0] = '\0';
        goto done;
    }
    char path[4096];
    long tshape[1] = { T };
    int32_t *tok32 = malloc((size_t)T * sizeof *tok32);
    if (tok32 == NULL) { st = TW_ERR_NOMEM; tw_set_err(err, err_len, "%s: out of memory", dir); goto done; }
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
    if (st != TW_OK) { tw_set_err(err, err_len, "%s: cannot write %s: %s", dir, path, strerror(errno)); goto done; }
    if (prepare_target(dir, err, err_len) != 0) { st = TW_ERR_IO; goto done; }
    if (rename(tmp, dir) != 0) {
        st = TW_ERR_IO;
        tw_set_err(err, err_len, "%s: cannot rename %s into place: %s", dir, tmp, strerror(errno));
        goto done;
    }
    tmp[0] = '\0';   // now owned by dir: nothing to clean up
done:
    if (st != TW_OK && tmp[0] != '\0') remove_partial(tmp, ts, n_tensors);
    tw_model_state_free(&s);
    for (int i = 0; i < n_tensors; i++) free(ts[i].data);
    free(ts);
    return st;
}
