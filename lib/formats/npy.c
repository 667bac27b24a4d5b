// npy.c: NumPy .npy format 1.0 (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
//   6 bytes "\x93NUMPY", 2 bytes version (1, 0), uint16 little-endian header length, then an ASCII
//   Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
//   spaces and ended by '\n' so that the data starts at a multiple of 64 bytes, then the raw data.
// Only little-endian hosts are supported for the raw data (every machine the course targets).
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/npy.h"
#include "formats/atomic_file.h"
#include "formats/regular_file.h"

static const char *dtype_descr(tw_npy_dtype d) { return d == TW_NPY_I32 ? "<i4" : "<f4"; }

static void set_err(char *err, size_t len, const char *msg) {
    if (err && len) snprintf(err, len, "%s", msg);
}

tw_status tw_npy_write(const char *path, tw_npy_dtype dtype, const void *data,
                       const long *shape, int ndim) {
    if (ndim < 0 || ndim > TW_NPY_MAX_DIMS) return TW_ERR_ARG;
    char header[512];
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     dtype_descr(dtype));
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return TW_ERR_ARG;
        n += snprintf(header + n, sizeof header - (size_t)n, "%ld%s", shape[i],
                      ndim == 1 ? "," : (i + 1 < ndim ? ", " : ""));
        count *= (size_t)shape[i];
    }
    n += snprintf(header + n, sizeof header - (size_t)n, "), }");
    // Pad with spaces so that 10 + header length (including the final '\n') is a multiple of 64.
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    memset(header + n, ' ', pad);
    header[n + pad] = '\n';
    size_t hlen = (size_t)n + pad + 1;

    tw_atomic_file af;
    tw_status st = tw_atomic_open(&af, path, "wb");
    if (st != TW_OK) return st;
    unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8) };
    int ok = fwrite(pre, 1, 10, af.f) == 10 && fwrite(header, 1, hlen, af.f) == hlen &&
             (count == 0 || fwrite(data, 4, count, af.f) == count);
    return tw_atomic_commit(&af, ok);
}

tw_status tw_npy_write_f32(const char *path, const float *data, const long *shape, int ndim) {
    return tw_npy_write(path, TW_NPY_F32, data, shape, ndim);
}

tw_status tw_npy_write_i32(const char *path, const int32_t *data, const long *shape, int ndim) {
    return tw_npy_write(path, TW_NPY_I32, data, shape, ndim);
}

// Finds the value text after 'key': in the header dict; NULL if absent.
static const char *dict_value(const char *h, const char *key) {
    const char *p = strstr(h, key);
    if (!p) return NULL;
    p += strlen(key);
    while (*p == ' ' || *p == '\'' || *p == '"') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

tw_status tw_npy_read(tw_npy *a, const char *path, char *err, size_t err_len) {
    memset(a, 0, sizeof *a);
    FILE *f;
    char why[160];
    tw_file_open_result fr = tw_regular_file_open(&f, why, sizeof why, path, "a .npy file");
    if (fr == TW_FILE_NOT_REGULAR) { set_err(err, err_len, why); return TW_ERR_IO; }
    if (fr != TW_FILE_OK) { set_err(err, err_len, strerror(errno)); return TW_ERR_IO; }
    tw_status st = TW_ERR_FORMAT;
    char *h = NULL;
    unsigned char pre[10];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        set_err(err, err_len, "not a .npy file (bad magic)"); goto done;
    }
    if (pre[6] != 1) { set_err(err, err_len, "only .npy format version 1.0 is supported"); goto done; }
    size_t hlen = (size_t)pre[8] | ((size_t)pre[9] << 8);
    h = malloc(hlen + 1);
    if (!h) { st = TW_ERR_NOMEM; goto done; }
    if (fread(h, 1, hlen, f) != hlen) { set_err(err, err_len, "header is truncated"); goto done; }
    h[hlen] = '\0';

    const char *d = dict_value(h, "'descr'");
    if (!d) { set_err(err, err_len, "header has no 'descr'"); goto done; }
    if (strncmp(d, "'<f4'", 5) == 0) a->dtype = TW_NPY_F32;
    else if (strncmp(d, "'<i4'", 5) == 0) a->dtype = TW_NPY_I32;
    else { set_err(err, err_len, "dtype is not '<f4' or '<i4' (convert with .astype(np.float32))"); goto done; }
    const char *fo = dict_value(h, "'fortran_order'");
    if (!fo || strncmp(fo, "False", 5) != 0) {
        set_err(err, err_len, "fortran_order arrays are not supported; save with np.ascontiguousarray");
        goto done;
    }
    const char *s = dict_value(h, "'shape'");
    if (!s || *s != '(') { set_err(err, err_len, "header has no shape tuple"); goto done; }
    s++;
    a->count = 1;
    for (;;) {
        while (*s == ' ' || *s == ',') s++;
        if (*s == ')') break;
        if (*s < '0' || *s > '9') { set_err(err, err_len, "malformed shape"); goto done; }
        if (a->ndim == TW_NPY_MAX_DIMS) { set_err(err, err_len, "more than 8 dimensions"); goto done; }
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || v < 0) { set_err(err, err_len, "shape entry out of range"); goto done; }
        if (v > 0 && a->count > LONG_MAX / 4 / v) { set_err(err, err_len, "shape is too large"); goto done; }
        a->shape[a->ndim++] = v;
        a->count *= v;
        s = end;
    }
    // The data must be exactly what the shape promises: compare with the file's real length.
    long data_start = ftell(f);
    if (fseek(f, 0, SEEK_END) != 0) { st = TW_ERR_IO; goto done; }
    long file_len = ftell(f);
    if (data_start < 0 || file_len < 0 || file_len - data_start != a->count * 4) {
        set_err(err, err_len, "file length does not match the shape in its header (truncated?)");
        goto done;
    }
    fseek(f, data_start, SEEK_SET);
    a->data = malloc((size_t)(a->count > 0 ? a->count : 1) * 4);
    if (!a->data) { st = TW_ERR_NOMEM; goto done; }
    if (fread(a->data, 4, (size_t)a->count, f) != (size_t)a->count) {
        set_err(err, err_len, "data is truncated"); goto done;
    }
    st = TW_OK;
done:
    free(h);
    fclose(f);
    if (st != TW_OK) tw_npy_free(a);
    return st;
}

void tw_npy_free(tw_npy *a) {
    free(a->data);
    memset(a, 0, sizeof *a);
}
