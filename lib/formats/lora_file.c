// lora_file.c: the LoRA adapters file (see lora_file.h).
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/atomic_file.h"
#include "formats/lora_file.h"
#include "formats/regular_file.h"

enum { NAME_BYTES = 8, FIXED_BYTES = 20 };
// The largest file the loader reads whole: far beyond any adapters of a model this toolkit runs.
#define MAX_FILE_BYTES (1LL << 32)

long tw_lora_file_header_bytes(int n_targets) { return FIXED_BYTES + (long)NAME_BYTES * n_targets; }

static uint32_t get_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int32_t get_i32(const unsigned char *p) {
    const uint32_t u = get_u32(p);
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

static float get_f32(const unsigned char *p) {
    const uint32_t u = get_u32(p);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

static void put_u32(unsigned char *p, uint32_t u) {
    p[0] = (unsigned char)u; p[1] = (unsigned char)(u >> 8);
    p[2] = (unsigned char)(u >> 16); p[3] = (unsigned char)(u >> 24);
}

// The target kind named by an 8-byte field: ASCII letters and digits, then only zero bytes.
// -1 if it is not one of the seven names.
static int parse_name(const unsigned char *field) {
    char name[NAME_BYTES + 1];
    int len = 0;
    while (len < NAME_BYTES && field[len]) len++;
    for (int i = len; i < NAME_BYTES; i++)
        if (field[i]) return -1;   // bytes after the terminating zero
    memcpy(name, field, (size_t)len);
    name[len] = '\0';
    return tw_lora_target_parse(name);
}

tw_status tw_lora_file_parse(tw_lora_set *s, const unsigned char *bytes, size_t n,
                             const tw_model_config *c, char *err, size_t err_len) {
    memset(s, 0, sizeof *s);
    if (n < FIXED_BYTES || memcmp(bytes, "lora", 4) != 0) {
        tw_set_err(err, err_len, "not a LoRA adapters file (it must start with the 4 bytes \"lora\" "
                   "and a 20-byte header; %zu bytes); pass a file written by ./train --lora --out", n);
        return TW_ERR_FORMAT;
    }
    const int32_t version = get_i32(bytes + 4), r = get_i32(bytes + 8), n_targets = get_i32(bytes + 16);
    const float alpha = get_f32(bytes + 12);
    if (version != TW_LORA_FILE_VERSION) {
        tw_set_err(err, err_len, "adapters file version %d; this toolkit reads version %d",
                   (int)version, TW_LORA_FILE_VERSION);
        return TW_ERR_FORMAT;
    }
    if (r < 1 || r > TW_LORA_MAX_R) {
        tw_set_err(err, err_len, "rank r = %d in the header; it must be 1 .. %d", (int)r, TW_LORA_MAX_R);
        return TW_ERR_FORMAT;
    }
    if (!isfinite(alpha) || alpha <= 0.0f) {
        tw_set_err(err, err_len, "alpha = %g in the header; it must be finite and > 0", (double)alpha);
        return TW_ERR_FORMAT;
    }
    if (n_targets < 1 || n_targets > TW_LORA_N_KINDS) {
        tw_set_err(err, err_len, "%d targets in the header; it must be 1 .. %d", (int)n_targets, TW_LORA_N_KINDS);
        return TW_ERR_FORMAT;
    }
    const long header = tw_lora_file_header_bytes(n_targets);
    if ((long long)n < header) {
        tw_set_err(err, err_len, "%zu bytes: too short for the header of %d targets (%ld bytes)", n,
                   (int)n_targets, header);
        return TW_ERR_FORMAT;
    }
    int targets[TW_LORA_N_KINDS];
    for (int i = 0; i < n_targets; i++) {
        targets[i] = parse_name(bytes + FIXED_BYTES + NAME_BYTES * i);
        if (targets[i] < 0) {
            tw_set_err(err, err_len, "target %d is not one of wq, wk, wv, wo, w1, w2, w3 (8 bytes of "
                       "ASCII padded with zero bytes)", i);
            return TW_ERR_FORMAT;
        }
        for (int j = 0; j < i; j++)
            if (targets[j] == targets[i]) {
                tw_set_err(err, err_len, "target %s is named twice", tw_lora_target_name(targets[i]));
                return TW_ERR_FORMAT;
            }
        int out, in;
        if (tw_lora_target_shape(&out, &in, c, targets[i]) != TW_OK) {
            tw_set_err(err, err_len, "target %s: the base model has no such Linear (w3 needs a SwiGLU "
                       "FFN); these adapters were made for another model", tw_lora_target_name(targets[i]));
            return TW_ERR_SHAPE;
        }
    }
    const long floats = tw_lora_set_floats(c, r, targets, n_targets);
    const long long want = header + 4LL * floats;
    if ((long long)n != want) {
        tw_set_err(err, err_len, "%zu bytes, but r = %d on %d target(s) of this base model's %d layers "
                   "needs exactly %lld (header %ld + %ld floats): adapters for another model, or a "
                   "truncated file", n, (int)r, (int)n_targets, c->n_layer, want, header, floats);
        return TW_ERR_SHAPE;
    }
    const unsigned char *data = bytes + header;
    for (long i = 0; i < floats; i++)
        if (!isfinite(get_f32(data + 4 * i))) {
            tw_set_err(err, err_len, "adapter float %ld (byte %ld) is not finite", i, header + 4 * i);
            return TW_ERR_FORMAT;
        }
    tw_status st = tw_lora_set_init(s, c, r, alpha, targets, n_targets);
    if (st != TW_OK) {
        tw_set_err(err, err_len, "out of memory for %ld adapter floats", floats);
        return st;
    }
    for (long i = 0; i < floats; i++) s->memory[i] = get_f32(data + 4 * i);
    return TW_OK;
}

tw_status tw_lora_file_load(tw_lora_set *s, const char *path, const tw_model_config *c,
                            char *err, size_t err_len) {
    memset(s, 0, sizeof *s);
    long long bytes = 0;
    FILE *f = tw_regular_file_open_measured(&bytes, err, err_len, path, "a LoRA adapters file",
                                            "cannot open the adapters file");
    if (!f) return TW_ERR_IO;
    if (bytes > MAX_FILE_BYTES) {
        fclose(f);
        tw_set_err(err, err_len, "%s: %lld bytes: too large for a LoRA adapters file", path, bytes);
        return TW_ERR_FORMAT;
    }
    unsigned char *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!buf) {
        fclose(f);
        tw_set_err(err, err_len, "%s: out of memory for %lld bytes", path, bytes);
        return TW_ERR_NOMEM;
    }
    const size_t got = fread(buf, 1, (size_t)bytes, f);
    fclose(f);
    if (got != (size_t)bytes) {
        free(buf);
        tw_set_err(err, err_len, "%s: read error after %zu of %lld bytes", path, got, bytes);
        return TW_ERR_IO;
    }
    char why[400] = "";
    tw_status st = tw_lora_file_parse(s, buf, (size_t)bytes, c, why, sizeof why);
    free(buf);
    if (st != TW_OK) tw_set_err(err, err_len, "%s: %s", path, why);
    return st;
}

tw_status tw_lora_file_write(const char *path, const tw_lora_set *s, char *err, size_t err_len) {
    unsigned char head[FIXED_BYTES + NAME_BYTES * TW_LORA_N_KINDS];
    memset(head, 0, sizeof head);
    memcpy(head, "lora", 4);
    put_u32(head + 4, TW_LORA_FILE_VERSION);
    put_u32(head + 8, (uint32_t)s->r);
    uint32_t a;
    memcpy(&a, &s->alpha, 4);
    put_u32(head + 12, a);
    put_u32(head + 16, (uint32_t)s->n_targets);
    for (int i = 0; i < s->n_targets; i++) {
        const char *name = tw_lora_target_name(s->targets[i]);
        memcpy(head + FIXED_BYTES + NAME_BYTES * i, name, strlen(name));
    }
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "wb") != TW_OK) {
        tw_set_err(err, err_len, "%s: cannot create: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    int ok = fwrite(head, 1, (size_t)tw_lora_file_header_bytes(s->n_targets), af.f)
             == (size_t)tw_lora_file_header_bytes(s->n_targets);
    for (long i = 0; ok && i < s->n_floats; i++) {
        unsigned char b[4];
        uint32_t u;
        memcpy(&u, &s->memory[i], 4);
        put_u32(b, u);
        ok = fwrite(b, 1, 4, af.f) == 4;
    }
    if (tw_atomic_commit(&af, ok) != TW_OK) {
        tw_set_err(err, err_len, "%s: write failed: %s", path, strerror(errno));
        return TW_ERR_IO;
    }
    return TW_OK;
}
