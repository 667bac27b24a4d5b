// test_q8file.c: llama2.c's version-2 file (lib/quant/q8file.c). A written file is compared byte
// for byte with bytes this test builds on its own from the table in docs/quantization.md (offsets,
// field order, tensor order, int8 then scales), for a shared and a separate classifier; the file
// reads back equal; and invalid models are refused before anything is written. Tolerance: none,
// every comparison is exact (bytes).
#define _POSIX_C_SOURCE 200809L   // getpid
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "quant/q8file.h"

// A tiny model: C = 8, F = 12, L = 2, H = 2, G = 1 (D = 4, KV = 4), V = 10, seq 16, gs = 4.
static tw_q8file_config tiny(int shared) {
    return (tw_q8file_config){ 8, 12, 2, 2, 1, 10, 16, shared, 4 };
}

// The value stored at index k of tensor kind t (0 = tok_embeddings, 1..7 = wq..w3, 8 = output)
// of layer l, and the scale of its group g: functions of (t, l, index) only, so the expected
// bytes can be built from the documented order without looking at the library's table.
static int8_t qval(int t, int l, long k) { return (int8_t)((t * 31 + l * 17 + k * 7) % 255 - 127); }
static float sval(int t, int l, long g) { return 0.001f * (float)(t * 100 + l * 10 + g + 1); }
static float normval(int which, long i) { return 1.0f + 0.25f * (float)which + 0.0625f * (float)i; }

static const char *const KIND[9] = { "tok_embeddings", "attention.wq", "attention.wk", "attention.wv",
                                     "attention.wo", "feed_forward.w1", "feed_forward.w2",
                                     "feed_forward.w3", "output" };

static void fill(tw_q8file *m) {
    const tw_q8file_config *c = &m->cfg;
    for (long i = 0; i < (long)c->n_layers * c->dim; i++) {
        m->rms_att[i] = normval(0, i);
        m->rms_ffn[i] = normval(1, i);
    }
    for (long i = 0; i < c->dim; i++) m->rms_final[i] = normval(2, i);
    for (int t = 0; t < 9; t++)
        for (int l = 0; l < ((t == 0 || t == 8) ? 1 : c->n_layers); l++) {
            char name[64];
            if (t == 0 || t == 8) snprintf(name, sizeof name, "%s", KIND[t]);
            else snprintf(name, sizeof name, "layers.%d.%s", l, KIND[t]);
            const tw_q8file_tensor *x = tw_q8file_find(m, name);
            if (t == 8 && c->shared_classifier) { ck_assert_ptr_null(x); continue; }
            ck_assert_msg(x != NULL, "no tensor %s", name);
            long n = (long)x->rows * x->cols;
            for (long k = 0; k < n; k++) x->q[k] = qval(t, l, k);
            for (long g = 0; g < n / c->group_size; g++) x->s[g] = sval(t, l, g);
        }
}

// ---- the expected bytes, from docs/quantization.md ----

typedef struct { unsigned char *b; long n, cap; } buf;
static void put(buf *o, const void *p, long n) {
    if (o->n + n > o->cap) { o->cap = 2 * (o->n + n); o->b = realloc(o->b, (size_t)o->cap); }
    ck_assert_ptr_nonnull(o->b);
    memcpy(o->b + o->n, p, (size_t)n);
    o->n += n;
}
static void put_le32(buf *o, uint32_t v) {
    unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24) };
    put(o, b, 4);
}
static void put_f32(buf *o, float f) { uint32_t u; memcpy(&u, &f, 4); put_le32(o, u); }

static buf expected_bytes(const tw_q8file_config *c) {
    buf o = { NULL, 0, 0 };
    const unsigned char magic[4] = { 0x32, 0x34, 0x6b, 0x61 };   // 0x616b3432 little-endian
    put(&o, magic, 4);
    put_le32(&o, 2);
    const int v[7] = { c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len };
    for (int i = 0; i < 7; i++) put_le32(&o, (uint32_t)v[i]);
    unsigned char flag = (unsigned char)c->shared_classifier;
    put(&o, &flag, 1);                                       // offset 36
    put_le32(&o, (uint32_t)c->group_size);                   // offset 37
    ck_assert_int_eq(o.n, 41);
    unsigned char zeros[256] = { 0 };
    put(&o, zeros, 256 - 41);
    for (long i = 0; i < (long)c->n_layers * c->dim; i++) put_f32(&o, normval(0, i));
    for (long i = 0; i < (long)c->n_layers * c->dim; i++) put_f32(&o, normval(1, i));
    for (long i = 0; i < c->dim; i++) put_f32(&o, normval(2, i));
    const int C = c->dim, F = c->hidden_dim, KV = c->n_kv_heads * (c->dim / c->n_heads), V = c->vocab_size;
    const int rows[9] = { V, C, KV, KV, C, F, C, F, V }, cols[9] = { C, C, C, C, C, C, F, C, C };
    for (int t = 0; t < 9; t++) {
        if (t == 8 && c->shared_classifier) break;
        for (int l = 0; l < ((t == 0 || t == 8) ? 1 : c->n_layers); l++) {
            long n = (long)rows[t] * cols[t];
            for (long k = 0; k < n; k++) { int8_t q = qval(t, l, k); put(&o, &q, 1); }
            for (long g = 0; g < n / c->group_size; g++) put_f32(&o, sval(t, l, g));
        }
    }
    return o;
}

static unsigned char *slurp_file(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)(*len > 0 ? *len : 1));
    if (b && fread(b, 1, (size_t)*len, f) != (size_t)*len) { free(b); b = NULL; }
    fclose(f);
    return b;
}

START_TEST(written_file_matches_the_documented_layout_byte_for_byte)
{
    tw_q8file_config cfg = tiny(_i);   // _i = 0: separate classifier, 1: shared
    tw_q8file m;
    char err[256] = "", path[256];
    ck_assert_int_eq(tw_q8file_alloc(&m, &cfg, err, sizeof err), TW_OK);
    fill(&m);
    snprintf(path, sizeof path, "/tmp/tw_test_q8file_%ld_%d.bin", (long)getpid(), _i);
    ck_assert_int_eq(tw_q8file_write(path, &m, err, sizeof err), TW_OK);

    long len = 0;
    unsigned char *got = slurp_file(path, &len);
    buf want = expected_bytes(&cfg);
    ck_assert_ptr_nonnull(got);
    ck_assert_int_eq(len, want.n);
    ck_assert_int_eq(len, tw_q8file_size(&cfg));
    for (long i = 0; i < len; i++)
        ck_assert_msg(got[i] == want.b[i], "byte %ld: got 0x%02x want 0x%02x", i, got[i], want.b[i]);

    // ... and it reads back to the same model
    tw_q8file r;
    ck_assert_int_eq(tw_q8file_read(&r, path, err, sizeof err), TW_OK);
    ck_assert_int_eq(r.n_tensors, m.n_tensors);
    ck_assert_int_eq(r.n_tensors, 1 + 7 * 2 + (_i ? 0 : 1));
    ck_assert_mem_eq(&r.cfg, &m.cfg, sizeof r.cfg);
    ck_assert_mem_eq(r.memory, m.memory, (size_t)m.n_bytes);
    tw_q8file_free(&r);
    tw_q8file_free(&m);
    free(got); free(want.b);
    remove(path);
}
END_TEST

// A group size that does not divide a row width is refused before anything exists.
START_TEST(invalid_models_are_refused_with_a_reason)
{
    tw_q8file m;
    char err[256] = "";
    tw_q8file_config c = tiny(1);
    c.group_size = 8;   // divides C = 8 but not F = 12
    ck_assert_int_eq(tw_q8file_alloc(&m, &c, err, sizeof err), TW_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(err, "hidden_dim 12"));
    c = tiny(1);
    c.group_size = 0;
    ck_assert_int_eq(tw_q8file_alloc(&m, &c, err, sizeof err), TW_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(err, "group size 0"));
    c = tiny(2);
    ck_assert_int_eq(tw_q8file_alloc(&m, &c, err, sizeof err), TW_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(err, "shared_classifier"));
    ck_assert_int_eq(tw_q8file_read(&m, "/nonexistent/q8.bin", err, sizeof err), TW_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/q8.bin"));
}
END_TEST

Suite *suite_q8file(void) {
    Suite *s = suite_create("q8file");
    TCase *tc = tcase_create("layout");
    tcase_add_loop_test(tc, written_file_matches_the_documented_layout_byte_for_byte, 0, 2);
    tcase_add_test(tc, invalid_models_are_refused_with_a_reason);
    suite_add_tcase(s, tc);
    return s;
}
