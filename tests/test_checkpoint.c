// test_checkpoint.c: the files training reads and writes (lib/train/tokens.c, batches.c,
// llama2c_write.c, checkpoint.c): uint16 token files, text encoded line by line, the batch rule of
// ./train --no-shuffle and the seeded order, llama2.c checkpoints written back (byte-compared with
// stories260K.bin), the toolkit's own model format for every style, and the training state.
// Every comparison of weights is exact (tolerance 0): writing and reading floats must not change
// a bit. Needs data/models/ (`make model`; `make test` fetches it).
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "formats/llama2c.h"
#include "formats/llama2c_write.h"
#include "train/checkpoint.h"
#include "train/tokens.h"
#include "train/batches.h"
#include "tokenize/tokenizer.h"
#include "testrun.h"

#define MODEL_PATH "data/models/stories260K.bin"
#define TOK_PATH   "data/models/tok512.bin"

// Every parameter of a and b: same table (names, shapes) and the same bits.
static void assert_same_model(const tw_model *a, const tw_model *b) {
    ck_assert_int_eq(a->n_params, b->n_params);
    ck_assert_int_eq(a->n_floats, b->n_floats);
    ck_assert_int_eq(a->cfg.tied, b->cfg.tied);
    ck_assert_int_eq(a->cfg.vocab, b->cfg.vocab);
    for (int i = 0; i < a->n_params; i++) {
        ck_assert_str_eq(a->params[i].name, b->params[i].name);
        ck_assert_int_eq(a->params[i].count, b->params[i].count);
        ck_assert_msg(memcmp(a->params[i].data, b->params[i].data,
                             (size_t)a->params[i].count * sizeof(float)) == 0,
                      "%s differs after the round trip", a->params[i].name);
    }
}

// ---- token files and batches ----

START_TEST(token_file_round_trip_and_little_endian_layout)
{
    char path[512];
    tt_tmp_path(path, sizeof path, "ckpt", "tok.bin");
    const int toks[5] = { 1, 258, 65535, 0, 511 };
    char err[256] = "";
    ck_assert_int_eq(tw_tokens_write(path, toks, 5, err, sizeof err), TW_OK);
    long nb;
    unsigned char *raw = tt_read_file(path, &nb);
    ck_assert_int_eq(nb, 10);
    ck_assert_int_eq(raw[2], 2);      // 258 = 0x0102, low byte first
    ck_assert_int_eq(raw[3], 1);
    free(raw);
    int *back;
    long n;
    ck_assert_int_eq(tw_tokens_read(&back, &n, path, err, sizeof err), TW_OK);
    ck_assert_int_eq(n, 5);
    for (int i = 0; i < 5; i++) ck_assert_int_eq(back[i], toks[i]);
    long at = -1;
    ck_assert_int_eq(tw_tokens_fit_vocab(back, n, 512, &at), 0);
    ck_assert_int_eq(at, 2);
    free(back);
    const int too_big[1] = { 65536 };
    ck_assert_int_eq(tw_tokens_write(path, too_big, 1, err, sizeof err), TW_ERR_ARG);
    remove(path);
}
END_TEST

START_TEST(text_is_encoded_one_line_at_a_time_with_bos)
{
    tw_tokenizer tok;
    char err[256] = "", path[512];
    ck_assert_msg(tw_tokenizer_load(&tok, TOK_PATH, 512, err, sizeof err) == TW_OK, "%s", err);
    tt_tmp_path(path, sizeof path, "ckpt", "text.txt");
    FILE *f = fopen(path, "w");
    fputs("Once upon a time.\n\nThe cat sat.\r\n", f);
    fclose(f);
    int *got;
    long n;
    ck_assert_msg(tw_tokens_encode_file(&got, &n, path, &tok, err, sizeof err) == TW_OK, "%s", err);
    int want[256], k1 = 0, k2 = 0;
    tw_tokenizer_encode(&tok, want, &k1, 128, "Once upon a time.", 1, 0);
    tw_tokenizer_encode(&tok, want + k1, &k2, 128, "The cat sat.", 1, 0);
    ck_assert_int_eq(n, k1 + k2);
    for (long i = 0; i < n; i++) ck_assert_int_eq(got[i], want[i]);
    ck_assert_int_eq(got[0], TW_TOK_BOS);
    ck_assert_int_eq(got[k1], TW_TOK_BOS);
    free(got);
    f = fopen(path, "w");
    fputs("\n\n", f);
    fclose(f);
    ck_assert_int_eq(tw_tokens_encode_file(&got, &n, path, &tok, err, sizeof err), TW_ERR_FORMAT);
    ck_assert_msg(strstr(err, path) != NULL, "%s", err);
    remove(path);
    tw_tokenizer_free(&tok);
}
END_TEST

START_TEST(no_shuffle_batches_follow_the_documented_rule)
{
    enum { N = 103, B = 3, T = 8 };
    int toks[N], in[B * T], tg[B * T];
    for (int i = 0; i < N; i++) toks[i] = 1000 + i;   // token value = 1000 + its position
    tw_batcher b;
    ck_assert_int_eq(tw_batcher_init(&b, toks, N, B, T, 0, 0), TW_OK);
    for (long s = 0; s < 20; s++) {
        tw_batcher_fill(in, tg, &b, s);
        for (int r = 0; r < B; r++) {
            const long start = ((s * B + r) * T) % (N - T);   // the rule of ./train --no-shuffle
            for (int t = 0; t < T; t++) {
                ck_assert_int_eq(in[r * T + t], 1000 + start + t);
                ck_assert_int_eq(tg[r * T + t], 1000 + start + t + 1);
            }
        }
    }
    tw_batcher_free(&b);
    ck_assert_int_eq(tw_batcher_init(&b, toks, T, B, T, 0, 0), TW_ERR_SHAPE);   // T tokens: no target
    ck_assert_int_eq(tw_batcher_init(&b, toks, T + 1, B, T, 0, 0), TW_OK);
    tw_batcher_free(&b);
}
END_TEST

START_TEST(shuffled_batches_visit_every_window_once_per_epoch_and_repeat_by_seed)
{
    enum { N = 1001, B = 4, T = 10 };   // (N - 1) / T = 100 windows: 25 steps per epoch
    int toks[N];
    for (int i = 0; i < N; i++) toks[i] = i;
    tw_batcher a, b;
    ck_assert_int_eq(tw_batcher_init(&a, toks, N, B, T, 1, 42), TW_OK);
    ck_assert_int_eq(tw_batcher_init(&b, toks, N, B, T, 1, 42), TW_OK);
    ck_assert_int_eq(a.n_windows, 100);
    for (int epoch = 0; epoch < 2; epoch++) {
        int seen[100] = { 0 }, in_order = 1;
        for (long s = 25 * epoch; s < 25 * (epoch + 1); s++)
            for (int r = 0; r < B; r++) {
                long st = tw_batcher_start(&a, s, r);
                ck_assert_int_eq(st % T, 0);
                ck_assert(st + T < N);
                seen[st / T]++;
                if (st != (s * B + r - 100 * epoch) * T) in_order = 0;
            }
        for (int w = 0; w < 100; w++) ck_assert_int_eq(seen[w], 1);
        ck_assert_msg(!in_order, "epoch %d came out in file order", epoch);
    }
    // A fresh batcher asked for a late step first (a resumed run) gives the same windows.
    for (long s = 60; s >= 0; s -= 7)
        for (int r = 0; r < B; r++) ck_assert_int_eq(tw_batcher_start(&b, s, r), tw_batcher_start(&a, s, r));
    tw_batcher_free(&a);
    tw_batcher_free(&b);
    long nt, nv;
    tw_split_tokens(&nt, &nv, 1000, 0.1);
    ck_assert_int_eq(nt, 900);
    ck_assert_int_eq(nv, 100);
    tw_split_tokens(&nt, &nv, 1000, 0.0);
    ck_assert_int_eq(nv, 0);
}
END_TEST

// Every order of 4 windows comes out, about equally often: the first epoch's order over seeds
// 1 .. 24000 (1000 expected per order). A shuffle that can only make cycles (Sattolo's variant, where
// no window keeps its place) reaches 6 of the 24 orders and never leaves a window in place. Bound:
// for a uniform shuffle the statistic is chi-square with 23 degrees of freedom, and
// P(chi2_23 > 70) = 1.2e-6 (torch.special.gammaincc(11.5, 35)), so 70 fails only a biased shuffle;
// Sattolo's scores about 3 * 24000 = 72000.
START_TEST(shuffled_windows_take_every_order_of_four_uniformly)
{
    enum { T = 2, W = 4, N = W * T + 1, SEEDS = 24000, ORDERS = 24 };
    int toks[N];
    for (int i = 0; i < N; i++) toks[i] = i;
    long count[ORDERS] = { 0 }, with_fixed_point = 0;
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        tw_batcher b;
        ck_assert_int_eq(tw_batcher_init(&b, toks, N, 1, T, 1, seed), TW_OK);
        ck_assert_int_eq(b.n_windows, W);
        int perm[W], fixed = 0;
        for (int k = 0; k < W; k++) {
            perm[k] = (int)(tw_batcher_start(&b, k, 0) / T);   // step k, row 0: the k-th window
            fixed |= perm[k] == k;
        }
        tw_batcher_free(&b);
        with_fixed_point += fixed;
        // The order's rank (Lehmer code): for each place, how many later windows are smaller.
        int rank = 0;
        for (int k = 0; k < W; k++) {
            int smaller = 0;
            for (int l = k + 1; l < W; l++) smaller += perm[l] < perm[k];
            rank = rank * (W - k) + smaller;
        }
        count[rank]++;
    }
    // 15 of the 24 orders leave some window in place: expect 24000 * 15/24 = 15000.
    ck_assert_msg(with_fixed_point > 14000 && with_fixed_point < 16000,
                  "%ld of %d orders left a window in place, want about 15000", with_fixed_point, SEEDS);
    const double expect = (double)SEEDS / ORDERS;
    double chi2 = 0.0;
    for (int r = 0; r < ORDERS; r++) {
        ck_assert_msg(count[r] > 0, "order %d never came out in %d seeds", r, SEEDS);
        chi2 += (count[r] - expect) * (count[r] - expect) / expect;
    }
    ck_assert_msg(chi2 < 70.0, "chi-square %.1f over 24 orders (23 dof): the shuffle is not uniform", chi2);
}
END_TEST

// ---- llama2.c checkpoints ----

// The offset (in floats after the header) and length of the freq_cis tables of a header.
static void freq_span(const int32_t h[7], long *at, long *len) {
    const long C = h[0], F = h[1], L = h[2], H = h[3], G = h[4], V = labs((long)h[5]), S = h[6];
    const long D = C / H;
    *at = V * C + L * C + L * C * C + 2 * L * G * D * C + L * C * C + L * C + 3 * L * F * C + C;
    *len = S * D;   // real and imaginary, (S, D/2) each
}

START_TEST(stories260k_written_back_is_the_same_file)
{
    tw_model m, back;
    char err[512] = "", path[512];
    ck_assert_msg(tw_llama2c_load(&m, MODEL_PATH, err, sizeof err) == TW_OK, "%s", err);
    tt_tmp_path(path, sizeof path, "ckpt", "s260k.bin");
    ck_assert_msg(tw_llama2c_write(path, &m, err, sizeof err) == TW_OK, "%s", err);
    long na, nb;
    unsigned char *a = tt_read_file(MODEL_PATH, &na), *b = tt_read_file(path, &nb);
    ck_assert_int_eq(na, nb);
    int32_t h[7];
    memcpy(h, a, sizeof h);
    long at, len;
    freq_span(h, &at, &len);
    const long f0 = 28 + 4 * at, f1 = f0 + 4 * len;
    ck_assert_int_eq(f1 + (h[5] > 0 ? 0 : 4L * h[0] * -h[5]), na);
    // Header, weights and classifier: byte for byte.
    ck_assert_msg(memcmp(a, b, (size_t)f0) == 0, "header or weights differ");
    ck_assert_msg(memcmp(a + f1, b + f1, (size_t)(na - f1)) == 0, "classifier differs");
    // The freq_cis tables: PyTorch's float32 cos/sin of the same float32 angles (we round the
    // double-precision cos/sin once), so they may differ in the last bit: tolerance 2e-7 absolute
    // (values in [-1, 1]: about 2 ulp at 1). Measured: the largest difference is printed below.
    float maxd = 0.0f;
    long differ = 0;
    for (long k = f0; k < f1; k += 4) {
        float x, y;
        memcpy(&x, a + k, 4);
        memcpy(&y, b + k, 4);
        if (x != y) differ++;
        if (fabsf(x - y) > maxd) maxd = fabsf(x - y);
    }
    ck_assert_msg(maxd <= 2e-7f, "freq_cis differs by %g", (double)maxd);
    if (getenv("TW_VERBOSE")) printf("freq_cis: %ld of %ld floats differ in the last bit, max %g\n",
                                     differ, len, (double)maxd);
    free(a);
    free(b);
    ck_assert_msg(tw_llama2c_load(&back, path, err, sizeof err) == TW_OK, "%s", err);
    assert_same_model(&m, &back);
    remove(path);
    tw_model_free(&back);
    tw_model_free(&m);
}
END_TEST

START_TEST(llama_preset_round_trips_tied_and_untied)
{
    for (int tied = 0; tied < 2; tied++) {
        tw_model_config c;
        ck_assert_int_eq(tw_model_config_preset(&c, "llama"), TW_OK);
        c.tied = tied;
        c.block.attn.head_dim = c.block.attn.d_model / c.block.attn.n_head;   // llama2.c: D = C / H
        tw_model m, back;
        ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
        tw_model_randomize(&m, 7 + (uint64_t)tied);
        char err[512] = "", path[512];
        tt_tmp_path(path, sizeof path, "ckpt", "llama.bin");
        ck_assert_msg(tw_llama2c_write(path, &m, err, sizeof err) == TW_OK, "%s", err);
        long n;
        unsigned char *raw = tt_read_file(path, &n);
        int32_t h[7];
        memcpy(h, raw, sizeof h);
        free(raw);
        ck_assert_int_eq(h[5], tied ? 65 : -65);   // the sign says whether the classifier is shared
        ck_assert_msg(tw_llama2c_load(&back, path, err, sizeof err) == TW_OK, "%s", err);
        assert_same_model(&m, &back);
        remove(path);
        tw_model_free(&back);
        tw_model_free(&m);
    }
}
END_TEST

START_TEST(llama2c_writer_refuses_what_the_format_cannot_hold)
{
    const char *styles[3] = { "2017", "gpt2", "qwen3" };
    for (int i = 0; i < 3; i++) {
        tw_model_config c;
        tw_model m;
        ck_assert_int_eq(tw_model_config_preset(&c, styles[i]), TW_OK);
        ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
        char err[512] = "", path[512];
        tt_tmp_path(path, sizeof path, "ckpt", "never.bin");
        ck_assert_int_eq(tw_llama2c_write(path, &m, err, sizeof err), TW_ERR_ARG);
        ck_assert_msg(strstr(err, "cannot hold") != NULL, "%s", err);
        ck_assert_int_ne(access(path, F_OK), 0);
        tw_model_free(&m);
    }
}
END_TEST

// ---- the toolkit's own format ----

static const char *const STYLES[4] = { "2017", "gpt2", "llama", "qwen3" };

START_TEST(own_format_round_trips_every_style)
{
    tw_model_config c;
    tw_model m, back;
    ck_assert_int_eq(tw_model_config_preset(&c, STYLES[_i]), TW_OK);
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    tw_model_randomize(&m, 100 + (uint64_t)_i);
    char err[512] = "", path[512];
    tt_tmp_path(path, sizeof path, "ckpt", "own.bin");
    ck_assert_msg(tw_checkpoint_write(path, &m, err, sizeof err) == TW_OK, "%s", err);
    ck_assert(tw_checkpoint_is_ours(path));
    ck_assert_msg(tw_model_load_file(&back, path, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_str_eq(back.cfg.style, STYLES[_i]);
    ck_assert(memcmp(&back.cfg.block, &m.cfg.block, sizeof m.cfg.block) == 0);
    ck_assert_int_eq(back.cfg.pos, m.cfg.pos);
    ck_assert_int_eq(back.cfg.final_norm, m.cfg.final_norm);
    ck_assert_int_eq(back.cfg.embed_scale, m.cfg.embed_scale);
    ck_assert_int_eq(back.cfg.bias, m.cfg.bias);
    ck_assert_int_eq(back.cfg.embed_init, m.cfg.embed_init);   // not stored: from the style's preset
    assert_same_model(&m, &back);
    // And the same logits: the loaded model is the same function.
    tw_model_state s1, s2;
    const int toks[5] = { 1, 7, 64, 3, 0 };
    ck_assert_int_eq(tw_model_state_init(&s1, &m, 5, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&s2, &back, 5, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s1, &m, toks, 5, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&s2, &back, toks, 5, 0), TW_OK);
    ck_assert(memcmp(s1.logits, s2.logits, 5 * 65 * sizeof(float)) == 0);
    tw_model_state_free(&s1);
    tw_model_state_free(&s2);
    remove(path);
    tw_model_free(&back);
    tw_model_free(&m);
}
END_TEST

START_TEST(training_state_round_trips)
{
    tw_model_config c;
    tw_model m, back;
    ck_assert_int_eq(tw_model_config_preset(&c, "gpt2"), TW_OK);
    ck_assert_int_eq(tw_model_init(&m, &c), TW_OK);
    tw_model_randomize(&m, 5);
    float *am = tt_rand(m.n_floats, -1, 1, 6), *av = tt_rand(m.n_floats, 0, 1, 7);
    const tw_train_progress pr = { 123, 123 * 8, 99, 0x9e3779b97f4a7c15ULL, 8, 16 };
    char err[512] = "", path[512];
    tt_tmp_path(path, sizeof path, "ckpt", "state.bin");
    ck_assert_msg(tw_train_state_write(path, &pr, &m, am, av, err, sizeof err) == TW_OK, "%s", err);
    tw_train_progress got;
    float *bm, *bv;
    ck_assert_msg(tw_train_state_load(&got, &back, &bm, &bv, path, err, sizeof err) == TW_OK, "%s", err);
    ck_assert(memcmp(&got, &pr, sizeof pr) == 0);
    assert_same_model(&m, &back);
    ck_assert(memcmp(am, bm, (size_t)m.n_floats * sizeof(float)) == 0);
    ck_assert(memcmp(av, bv, (size_t)m.n_floats * sizeof(float)) == 0);
    // A model file is not a training state, and vice versa.
    tw_model_free(&back);
    ck_assert_int_eq(tw_checkpoint_load(&back, path, err, sizeof err) == TW_OK ? 0 : 1, 1);
    ck_assert_msg(strstr(err, "magic") != NULL, "%s", err);
    remove(path);
    free(am); free(av); free(bm); free(bv);
    tw_model_free(&back);
    tw_model_free(&m);
}
END_TEST

Suite *suite_checkpoint(void) {
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("files");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, token_file_round_trip_and_little_endian_layout);
    tcase_add_test(tc, text_is_encoded_one_line_at_a_time_with_bos);
    tcase_add_test(tc, no_shuffle_batches_follow_the_documented_rule);
    tcase_add_test(tc, shuffled_batches_visit_every_window_once_per_epoch_and_repeat_by_seed);
    tcase_add_test(tc, shuffled_windows_take_every_order_of_four_uniformly);
    tcase_add_test(tc, stories260k_written_back_is_the_same_file);
    tcase_add_test(tc, llama_preset_round_trips_tied_and_untied);
    tcase_add_test(tc, llama2c_writer_refuses_what_the_format_cannot_hold);
    tcase_add_loop_test(tc, own_format_round_trips_every_style, 0, 4);
    tcase_add_test(tc, training_state_round_trips);
    suite_add_tcase(s, tc);
    return s;
}
