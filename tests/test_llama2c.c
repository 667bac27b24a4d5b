// test_llama2c.c: the real model (stories260K) run on the library's functions (lib/formats/llama2c.c):
// the documented greedy story, every dumped tensor against an independent PyTorch float64
// reference, the KV-cache path against recomputing the prefix, the sampler's reproducibility, and
// the checkpoint validation. Needs data/models/ (`make model`; `make test` fetches it).
#define _POSIX_C_SOURCE 200809L   // getpid, mkdir, rmdir
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/llama2c.h"
#include "tokenize/tokenizer.h"
#include "decode/sampler.h"
#include "simd/simd.h"

#define MODEL_PATH "data/models/stories260K.bin"
#define TOK_PATH   "data/models/tok512.bin"

static tw_model load_model(void) {
    tw_model m;
    char err[512] = "";
    tw_status st = tw_llama2c_load(&m, MODEL_PATH, err, sizeof err);
    ck_assert_msg(st == TW_OK, "%s (run `make model`)", err);
    return m;
}

START_TEST(header_is_read_as_documented)
{
    tw_model m = load_model();
    const tw_model_config *c = &m.cfg;
    const tw_mha_config *a = &c->block.attn;
    // ../shared/models/README.md: dim 64, hidden 172, 5 layers, 8 heads, 4 kv heads, vocab 512, seq 512
    ck_assert_int_eq(a->d_model, 64);
    ck_assert_int_eq(c->block.ffn_hidden, 172);
    ck_assert_int_eq(c->n_layer, 5);
    ck_assert_int_eq(a->n_head, 8);
    ck_assert_int_eq(a->n_kv_head, 4);
    ck_assert_int_eq(c->vocab, 512);
    ck_assert_int_eq(c->max_seq, 512);
    ck_assert_int_eq(c->tied, 1);
    ck_assert_ptr_eq(m.head.f32, m.tok_emb);
    ck_assert_int_eq(a->head_dim, 8);
    ck_assert_int_eq(a->rope, TW_ROPE_ADJACENT);
    ck_assert_str_eq(c->style, "llama");
    ck_assert_int_eq(c->block.prenorm, 1);
    ck_assert_int_eq(c->block.norm, TW_NORM_RMS);
    ck_assert_int_eq(c->block.ffn, TW_FFN_SWIGLU);
    ck_assert_int_eq(c->final_norm, 1);
    ck_assert_int_eq(c->bias, 0);
    // every float of the 1056540-byte file except the 28-byte header and the dropped freq_cis
    // tables (seq_len x D/2, twice)
    ck_assert_int_eq(tw_model_count_params(&m), (1056540 - 28) / 4 - 512 * 8);
    // 5 layers x 2 x 512 positions x 4 kv heads x 8 x 4 bytes
    ck_assert_uint_eq(5u * tw_kv_cache_bytes(512, 4, 8), 5u * 2 * 512 * 4 * 8 * 4);
    tw_model_free(&m);
}
END_TEST

// Greedy decoding for 256 positions from BOS, printed by llama2.c's rules, must be the text
// published with the model, character for character (data/stories260K_greedy.txt, copied from
// ../shared/models/README.md; it ends with the newline llama2.c prints last).
START_TEST(greedy_256_positions_from_bos_is_the_documented_story)
{
    tw_model m = load_model();
    tw_tokenizer t;
    char err[256];
    ck_assert_int_eq(tw_tokenizer_load(&t, TOK_PATH, 512, err, sizeof err), TW_OK);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, 1, 256), TW_OK);
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(cap, 1);
    int token = TW_TOK_BOS;
    for (int pos = 0; pos < 256; pos++) {
        ck_assert_int_eq(tw_model_forward_next(&s, &m, &token, 1, pos), TW_OK);
        int next = tw_argmax(s.logits, 512);
        if (next == TW_TOK_BOS) break;
        const char *piece = tw_tokenizer_decode(&t, token, next);
        if (tw_tokenizer_piece_printable(piece)) {
            size_t k = strlen(piece);
            ck_assert_uint_lt(len + k + 2, cap);
            memcpy(out + len, piece, k);
            len += k;
        }
        token = next;
    }
    out[len++] = '\n';
    char *want = (char *)tt_read_file("data/stories260K_greedy.txt", NULL);
    ck_assert_str_eq(out, want);
    free(want);
    free(out);
    tw_model_state_free(&s);
    tw_tokenizer_free(&t);
    tw_model_free(&m);
}
END_TEST

// ---- the dump against PyTorch ----

static void temp_dir(char *path, size_t len, const char *tag) {
    mkdir("out", 0777);   // may exist already
    snprintf(path, len, "out/test_llama2c_%s_%ld", tag, (long)getpid());
}

// Compares every tensor the manifest of dir lists against data/golden/stories/<name>.npy.
static int compare_dump_with_golden(const char *dir, double atol, double rtol) {
    char path[2048], line[512], err[256];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no manifest in %s", dir);
    int compared = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));   // header
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\t\n")] = '\0';
        char golden[600];
        snprintf(golden, sizeof golden, "stories/%s", line);
        tw_npy want = tt_load(golden, -1);
        snprintf(path, sizeof path, "%s/%s.npy", dir, line);
        tw_npy got;
        ck_assert_msg(tw_npy_read(&got, path, err, sizeof err) == TW_OK, "%s: %s", path, err);
        ck_assert_msg(got.ndim == want.ndim && got.count == want.count && got.dtype == want.dtype,
                      "%s: shape or dtype differs from the golden", line);
        for (int i = 0; i < got.ndim; i++) ck_assert_int_eq(got.shape[i], want.shape[i]);
        if (got.dtype == TW_NPY_I32) {
            ck_assert_int_eq(memcmp(got.data, want.data, (size_t)got.count * 4), 0);
        } else {
            long bad = tw_worst_mismatch(got.data, want.data, got.count, atol, rtol);
            ck_assert_msg(bad < 0, "%s[%ld]: got %.9g want %.9g (atol %g, rtol %g)", line, bad,
                          (double)((float *)got.data)[bad < 0 ? 0 : bad],
                          (double)((float *)want.data)[bad < 0 ? 0 : bad], atol, rtol);
        }
        tw_npy_free(&got);
        tw_npy_free(&want);
        compared++;
    }
    fclose(f);
    return compared;
}

// Tolerance: atol 5e-5, rtol 1e-4. The reference is float64 from the same float32 weights; ours
// accumulates in float32 through 5 layers (dot products over 64 and 172 terms, RMSNorm, softmax,
// SiLU), each step ~1e-6 relative, compounding with the residual stream. The largest error seen
// is 1.5e-5 absolute on logits of magnitude ~10 (rel 2e-4 only where a value is near zero), so
// the bound leaves ~3x headroom for other compilers and kernels that reorder sums.
START_TEST(every_dumped_tensor_matches_the_pytorch_float64_reference)
{
    tw_model m = load_model();
    tw_npy toks = tt_load("stories/tokens", -1);
    int T = (int)toks.count, ids[16];
    ck_assert_int_le(T, 16);
    for (int i = 0; i < T; i++) ids[i] = ((int32_t *)toks.data)[i];
    const char *strings[16] = { 0 };
    char dir[256], err[512] = "";
    for (int use_cache = 0; use_cache <= 1; use_cache++) {
        temp_dir(dir, sizeof dir, use_cache ? "dump_cache" : "dump_nocache");
        tt_remove_dump(dir);
        ck_assert_msg(tw_model_dump(dir, &m, ids, T, strings, use_cache, err, sizeof err) == TW_OK, "%s", err);
        int n = compare_dump_with_golden(dir, 5e-5, 1e-4);
        ck_assert_int_eq(n, 1 + 3 + 18 * 5);   // tokens, embed, 18 per layer, final_norm, logits
        tt_remove_dump(dir);
    }
    tw_npy_free(&toks);
    tw_model_free(&m);
}
END_TEST

// The KV-cache path and recomputing the whole prefix: same logits at every step and the same
// greedy tokens. Tolerance atol 1e-5, rtol 1e-5: both paths run the same float32 operations per
// row (a masked key adds an exact zero), so they agree to rounding; today they are bit-identical.
START_TEST(kv_cache_and_full_recompute_agree_at_every_step)
{
    tw_model m = load_model();
    const int steps = 48, V = 512;
    tw_model_state cached, full;
    ck_assert_int_eq(tw_model_state_init(&cached, &m, 4, steps), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&full, &m, steps, 0), TW_OK);
    int seq[48] = { 1, 403, 407, 261 };   // BOS " Once upon a", prefilled in one call
    const int P = 4;
    ck_assert_int_eq(tw_model_forward(&cached, &m, seq, P, 0), TW_OK);
    for (int pos = P - 1; pos < steps - 1; pos++) {
        const float *lc = pos < P ? cached.logits + (size_t)pos * V : cached.logits;
        ck_assert_int_eq(tw_model_forward(&full, &m, seq, pos + 1, 0), TW_OK);
        const float *lf = full.logits + (size_t)pos * V;
        ck_assert_allclose(lc, lf, V, 1e-5, 1e-5);
        // Every earlier row of the full pass is the logits of that prefix (causality).
        if (pos == P - 1)
            for (int p = 0; p < P; p++)
                ck_assert_allclose(cached.logits + (size_t)p * V, full.logits + (size_t)p * V, V, 1e-5, 1e-5);
        int a = tw_argmax(lc, V), b = tw_argmax(lf, V);
        ck_assert_int_eq(a, b);
        seq[pos + 1] = a;
        ck_assert_int_eq(tw_model_forward_next(&cached, &m, &seq[pos + 1], 1, pos + 1), TW_OK);
    }
    tw_model_state_free(&cached);
    tw_model_state_free(&full);
    tw_model_free(&m);
}
END_TEST

START_TEST(forward_rejects_bad_tokens_and_positions)
{
    tw_model m = load_model();
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, 2, 8), TW_OK);
    int bad[2] = { 1, 512 };
    ck_assert_int_eq(tw_model_forward_next(&s, &m, bad, 2, 0), TW_ERR_SHAPE);
    int ok[2] = { 1, 2 };
    ck_assert_int_eq(tw_model_forward_next(&s, &m, ok, 2, 7), TW_ERR_ARG);   // past S_max
    ck_assert_int_eq(tw_model_forward_next(&s, &m, ok, 3, 0), TW_ERR_ARG);   // past T_max
    tw_model_state_free(&s);
    ck_assert_int_eq(tw_model_state_init(&s, &m, 513, 0), TW_ERR_ARG);   // > seq_len
    tw_model_free(&m);
}
END_TEST

// ---- the sampler ----

// tw_argmax at every level (the AVX2 kernel where there is one) gives the loop's index
// (tw_argmax_naive) on the cases that decide it: ties (the first index, within a register, across
// lanes, in the tail), NaNs (never chosen; x[0] NaN gives 0), -0 against +0 (equal: the first),
// infinities, all equal, and lengths around the kernel's register of 8 and its minimum of 16.
START_TEST(argmax_at_every_level_is_the_loops_index)
{
    enum { N_MAX = 32003 };
    float *x = malloc(N_MAX * sizeof *x);
    const int ns[] = { 1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 100, 32000, 32003 };
    char levels[64];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        ck_assert_ptr_nonnull(tw_simd_init(lv));
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
            for (int c = 0; c < 12; c++) {
                const int n = ns[k];
                tw_rng rng;
                tw_rng_init(&rng, (uint64_t)(1000 * k + c + 1));
                for (int i = 0; i < n; i++) x[i] = tw_rng_uniform(&rng) * 2.0f - 1.0f;
                const int a = n / 3, b = n - 1, e = (2 * n) / 3;   // some positions
                switch (c) {
                case 0: break;                                          // random
                case 1: x[b] = x[a] = 5.0f; break;                      // a tie: a first
                case 2: x[a] = NAN; x[e] = 3.0f; break;                 // a NaN before the max
                case 3: x[0] = NAN; x[e] = 3.0f; break;                 // x[0] NaN: 0
                case 4: for (int i = 0; i < n; i++) x[i] = NAN; break;  // all NaN: 0
                case 5: for (int i = 0; i < n; i++) x[i] = 1.0f; break; // all equal: 0
                case 6: for (int i = 0; i < n; i++) x[i] = i % 2 ? 0.0f : -0.0f; break;   // -0, +0
                case 7: x[e] = INFINITY; x[b] = INFINITY; break;        // +inf twice
                case 8: for (int i = 0; i < n; i++) x[i] = -INFINITY; x[b] = -3.0e38f; break;
                case 9: for (int i = 0; i < n; i++) x[i] = (float)(i % 9); break;  // ties in every lane
                case 10: x[b] = 7.0f; break;                            // the max in the tail
                case 11: for (int i = 1; i < n; i += 2) x[i] = NAN; x[e] = 4.0f; break;
                }
                const int want = tw_argmax_naive(x, n), got = tw_argmax(x, n);
                ck_assert_msg(got == want, "%s n %d case %d: %d, the loop says %d", lv, n, c, got, want);
                if (c == 3 || c == 4 || c == 5 || c == 6) ck_assert_int_eq(got, 0);
                if (c == 1 && n > 2) ck_assert_int_eq(got, a);
            }
    }
    ck_assert_ptr_nonnull(tw_simd_init("naive"));
    free(x);
}
END_TEST

START_TEST(sampler_is_reproducible_and_greedy_at_temperature_zero)
{
    float logits[6] = { 0.5f, 2.0f, -1.0f, 2.0f, 1.5f, 0.0f };
    ck_assert_int_eq(tw_argmax(logits, 6), 1);   // first index on ties
    tw_sampler a, b, g;
    ck_assert_int_eq(tw_sampler_init(&g, 6, 0.0f, 0.9f, 7), TW_OK);
    ck_assert_int_eq(tw_sampler_sample(&g, logits), 1);
    int counts[6] = { 0 };
    for (int topp_case = 0; topp_case < 2; topp_case++) {
        float topp = topp_case ? 0.9f : 1.0f;
        ck_assert_int_eq(tw_sampler_init(&a, 6, 1.0f, topp, 42), TW_OK);
        ck_assert_int_eq(tw_sampler_init(&b, 6, 1.0f, topp, 42), TW_OK);
        for (int i = 0; i < 2000; i++) {
            int x = tw_sampler_sample(&a, logits), y = tw_sampler_sample(&b, logits);
            ck_assert_int_eq(x, y);
            if (topp_case == 0) counts[x]++;
        }
        tw_sampler_free(&a);
        tw_sampler_free(&b);
    }
    // Without top-p every token is drawn at about its softmax probability: p(2.0) = 0.3425,
    // p(-1.0) = 0.0171. 2000 draws: 4 standard deviations is about 0.042 and 0.012.
    ck_assert_msg(fabs(counts[1] / 2000.0 - 0.3425) < 0.045, "token 1 drawn %d / 2000", counts[1]);
    ck_assert_msg(fabs(counts[2] / 2000.0 - 0.0171) < 0.013, "token 2 drawn %d / 2000", counts[2]);
    // top-p 0.5 keeps only the two largest (0.3425 + 0.3425 > 0.5): never token 0, 2, 4 or 5.
    ck_assert_int_eq(tw_sampler_init(&a, 6, 1.0f, 0.5f, 3), TW_OK);
    for (int i = 0; i < 500; i++) {
        int x = tw_sampler_sample(&a, logits);
        ck_assert_msg(x == 1 || x == 3, "top-p 0.5 drew token %d", x);
    }
    tw_sampler_free(&a);
    tw_sampler_free(&g);
    ck_assert_int_eq(tw_sampler_init(&a, 6, 1.0f, 0.9f, 0), TW_ERR_ARG);   // xorshift needs seed != 0
}
END_TEST

// Within the nucleus the coin u is scaled by the nucleus' mass, so each kept token is drawn with
// its probability renormalised over the nucleus. Probabilities (0.1, 0.3, 0.4, 0.2) at top-p 0.6:
// sorted 0.4 (token 2), 0.3 (token 1): 0.7 > 0.6 closes the nucleus, mass 0.7, so token 2 iff
// u * 0.7 < 0.4, i.e. u < 4/7, and P(token 2) = 4/7 = 0.5714. (A coin not scaled by the mass
// draws token 2 iff u < 0.4, and token 1 for every u >= 0.4: P(token 2) = 0.4.)
START_TEST(top_p_draws_within_the_nucleus_by_its_renormalised_probabilities)
{
    const float logits[4] = { logf(0.1f), logf(0.3f), logf(0.4f), logf(0.2f) };
    const int N = 20000;
    tw_sampler s, coin;   // coin: the same seed, so it draws the u that s draws for each token
    ck_assert_int_eq(tw_sampler_init(&s, 4, 1.0f, 0.6f, 99), TW_OK);
    ck_assert_int_eq(tw_sampler_init(&coin, 4, 1.0f, 0.6f, 99), TW_OK);
    int count2 = 0, checked = 0;
    for (int i = 0; i < N; i++) {
        const int x = tw_sampler_sample(&s, logits);
        const double u = tw_sampler_next_f32(&coin);
        ck_assert_msg(x == 1 || x == 2, "top-p 0.6 drew token %d, outside the nucleus {2, 1}", x);
        count2 += x == 2;
        if (fabs(u - 4.0 / 7.0) < 1e-5) continue;   // too close to the edge for float softmax
        checked++;
        ck_assert_msg(x == (u < 4.0 / 7.0 ? 2 : 1), "draw %d: u = %.7f gave token %d, want %d",
                      i, u, x, u < 4.0 / 7.0 ? 2 : 1);
    }
    ck_assert_int_gt(checked, N - 10);
    // The frequency as well: 20000 draws, one standard deviation sqrt(p (1 - p) / N) = 0.0035;
    // 0.02 is 5.7 of them, and 0.17 short of what an unscaled coin gives.
    ck_assert_msg(fabs(count2 / (double)N - 4.0 / 7.0) < 0.02, "token 2 drawn %d / %d times, want 4/7",
                  count2, N);
    tw_sampler_free(&s);
    tw_sampler_free(&coin);
}
END_TEST

// ---- checkpoint validation ----

// A valid header for a tiny model: C 8, F 12, L 1, H 2, G 1, V 16 (shared), seq 4.
static const int32_t TINY[7] = { 8, 12, 1, 2, 1, 16, 4 };
// Its file size: 28 + 4 * (V*C + C + C*C + 2*G*D*C + C*C + C + 3*F*C + C + seq*D)
static long long tiny_bytes(int separate) {
    long long n = 16 * 8 + 8 + 64 + 2 * 4 * 8 + 64 + 8 + 3 * 12 * 8 + 8 + 4 * 4;
    return 28 + 4 * (n + (separate ? 16 * 8 : 0));
}

static const struct { int field; int32_t value; long long delta; const char *needle; } BAD_HEADERS[] = {
    { 0, 0, 0, "dim = 0 must be positive" },
    { 2, -3, 0, "n_layers = -3 must be positive" },
    { 4, 0, 0, "n_kv_heads = 0" },
    { 6, 0, 0, "seq_len = 0" },
    { 0, 9, 0, "not divisible by n_heads" },         // dim 9, 2 heads
    { 4, 3, 0, "not divisible by n_kv_heads" },      // H 2, G 3
    { 3, 8, 0, "odd" },                              // D = 8 / 8 = 1
    { 5, 1 << 30, 0, "exceeds the limit" },
    { -1, 0, -4, "truncated" },
    { -1, 0, 4, "extra bytes" },
};

START_TEST(bad_headers_are_rejected_with_a_reason)
{
    int32_t h[7];
    memcpy(h, TINY, sizeof h);
    tw_llama2c_config c;
    char err[512] = "";
    if (BAD_HEADERS[_i].field >= 0) h[BAD_HEADERS[_i].field] = BAD_HEADERS[_i].value;
    tw_status st = tw_llama2c_check_header(&c, h, tiny_bytes(0) + BAD_HEADERS[_i].delta, err, sizeof err);
    ck_assert_int_eq(st, TW_ERR_FORMAT);
    ck_assert_msg(strstr(err, BAD_HEADERS[_i].needle) != NULL, "message '%s' should say '%s'",
                  err, BAD_HEADERS[_i].needle);
    ck_assert_int_eq(c.dim, 0);   // cfg untouched on failure
}
END_TEST

START_TEST(valid_headers_shared_and_separate_classifier)
{
    int32_t h[7];
    memcpy(h, TINY, sizeof h);
    tw_llama2c_config c;
    char err[256] = "";
    ck_assert_int_eq(tw_llama2c_check_header(&c, h, tiny_bytes(0), err, sizeof err), TW_OK);
    ck_assert_int_eq(c.shared_classifier, 1);
    h[3] = 4;     // H 4 sharing G 1 (multi-query), D 2: the file size is unchanged
    ck_assert_int_eq(tw_llama2c_check_header(&c, h, tiny_bytes(0) - 4 * (2 * 4 * 8 - 2 * 2 * 8) - 4 * (4 * 4 - 4 * 2), err, sizeof err), TW_OK);
    h[3] = 2;
    h[5] = -16;   // negative vocab: a separate classifier follows the freq_cis tables
    ck_assert_int_eq(tw_llama2c_check_header(&c, h, tiny_bytes(0), err, sizeof err), TW_ERR_FORMAT);
    ck_assert_int_eq(tw_llama2c_check_header(&c, h, tiny_bytes(1), err, sizeof err), TW_OK);
    ck_assert_int_eq(c.shared_classifier, 0);
    ck_assert_int_eq(c.vocab_size, 16);
}
END_TEST

// Writes a tiny separate-classifier checkpoint and checks where the loader points the classifier.
START_TEST(separate_classifier_is_read_from_the_end_of_the_file)
{
    char path[256];
    temp_dir(path, sizeof path, "tiny.bin");
    int32_t h[7];
    memcpy(h, TINY, sizeof h);
    h[5] = -16;
    long long n = (tiny_bytes(1) - 28) / 4;
    float *w = tt_rand(n, -0.5f, 0.5f, 11);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(h, 4, 7, f);
    fwrite(w, 4, (size_t)n, f);
    fclose(f);
    tw_model m;
    char err[512] = "";
    ck_assert_msg(tw_llama2c_load(&m, path, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_ptr_ne(m.head.f32, m.tok_emb);
    ck_assert_float_eq(m.head.f32[0], w[n - 16 * 8]);
    ck_assert_float_eq(m.layers[0].ffn_up.f32[0], w[16 * 8 + 8 + 64 + 64 + 64 + 8 + 96 + 96]);
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, &m, 4, 0), TW_OK);
    int ids[4] = { 1, 5, 9, 15 };
    ck_assert_int_eq(tw_model_forward(&s, &m, ids, 4, 0), TW_OK);
    for (int i = 0; i < 4 * 16; i++) ck_assert(isfinite(s.logits[i]));
    tw_model_state_free(&s);
    tw_model_free(&m);

    // The same file cut short, and a NaN weight: both refused with the path in the message.
    f = fopen(path, "wb");
    fwrite(h, 4, 7, f);
    fwrite(w, 4, (size_t)n - 1, f);
    fclose(f);
    ck_assert_int_eq(tw_llama2c_load(&m, path, err, sizeof err), TW_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_ptr_nonnull(strstr(err, "truncated"));
    ck_assert_ptr_null(m.memory);
    w[3] = NAN;
    f = fopen(path, "wb");
    fwrite(h, 4, 7, f);
    fwrite(w, 4, (size_t)n, f);
    fclose(f);
    ck_assert_int_eq(tw_llama2c_load(&m, path, err, sizeof err), TW_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(err, "corrupted"));
    remove(path);
    ck_assert_int_eq(tw_llama2c_load(&m, path, err, sizeof err), TW_ERR_IO);
    free(w);
}
END_TEST

Suite *suite_llama2c(void) {
    Suite *s = suite_create("llama2c");
    TCase *tc = tcase_create("stories260K");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, header_is_read_as_documented);
    tcase_add_test(tc, greedy_256_positions_from_bos_is_the_documented_story);
    tcase_add_test(tc, every_dumped_tensor_matches_the_pytorch_float64_reference);
    tcase_add_test(tc, kv_cache_and_full_recompute_agree_at_every_step);
    tcase_add_test(tc, forward_rejects_bad_tokens_and_positions);
    tcase_add_test(tc, sampler_is_reproducible_and_greedy_at_temperature_zero);
    tcase_add_test(tc, argmax_at_every_level_is_the_loops_index);
    tcase_add_test(tc, top_p_draws_within_the_nucleus_by_its_renormalised_probabilities);
    tcase_add_loop_test(tc, bad_headers_are_rejected_with_a_reason, 0,
                        (int)(sizeof BAD_HEADERS / sizeof BAD_HEADERS[0]));
    tcase_add_test(tc, valid_headers_shared_and_separate_classifier);
    tcase_add_test(tc, separate_classifier_is_read_from_the_end_of_the_file);
    suite_add_tcase(s, tc);
    return s;
}
