// check_concepts.c: the checker of the concept exercises (concepts.h), built with one exercise
// (EXERCISE = 5..12) by `make exerciseN`. It runs your function and the library's reference on
// random inputs of several sizes and on the awkward cases, and stops at the first element that
// differs by more than the exercise's tolerance, naming the case, the index, your value and the
// expected one. Exit status: 0 passed, 1 failed or not implemented yet.
//   ./exerciseN
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "concepts.h"
#include "tw.h"
#include "tokenize/byte_level.h"

#ifndef EXERCISE
#error "build with -DEXERCISE=N (make exerciseN does)"
#endif

static int g_todo = 0;
void ex_not_implemented(void) { g_todo = 1; }

#if EXERCISE != 34   // exercise 34 has no random inputs: it checks all 256 bytes
// Fills x (n) with N(0, std^2) numbers from a fixed seed, so every run checks the same inputs.
static void randn(float *x, long n, float std, uint64_t seed) {
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_rng_fill_normal(&r, x, n, std);
}
#endif

#if EXERCISE != 10 && EXERCISE != 34   // 10 compares chosen ids, 34 code points: not float arrays
// Compares got with want element by element: |got - want| <= atol + rtol |want|, and an
// infinity or NaN only where the reference has the same. Prints the first failure.
static int compare(const char *what, const float *got, const float *want, long n, float atol,
                   float rtol) {
    for (long i = 0; i < n; i++) {
        float g = got[i], w = want[i];
        int ok = (isnan(w) && isnan(g)) || (isinf(w) && g == w) ||
                 (isfinite(w) && fabsf(g - w) <= atol + rtol * fabsf(w));
        if (!ok) {
            printf("FAIL: %s: element [%ld] is %.9g, expected %.9g (tolerance %g + %g x |expected|)\n",
                   what, i, (double)g, (double)w, (double)atol, (double)rtol);
            return 1;
        }
    }
    return 0;
}
#endif

// Stops at the stub: it computed nothing, so comparing would only print noise.
static void stop_if_todo(const char *file) {
    if (g_todo) {
        printf("not implemented yet: open lessons/exercises/%s, replace the TODO, and run "
               "`make exercise%d` again.\n", file, EXERCISE);
        exit(1);
    }
}

#define BUF 16384
// Scratch for the cases (not all exercises use all of them, hence not static: no unused warning).
float A[BUF], B[BUF], Cb[BUF], Dm[BUF], GOT[BUF], WANT[BUF];

#if EXERCISE == 5
static const char *FILE_NAME = "ex5_softmax_temperature.c", *TITLE = "softmax with a temperature";
// Tolerance: expf is within 1 ulp; dividing by tau before or after subtracting the max changes the
// argument by at most an ulp of |x|/tau (<= 1e-6 here), and the sum of n <= 1000 terms in another
// order differs by <= n u = 6e-5 relative in float (the solution sums in double). 1e-4 relative
// (+ 1e-7 absolute for the tiny entries) covers both; a wrong formula is off by far more.
static int one(const char *what, const float *x, int n, float tau) {
    ex_softmax_temperature(GOT, x, n, tau);
    stop_if_todo(FILE_NAME);
    tw_softmax_rows(WANT, x, 1, n, tau);
    return compare(what, GOT, WANT, n, 1e-7f, 1e-4f);
}
static int run_all(void) {
    static const int sizes[] = { 1, 3, 17, 100, 1000 };
    static const float taus[] = { 0.5f, 1.0f, 2.0f };
    char what[128];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++) {
            randn(A, sizes[i], 3.0f, 100 + i);
            snprintf(what, sizeof what, "random logits, n = %d, temperature %g", sizes[i], (double)taus[j]);
            if (one(what, A, sizes[i], taus[j])) return 1;
        }
    float big[5] = { 1000.0f, 999.0f, 998.0f, 1000.0f, -1000.0f };
    if (one("logits of 1000 (does exp overflow?), temperature 0.5", big, 5, 0.5f)) return 1;
    float masked[4] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
    if (one("a row that is all -inf (must be zeros, not NaN)", masked, 4, 1.0f)) return 1;
    float part[4] = { -INFINITY, 2.0f, -INFINITY, 1.0f };
    if (one("a row with some -inf (masked) entries", part, 4, 0.7f)) return 1;
    return 0;
}
#elif EXERCISE == 6
static const char *FILE_NAME = "ex6_norms.c", *TITLE = "LayerNorm and RMSNorm";
// Tolerance: the library accumulates in double and rounds each output once; an answer that also
// uses double differs by a few ulp, 1e-5 (+ 1e-5 relative) allows that. Float accumulation of
// 1000 terms (6e-5 relative) or the one-pass E[x^2] - E[x]^2 fails the offset row, on purpose.
static int one(const char *what, const float *x, int C) {
    const float eps = 1e-5f;
    for (int c = 0; c < C; c++) { Cb[c] = 1.0f + 0.1f * (float)(c % 7); Dm[c] = 0.05f * (float)(c % 5) - 0.1f; }
    char w2[160];
    ex_layernorm(GOT, x, Cb, Dm, C, eps);
    stop_if_todo(FILE_NAME);
    tw_layernorm_forward(WANT, NULL, NULL, x, Cb, Dm, 1, C, eps);
    snprintf(w2, sizeof w2, "LayerNorm, %s", what);
    if (compare(w2, GOT, WANT, C, 1e-5f, 1e-5f)) return 1;
    ex_rmsnorm(GOT, x, Cb, C, eps);
    stop_if_todo(FILE_NAME);
    tw_rmsnorm_forward(WANT, NULL, x, Cb, 1, C, eps);
    snprintf(w2, sizeof w2, "RMSNorm, %s", what);
    return compare(w2, GOT, WANT, C, 1e-5f, 1e-5f);
}
static int run_all(void) {
    static const int sizes[] = { 1, 3, 64, 1000 };
    char what[128];
    for (int i = 0; i < 4; i++) {
        randn(A, sizes[i], 2.0f, 200 + i);
        snprintf(what, sizeof what, "random row, C = %d", sizes[i]);
        if (one(what, A, sizes[i])) return 1;
    }
    for (int c = 0; c < 64; c++) A[c] = 0.5f;
    if (one("a constant row (variance 0: LayerNorm gives beta)", A, 64)) return 1;
    randn(A, 64, 1.0f, 210);
    for (int c = 0; c < 64; c++) A[c] += 1000.0f;
    if (one("row = 1000 + N(0, 1) (one-pass variance cancels)", A, 64)) return 1;
    randn(A, 64, 1e-3f, 211);
    if (one("a row of tiny values (std 1e-3: eps matters)", A, 64)) return 1;
    return 0;
}
#elif EXERCISE == 7
static const char *FILE_NAME = "ex7_rope.c", *TITLE = "RoPE, adjacent pairing";
// Tolerance: with the angle in double, cos and sin rounded to float and the same two products
// per output, the answer equals the library's up to the order of two float operations: 1e-6
// absolute + 1e-6 relative (inputs are of size ~1). A float angle at position 4096 is off by
// ~5e-4 and fails, on purpose.
static int one(const char *what, int D, int pos, float theta, uint64_t seed) {
    randn(GOT, D, 1.0f, seed);
    memcpy(WANT, GOT, (size_t)D * sizeof(float));
    ex_rope_adjacent(GOT, D, pos, theta);
    stop_if_todo(FILE_NAME);
    tw_rope_adjacent_forward(WANT, 1, 1, D, pos, theta);
    return compare(what, GOT, WANT, D, 1e-6f, 1e-6f);
}
static int run_all(void) {
    static const int dims[] = { 2, 8, 64, 128 };
    static const int poss[] = { 0, 1, 7, 4096 };
    char what[128];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            snprintf(what, sizeof what, "D = %d, position %d, theta 10000", dims[i], poss[j]);
            if (one(what, dims[i], poss[j], 10000.0f, 300 + i * 4 + j)) return 1;
        }
    if (one("D = 128, position 1000, theta 1e6 (Qwen3)", 128, 1000, 1e6f, 320)) return 1;
    return 0;
}
#elif EXERCISE == 8
static const char *FILE_NAME = "ex8_attention.c", *TITLE = "causal scaled dot-product attention";
// Tolerance: each score is a float dot product of D <= 64 terms (error <= D u sum|qk|, about
// 1e-5 for these sizes), which moves a weight by the same relative amount through exp; the
// output averages values of size ~1. 1e-4 absolute + 1e-4 relative covers it; a missing
// sqrt(D), a missing mask or a wrong softmax is off by 1e-1 or more.
static int one(const char *what, int T, int D, float qscale, uint64_t seed) {
    randn(A, (long)T * D, qscale, seed);
    randn(B, (long)T * D, 1.0f, seed + 1);
    randn(Cb, (long)T * D, 1.0f, seed + 2);
    ex_causal_attention(GOT, A, B, Cb, T, D);
    stop_if_todo(FILE_NAME);
    static float w[BUF];
    tw_sdpa_forward(WANT, NULL, w, A, B, Cb, NULL, T, T, D, 1, 0);
    return compare(what, GOT, WANT, (long)T * D, 1e-4f, 1e-4f);
}
static int run_all(void) {
    static const int Ts[] = { 1, 2, 5, 17 }, Ds[] = { 1, 4, 16, 64 };
    char what[128];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            snprintf(what, sizeof what, "T = %d, D = %d", Ts[i], Ds[j]);
            if (one(what, Ts[i], Ds[j], 1.0f, 400 + i * 4 + j)) return 1;
        }
    if (one("T = 8, D = 16, large scores (q x 4: a nearly one-hot softmax)", 8, 16, 4.0f, 430)) return 1;
    return 0;
}
#elif EXERCISE == 9
static const char *FILE_NAME = "ex9_swiglu.c", *TITLE = "SwiGLU";
// Tolerance: two float dot products of C and then F <= 172 terms, in any order: about
// (C + F) u sum|terms|, below 1e-4 of the output's scale here; 1e-4 absolute + 1e-4 relative.
// The awkward gate of -1000 must give 0 (silu(-1000) = -0), not NaN.
static int one(const char *what, int C, int F, float xscale, uint64_t seed) {
    randn(A, C, xscale, seed);
    randn(B, (long)F * C, 0.3f, seed + 1);
    randn(Cb, (long)F * C, 0.3f, seed + 2);
    randn(Dm, (long)C * F, 0.3f, seed + 3);
    ex_swiglu(GOT, A, B, Cb, Dm, C, F);
    stop_if_todo(FILE_NAME);
    static float g[BUF], u[BUF], act[BUF];
    tw_swiglu_forward(WANT, g, u, act, A, tw_weight_fp32(B), tw_weight_fp32(Cb), tw_weight_fp32(Dm),
                      1, C, F);
    return compare(what, GOT, WANT, C, 1e-4f, 1e-4f);
}
static int run_all(void) {
    static const int Cs[] = { 1, 4, 16, 64 }, Fs[] = { 1, 3, 43, 172 };
    char what[128];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            if ((long)Cs[i] * Fs[j] > BUF) continue;
            snprintf(what, sizeof what, "C = %d, F = %d", Cs[i], Fs[j]);
            if (one(what, Cs[i], Fs[j], 1.0f, 500 + i * 4 + j)) return 1;
        }
    if (one("C = 8, F = 8, x of size 3000 (gates near +-1000: silu must not give NaN)", 8, 8, 3000.0f, 530))
        return 1;
    return 0;
}
#elif EXERCISE == 10
static const char *FILE_NAME = "ex10_top_p.c", *TITLE = "top-p sampling";
// Exact: the chosen id must equal lib/decode/sampler.c's for the same probabilities and the same u.
// The reference is the library's sampler itself (temperature 1, top-p p): u is read from a copy
// of its random stream, so both see the same draw.
static int one(const char *what, const float *logits, int n, float p, uint64_t seed, int draws) {
    tw_sampler s = { 0 };
    if (tw_sampler_init(&s, n, 1.0f, p, seed) != TW_OK) { printf("cannot make a sampler\n"); exit(1); }
    float *probs = GOT;
    tw_softmax_rows(probs, logits, 1, n, 1.0f);
    for (int d = 0; d < draws; d++) {
        tw_sampler copy = s;
        float u = tw_sampler_next_f32(&copy);
        int mine = ex_top_p(probs, n, p, u);
        if (g_todo) { tw_sampler_free(&s); stop_if_todo(FILE_NAME); }
        int want = tw_sampler_sample(&s, logits);
        if (mine != want) {
            printf("FAIL: %s, draw %d (u = %.6f): you chose id %d (p = %.6f), expected id %d "
                   "(p = %.6f)\n", what, d, (double)u, mine, mine >= 0 && mine < n ? (double)probs[mine] : 0.0,
                   want, (double)probs[want]);
            tw_sampler_free(&s);
            return 1;
        }
    }
    tw_sampler_free(&s);
    return 0;
}
static int run_all(void) {
    static const int sizes[] = { 1, 2, 10, 512 };
    static const float ps[] = { 0.5f, 0.9f, 0.99f };
    char what[128];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) {
            randn(A, sizes[i], 2.0f, 600 + i);
            snprintf(what, sizeof what, "random logits, n = %d, top-p %g", sizes[i], (double)ps[j]);
            if (one(what, A, sizes[i], ps[j], 7 + i * 3 + j, 50)) return 1;
        }
    float ties[6] = { 1, 1, 1, 0, 0, -INFINITY };   // equal probabilities: lower id first
    if (one("ties (three equal top tokens) and a -inf logit", ties, 6, 0.5f, 99, 50)) return 1;
    float peaked[4] = { 20, 0, 0, 0 };
    if (one("one token holds almost all the mass", peaked, 4, 0.9f, 98, 20)) return 1;
    return 0;
}
#elif EXERCISE == 11
static const char *FILE_NAME = "ex11_linear_backward.c", *TITLE = "the backward of Linear";
// Tolerance: each gradient is a float sum of T or C_out products of N(0, 1) numbers, in any
// order: about n u sum|terms| <= 64 x 6e-8 x 64 ~ 2.5e-4 of the worst case, far less in practice;
// 1e-4 absolute + 1e-4 relative. GOT is filled with a sentinel first, so adding onto what the
// buffers held (instead of writing) fails.
static int one(const char *what, int T, int C_in, int C_out, uint64_t seed) {
    static float gdx[BUF], gdW[BUF], gdb[BUF], wdx[BUF], wdW[BUF], wdb[BUF];
    randn(A, (long)T * C_out, 1.0f, seed);        // dy
    randn(B, (long)T * C_in, 1.0f, seed + 1);     // x
    randn(Cb, (long)C_out * C_in, 1.0f, seed + 2);   // W
    for (int i = 0; i < BUF; i++) { gdx[i] = 12345.0f; gdW[i] = 12345.0f; gdb[i] = 12345.0f; }
    ex_linear_backward(gdx, gdW, gdb, A, B, Cb, T, C_in, C_out);
    stop_if_todo(FILE_NAME);
    memset(wdx, 0, sizeof wdx); memset(wdW, 0, sizeof wdW); memset(wdb, 0, sizeof wdb);
    tw_linear_backward(wdx, wdW, wdb, A, B, Cb, T, C_in, C_out);   // accumulates onto zeros
    char w[160];
    snprintf(w, sizeof w, "%s: dx", what);
    if (compare(w, gdx, wdx, (long)T * C_in, 1e-4f, 1e-4f)) return 1;
    snprintf(w, sizeof w, "%s: dW", what);
    if (compare(w, gdW, wdW, (long)C_out * C_in, 1e-4f, 1e-4f)) return 1;
    snprintf(w, sizeof w, "%s: db", what);
    return compare(w, gdb, wdb, C_out, 1e-4f, 1e-4f);
}
static int run_all(void) {
    static const int sizes[][3] = { { 1, 1, 1 }, { 1, 5, 3 }, { 4, 1, 7 }, { 7, 16, 1 },
                                    { 8, 24, 96 }, { 64, 64, 64 }, { 3, 100, 33 } };
    char what[128];
    for (int i = 0; i < 7; i++) {
        snprintf(what, sizeof what, "T = %d, C_in = %d, C_out = %d", sizes[i][0], sizes[i][1], sizes[i][2]);
        if (one(what, sizes[i][0], sizes[i][1], sizes[i][2], 700 + (uint64_t)i * 4)) return 1;
    }
    return 0;
}
#elif EXERCISE == 12
static const char *FILE_NAME = "ex12_cross_entropy_backward.c", *TITLE = "softmax + cross-entropy backward";
// Tolerance: each element is a probability (computed by the library in float from a double
// log-sum-exp) minus 0 or 1, divided by n: 1e-6 absolute + 1e-5 relative covers a float softmax
// (a few ulps of values <= 1). The awkward cases: V = 1 (the gradient is exactly 0), logits of
// +-1000 (exp must not overflow), a -inf logit (probability 0, no NaN), ignored rows, and every
// row ignored (all zeros, not 0/0).
static int one(const char *what, const float *logits, const int *targets, int T, int V) {
    for (long i = 0; i < (long)T * V; i++) GOT[i] = 12345.0f;
    ex_cross_entropy_backward(GOT, logits, targets, T, V);
    stop_if_todo(FILE_NAME);
    float loss;
    if (tw_cross_entropy_forward(&loss, NULL, Dm, logits, targets, T, V, TW_IGNORE_INDEX) != TW_OK) {
        printf("the reference refused the case (a bad target?)\n");
        exit(1);
    }
    memset(WANT, 0, (size_t)T * V * sizeof(float));
    tw_cross_entropy_backward(WANT, 1.0f, Dm, targets, T, V, TW_IGNORE_INDEX);
    return compare(what, GOT, WANT, (long)T * V, 1e-6f, 1e-5f);
}
static int run_all(void) {
    static const int sizes[][2] = { { 1, 1 }, { 1, 2 }, { 3, 10 }, { 8, 65 }, { 16, 512 } };
    static int targets[64];
    char what[128];
    for (int i = 0; i < 5; i++) {
        const int T = sizes[i][0], V = sizes[i][1];
        randn(A, (long)T * V, 3.0f, 800 + (uint64_t)i);
        for (int t = 0; t < T; t++) targets[t] = (t * 7 + i) % V;
        snprintf(what, sizeof what, "random logits, T = %d, V = %d", T, V);
        if (one(what, A, targets, T, V)) return 1;
    }
    float big[8] = { 1000, -1000, 999, 0, 1000, 1000, -1000, -1000 };
    int tb[2] = { 1, 3 };
    if (one("logits of +-1000 (T = 2, V = 4)", big, tb, 2, 4)) return 1;
    float inf[6] = { 0.5f, -INFINITY, 2.0f, -INFINITY, 0.0f, 1.0f };
    int ti[2] = { 0, 2 };
    if (one("a -inf logit in each row (T = 2, V = 3)", inf, ti, 2, 3)) return 1;
    randn(A, 4L * 5, 1.0f, 850);
    int tg[4] = { 2, -100, 4, -100 };
    if (one("rows 1 and 3 ignored (target -100): n = 2", A, tg, 4, 5)) return 1;
    int none[3] = { -100, -100, -100 };
    if (one("every row ignored: all zeros", A, none, 3, 5)) return 1;
    return 0;
}
#elif EXERCISE == 34
static const char *FILE_NAME = "ex34_byte_to_unicode.c", *TITLE = "GPT-2's byte-to-unicode map";
// Exact (integers): every one of the 256 bytes against lib/tokenize/byte_level.c, then the map
// must be one to one (a vocabulary file must be readable back into bytes). The classic wrong
// attempt, "256 + b for the bytes that are not printable", agrees on bytes 0..32 and first fails
// at 0x7F (DEL: the 34th moved byte, 256 + 33 = 289, not 256 + 127); treating 0xAD (the soft
// hyphen) as printable fails at 0xAD.
static int run_all(void) {
    uint32_t want[256];
    tw_byte_level_map(want);
    static const int awkward[] = { 0, ' ', '!', '~', 0x7F, 0x80, 0xA0, 0xA1, 0xAC, 0xAD, 0xAE, 0xFF };
    for (int i = 0; i < (int)(sizeof awkward / sizeof *awkward); i++) {
        int b = awkward[i];
        unsigned got = ex_byte_to_unicode(b);
        stop_if_todo(FILE_NAME);
        if (got != want[b]) {
            printf("FAIL: byte 0x%02X maps to U+%04X, expected U+%04X\n", b, got, want[b]);
            return 1;
        }
    }
    static unsigned char seen[0x200];
    for (int b = 0; b < 256; b++) {
        unsigned got = ex_byte_to_unicode(b);
        if (got != want[b]) {
            printf("FAIL: byte 0x%02X maps to U+%04X, expected U+%04X\n", b, got, want[b]);
            return 1;
        }
        if (seen[got]++) { printf("FAIL: two bytes map to U+%04X\n", got); return 1; }
    }
    return 0;
}
#else
#error "EXERCISE must be 5..12 or 34 for check_concepts.c"
#endif

int main(int argc, char **argv) {
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "exercise%d: takes no arguments\nusage: ./exercise%d\n", EXERCISE, EXERCISE);
        return 2;
    }
    printf("exercise %d: %s (lessons/exercises/%s)\n", EXERCISE, TITLE, FILE_NAME);
    if (run_all()) return 1;
    printf("PASS: agrees with the library's reference on every case (tolerance in check_concepts.c)\n");
    return 0;
}
