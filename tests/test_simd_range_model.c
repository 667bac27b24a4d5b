// test_simd_range_model.c: the SIMD levels inside the real model when its activations are huge.
// issue 16: stories260K with layer 1's FFN gate weights scaled by 1e37 (every weight finite; the
// activations leaving layer 1 reach about 8e36). RMSNorm is scale-invariant and the naive model
// (norm.c) sums the squares in double, so it still writes a sensible story; a vector RMSNorm that
// summed in float overflowed to inf and wrote zeros (and <unk> tokens) at AVX2 and AVX-512. Here
// each level this CPU has must give the naive dump within the existing SIMD tolerance and the
// same greedy text.
#define _POSIX_C_SOURCE 200809L   // mkdtemp
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/llama2c.h"
#include "formats/npy.h"
#include "simd/simd.h"

#define MODEL "data/models/stories260K.bin"
#define TOK   "data/models/tok512.bin"
#define GATE_SCALE 1e37f
#define SCALED_LAYER 1

// Writes a copy of MODEL to path with layer SCALED_LAYER's gate weights (llama2.c's w1, the
// branch that goes through SiLU) multiplied by GATE_SCALE. The offset follows llama2.c's file
// layout (header; tok_emb, rms_att, wq, wk, wv, wo, rms_ffn, then w1 for every layer); that it is
// the gate the model runs is then checked through the loader's own map (ffn_gate of the layer).
static void write_scaled_gate_model(const char *path) {
    FILE *in = fopen(MODEL, "rb");
    ck_assert_msg(in != NULL, "cannot open %s (run `make model`)", MODEL);
    ck_assert_int_eq(fseek(in, 0, SEEK_END), 0);
    long bytes = ftell(in);
    ck_assert_int_gt(bytes, 28);
    rewind(in);
    unsigned char *buf = malloc((size_t)bytes);
    ck_assert(buf != NULL);
    ck_assert_int_eq(fread(buf, 1, (size_t)bytes, in), bytes);
    fclose(in);
    int32_t h[7];   // dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab (< 0: own head), seq_len
    memcpy(h, buf, sizeof h);
    const long C = h[0], F = h[1], L = h[2], KV = (long)h[4] * (h[0] / h[3]), V = labs((long)h[5]);
    ck_assert_int_gt(L, SCALED_LAYER);
    const long first = V * C + L * C + L * C * C + 2 * L * KV * C + L * C * C + L * C
                     + SCALED_LAYER * F * C;        // w1 of layer SCALED_LAYER: (F, C)
    ck_assert_int_le(28 + 4 * (first + F * C), bytes);
    float *gate = malloc((size_t)(F * C) * sizeof(float));
    ck_assert(gate != NULL);
    memcpy(gate, buf + 28 + 4 * first, (size_t)(F * C) * sizeof(float));
    float biggest = 0.0f;
    for (long i = 0; i < F * C; i++) {
        gate[i] *= GATE_SCALE;
        ck_assert(isfinite(gate[i]));
        if (fabsf(gate[i]) > biggest) biggest = fabsf(gate[i]);
    }
    ck_assert(biggest > 1e35f);   // the scaling did happen, and stayed finite
    memcpy(buf + 28 + 4 * first, gate, (size_t)(F * C) * sizeof(float));
    FILE *out = fopen(path, "wb");
    ck_assert(out != NULL);
    ck_assert_int_eq(fwrite(buf, 1, (size_t)bytes, out), bytes);
    ck_assert_int_eq(fclose(out), 0);
    free(buf);

    tw_model m;
    char err[512];
    ck_assert_msg(tw_llama2c_load(&m, path, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_msg(memcmp(m.layers[SCALED_LAYER].ffn_gate.f32, gate, (size_t)(F * C) * sizeof(float)) == 0,
                  "the scaled floats are not layer %d's ffn_gate in the loaded model", SCALED_LAYER);
    tw_model_free(&m);
    free(gate);
}

// The largest |value| of one dumped tensor.
static double max_abs(const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    tw_npy a;
    ck_assert_msg(tw_npy_read(&a, path, NULL, 0) == TW_OK, "cannot read %s", path);
    double m = 0;
    for (long i = 0; i < a.count; i++) m = fmax(m, fabs((double)((const float *)a.data)[i]));
    tw_npy_free(&a);
    return m;
}

// Compares the dump at `level` with the naive one, tensor by tensor, at the tolerance that
// test_simd_model.c derives for this model's dump: rtol 1e-3 (a dot product of length <= 172 is
// within 2 K u of sum|a b|, a few kernels per layer, five layers) and atol 1e-4 for entries near
// zero, whose error is relative to sum|a b| (about 1-10 in this model), not to the entry. The
// tensors that carry the scaled gate (layer 1's ffn_gate, ffn_act, ffn_out, and the residual
// stream from there on: resid_post, attn_in, resid_mid of later layers; found as those whose
// naive max |value| exceeds 1e30) have every sum|a b| multiplied by up to GATE_SCALE, so their
// absolute term is 1e-4 * GATE_SCALE: the same bound, scaled. Everything else (the normed
// branches from L2.attn_norm on, since RMSNorm is scale-invariant, and the logits) gets the
// unscaled one.
// The two groups go to ./npydiff as two pairs of folders of symbolic links.
static void compare_dumps(const char *dir, const char *level) {
    static const char *const groups[2] = { "small", "big" };
    char path[700], target[700], naive[400];
    snprintf(naive, sizeof naive, "%s/dump_naive", dir);
    for (int g = 0; g < 2; g++)
        for (int side = 0; side < 2; side++) {
            snprintf(path, sizeof path, "%s/cmp_%s", dir, level);
            mkdir(path, 0777);
            snprintf(path, sizeof path, "%s/cmp_%s/%c_%s", dir, level, "ab"[side], groups[g]);
            ck_assert_msg(mkdir(path, 0777) == 0, "mkdir %s", path);
        }
    DIR *d = opendir(naive);
    ck_assert_msg(d != NULL, "cannot list %s", naive);
    int count[2] = { 0, 0 };
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".npy") != 0) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name);
        int g = max_abs(naive, name) > 1e30;
        count[g]++;
        for (int side = 0; side < 2; side++) {
            snprintf(target, sizeof target, "../../dump_%s/%s", side ? "naive" : level, e->d_name);
            snprintf(path, sizeof path, "%s/cmp_%s/%c_%s/%s", dir, level, "ab"[side], groups[g],
                     e->d_name);
            ck_assert_msg(symlink(target, path) == 0, "symlink %s", path);
        }
    }
    closedir(d);
    ck_assert_int_ge(count[1], 5);    // at least L1's ffn_gate, ffn_act, ffn_out, resid_post, L2.attn_in
    ck_assert_int_ge(count[0], 60);   // and most of the 94 tensors are ordinary
    for (int g = 0; g < 2; g++) {
        char cmd[2048], want[64];
        snprintf(cmd, sizeof cmd, "./npydiff %s/cmp_%s/a_%s %s/cmp_%s/b_%s --atol %g --rtol 1e-3",
                 dir, level, groups[g], dir, level, groups[g], g ? 1e-4 * GATE_SCALE : 1e-4);
        snprintf(want, sizeof want, "\n%d passed, 0 failed\n", count[g]);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 0 && strstr(r.out, want) != NULL, "level %s vs naive (%s tensors): %.1500s",
                      level, groups[g], r.out);
        tt_run_free(&r);
    }
}

START_TEST(scaled_gate_model_gives_the_naive_dump_and_story_at_every_level)
{
    const char *tmp = getenv("TMPDIR");
    char dir[256], model[300], cmd[2048];
    snprintf(dir, sizeof dir, "%s/tw_scaled_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert(mkdtemp(dir) != NULL);
    snprintf(model, sizeof model, "%s/scaled_gate.bin", dir);
    write_scaled_gate_model(model);

    const char *prompt = "Once upon a time there was a little girl";
    char *want_text = NULL;
    char levels[64];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    int compared = 0;
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        char dump[300];
        snprintf(dump, sizeof dump, "%s/dump_%s", dir, lv);
        snprintf(cmd, sizeof cmd, "./generate %s -z " TOK " -t 0 -n 1 -i \"%s\" --simd %s --dump %s",
                 model, prompt, lv, dump);
        run_result r = tt_run(cmd);
        ck_assert_msg(r.rc == 0, "%.500s: %.500s", cmd, r.err);
        tt_run_free(&r);
        // The greedy story (prefill through the matmul, then decode through the cache).
        snprintf(cmd, sizeof cmd, "./generate %s -z " TOK " -t 0 -n 48 -i \"%s\" --simd %s",
                 model, prompt, lv);
        r = tt_run(cmd);
        ck_assert_msg(r.rc == 0, "%.500s: %.500s", cmd, r.err);
        ck_assert_msg(strstr(r.out, "<unk>") == NULL, "level %s printed <unk>: %s", lv, r.out);
        if (strcmp(lv, "naive") == 0) {
            // The premise: the activations are huge, the norm after them is not.
            ck_assert_msg(max_abs(dump, "L2.attn_in") > 1e35, "layer 1's output is not huge");
            double norm = max_abs(dump, "L2.attn_norm");
            ck_assert_msg(norm > 0.1 && norm < 100, "naive L2.attn_norm max %g", norm);
            want_text = strdup(r.out);
        } else {
            ck_assert_msg(want_text != NULL, "naive must be the first level listed");
            ck_assert_str_eq(r.out, want_text);
            compare_dumps(dir, lv);
            compared++;
        }
        tt_run_free(&r);
    }
    free(want_text);
    ck_assert_int_eq(tt_remove_tree(dir), 0);
    // On a CPU without AVX2 only the naive level exists: the premise is still checked above.
    if (strcmp(tw_simd_available(), "naive") != 0) ck_assert_int_gt(compared, 0);
}
END_TEST

Suite *suite_simd_range_model(void) {
    Suite *s = suite_create("simd_range_model");
    TCase *tc = tcase_create("scaled_gate");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, scaled_gate_model_gives_the_naive_dump_and_story_at_every_level);
    suite_add_tcase(s, tc);
    return s;
}
