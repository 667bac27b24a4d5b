// check_concepts.c: the checker of the concept exercises (concepts.h), built with one exercise
// (EXERCISE = 5..25) by `make exerciseN`. It runs your function and the library's reference on
// random inputs of several sizes and on the awkward cases that break the usual wrong attempt (each
// case's name says the rule it tests), and stops at the first element that differs by more than
// the exercise's tolerance, naming the case, the element (row and column for a matrix), your value
// and the expected one, and, where it can tell, the rule your answer broke. Every exercise has a
// classic wrong attempt in wrong/exN_*.c that `make test` requires this checker to reject.
// Exit status: 0 passed, 1 failed or not implemented yet.
//   ./exerciseN
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "concepts.h"
#include "tw.h"

#ifndef EXERCISE
#error "build with -DEXERCISE=N (make exerciseN does)"
#endif

static int g_todo = 0;
void ex_not_implemented(void) { g_todo = 1; }

// Fills x (n) with N(0, std^2) numbers from a fixed seed, so every run checks the same inputs.
// (Not static, like the helpers below: an exercise that does not use it gets no warning.)
void randn(float *x, long n, float std, uint64_t seed) {
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_rng_fill_normal(&r, x, n, std);
}

// The helpers below are not static so that an exercise that does not use one gets no warning.

// 1 if got agrees with want: |got - want| <= atol + rtol |want|, and an infinity or NaN only where
// the reference has the same.
int close_enough(float g, float w, float atol, float rtol) {
    return (isnan(w) && isnan(g)) || (isinf(w) && g == w) ||
           (isfinite(w) && fabsf(g - w) <= atol + rtol * fabsf(w));
}

// Compares the vectors got and want (n) element by element; prints the first failure.
int compare(const char *what, const float *got, const float *want, long n, float atol, float rtol) {
    for (long i = 0; i < n; i++)
        if (!close_enough(got[i], want[i], atol, rtol)) {
            printf("FAIL: %s: element [%ld] is %.9g, expected %.9g (tolerance %g + %g x |expected|)\n",
                   what, i, (double)got[i], (double)want[i], (double)atol, (double)rtol);
            return 1;
        }
    return 0;
}

// The same for matrices got, want (rows, cols), naming the row and the column of the first failure.
int compare_matrix(const char *what, const float *got, const float *want, long rows, long cols,
                   float atol, float rtol) {
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++)
            if (!close_enough(got[r * cols + c], want[r * cols + c], atol, rtol)) {
                printf("FAIL: %s: row %ld, column %ld is %.9g, expected %.9g (tolerance %g + %g x "
                       "|expected|)\n", what, r, c, (double)got[r * cols + c],
                       (double)want[r * cols + c], (double)atol, (double)rtol);
                return 1;
            }
    return 0;
}

// 1 if every element of got (n) agrees with want within the tolerance (no message): used to
// recognise a known wrong answer and name the rule it breaks.
int all_close(const float *got, const float *want, long n, float atol, float rtol) {
    for (long i = 0; i < n; i++)
        if (!close_enough(got[i], want[i], atol, rtol)) return 0;
    return 1;
}

// Stops at the stub: it computed nothing, so comparing would only print noise.
static void stop_if_todo(void) {
    if (g_todo) {
        printf("not implemented yet: open %s, replace the TODO, and run `make exercise%d` again.\n",
               ex_source_file, EXERCISE);
        exit(1);
    }
}

#define BUF 16384
// Scratch for the cases (not all exercises use all of them, hence not static: no unused warning).
float A[BUF], B[BUF], Cb[BUF], Dm[BUF], GOT[BUF], WANT[BUF];
float B_VALUES[BUF];   // exercise 35's value rows

// ---- shared by exercises 13, 20 and 23 (tokenizers) ----
#if EXERCISE == 13 || EXERCISE == 20 || EXERCISE == 23
// A small tokenizer in memory with the layout of llama2.c's files: <unk>, BOS, EOS, the 256 byte
// tokens, the characters " ", "a", "b", "c", "e", "h", "t", then the given pieces, piece k scoring
// -1 - k (so the first piece merges first), the characters -1000 (they are never a merge result).
enum { TOK_N_CHARS = 7, TOK_MAX = 300 };
static const char *TOK_CHARS[TOK_N_CHARS] = { " ", "a", "b", "c", "e", "h", "t" };
typedef struct { tw_tokenizer t; char *strings[TOK_MAX]; float scores[TOK_MAX]; int sorted[TOK_MAX]; } small_tok;
static const small_tok *g_sort_tok;   // qsort has no context argument in C11
static int by_string(const void *a, const void *b) {
    int i = *(const int *)a, j = *(const int *)b;
    int c = strcmp(g_sort_tok->strings[i], g_sort_tok->strings[j]);
    return c ? c : i - j;
}
static void tok_make(small_tok *k, const char *const *pieces, int n_pieces) {
    memset(k, 0, sizeof *k);
    int V = 0;
    static char text[TOK_MAX][16];
    snprintf(text[V], 16, "<unk>"); k->scores[V++] = 0.0f;
    snprintf(text[V], 16, "\n<s>\n"); k->scores[V++] = 0.0f;
    snprintf(text[V], 16, "\n</s>\n"); k->scores[V++] = 0.0f;
    for (int b = 0; b < 256; b++) { snprintf(text[V], 16, "<0x%02X>", b); k->scores[V++] = 0.0f; }
    for (int c = 0; c < TOK_N_CHARS; c++) { snprintf(text[V], 16, "%s", TOK_CHARS[c]); k->scores[V++] = -1000.0f; }
    for (int p = 0; p < n_pieces; p++) { snprintf(text[V], 16, "%s", pieces[p]); k->scores[V++] = -1.0f - (float)p; }
    int longest = 1;
    for (int i = 0; i < V; i++) {
        k->strings[i] = text[i];
        k->sorted[i] = i;
        if ((int)strlen(text[i]) > longest) longest = (int)strlen(text[i]);
    }
    g_sort_tok = k;
    qsort(k->sorted, (size_t)V, sizeof(int), by_string);
    k->t.vocab_size = V;
    k->t.max_token_length = longest;
    k->t.vocab = k->strings;
    k->t.scores = k->scores;
    k->t.sorted = k->sorted;
    for (int b = 0; b < 256; b++) { k->t.byte_pieces[2 * b] = (char)b; k->t.byte_pieces[2 * b + 1] = '\0'; }
}
// The library's encoding of text (no BOS, no EOS). Returns the count.
int tok_encode(int *ids, const small_tok *k, const char *text) {
    int n = 0;
    if (tw_tokenizer_encode(&k->t, ids, &n, (int)tw_tokenizer_max_tokens(text), text, 0, 0) != TW_OK) {
        printf("the reference tokenizer failed on \"%s\"\n", text);
        exit(1);
    }
    return n;
}
int tok_id(const small_tok *k, const char *s) {
    int id = tw_tokenizer_lookup(&k->t, s);
    if (id < 0) { printf("checker bug: no piece \"%s\"\n", s); exit(1); }
    return id;
}
// (The helpers of this section are not static: exercise 23 uses only some of them.)
// Prints ids as their pieces, [ ][ab][c], a byte token as <0x7A>, an id outside the vocabulary as
// its number.
void print_pieces(const small_tok *k, const int *ids, int n) {
    for (int i = 0; i < n && i < 40; i++) {
        if (ids[i] >= 0 && ids[i] < k->t.vocab_size) printf("[%s]", k->strings[ids[i]]);
        else printf("[id %d?]", ids[i]);
    }
    if (n > 40) printf("... (%d ids)", n);
}
// Compares two id sequences exactly; prints both as pieces on a mismatch.
int compare_ids(const char *what, const small_tok *k, const int *got, int n_got,
                       const int *want, int n_want) {
    int same = n_got == n_want;
    for (int i = 0; same && i < n_got; i++) same = got[i] == want[i];
    if (same) return 0;
    printf("FAIL: %s:\n  yours    (%d ids) ", what, n_got);
    if (n_got < 0 || n_got > 4096) printf("a length of %d is impossible", n_got);
    else print_pieces(k, got, n_got);
    printf("\n  expected (%d ids) ", n_want);
    print_pieces(k, want, n_want);
    printf("\n");
    return 1;
}
#endif

#if EXERCISE == 5
static const char *TITLE = "softmax with a temperature";
// Tolerance: expf is within 1 ulp; dividing by tau before or after subtracting the max changes the
// argument by at most an ulp of |x|/tau (<= 1e-6 here), and the sum of n <= 1000 terms in another
// order differs by <= n u = 6e-5 relative in float (the solution sums in double). 1e-4 relative
// (+ 1e-7 absolute for the tiny entries) covers both; a wrong formula is off by far more.
static int one(const char *what, const float *x, int n, float tau) {
    ex_softmax_temperature(GOT, x, n, tau);
    stop_if_todo();
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
            snprintf(what, sizeof what, "random logits, n = %d, temperature %g (softmax of x / temperature)",
                     sizes[i], (double)taus[j]);
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
static const char *TITLE = "LayerNorm and RMSNorm";
// Tolerance: the library accumulates in double and rounds each output once; an answer that also
// uses double differs by a few ulp, 1e-5 (+ 1e-5 relative) allows that. Float accumulation of
// 1000 terms (6e-5 relative) or the one-pass E[x^2] - E[x]^2 fails the offset row, on purpose.
static int one(const char *what, const float *x, int C) {
    const float eps = 1e-5f;
    for (int c = 0; c < C; c++) { Cb[c] = 1.0f + 0.1f * (float)(c % 7); Dm[c] = 0.05f * (float)(c % 5) - 0.1f; }
    char w2[160];
    ex_layernorm(GOT, x, Cb, Dm, C, eps);
    stop_if_todo();
    tw_layernorm_forward(WANT, NULL, NULL, x, Cb, Dm, 1, C, eps);
    snprintf(w2, sizeof w2, "LayerNorm, %s", what);
    if (compare(w2, GOT, WANT, C, 1e-5f, 1e-5f)) return 1;
    ex_rmsnorm(GOT, x, Cb, C, eps);
    stop_if_todo();
    tw_rmsnorm_forward(WANT, NULL, x, Cb, 1, C, eps);
    snprintf(w2, sizeof w2, "RMSNorm, %s", what);
    return compare(w2, GOT, WANT, C, 1e-5f, 1e-5f);
}
// The awkward rows come before the long random one, so that a one-pass variance in float
// (E[x^2] - E[x]^2) fails on the row that shows why, not by accumulated rounding at C = 1000.
static int run_all(void) {
    static const int sizes[] = { 1, 3, 64, 1000 };
    char what[128];
    for (int i = 0; i < 3; i++) {
        randn(A, sizes[i], 2.0f, 200 + i);
        snprintf(what, sizeof what, "random row, C = %d (mean and variance divide by C, not C - 1)",
                 sizes[i]);
        if (one(what, A, sizes[i])) return 1;
    }
    for (int c = 0; c < 64; c++) A[c] = 0.5f;
    if (one("a constant row (variance 0: LayerNorm gives beta)", A, 64)) return 1;
    randn(A, 64, 1.0f, 210);
    for (int c = 0; c < 64; c++) A[c] += 1000.0f;
    if (one("row = 1000 + N(0, 1) (the one-pass variance E[x^2] - E[x]^2 cancels: subtract the "
            "mean first)", A, 64)) return 1;
    randn(A, 64, 1e-3f, 211);
    if (one("a row of tiny values (std 1e-3: eps goes inside the square root)", A, 64)) return 1;
    randn(A, sizes[3], 2.0f, 203);
    if (one("random row, C = 1000", A, sizes[3])) return 1;
    return 0;
}
#elif EXERCISE == 7
static const char *TITLE = "RoPE, adjacent pairing";
// Tolerance: with the angle in double, cos and sin rounded to float and the same two products
// per output, the answer equals the library's up to the order of two float operations: 1e-6
// absolute + 1e-6 relative (inputs are of size ~1). A float angle at position 4096 is off by
// ~5e-4 and fails, on purpose.
static int one(const char *what, int D, int pos, float theta, uint64_t seed) {
    randn(GOT, D, 1.0f, seed);
    memcpy(WANT, GOT, (size_t)D * sizeof(float));
    memcpy(Dm, GOT, (size_t)D * sizeof(float));
    ex_rope_adjacent(GOT, D, pos, theta);
    stop_if_todo();
    tw_rope_adjacent_forward(WANT, 1, 1, D, pos, theta);
    if (all_close(GOT, WANT, D, 1e-6f, 1e-6f)) return 0;
    tw_rope_halves_forward(Dm, 1, 1, D, pos, theta);
    if (all_close(GOT, Dm, D, 1e-5f, 1e-5f)) {
        printf("FAIL: %s: your result is RoPE with the halves pairing (i, i + D/2); this exercise "
               "pairs adjacent values (2i, 2i+1)\n", what);
        return 1;
    }
    return compare(what, GOT, WANT, D, 1e-6f, 1e-6f);
}
static int run_all(void) {
    static const int dims[] = { 2, 8, 64, 128 };
    static const int poss[] = { 0, 1, 7, 4096 };
    char what[128];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            snprintf(what, sizeof what, "D = %d, position %d, theta 10000%s", dims[i], poss[j],
                     poss[j] >= 4096 ? " (a far position: compute the angle in double)" : "");
            if (one(what, dims[i], poss[j], 10000.0f, 300 + i * 4 + j)) return 1;
        }
    if (one("D = 128, position 1000, theta 1e6 (Qwen3)", 128, 1000, 1e6f, 320)) return 1;
    if (one("D = 64, position 100000 (the angle pos * theta^(-2i/D) needs double: in float it is "
            "off by ~4e-3)", 64, 100000, 10000.0f, 321)) return 1;
    return 0;
}
#elif EXERCISE == 8
static const char *TITLE = "causal scaled dot-product attention";
// Tolerance: each score is a float dot product of D <= 64 terms (error <= D u sum|qk|, about
// 1e-5 for these sizes), which moves a weight by the same relative amount through exp; the
// output averages values of size ~1. 1e-4 absolute + 1e-4 relative covers it; a missing
// sqrt(D), a missing mask or a wrong softmax is off by 1e-1 or more.
static int check(const char *what, int T, int D) {
    ex_causal_attention(GOT, A, B, Cb, T, D);
    stop_if_todo();
    static float w[BUF];
    tw_sdpa_forward(WANT, NULL, w, A, B, Cb, NULL, T, T, D, 1, 0);
    return compare_matrix(what, GOT, WANT, T, D, 1e-4f, 1e-4f);   // row t (query), column d
}
static int one(const char *what, int T, int D, float qscale, uint64_t seed) {
    randn(A, (long)T * D, qscale, seed);
    randn(B, (long)T * D, 1.0f, seed + 1);
    randn(Cb, (long)T * D, 1.0f, seed + 2);
    return check(what, T, D);
}
// Scores of several hundred, exact in float: q and k hold small non-negative integers (times 16
// for q), D = 16, so every score is an integer multiple of 4 (the division by sqrt(16) = 4 is
// exact). expf of a score above 88.7 overflows to inf, so a softmax without the max subtraction
// gives inf / inf = NaN.
static int huge_scores(void) {
    const int T = 4, D = 16;
    for (int i = 0; i < T * D; i++) {
        A[i] = 16.0f * (float)((i * 7) % 5);   // 0 .. 64: every score is >= 0, most far above 88.7
        B[i] = (float)((i * 3) % 4);
        Cb[i] = (float)((i * 5) % 7) * 0.25f;
    }
    return check("T = 4, D = 16, scores of several hundred (expf overflows past 88.7: subtract "
                 "each row's max first)", T, D);
}
static int run_all(void) {
    static const int Ts[] = { 1, 2, 5, 17 }, Ds[] = { 1, 4, 16, 64 };
    char what[128];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            snprintf(what, sizeof what, "T = %d, D = %d (scores q.k / sqrt(D), keys s <= t only)",
                     Ts[i], Ds[j]);
            if (one(what, Ts[i], Ds[j], 1.0f, 400 + i * 4 + j)) return 1;
        }
    if (one("T = 8, D = 16, large scores (q x 4: a nearly one-hot softmax)", 8, 16, 4.0f, 430)) return 1;
    if (huge_scores()) return 1;
    return 0;
}
#elif EXERCISE == 9
static const char *TITLE = "SwiGLU";
// Tolerance: two float dot products of C and then F <= 172 terms, in any order: about
// (C + F) u sum|terms|, below 1e-4 of the output's scale here; 1e-4 absolute + 1e-4 relative.
// The awkward gate of -1000 must give 0 (silu(-1000) = -0), not NaN.
static int one(const char *what, int C, int F, float xscale, uint64_t seed) {
    randn(A, C, xscale, seed);
    randn(B, (long)F * C, 0.3f, seed + 1);
    randn(Cb, (long)F * C, 0.3f, seed + 2);
    randn(Dm, (long)C * F, 0.3f, seed + 3);
    ex_swiglu(GOT, A, B, Cb, Dm, C, F);
    stop_if_todo();
    static float g[BUF], u[BUF], act[BUF];
    tw_swiglu_forward(WANT, g, u, act, A, tw_weight_fp32(B), tw_weight_fp32(Cb), tw_weight_fp32(Dm),
                      1, C, F);
    if (all_close(GOT, WANT, C, 1e-4f, 1e-4f)) return 0;
    static float swapped[BUF];
    tw_swiglu_forward(swapped, g, u, act, A, tw_weight_fp32(Cb), tw_weight_fp32(B), tw_weight_fp32(Dm),
                      1, C, F);
    if (all_close(GOT, swapped, C, 1e-4f, 1e-4f)) {
        printf("FAIL: %s: you applied silu to the up projection (Wu x); silu goes on the gate: "
               "silu(Wg x) * (Wu x)\n", what);
        return 1;
    }
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
static const char *TITLE = "top-p sampling";
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
        if (g_todo) { tw_sampler_free(&s); stop_if_todo(); }
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
    // In id order the mass first exceeds 0.7 only at the last token; sorted, {0.6, 0.25} suffice.
    float unsorted[3] = { logf(0.15f), logf(0.25f), logf(0.6f) };
    if (one("probabilities 0.15, 0.25, 0.6 with top-p 0.7: the nucleus is {0.6, 0.25} (sort, "
            "largest first)", unsorted, 3, 0.7f, 97, 50)) return 1;
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
static const char *TITLE = "the backward of Linear";
// Tolerance: each gradient is a float sum of T or C_out products of N(0, 1) numbers, in any
// order: about n u sum|terms| <= 64 x 6e-8 x 64 ~ 2.5e-4 of the worst case, far less in practice;
// 1e-4 absolute + 1e-4 relative. GOT is filled with a sentinel first, so adding onto what the
// buffers held (instead of writing) fails.
// The mistake "dW[o][i] = dy[t][o] x[t][i]" inside the loop over t: only the last token's product
// is left. Recognised when every element equals that product (x NULL: db, whose product is dy).
static int last_token_only(const char *what, const char *name, const float *got, const float *dy,
                           const float *x, int T, int C_in, int C_out) {
    const float *dy_last = dy + (long)(T - 1) * C_out, *x_last = x ? x + (long)(T - 1) * C_in : NULL;
    for (int o = 0; o < C_out; o++)
        for (int i = 0; i < C_in; i++)
            if (!close_enough(got[o * C_in + i], dy_last[o] * (x_last ? x_last[i] : 1.0f), 1e-5f, 1e-5f))
                return 0;
    printf("FAIL: %s: %s holds only the last token's product: written, not added (a weight is used "
           "at every token, so %s sums the T = %d products: += over t)\n", what, name, name, T);
    return 1;
}
// The opposite mistake: adding onto what the buffer held (the sentinel 12345) instead of writing.
static int added_onto_buffer(const char *what, const char *name, const float *got,
                             const float *want, long n) {
    for (long i = 0; i < n; i++)
        if (!close_enough(got[i] - 12345.0f, want[i], 2e-3f, 1e-4f)) return 0;   // 12345 has ulp 1e-3
    printf("FAIL: %s: %s was added onto what the buffer held (12345 here): set it to 0 first, or "
           "write the sum\n", what, name);
    return 1;
}
static int one(const char *what, int T, int C_in, int C_out, uint64_t seed) {
    static float gdx[BUF], gdW[BUF], gdb[BUF], wdx[BUF], wdW[BUF], wdb[BUF];
    randn(A, (long)T * C_out, 1.0f, seed);        // dy
    randn(B, (long)T * C_in, 1.0f, seed + 1);     // x
    randn(Cb, (long)C_out * C_in, 1.0f, seed + 2);   // W
    for (int i = 0; i < BUF; i++) { gdx[i] = 12345.0f; gdW[i] = 12345.0f; gdb[i] = 12345.0f; }
    ex_linear_backward(gdx, gdW, gdb, A, B, Cb, T, C_in, C_out);
    stop_if_todo();
    memset(wdx, 0, sizeof wdx); memset(wdW, 0, sizeof wdW); memset(wdb, 0, sizeof wdb);
    tw_linear_backward(wdx, wdW, wdb, A, B, Cb, T, C_in, C_out);   // accumulates onto zeros
    if (T > 1 && (last_token_only(what, "dW", gdW, A, B, T, C_in, C_out) ||
                  last_token_only(what, "db", gdb, A, NULL, T, 1, C_out)))
        return 1;
    if (added_onto_buffer(what, "dx", gdx, wdx, (long)T * C_in) ||
        added_onto_buffer(what, "dW", gdW, wdW, (long)C_out * C_in) ||
        added_onto_buffer(what, "db", gdb, wdb, C_out))
        return 1;
    char w[256];
    snprintf(w, sizeof w, "%s: dx (T, C_in): row t, column i", what);
    if (compare_matrix(w, gdx, wdx, T, C_in, 1e-4f, 1e-4f)) return 1;
    snprintf(w, sizeof w, "%s: dW (C_out, C_in): row o, column i", what);
    if (compare_matrix(w, gdW, wdW, C_out, C_in, 1e-4f, 1e-4f)) return 1;
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
static const char *TITLE = "softmax + cross-entropy backward";
// Tolerance: each element is a probability (computed by the library in float from a double
// log-sum-exp) minus 0 or 1, divided by n: 1e-6 absolute + 1e-5 relative covers a float softmax
// (a few ulps of values <= 1). The awkward cases: V = 1 (the gradient is exactly 0), logits of
// +-1000 (exp must not overflow), a -inf logit (probability 0, no NaN), ignored rows, and every
// row ignored (all zeros, not 0/0).
static int one(const char *what, const float *logits, const int *targets, int T, int V) {
    for (long i = 0; i < (long)T * V; i++) GOT[i] = 12345.0f;
    ex_cross_entropy_backward(GOT, logits, targets, T, V);
    stop_if_todo();
    float loss;
    if (tw_cross_entropy_forward(&loss, NULL, Dm, logits, targets, T, V, TW_IGNORE_INDEX) != TW_OK) {
        printf("the reference refused the case (a bad target?)\n");
        exit(1);
    }
    memset(WANT, 0, (size_t)T * V * sizeof(float));
    tw_cross_entropy_backward(WANT, 1.0f, Dm, targets, T, V, TW_IGNORE_INDEX);
    return compare_matrix(what, GOT, WANT, T, V, 1e-6f, 1e-5f);   // row t, column v
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
    if (one("rows 1 and 3 ignored (target -100): divide by the n = 2 counted rows, not T = 4",
            A, tg, 4, 5)) return 1;
    int none[3] = { -100, -100, -100 };
    if (one("every row ignored: all zeros", A, none, 3, 5)) return 1;
    return 0;
}
#elif EXERCISE == 13
static const char *TITLE = "BPE encoding: merges by score";
// Exact: the ids must equal tw_tokenizer_encode's (no BOS, no EOS) for the same vocabulary.
static const char *PIECES[] = { "bc", "ab", "aa", "th", " t", "he", " th", " the", "ca", "the" };
static int one(const char *what, const small_tok *k, const char *text) {
    static int got[4096], want[4096];
    for (int i = 0; i < 4096; i++) got[i] = -7;
    int n_got = ex_bpe_encode(got, text, (const char *const *)k->strings, k->scores, k->t.vocab_size);
    stop_if_todo();
    int n_want = tok_encode(want, k, text);
    return compare_ids(what, k, got, n_got, want, n_want);
}
static int run_all(void) {
    small_tok k;
    tok_make(&k, PIECES, 10);
    if (one("the empty text gives no ids (no dummy prefix either)", &k, "")) return 1;
    if (one("\"a\": the dummy prefix \" \" comes first", &k, "a")) return 1;
    if (one("\"abc\": \"bc\" scores above \"ab\", so the highest-scoring pair merges first, wherever "
            "it is", &k, "abc")) return 1;
    if (one("\"aaa\": two equal pairs (a, a): the leftmost merges first", &k, "aaa")) return 1;
    if (one("\"the\": merging repeats until no pair is in the vocabulary ([th] then [ th] then "
            "[ the])", &k, "the")) return 1;
    if (one("\"az\": 'z' is not in the vocabulary: its byte token <0x7A> (id 'z' + 3)", &k, "az")) return 1;
    static char text[512];
    tw_rng r;
    tw_rng_init(&r, 1300);
    for (int len = 8; len <= 500; len *= 4) {
        for (int i = 0; i < len; i++) text[i] = " abcethz"[tw_rng_next(&r) % 8];
        text[len] = '\0';
        char what[96];
        snprintf(what, sizeof what, "a random text of %d characters from \" abcethz\"", len);
        if (one(what, &k, text)) return 1;
    }
    return 0;
}
#elif EXERCISE == 14
static const char *TITLE = "the backward of the embedding lookup";
// Tolerance: each element is a sum of a few float additions in token order, the library's order
// too; 1e-6 absolute + 1e-6 relative covers another order of up to 8 terms of size ~1.
static int one(const char *what, const int *ids, int T, int V, int C, float start, uint64_t seed) {
    randn(A, (long)T * C, 1.0f, seed);   // dout
    for (long i = 0; i < (long)V * C; i++) GOT[i] = WANT[i] = start * (float)(i % 3);
    ex_embedding_backward(GOT, A, ids, T, V, C);
    stop_if_todo();
    if (tw_embedding_backward(WANT, A, ids, T, V, C) != TW_OK) { printf("checker bug: bad id\n"); exit(1); }
    return compare_matrix(what, GOT, WANT, V, C, 1e-6f, 1e-6f);   // row = token id, column = channel
}
static int run_all(void) {
    int distinct[4] = { 3, 0, 5, 1 };
    if (one("ids 3 0 5 1 (all different), dtable starts at 0", distinct, 4, 6, 4, 0.0f, 1400)) return 1;
    int twice[5] = { 2, 4, 2, 0, 2 };
    if (one("ids 2 4 2 0 2: id 2 appears three times and must collect the sum of its three rows "
            "(scatter-add: +=, not =)", twice, 5, 6, 4, 0.0f, 1401)) return 1;
    if (one("ids 3 0 5 1 with dtable already holding gradients: add to them, do not overwrite",
            distinct, 4, 6, 4, 1.0f, 1402)) return 1;
    static int ids[64];
    for (int t = 0; t < 64; t++) ids[t] = (t * 37 + 11) % 50;
    if (one("64 ids over a vocabulary of 50 (repeats), C = 16", ids, 64, 50, 16, 0.5f, 1403)) return 1;
    int one_id[1] = { 0 };
    if (one("V = 1, T = 1, C = 1", one_id, 1, 1, 1, 0.0f, 1404)) return 1;
    return 0;
}
#elif EXERCISE == 15
static const char *TITLE = "grouped-query attention over all heads";
// The reference is tw_mha_forward (no RoPE, no QK-norm, causal, random projections): your function
// gets its q_rot, k_rot and v and must give its z. Tolerance: the library runs the same
// tw_sdpa_forward per head on the same numbers, so a correct gathering is exact; 1e-5 + 1e-5
// relative allows your own attention loop (float dot products of D <= 16 terms of size ~1).
static int one(const char *what, int T, int H, int G, int D, uint64_t seed) {
    const int C = 16;
    tw_mha_config cfg = { .d_model = C, .n_head = H, .n_kv_head = G, .head_dim = D, .causal = 1,
                          .rope = TW_ROPE_NONE, .rope_theta = 10000.0f };
    tw_mha_acts s = { 0 };
    if (tw_mha_config_check(&cfg) != TW_OK || tw_mha_acts_init(&s, &cfg, T, T) != TW_OK) {
        printf("checker bug: cannot make attention H %d G %d D %d\n", H, G, D);
        exit(1);
    }
    randn(A, (long)T * C, 1.0f, seed);
    randn(B, (long)H * D * C, 0.5f, seed + 1);
    randn(Cb, (long)G * D * C, 0.5f, seed + 2);
    randn(Dm, (long)G * D * C, 0.5f, seed + 3);
    static float wo[BUF], out[BUF];
    randn(wo, (long)C * H * D, 0.5f, seed + 4);
    tw_mha_weights w = { .wq = tw_weight_fp32(B), .wk = tw_weight_fp32(Cb), .wv = tw_weight_fp32(Dm),
                         .wo = tw_weight_fp32(wo) };
    tw_mha_forward(out, &s, NULL, A, NULL, NULL, &cfg, &w, T, 0, 0);
    for (long i = 0; i < (long)T * H * D; i++) GOT[i] = 12345.0f;
    ex_gqa_attention(GOT, s.q_rot, s.k_rot, s.v, T, H, G, D);
    if (g_todo) tw_mha_acts_free(&s);
    stop_if_todo();
    memcpy(WANT, s.z, (size_t)T * H * D * sizeof(float));
    tw_mha_acts_free(&s);
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++)
            for (int d = 0; d < D; d++) {
                long i = ((long)t * H + h) * D + d;
                if (!close_enough(GOT[i], WANT[i], 1e-5f, 1e-5f)) {
                    printf("FAIL: %s: z at position t = %d, head h = %d, d = %d (column %d of the row) "
                           "is %.9g, expected %.9g (tolerance 1e-05 + 1e-05 x |expected|)\n",
                           what, t, h, d, h * D + d, (double)GOT[i], (double)WANT[i]);
                    return 1;
                }
            }
    return 0;
}
static int run_all(void) {
    if (one("T = 3, one head (H = G = 1, D = 8)", 3, 1, 1, 8, 1500)) return 1;
    if (one("T = 3, H = G = 2, D = 4: head h is columns h*D .. h*D+D-1 of every row, not a block of "
            "T rows", 3, 2, 2, 4, 1501)) return 1;
    if (one("T = 5, H = 4, G = 2, D = 4: query heads 0, 1 read kv head 0 and 2, 3 read kv head 1 "
            "(h / (H / G), not h % G)", 5, 4, 2, 4, 1502)) return 1;
    if (one("T = 4, H = 4, G = 1, D = 2: multi-query, every head reads kv head 0", 4, 4, 1, 2, 1503)) return 1;
    if (one("T = 1, H = 8, G = 4, D = 2 (stories260K's heads)", 1, 8, 4, 2, 1504)) return 1;
    if (one("T = 7, H = 6, G = 3, D = 16", 7, 6, 3, 16, 1505)) return 1;
    return 0;
}
#elif EXERCISE == 16
static const char *TITLE = "a pre-norm block's residual wiring";
// The reference is tw_block_forward (pre-norm, RMSNorm, SwiGLU, causal attention with RoPE); the
// sub-layers handed to you are the library's own calls with the same weights. Tolerance: a correct
// wiring runs the same calls on the same numbers and adds the same floats, so it is exact up to the
// order of two additions; 1e-5 + 1e-5 relative.
enum { BL_C = 16, BL_H = 4, BL_G = 2, BL_D = 4, BL_F = 24, BL_T = 6 };
typedef struct {
    tw_block_config cfg;
    tw_block_weights w;
    tw_mha_acts attn;
    float gate[BL_T * BL_F], up[BL_T * BL_F], act[BL_T * BL_F];
} block_ctx;
static void norm1(void *p, float *out, const float *in, int T) {
    block_ctx *b = p;
    tw_rmsnorm_forward(out, NULL, in, b->w.norm1_w, T, BL_C, b->cfg.norm_eps);
}
static void norm2(void *p, float *out, const float *in, int T) {
    block_ctx *b = p;
    tw_rmsnorm_forward(out, NULL, in, b->w.norm2_w, T, BL_C, b->cfg.norm_eps);
}
static void attn(void *p, float *out, const float *in, int T) {
    block_ctx *b = p;
    tw_mha_forward(out, &b->attn, NULL, in, NULL, NULL, &b->cfg.attn, &b->w.attn, T, 0, 0);
}
static void ffn(void *p, float *out, const float *in, int T) {
    block_ctx *b = p;
    tw_swiglu_forward(out, b->gate, b->up, b->act, in, b->w.ffn_gate, b->w.ffn_up, b->w.ffn_down,
                      T, BL_C, BL_F);
}
// The usual wrong wirings, to name the one an answer matches. kind 1: the residual carries the
// normed input (h = n1 + attn(n1), y = n2 + ffn(n2)); 2: post-norm (h = norm1(x + attn(x)),
// y = norm2(h + ffn(h))); 3: parallel (the FFN reads norm2(x), not norm2(h)).
static void wrong_wiring(float *y, const float *x, int T, block_ctx *b, int kind) {
    static float n[BL_T * BL_C], a[BL_T * BL_C], h[BL_T * BL_C], t[BL_T * BL_C];
    const long TC = (long)T * BL_C;
    if (kind == 2) {
        attn(b, a, x, T);
        for (long i = 0; i < TC; i++) t[i] = x[i] + a[i];
        norm1(b, h, t, T);
        ffn(b, a, h, T);
        for (long i = 0; i < TC; i++) t[i] = h[i] + a[i];
        norm2(b, y, t, T);
        return;
    }
    norm1(b, n, x, T);
    attn(b, a, n, T);
    for (long i = 0; i < TC; i++) h[i] = (kind == 1 ? n[i] : x[i]) + a[i];
    norm2(b, n, kind == 3 ? x : h, T);
    ffn(b, a, n, T);
    for (long i = 0; i < TC; i++) y[i] = (kind == 1 ? n[i] : h[i]) + a[i];
}
static int one(const char *what, int T, float xscale, uint64_t seed) {
    static float w[8][BUF / 8];   // norm1, wq, wk, wv, wo, norm2, gate+up, down
    block_ctx b = { .cfg = { .attn = { .d_model = BL_C, .n_head = BL_H, .n_kv_head = BL_G,
                                       .head_dim = BL_D, .causal = 1, .rope = TW_ROPE_ADJACENT,
                                       .rope_theta = 10000.0f },
                             .prenorm = 1, .norm = TW_NORM_RMS, .norm_eps = 1e-5f,
                             .ffn = TW_FFN_SWIGLU, .ffn_hidden = BL_F } };
    for (int i = 0; i < 8; i++) randn(w[i], BUF / 8, 0.4f, seed + 10 + (uint64_t)i);
    for (int c = 0; c < BL_C; c++) { w[0][c] = 1.0f + 0.3f * w[0][c]; w[5][c] = 1.0f + 0.3f * w[5][c]; }
    b.w.norm1_w = w[0]; b.w.norm2_w = w[5];
    b.w.attn.wq = tw_weight_fp32(w[1]); b.w.attn.wk = tw_weight_fp32(w[2]);
    b.w.attn.wv = tw_weight_fp32(w[3]); b.w.attn.wo = tw_weight_fp32(w[4]);
    b.w.ffn_gate = tw_weight_fp32(w[6]); b.w.ffn_up = tw_weight_fp32(w[6] + BL_F * BL_C);
    b.w.ffn_down = tw_weight_fp32(w[7]);
    tw_block_acts s = { 0 };
    if (tw_block_config_check(&b.cfg) != TW_OK || tw_block_acts_init(&s, &b.cfg, T, T) != TW_OK ||
        tw_mha_acts_init(&b.attn, &b.cfg.attn, T, T) != TW_OK) {
        printf("checker bug: cannot make the block\n");
        exit(1);
    }
    randn(A, (long)T * BL_C, xscale, seed);
    tw_block_forward(WANT, &s, NULL, A, &b.cfg, &b.w, T, 0);
    tw_block_acts_free(&s);
    for (long i = 0; i < (long)T * BL_C; i++) GOT[i] = 12345.0f;
    static float scratch[3 * BL_T * BL_C];
    ex_sublayers f = { norm1, attn, norm2, ffn, &b };
    ex_prenorm_block(GOT, A, T, BL_C, &f, scratch);
    if (g_todo) tw_mha_acts_free(&b.attn);
    stop_if_todo();
    int bad = !all_close(GOT, WANT, (long)T * BL_C, 1e-5f, 1e-5f);
    static const char *named[4] = { "", "your residual carries norm1(x); each sub-layer's output is "
                                    "added to the raw stream: h = x + attn(norm1(x))",
                                    "this is the post-norm block (norm after the addition); pre-norm "
                                    "normalises each sub-layer's input and adds to the raw stream",
                                    "your FFN reads norm2(x); it reads norm2(h), the stream after the "
                                    "attention's residual" };
    for (int kind = 1; bad && kind <= 3; kind++) {
        wrong_wiring(Dm, A, T, &b, kind);
        if (all_close(GOT, Dm, (long)T * BL_C, 1e-5f, 1e-5f)) {
            printf("FAIL: %s: %s\n", what, named[kind]);
            tw_mha_acts_free(&b.attn);
            return 1;
        }
    }
    tw_mha_acts_free(&b.attn);
    return compare_matrix(what, GOT, WANT, T, BL_C, 1e-5f, 1e-5f);   // row t, column c
}
static int run_all(void) {
    if (one("T = 1, x ~ N(0, 1)", 1, 1.0f, 1600)) return 1;
    if (one("T = 6, x ~ N(0, 1)", BL_T, 1.0f, 1610)) return 1;
    if (one("T = 6, x ~ N(0, 30^2) (a stream far from unit size, as in deep layers)", BL_T, 30.0f, 1620))
        return 1;
    return 0;
}
#elif EXERCISE == 17
static const char *TITLE = "counting a model's parameters";
// Exact: integer counts, compared with tw_params_count for the same configuration (Llama layout).
static int one(const char *what, ex_model_config c) {
    ex_param_counts got = { -1, -1, -1, -1, -1, -1, -1 };
    ex_count_params(&got, &c);
    stop_if_todo();
    tw_hf_config h = { .arch = TW_ARCH_LLAMA, .vocab = c.V, .d_model = c.C, .n_layer = c.L,
                       .n_head = c.H, .n_kv_head = c.G, .head_dim = c.D, .ffn_hidden = c.F,
                       .max_seq = 2048, .tie_embeddings = c.tied, .gated_mlp = 1 };
    tw_param_counts want;
    if (tw_params_count(&want, &h) != TW_OK) { printf("checker bug: tw_params_count refused\n"); exit(1); }
    struct { const char *name; long long got, want; const char *rule; } f[] = {
        { "embed", got.embed, want.tok_embed, "V x C" },
        { "attn_layer", got.attn_layer, want.attn_layer,
          "q: H*D x C, k and v: G*D x C each (grouped-query: G kv heads, not H), o: C x H*D" },
        { "mlp_layer", got.mlp_layer, want.mlp_layer, "gate, up: F x C each, down: C x F" },
        { "norms_layer", got.norms_layer, want.norms_layer, "two RMSNorm gains of C each" },
        { "final_norm", got.final_norm, want.final_norm, "one RMSNorm gain of C" },
        { "lm_head", got.lm_head, want.lm_head, "V x C, or 0 when tied: a shared table counts once" },
        { "total", got.total, want.total, "embed + L x (attn + mlp + norms) + final_norm + lm_head" },
    };
    for (int i = 0; i < 7; i++)
        if (f[i].got != f[i].want) {
            printf("FAIL: %s: %s is %lld, expected %lld (%s)\n", what, f[i].name, f[i].got, f[i].want,
                   f[i].rule);
            return 1;
        }
    return 0;
}
static int run_all(void) {
    if (one("a tiny untied MHA model: C 8, L 1, H 2 = G, D 4, F 16, V 10",
            (ex_model_config){ 8, 1, 2, 2, 4, 16, 10, 0 })) return 1;
    if (one("stories260K: C 64, L 5, H 8, G 4 (grouped-query), D 8, F 172, V 512, tied",
            (ex_model_config){ 64, 5, 8, 4, 8, 172, 512, 1 })) return 1;
    if (one("H x D != C (head_dim set apart, as Qwen3 and Gemma do): C 1024, L 2, H 16, G 8, D 128, "
            "F 3072, V 1000", (ex_model_config){ 1024, 2, 16, 8, 128, 3072, 1000, 0 })) return 1;
    if (one("Llama-2-7B's sizes: C 4096, L 32, H = G = 32, D 128, F 11008, V 32000, untied",
            (ex_model_config){ 4096, 32, 32, 32, 128, 11008, 32000, 0 })) return 1;
    if (one("Qwen3-8B-like sizes past 2^31: C 4096, L 36, H 32, G 8, D 128, F 12288, V 151936",
            (ex_model_config){ 4096, 36, 32, 8, 128, 12288, 151936, 0 })) return 1;
    return 0;
}
#elif EXERCISE == 18
static const char *TITLE = "one AdamW step";
// The reference is tw_adamw_step (each element in double, rounded once). Tolerance: an answer in
// float rounds a handful of operations on values of size ~1 (p, m) and ~1e-3 (the update), so
// 1e-6 absolute + 1e-5 relative; a missing bias correction moves p by ~5e-4, coupled decay by
// lr wd p / |update| (visible at wd = 0.1, p ~ 3).
static int check_step(const char *what, float *p, float *m, float *v, float *pr, float *mr, float *vr,
                      const float *g, long n, int step, tw_adamw_hparams hp) {
    ex_adamw_step(p, m, v, g, n, step, hp.lr, hp.beta1, hp.beta2, hp.eps, hp.weight_decay);
    stop_if_todo();
    tw_adamw_step(pr, mr, vr, g, n, step, &hp);
    char w[256];
    snprintf(w, sizeof w, "%s, step %d: m", what, step);
    if (compare(w, m, mr, n, 1e-6f, 1e-5f)) return 1;
    snprintf(w, sizeof w, "%s, step %d: v", what, step);
    if (compare(w, v, vr, n, 1e-9f, 1e-5f)) return 1;
    snprintf(w, sizeof w, "%s, step %d: p", what, step);
    return compare(w, p, pr, n, 1e-6f, 1e-5f);
}
// steps steps from step0 on n parameters ~ N(0, pscale^2) with gradients ~ N(0, gscale^2).
static int run(const char *what, long n, int step0, int steps, float pscale, float gscale,
               tw_adamw_hparams hp, uint64_t seed) {
    static float p[256], m[256], v[256], pr[256], mr[256], vr[256], g[256];
    randn(p, n, pscale, seed);
    memcpy(pr, p, (size_t)n * sizeof(float));
    memset(m, 0, sizeof m); memset(v, 0, sizeof v); memset(mr, 0, sizeof mr); memset(vr, 0, sizeof vr);
    for (int s = step0; s < step0 + steps; s++) {
        randn(g, n, gscale, seed + 1 + (uint64_t)s);
        if (check_step(what, p, m, v, pr, mr, vr, g, n, s, hp)) return 1;
    }
    return 0;
}
static int run_all(void) {
    const tw_adamw_hparams plain = { 1e-3f, 0.9f, 0.95f, 1e-8f, 0.0f };
    if (run("no decay (bias correction: m_hat = m / (1 - beta1^step), v_hat = v / (1 - beta2^step))",
            64, 1, 3, 1.0f, 1.0f, plain, 1800)) return 1;
    const tw_adamw_hparams decay = { 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f };
    if (run("weight decay 0.1 on weights of size ~3: decoupled (p *= 1 - lr wd before the update), "
            "not added to the gradient", 64, 1, 3, 3.0f, 1.0f, decay, 1810)) return 1;
    if (run("gradients of 1e-9: eps is added to sqrt(v_hat), outside the square root", 16, 1, 2,
            1.0f, 1e-9f, plain, 1820)) return 1;
    const tw_adamw_hparams torch = { 3e-4f, 0.9f, 0.999f, 1e-8f, 0.01f };
    if (run("torch's betas (0.9, 0.999) at steps 1000 .. 1002 (bias corrections near 1)", 256, 1000,
            3, 1.0f, 0.1f, torch, 1830)) return 1;
    return 0;
}
#elif EXERCISE == 19
static const char *TITLE = "Q8_0: quantizing one group";
// Exact: the scale and every q must equal tw_quant_groups's (the rule is exact: max, one division,
// rintf of one division per value).
static int one(const char *what, const float *x, int gs) {
    static int8_t q[256], qr[256];
    float s = -1.0f, sr;
    memset(q, 99, sizeof q);
    ex_q8_quantize_group(q, &s, x, gs);
    stop_if_todo();
    tw_quant_groups(qr, &sr, x, 1, gs, 127);
    if (!(s == sr)) {
        printf("FAIL: %s: the scale is %.9g, expected %.9g (s = max |x| / 127)\n", what, (double)s, (double)sr);
        return 1;
    }
    for (int i = 0; i < gs; i++)
        if (q[i] != qr[i]) {
            printf("FAIL: %s: q[%d] is %d, expected %d (x[%d] = %.9g, x / s = %.9g)\n", what, i, q[i],
                   qr[i], i, (double)x[i], sr > 0 ? (double)(x[i] / sr) : 0.0);
            return 1;
        }
    return 0;
}
static int run_all(void) {
    float round_up[2] = { 127.0f, 2.7f };
    if (one("x = {127, 2.7}: s = 1 and 2.7 rounds to 3 (round to nearest, not truncate)", round_up, 2)) return 1;
    float negative[4] = { -3.0f, 1.5f, 0.7f, -0.2f };
    if (one("x = {-3, 1.5, 0.7, -0.2}: the largest magnitude is negative (s = max |x| / 127, not "
            "max x / 127)", negative, 4)) return 1;
    float zeros[8] = { 0 };
    if (one("a group of zeros: s = 0 and every q = 0 (do not divide by s = 0)", zeros, 8)) return 1;
    static const int sizes[] = { 1, 4, 32, 256 };
    char what[96];
    for (int i = 0; i < 4; i++) {
        randn(A, sizes[i], 0.02f, 1900 + (uint64_t)i);
        snprintf(what, sizeof what, "a random group of %d weights ~ N(0, 0.02^2)", sizes[i]);
        if (one(what, A, sizes[i])) return 1;
    }
    float tie[4] = { 127.0f, 2.5f, -3.5f, 0.5f };
    if (one("exact ties x / s = 2.5, -3.5, 0.5: to even (2, -4, 0) as rintf and torch.round do; "
            "roundf goes away from zero", tie, 4)) return 1;
    return 0;
}
#elif EXERCISE == 20
static const char *TITLE = "one BPE merge";
// Exact: after each merge, the ids must equal tw_tokenizer_encode's for the vocabulary that has the
// new piece (the checker's vocabularies are built so that no merge enables a longer piece).
static int one_merge(const char *what, const char *text, const char *const *pieces, int n_pieces) {
    small_tok before, after;
    tok_make(&before, pieces, n_pieces - 1);
    tok_make(&after, pieces, n_pieces);
    static int ids[4096], want[4096];
    int n = tok_encode(ids, &before, text);
    const char *ab = pieces[n_pieces - 1];
    // The pair (a, b) that makes the new piece: the first split of ab whose halves both exist.
    int a = -1, b = -1;
    char left[16];
    for (size_t cut = 1; cut < strlen(ab) && a < 0; cut++) {
        memcpy(left, ab, cut); left[cut] = '\0';
        int ia = tw_tokenizer_lookup(&before.t, left), ib = tw_tokenizer_lookup(&before.t, ab + cut);
        if (ia >= 0 && ib >= 0) { a = ia; b = ib; }
    }
    if (a < 0) { printf("checker bug: no pair makes \"%s\"\n", ab); exit(1); }
    int n_got = ex_bpe_merge(ids, n, a, b, tok_id(&after, ab));
    stop_if_todo();
    int n_want = tok_encode(want, &after, text);
    return compare_ids(what, &after, ids, n_got, want, n_want);
}
static int run_all(void) {
    static const char *aa[] = { "aa" }, *ab[] = { "ab" };
    if (one_merge("\"ab\" with the pair (a, b)", "ab", ab, 1)) return 1;
    if (one_merge("\"aaa\" with the pair (a, a): leftmost first, never overlapping: [aa][a]", "aaa", aa, 1))
        return 1;
    if (one_merge("\"aaaa a\" with the pair (a, a)", "aaaa a", aa, 1)) return 1;
    if (one_merge("\"babab\" with the pair (a, b), at the end too", "babab", ab, 1)) return 1;
    if (one_merge("\"c\": no occurrence, nothing changes", "c", ab, 1)) return 1;
    // Six merges in a row on a random text, as training learns them.
    static const char *seq[] = { "aa", "ab", "bb", " a", "aaaa", "abab" };
    static char text[600];
    tw_rng r;
    tw_rng_init(&r, 2000);
    for (int i = 0; i < 599; i++) text[i] = "aab b"[tw_rng_next(&r) % 5];
    text[599] = '\0';
    char what[128];
    for (int k = 1; k <= 6; k++) {
        snprintf(what, sizeof what, "merge %d (\"%s\") on a random text of 599 characters", k, seq[k - 1]);
        if (one_merge(what, text, seq, k)) return 1;
    }
    return 0;
}
#elif EXERCISE == 21
static const char *TITLE = "beam search";
// Exact: the tokens must equal tw_beam_search's; the log-probability too up to 1e-6 relative (the
// same float sums in the same order are exact; 1e-6 allows a different but sensible order).
enum { BM_V_MAX = 8 };
typedef struct { int V, kind; float sharp; } model;   // kind 0: random, 1: the trap below, 2: uniform
// log_softmax of logits drawn from a seed that hashes the whole prefix (a model with memory).
static void model_logprobs(float *lp, const int *prefix, int len, const model *m) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < len; i++) h = (h ^ (uint64_t)(prefix[i] + 1)) * 1099511628211ULL;
    float logits[BM_V_MAX];
    if (m->kind == 0) randn(logits, m->V, m->sharp, h);
    else for (int t = 0; t < m->V; t++) logits[t] = 0.0f;
    if (m->kind == 1) {
        // After [0]: 1 has 0.6, 2 has 0.4. After [0 1]: 0 and 1 have 0.5 each, so both children of
        // [0 1] (0.3) beat [0 2]'s (0.2). After [0 1 1]: 2 has 0.9 (the best sequence, 0.27).
        // Keeping each beam's best child instead keeps [0 2 x] and never sees [0 1 1 2].
        const float tiny = -30.0f;
        for (int t = 0; t < m->V; t++) logits[t] = tiny;
        if (len == 1) { logits[1] = logf(0.6f); logits[2] = logf(0.4f); }
        else if (len == 3 && prefix[1] == 1 && prefix[2] == 1) { logits[2] = logf(0.9f); logits[0] = logf(0.1f); }
        else { logits[0] = logf(0.5f); logits[1] = logf(0.5f); }
    }
    double mx = logits[0], sum = 0.0;
    for (int t = 1; t < m->V; t++) if (logits[t] > mx) mx = logits[t];
    for (int t = 0; t < m->V; t++) sum += exp((double)logits[t] - mx);
    for (int t = 0; t < m->V; t++) lp[t] = (float)((double)logits[t] - mx - log(sum));
}
static void student_next(float *lp, const int *prefix, int len, void *ctx) { model_logprobs(lp, prefix, len, ctx); }
static tw_status library_next(float *lp, const int *prefix, int len, void *ctx) {
    model_logprobs(lp, prefix, len, ctx);
    return TW_OK;
}
static int one(const char *what, model m, int width, int steps) {
    const int prompt[2] = { 0, 3 % m.V };
    int got[16], want[16];
    for (int i = 0; i < 16; i++) got[i] = -1;
    float lp_got = 12345.0f, lp_want;
    int rc = ex_beam_search(got, &lp_got, prompt, 1, steps, width, m.V, student_next, &m);
    stop_if_todo();
    if (rc != 0) { printf("FAIL: %s: your function returned %d\n", what, rc); return 1; }
    tw_beam b = { 0 };
    if (tw_beam_init(&b, width, m.V, 1 + steps) != TW_OK ||
        tw_beam_search(want, &lp_want, &b, prompt, 1, steps, library_next, &m) != TW_OK) {
        printf("checker bug: the library's beam search failed\n");
        exit(1);
    }
    tw_beam_free(&b);
    for (int i = 0; i < steps; i++)
        if (got[i] != want[i]) {
            printf("FAIL: %s: new token %d is %d, expected %d; yours:", what, i, got[i], want[i]);
            for (int j = 0; j < steps; j++) printf(" %d", got[j]);
            printf(" (log p %.6g), expected:", (double)lp_got);
            for (int j = 0; j < steps; j++) printf(" %d", want[j]);
            printf(" (log p %.6g)\n", (double)lp_want);
            return 1;
        }
    if (!close_enough(lp_got, lp_want, 0.0f, 1e-6f)) {
        printf("FAIL: %s: the total log-probability is %.9g, expected %.9g (sum of the chosen "
               "tokens' log-probabilities)\n", what, (double)lp_got, (double)lp_want);
        return 1;
    }
    return 0;
}
static int run_all(void) {
    if (one("width 1 (greedy), V = 5, 4 steps", (model){ 5, 0, 2.0f }, 1, 4)) return 1;
    if (one("width 2, V = 3, 3 steps: keep the best 2 of all 2 x V candidates, even when both extend "
            "the same beam (each beam's best child misses [1 1 2])", (model){ 3, 1, 0 }, 2, 3)) return 1;
    if (one("width 3, V = 6, 5 steps", (model){ 6, 0, 2.0f }, 3, 5)) return 1;
    if (one("width 25 = V^(steps-1), V = 5, 3 steps: exhaustive, the most likely sequence",
            (model){ 5, 0, 1.0f }, 25, 3)) return 1;
    if (one("a uniform model (every candidate ties): the earlier beam, then the lower id",
            (model){ 4, 2, 0 }, 3, 4)) return 1;
    if (one("width 4, V = 8, 6 steps, a flat model", (model){ 8, 0, 0.3f }, 4, 6)) return 1;
    return 0;
}
#elif EXERCISE == 22
static const char *TITLE = "the logit lens";
// The reference is tw_rmsnorm_forward then tw_linear_forward. Tolerance: the norm in double or
// float differs by a few ulp, then a float dot product of C <= 64 terms of size ~1: 1e-4 absolute
// + 1e-4 relative. Skipping the norm is off by the factor rms(h) (40 in the first case).
// V * C must stay within BUF (16384 floats).
static int one(const char *what, int C, int V, float hscale, float hoffset, uint64_t seed) {
    randn(A, C, hscale, seed);
    for (int c = 0; c < C; c++) A[c] += hoffset;
    randn(B, C, 0.3f, seed + 1);
    for (int c = 0; c < C; c++) B[c] += 1.0f;        // gains around 1
    randn(Cb, (long)V * C, 0.2f, seed + 2);
    const float eps = 1e-5f;
    ex_logit_lens(GOT, A, B, Cb, C, V, eps);
    stop_if_todo();
    tw_rmsnorm_forward(Dm, NULL, A, B, 1, C, eps);
    tw_linear_forward(WANT, Dm, Cb, NULL, 1, C, V);
    return compare(what, GOT, WANT, V, 1e-4f, 1e-4f);
}
static int run_all(void) {
    if (one("C = 64, V = 100, h of rms ~40 (a late layer's stream): the final RMSNorm comes before "
            "the classifier", 64, 100, 40.0f, 0.0f, 2200)) return 1;
    if (one("C = 64, V = 200, h ~ N(3, 1) (rms, not std: no mean is subtracted)", 64, 200, 1.0f, 3.0f, 2201))
        return 1;
    if (one("C = 16, V = 7, h ~ N(0, 1) (the gain g multiplies after the division)", 16, 7, 1.0f, 0.0f, 2202))
        return 1;
    if (one("C = 8, V = 3, h of size 1e-4 (eps goes inside the square root)", 8, 3, 1e-4f, 0.0f, 2203))
        return 1;
    return 0;
}
#elif EXERCISE == 23
static const char *TITLE = "decoding a token to text";
// Exact: the bytes must equal tw_tokenizer_decode's for the same previous token and token.
// Prints s with its special bytes escaped ("\n", "\x01"), between quotes.
static void print_escaped(const char *s, int n) {
    putchar('"');
    for (int i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n') printf("\\n");
        else if (c < 32 || c >= 127) printf("\\x%02x", c);
        else putchar(c);
    }
    putchar('"');
}
static int one(const char *what, const small_tok *k, int prev, const char *piece) {
    const int token = tok_id(k, piece);
    char got[64];
    memset(got, 'Z', sizeof got);
    int n = ex_decode_piece(got, prev, token, (const char *const *)k->strings);
    stop_if_todo();
    const char *want = tw_tokenizer_decode(&k->t, prev, token);
    const int n_want = (int)strlen(want);
    if (n == n_want && n >= 0 && n < 64 && memcmp(got, want, (size_t)n) == 0 && got[n] == '\0') return 0;
    printf("FAIL: %s: token %d after token %d: yours ", what, token, prev);
    if (n < 0 || n >= 64) printf("(a length of %d)", n);
    else { print_escaped(got, n); if (got[n] != '\0') printf(" (no NUL after it)"); }
    printf(", expected ");
    print_escaped(want, n_want);
    printf("\n");
    return 1;
}
static int run_all(void) {
    static const char *pieces[] = { " the", "he", " a", "ca" };
    small_tok k;
    tok_make(&k, pieces, 4);
    const int the = tok_id(&k, " the");
    if (one("\" the\" after the word \"he\": the space stays (it separates the words)", &k,
            tok_id(&k, "he"), " the")) return 1;
    if (one("\" the\" right after BOS: the dummy prefix's space goes", &k, 1, " the")) return 1;
    if (one("\"he\" right after BOS: no leading space, nothing to remove", &k, 1, "he")) return 1;
    if (one("\" \" after BOS: the piece that is only a space decodes to nothing", &k, 1, " ")) return 1;
    if (one("\"<0x0A>\" is the byte 0x0A (a newline), not six characters", &k, the, "<0x0A>")) return 1;
    if (one("\"<0x41>\" is the byte 'A'", &k, the, "<0x41>")) return 1;
    if (one("\"<0xE2>\" after BOS: one byte of a UTF-8 character, 0xE2", &k, 1, "<0xE2>")) return 1;
    if (one("\"<unk>\" is a piece like any other", &k, the, "<unk>")) return 1;
    if (one("\" a\" after \" a\"", &k, tok_id(&k, " a"), " a")) return 1;
    return 0;
}
#elif EXERCISE == 24
static const char *TITLE = "gradient clipping by the global norm";
// The reference is tw_clip_grad_norm on a copy. Tolerance: the norm summed in double and rounded
// once agrees to 1e-6 relative with any double sum; the scaled gradients are one float product
// each, 1e-6 relative (+ 1e-30 for zeros). A float sum of squares overflows on the 1e20 case.
static int one(const char *what, const int *sizes, int n_tensors, const float *scales,
               float max_norm, uint64_t seed) {
    float *mine[4], *ref[4];
    long counts[4], off = 0;
    for (int i = 0; i < n_tensors; i++) {
        counts[i] = sizes[i];
        mine[i] = GOT + off; ref[i] = WANT + off;
        randn(mine[i], counts[i], scales[i], seed + (uint64_t)i);
        memcpy(ref[i], mine[i], (size_t)counts[i] * sizeof(float));
        off += counts[i];
    }
    float norm = ex_clip_grad_norm(mine, counts, n_tensors, max_norm);
    stop_if_todo();
    float want = tw_clip_grad_norm(ref, counts, n_tensors, max_norm);
    if (!close_enough(norm, want, 0.0f, 1e-6f)) {
        printf("FAIL: %s: you returned the norm %.9g, expected %.9g (sqrt of the sum of every "
               "squared element of every tensor, before clipping)\n", what, (double)norm, (double)want);
        return 1;
    }
    char w[256];
    for (int i = 0; i < n_tensors; i++) {
        snprintf(w, sizeof w, "%s: tensor %d", what, i);
        if (compare(w, mine[i], ref[i], counts[i], 1e-30f, 1e-6f)) return 1;
    }
    return 0;
}
static int run_all(void) {
    const int three[3] = { 40, 7, 25 };
    const float spread[3] = { 1.0f, 0.1f, 0.5f };
    if (one("three tensors of different norms, max_norm 1: one norm over all of them together, "
            "not per tensor", three, 3, spread, 1.0f, 2400)) return 1;
    if (one("the same, max_norm 100: the norm is below, nothing changes", three, 3, spread, 100.0f, 2400))
        return 1;
    if (one("max_norm 0: clipping is off, nothing changes (the norm is still returned)", three, 3,
            spread, 0.0f, 2400)) return 1;
    const int one_t[1] = { 1000 };
    const float huge[1] = { 1e20f };
    if (one("gradients of 1e20 (a diverging step): their squares overflow float, sum them in double",
            one_t, 1, huge, 1.0f, 2410)) return 1;
    const int four[4] = { 1, 3, 200, 16 };
    const float mixed[4] = { 3.0f, 0.01f, 0.2f, 1.0f };
    if (one("four tensors, max_norm 0.5", four, 4, mixed, 0.5f, 2420)) return 1;
    return 0;
}
#elif EXERCISE == 25
static const char *TITLE = "warm-up and cosine decay of the learning rate";
// Exact up to 1 ulp: the reference computes in double and rounds once; 1e-6 relative (+ 1e-12
// for the zero at step 0) allows a float cosine.
static int one(const char *what, float lr, float min_lr, int warmup, int decay) {
    static const int probe[] = { 0, 1, 2, 50, 99, 100, 101, 500, 1000, 2999, 3000, 5000, 5001, 10000 };
    for (int i = 0; i < (int)(sizeof probe / sizeof probe[0]); i++) {
        const int step = probe[i];
        float got = ex_lr_schedule(step, lr, min_lr, warmup, decay);
        stop_if_todo();
        float want = tw_lr_schedule(step, lr, min_lr, warmup, decay);
        if (!close_enough(got, want, 1e-12f, 1e-6f)) {
            printf("FAIL: %s: step %d gives %.9g, expected %.9g\n", what, step, (double)got, (double)want);
            return 1;
        }
    }
    return 0;
}
static int run_all(void) {
    if (one("lr 5e-4, min_lr 5e-5, warm-up 100, decay to step 5000: the cosine starts after the "
            "warm-up (r = (step - warmup) / (decay_steps - warmup)) and ends at min_lr, not 0",
            5e-4f, 5e-5f, 100, 5000)) return 1;
    if (one("no warm-up (warmup 0), decay to 3000", 1e-3f, 0.0f, 0, 3000)) return 1;
    if (one("lr == min_lr, warmup 0: a constant rate", 3e-4f, 3e-4f, 0, 5000)) return 1;
    if (one("decay_steps <= warmup: min_lr after the warm-up", 1e-3f, 1e-4f, 100, 100)) return 1;
    return 0;
}
#elif EXERCISE == 39
static const char *TITLE = "speculative decoding: one proposal";
// Exact: the chosen token must be the one lib/decode/speculative.c's rule chooses for the same
// p, q, x and draws (tw_spec_accept, then tw_spec_residual_sample).
static int want_step(const float *p, const float *q, int V, int x, float ua, float ur) {
    static float r[64];
    return tw_spec_accept(p, q, x, ua) ? x : tw_spec_residual_sample(r, p, q, V, ur);
}
static int one(const char *what, const float *p, const float *q, int V, int x, float ua, float ur) {
    int mine = ex_spec_step(p, q, V, x, ua, ur);
    stop_if_todo();
    int want = want_step(p, q, V, x, ua, ur);
    if (mine == want) return 0;
    printf("FAIL: %s: proposal %d, u_accept %.4f (p/q = %.4f), u_resid %.4f: you returned %d, expected %d",
           what, x, (double)ua, q[x] > 0 ? (double)(p[x] / q[x]) : 0.0, (double)ur, mine, want);
    const int accepted = tw_spec_accept(p, q, x, ua);
    printf(" [p:");
    for (int i = 0; i < V && i < 8; i++) printf(" %.4f", (double)p[i]);
    printf(" | q:");
    for (int i = 0; i < V && i < 8; i++) printf(" %.4f", (double)q[i]);
    printf("%s]", V > 8 ? " ..." : "");
    if (!accepted && mine == x) printf(" (rejected: u_accept >= p[x] / q[x])");
    else if (accepted) printf(" (accepted: u_accept < p[x] / q[x])");
    else if (mine == tw_sample_cumulative(p, V, ur))
        printf(" (on rejection draw from the residual max(0, p - q), renormalised, not from p)");
    printf("\n");
    return 1;
}
// A distribution of V tokens in multiples of 1/256, some zero.
static void dist(float *d, int V, tw_rng *r, int zeros) {
    int units[64] = { 0 }, left = 256;
    while (left > 0) {
        int i = (int)(tw_rng_uniform(r) * V) % V, c = 1 + (int)(tw_rng_uniform(r) * 40.0f);
        if (zeros && i % 3 == 2) continue;
        if (c > left) c = left;
        units[i] += c;
        left -= c;
    }
    for (int i = 0; i < V; i++) d[i] = (float)units[i] / 256.0f;
}
static int run_all(void) {
    tw_rng r;
    tw_rng_init(&r, 3939);
    float p[64], q[64];
    char what[96];
    for (int trial = 0; trial < 400; trial++) {
        const int V = 1 + trial % 40;
        dist(p, V, &r, trial % 2);
        dist(q, V, &r, trial % 3 == 0);
        int x = tw_sample_cumulative(q, V, tw_rng_uniform(&r));   // a proposal drawn from q
        snprintf(what, sizeof what, "random p and q, V = %d", V);
        if (one(what, p, q, V, x, tw_rng_uniform(&r), tw_rng_uniform(&r))) return 1;
    }
    const float pd[4] = { 0.5f, 0.5f, 0, 0 }, qd[4] = { 0, 0, 0.25f, 0.75f };
    if (one("disjoint: p is zero where the draft proposes", pd, qd, 4, 3, 0.0f, 0.7f)) return 1;
    if (one("p == q: every proposal is kept", pd, pd, 4, 1, 0.999f, 0.2f)) return 1;
    const float pe[3] = { 0.25f, 0.25f, 0.5f }, qe[3] = { 0.5f, 0.25f, 0.25f };
    if (one("p/q = 0.5: kept below u = 0.5", pe, qe, 3, 0, 0.49f, 0.1f)) return 1;
    if (one("p/q = 0.5: rejected from u = 0.5 on, the residual is token 2", pe, qe, 3, 0, 0.5f, 0.1f)) return 1;
    return 0;
}
#elif EXERCISE == 40
static const char *TITLE = "a paged KV cache's block-table lookup";
static int run_all(void) {
    tw_rng r;
    tw_rng_init(&r, 4040);
    static const int sizes[] = { 1, 4, 12, 16 };
    int table[64];
    for (int s = 0; s < 4; s++) {
        const int bs = sizes[s];
        for (int i = 0; i < 64; i++) table[i] = (int)(tw_rng_uniform(&r) * 1000.0f);   // any pool blocks
        for (int pos = 0; pos < 64 * bs && pos < 600; pos += 1 + pos / 50) {
            int mine = ex_block_row(table, bs, pos);
            stop_if_todo();
            const int want = table[pos / bs] * bs + pos % bs;
            if (mine == want) continue;
            printf("FAIL: block size %d, position %d (logical block %d -> pool block %d, row %d): you "
                   "returned %d, expected %d", bs, pos, pos / bs, table[pos / bs], pos % bs, mine, want);
            if (mine == table[pos % bs] * bs + pos / bs) printf(" (block and row swapped: the block is pos / B, the row pos %% B)");
            else if (mine == pos) printf(" (a position goes through the table: its pool block is table[pos / B])");
            else if (mine == table[pos / bs] + pos % bs) printf(" (a pool block holds B rows: multiply the block by B)");
            printf("\n");
            return 1;
        }
    }
    return 0;
}
#elif EXERCISE == 33
static const char *TITLE = "the ring all-reduce's schedule";
// The checker moves the chunks itself with your schedule, for P = 1 .. 9, each process starting
// with different whole numbers (exact in double, so tolerance 0: a chunk added twice or never is
// off by a whole process's value). Also refused: a chunk outside 0 .. P-1.
enum { RING_MAX = 9 };
static int ring_once(int P) {
    double have[RING_MAX][RING_MAX], sent[RING_MAX], want[RING_MAX];
    int chunk[RING_MAX];
    for (int c = 0; c < P; c++) want[c] = 0.0;
    for (int p = 0; p < P; p++)
        for (int c = 0; c < P; c++) { have[p][c] = (double)((p + 1) * 1000 + (c + 1) * (p % 3 + 1)); want[c] += have[p][c]; }
    for (int phase = 0; phase < 2; phase++)
        for (int s = 0; s < P - 1; s++) {
            for (int p = 0; p < P; p++) {
                chunk[p] = ex_ring_chunk(phase, p, s, P);
                stop_if_todo();
                if (chunk[p] < 0 || chunk[p] >= P) {
                    printf("FAIL: P = %d, phase %d, step %d: process %d sends chunk %d, not one of 0 .. %d\n",
                           P, phase, s, p, chunk[p], P - 1);
                    return 1;
                }
                sent[p] = have[p][chunk[p]];
            }
            for (int p = 0; p < P; p++) {
                const int q = (p + P - 1) % P, c = chunk[q];
                have[p][c] = phase == 0 ? have[p][c] + sent[q] : sent[q];
            }
        }
    for (int p = 0; p < P; p++)
        for (int c = 0; c < P; c++)
            if (have[p][c] != want[c]) {
                printf("FAIL: P = %d: after both phases process %d holds %.0f in chunk %d, the sum of "
                       "the %d processes' is %.0f (a chunk added twice, or one never passed on)\n",
                       P, p, have[p][c], c, P, want[c]);
                return 1;
            }
    return 0;
}
static int run_all(void) {
    (void)ex_ring_chunk(0, 0, 0, 2);   // a stub says so here
    stop_if_todo();
    for (int P = 2; P <= RING_MAX; P++)
        if (ring_once(P)) return 1;
    return 0;
}
#elif EXERCISE == 27
static const char *TITLE = "the backward of RMSNorm";
// Tolerance: the library (tw_rmsnorm_backward) reduces the row in double and rounds each element
// once; an answer in float differs by a few ulps of elements of size up to ~10: 1e-5 absolute +
// 1e-4 relative. Treating rms as a constant is off by xhat * mean(g * xhat) / rms, of the size of
// dx itself on random rows, and by the whole of dx at C = 1 (where the right answer is ~0).
// GOT is filled with a sentinel first, so adding onto what the buffers held fails.
static int one(const char *what, int C, float eps, uint64_t seed) {
    randn(A, C, 1.0f, seed);            // x
    randn(B, C, 0.5f, seed + 1);        // w
    for (int i = 0; i < C; i++) B[i] += 1.0f;
    randn(Cb, C, 1.0f, seed + 2);       // dy
    static float gdw[BUF], wdw[BUF];
    for (int i = 0; i < C; i++) GOT[i] = gdw[i] = 12345.0f;
    ex_rmsnorm_backward(GOT, gdw, Cb, A, B, C, eps);
    stop_if_todo();
    float rms;
    tw_rmsnorm_forward(Dm, &rms, A, B, 1, C, eps);
    memset(WANT, 0, (size_t)C * sizeof(float));
    memset(wdw, 0, (size_t)C * sizeof(float));
    tw_rmsnorm_backward(WANT, wdw, Cb, A, &rms, B, 1, C);
    char name[160];
    snprintf(name, sizeof name, "%s: dx (the mean(g * xhat) term is the path through rms)", what);
    if (compare(name, GOT, WANT, C, 1e-5f, 1e-4f)) return 1;
    snprintf(name, sizeof name, "%s: dw = dy * x / rms", what);
    return compare(name, gdw, wdw, C, 1e-5f, 1e-4f);
}
static int run_all(void) {
    if (one("C = 1 (dx is ~0: x / rms is +-1 whatever x)", 1, 1e-5f, 2701)) return 1;
    if (one("C = 4", 4, 1e-5f, 2702)) return 1;
    if (one("C = 64", 64, 1e-5f, 2703)) return 1;
    if (one("C = 1000, eps 1e-6", 1000, 1e-6f, 2704)) return 1;
    return 0;
}
#elif EXERCISE == 28
static const char *TITLE = "the backward pass of an autograd tape";
// Tapes built here, each checked against its gradient worked out another way: by hand, or by the
// library (tw_cross_entropy_backward). Tolerance: 1e-12 where both sides are double; 1e-6 against
// the library's float probabilities. x x + x catches a gradient written (=) instead of added.
static int T_op[256], T_a[256], T_b[256], T_n;
static double T_val[256], T_grad[256];
static int push(int op, int a, int b, double v) {
    T_op[T_n] = op; T_a[T_n] = a; T_b[T_n] = b; T_val[T_n] = v;
    return T_n++;
}
static int leaf(double v) { return push(EX_AG_LEAF, -1, -1, v); }
static int add(int a, int b) { return push(EX_AG_ADD, a, b, T_val[a] + T_val[b]); }
static int mul(int a, int b) { return push(EX_AG_MUL, a, b, T_val[a] * T_val[b]); }
static int ex_(int a) { return push(EX_AG_EXP, a, -1, exp(T_val[a])); }
static int lg(int a) { return push(EX_AG_LOG, a, -1, log(T_val[a])); }
static int rc(int a) { return push(EX_AG_RECIP, a, -1, 1.0 / T_val[a]); }
// Runs the answer on the tape built so far; compares the gradients of the given leaves.
static int check(const char *what, const int *ids, const double *want, int n, double tol) {
    for (int i = 0; i < T_n; i++) T_grad[i] = 12345.0;
    ex_tape_backward(T_grad, T_op, T_a, T_b, T_val, T_n);
    stop_if_todo();
    for (int i = 0; i < n; i++)
        if (!(fabs(T_grad[ids[i]] - want[i]) <= tol)) {
            printf("FAIL: %s: the gradient of node %d is %.12g, expected %.12g (tolerance %g)\n",
                   what, ids[i], T_grad[ids[i]], want[i], tol);
            return 1;
        }
    return 0;
}
static int run_all(void) {
    T_n = 0;   // x x + x at x = 3: x is used three times, dL/dx = 2x + 1 = 7
    int x = leaf(3.0);
    add(mul(x, x), x);
    const double w1 = 7.0;
    if (check("L = x x + x at x = 3 (a value used more than once collects every use: add, do not write)",
              &x, &w1, 1, 1e-12)) return 1;
    T_n = 0;   // log(a b + e^c)
    int l3[3] = { leaf(2.0), leaf(0.25), leaf(0.5) };
    const int ab = mul(l3[0], l3[1]), ec = ex_(l3[2]);
    lg(add(ab, ec));
    const double s = 0.5 + exp(0.5), w3[3] = { 0.25 / s, 2.0 / s, exp(0.5) / s };
    if (check("L = log(a b + e^c) (mul, exp, log, add)", l3, w3, 3, 1e-12)) return 1;
    T_n = 0;   // sigmoid(x) = 1 / (1 + e^-x) at x = 0.7: s (1 - s)
    int xs = leaf(0.7);
    rc(add(leaf(1.0), ex_(mul(xs, leaf(-1.0)))));
    const double sg = 1.0 / (1.0 + exp(-0.7)), w4 = sg * (1.0 - sg);
    if (check("L = 1 / (1 + e^-x) at x = 0.7 (recip: -1 / a^2)", &xs, &w4, 1, 1e-12)) return 1;
    T_n = 0;   // cross-entropy of 6 logits against target 2: log sum e^(z - m) - (z_2 - m)
    enum { V = 6 };
    randn(A, V, 2.0f, 2801);
    int z[V];
    double mx = -INFINITY;
    for (int v = 0; v < V; v++) { z[v] = leaf(A[v]); mx = fmax(mx, A[v]); }
    const int m = leaf(mx), neg = leaf(-1.0);
    int sum = leaf(0.0);
    for (int v = 0; v < V; v++) sum = add(sum, ex_(add(z[v], mul(m, neg))));
    const int lse = lg(sum);
    add(lse, mul(add(z[2], mul(m, neg)), neg));
    float probs[V], loss, dz[V] = { 0 };
    const int target = 2;
    if (tw_cross_entropy_forward(&loss, NULL, probs, A, &target, 1, V, TW_IGNORE_INDEX) != TW_OK ||
        tw_cross_entropy_backward(dz, 1.0f, probs, &target, 1, V, TW_IGNORE_INDEX) != TW_OK) {
        printf("the reference refused the case\n");
        exit(1);
    }
    double w6[V];
    for (int v = 0; v < V; v++) w6[v] = dz[v];
    return check("cross-entropy of 6 logits, target 2, against tw_cross_entropy_backward", z, w6, V, 1e-6);
}
#elif EXERCISE == 35
static const char *TITLE = "one attention row, online softmax";
// The reference: tw_softmax_row's weights (float, normaliser in double), then sum_j p_j v_j and
// log sum_j exp(x_j) in double. Tolerance 1e-5 absolute + 1e-5 relative: the outputs are averages
// of |v| <= 3 values whose float weights each carry ~1e-7 relative error, summed over n <= 300
// terms in another order. The cases that break the classic wrong attempts: scores that rise from
// block to block (no rescaling when the maximum grows gives weights measured against an old
// maximum: errors of order 1), scores near +-1e4 (exp without the maximum overflows), every score
// -inf (0 / 0), and blocks that do not divide n.
static int one(const char *what, const float *x, const float *v, int n, int D, int blk) {
    for (int d = 0; d < D; d++) GOT[d] = 12345.0f;
    const float lse = ex_online_attention_row(GOT, x, v, n, D, blk);
    stop_if_todo();
    tw_softmax_row(Dm, x, n);
    double mx = -INFINITY, sum = 0.0;
    for (int j = 0; j < n; j++) mx = x[j] > mx ? x[j] : mx;
    for (int j = 0; j < n && mx != -INFINITY; j++) sum += exp((double)x[j] - mx);
    for (int d = 0; d < D; d++) {
        double o = 0.0;
        for (int j = 0; j < n; j++) if (Dm[j] != 0.0f) o += (double)Dm[j] * v[(long)j * D + d];
        WANT[d] = (float)o;
    }
    if (compare(what, GOT, WANT, D, 1e-5f, 1e-5f)) return 1;
    const float want_lse = mx == -INFINITY ? -INFINITY : (float)(mx + log(sum));
    char w2[160];
    snprintf(w2, sizeof w2, "%s: the returned log-sum-exp", what);
    return compare(w2, &lse, &want_lse, 1, 1e-5f, 1e-6f);
}
static int run_all(void) {
    char what[128];
    static const int cases[][3] = { { 1, 4, 1 }, { 7, 4, 3 }, { 64, 8, 16 }, { 300, 8, 64 }, { 65, 2, 64 } };
    for (int i = 0; i < 5; i++) {
        const int n = cases[i][0], D = cases[i][1], blk = cases[i][2];
        randn(A, n, 2.0f, 3500 + (uint64_t)i);
        randn(B_VALUES, (long)n * D, 1.0f, 3550 + (uint64_t)i);
        snprintf(what, sizeof what, "random scores, n = %d, D = %d, blocks of %d", n, D, blk);
        if (one(what, A, B_VALUES, n, D, blk)) return 1;
    }
    for (int j = 0; j < 40; j++) A[j] = 0.25f * j;   // rising: every block raises the maximum
    if (one("rising scores 0, 0.25, .. 9.75, blocks of 8", A, B_VALUES, 40, 4, 8)) return 1;
    for (int j = 0; j < 40; j++) A[j] = j % 2 ? 1e4f - j : -1e4f + j;
    if (one("scores near +-1e4, blocks of 16", A, B_VALUES, 40, 4, 16)) return 1;
    for (int j = 0; j < 40; j++) A[j] = j == 37 ? -5.0f : -INFINITY;
    if (one("one visible key (37) in the last block", A, B_VALUES, 40, 4, 16)) return 1;
    for (int j = 0; j < 40; j++) A[j] = -INFINITY;
    return one("every score -inf: out = 0, log-sum-exp -inf", A, B_VALUES, 40, 4, 16);
}
#elif EXERCISE == 36
static const char *TITLE = "YaRN's RoPE frequencies";
// The reference: tw_rope_scaled_freqs with TW_ROPE_SCALING_YARN (lib/nn/rope_scaling.c), in
// double. Tolerance relative 1e-12: the same formulas in double in another order differ by a
// few ulps (~1e-16). The cases that break the classic wrong attempts: a ramp that runs the wrong
// way (interpolating the fast pairs), band edges not rounded (floor / ceil) or not clipped to
// [0, D - 1], and betas other than the defaults.
static int one_yarn(const char *what, int D, double theta, double s, int L, double bf, double bs) {
    static double got[512], want[512];
    for (int i = 0; i < D / 2; i++) got[i] = -1.0;
    ex_yarn_freqs(got, D, theta, s, L, bf, bs);
    stop_if_todo();
    tw_rope_scaling sc = tw_rope_scaling_make(TW_ROPE_SCALING_YARN, (float)s, L);
    sc.beta_fast = (float)bf;
    sc.beta_slow = (float)bs;
    tw_rope_scaled_freqs(want, D, theta, &sc);
    for (int i = 0; i < D / 2; i++)
        if (!(fabs(got[i] - want[i]) <= 1e-12 * fabs(want[i]))) {
            printf("FAIL: %s: freq[%d] is %.17g, expected %.17g (relative tolerance 1e-12)\n",
                   what, i, got[i], want[i]);
            return 1;
        }
    return 0;
}
static int run_all(void) {
    (void)randn;   // (no random inputs here)
    return one_yarn("D 64, theta 1e4, s 8, L 2048", 64, 1e4, 8.0, 2048, 32, 1) ||
           one_yarn("D 128, theta 1e6, s 4, L 32768 (Qwen3)", 128, 1e6, 4.0, 32768, 32, 1) ||
           one_yarn("D 8, theta 1e4, s 4, L 64 (a tiny model: the fast edge clips to 0)", 8, 1e4, 4.0, 64, 32, 1) ||
           one_yarn("D 64, theta 1e4, s 2, L 512, beta_fast 16, beta_slow 2", 64, 1e4, 2.0, 512, 16, 2) ||
           one_yarn("D 16, theta 500, s 3, L 100000 (the slow edge clips to D - 1)", 16, 500, 3.0, 100000, 32, 1);
}
#elif EXERCISE == 30
static const char *TITLE = "the backward of a LoRA Linear";
// Tolerance: each gradient is a float sum of at most C_out + r (dx), T (dA, dB) products of N(0, 1)
// numbers, in any order: 1e-4 absolute + 1e-4 relative (as exercise 11). GOT is filled with a
// sentinel first, so adding onto the buffers instead of writing fails. The scales s = 0.5 and 4
// catch a forgotten or squared s; a non-zero W catches a dx without the frozen path dy W; B
// non-zero catches a dA that ignores B.
static int one(const char *what, int T, int C_in, int C_out, int r, float s, uint64_t seed) {
    static float gdx[BUF], gdA[BUF], gdB[BUF], wdx[BUF], wdA[BUF], wdB[BUF], u[BUF];
    randn(A, (long)T * C_out, 1.0f, seed);          // dy
    randn(B, (long)T * C_in, 1.0f, seed + 1);       // x
    randn(Cb, (long)C_out * C_in, 1.0f, seed + 2);  // W
    randn(Dm, (long)r * C_in, 1.0f, seed + 3);      // A
    randn(WANT, (long)C_out * r, 1.0f, seed + 4);   // B (the lora B)
    for (int i = 0; i < BUF; i++) { gdx[i] = 12345.0f; gdA[i] = 12345.0f; gdB[i] = 12345.0f; }
    ex_lora_backward(gdx, gdA, gdB, A, B, Cb, Dm, WANT, s, T, C_in, C_out, r);
    stop_if_todo();
    memset(wdx, 0, sizeof wdx); memset(wdA, 0, sizeof wdA); memset(wdB, 0, sizeof wdB);
    float y[BUF];
    tw_lora_linear_forward(y, u, B, Cb, NULL, Dm, WANT, s, T, C_in, C_out, r);   // u = x A^T
    tw_lora_linear_backward(wdx, wdA, wdB, A, B, u, Cb, Dm, WANT, s, T, C_in, C_out, r);
    char w[160];
    snprintf(w, sizeof w, "%s: dA", what);
    if (compare(w, gdA, wdA, (long)r * C_in, 1e-4f, 1e-4f)) return 1;
    snprintf(w, sizeof w, "%s: dB", what);
    if (compare(w, gdB, wdB, (long)C_out * r, 1e-4f, 1e-4f)) return 1;
    snprintf(w, sizeof w, "%s: dx", what);
    return compare(w, gdx, wdx, (long)T * C_in, 1e-4f, 1e-4f);
}
static int run_all(void) {
    static const int sizes[][4] = { { 1, 1, 1, 1 }, { 3, 5, 4, 2 }, { 7, 16, 8, 4 }, { 8, 24, 40, 8 } };
    static const float scales[] = { 1.0f, 0.5f, 4.0f, 2.0f };
    char what[128];
    for (int i = 0; i < 4; i++) {
        snprintf(what, sizeof what, "T = %d, C_in = %d, C_out = %d, r = %d, s = %g", sizes[i][0], sizes[i][1],
                 sizes[i][2], sizes[i][3], (double)scales[i]);
        if (one(what, sizes[i][0], sizes[i][1], sizes[i][2], sizes[i][3], scales[i], 3000 + (uint64_t)i * 8)) return 1;
    }
    return 0;
}
#elif EXERCISE == 31
static const char *TITLE = "the distillation loss's backward";
// Tolerance: each element is a difference of probabilities (<= 1) times a tau of at most 4,
// divided by n; the library sums in double, a float solution rounds a few times: 1e-6 absolute +
// 1e-5 relative. The cases: tau 1, 2 and 0.5 (tau^2 instead of tau is off by a factor tau), a = 0
// and 1 (each term alone), an ignored row, and every row ignored (zeros, not 0/0).
static int one(const char *what, const float *zs, const float *zt, const int *targets, int T, int V,
               float a, float tau) {
    for (long i = 0; i < (long)T * V; i++) { GOT[i] = 12345.0f; WANT[i] = 0.0f; }
    ex_distill_backward(GOT, zs, zt, targets, T, V, a, tau);
    stop_if_todo();
    float loss;
    if (tw_distill_loss(&loss, WANT, 1.0f, zs, zt, targets, T, V, a, tau) != TW_OK) {
        printf("FAIL: %s: the library refused the case\n", what);
        return 1;
    }
    return compare(what, GOT, WANT, (long)T * V, 1e-6f, 1e-5f);
}
static int run_all(void) {
    static const struct { int T, V; float a, tau; int ignore; } cases[] = {
        { 1, 5, 0.5f, 1.0f, -1 }, { 3, 9, 1.0f, 2.0f, -1 }, { 4, 33, 0.0f, 1.0f, 2 }, { 5, 17, 0.7f, 0.5f, 0 },
        { 6, 65, 0.3f, 4.0f, 3 },
    };
    char what[128];
    int targets[8];
    for (int i = 0; i < 5; i++) {
        const int T = cases[i].T, V = cases[i].V;
        randn(A, (long)T * V, 2.0f, 3100 + (uint64_t)i);   // student
        randn(B, (long)T * V, 3.0f, 3200 + (uint64_t)i);   // teacher
        for (int t = 0; t < T; t++) targets[t] = (t * 7 + i) % V;
        if (cases[i].ignore >= 0) targets[cases[i].ignore] = -100;
        snprintf(what, sizeof what, "T = %d, V = %d, a = %g, tau = %g", T, V, (double)cases[i].a, (double)cases[i].tau);
        if (one(what, A, B, targets, T, V, cases[i].a, cases[i].tau)) return 1;
    }
    for (int t = 0; t < 3; t++) targets[t] = -100;   // every row ignored: all zeros
    return one("every row ignored", A, B, targets, 3, 5, 0.5f, 2.0f);
}
#elif EXERCISE == 37
static const char *TITLE = "top-k routing";
// The reference is lib/nn/router.c: tw_router_scores, tw_router_select, tw_router_gates.
// The chosen ids must be equal, in order (ties to the lower index); the weights within 1e-6 +
// 1e-5 relative (expf within an ulp, sums of k <= 64 terms in another order).
static int one(const char *what, const float *logits, int E, int k) {
    static int sel[64], want_sel[64];
    tw_router_config r = { .E = E, .k = k, .score = TW_ROUTER_SOFTMAX, .norm_topk = 1,
                           .scale = 1.0f, .n_group = 1, .topk_group = 1 };
    ex_top_k_route(sel, GOT, logits, E, k);
    stop_if_todo();
    tw_router_scores(Cb, logits, 1, &r);
    tw_router_select(want_sel, Cb, NULL, 1, &r);
    tw_router_gates(WANT, Cb, want_sel, 1, &r);
    for (int j = 0; j < k; j++)
        if (sel[j] != want_sel[j]) {
            printf("FAIL: %s: choice %d is expert %d (p = %.6g), expected expert %d (p = %.6g)\n",
                   what, j, sel[j], sel[j] >= 0 && sel[j] < E ? (double)Cb[sel[j]] : 0.0,
                   want_sel[j], (double)Cb[want_sel[j]]);
            return 1;
        }
    return compare(what, GOT, WANT, k, 1e-6f, 1e-5f);
}
static int run_all(void) {
    static const int EK[][2] = { { 1, 1 }, { 4, 2 }, { 8, 2 }, { 7, 3 }, { 5, 5 }, { 64, 8 } };
    char what[128];
    for (int i = 0; i < 6; i++) {
        randn(A, EK[i][0], 2.0f, 3700 + i);
        snprintf(what, sizeof what, "random logits, E = %d, k = %d", EK[i][0], EK[i][1]);
        if (one(what, A, EK[i][0], EK[i][1])) return 1;
    }
    float ties[6] = { 0.5f, 2.0f, 1.0f, 2.0f, 1.0f, -1.0f };   // 1 and 3 tie, then 2 and 4
    if (one("ties: experts 1 and 3 equal, then 2 and 4 (lower index first)", ties, 6, 3)) return 1;
    float huge[4] = { 1000.0f, 998.0f, -1000.0f, 999.0f };
    if (one("logits of 1000 (does exp overflow?)", huge, 4, 2)) return 1;
    return 0;
}
#elif EXERCISE == 38
static const char *TITLE = "scores over a latent KV cache";
// The reference expands every key with lib/'s Linear (k_nope = c W_uk^T, tw_linear_forward)
// and takes plain dot products: the expanded form. Your absorbed form adds the same products in
// another order: tolerance 1e-5 + 1e-4 relative on scores of order 1-10 (sums of <= 64 terms).
static int one(const char *what, int S, int dn, int dr, int r, uint64_t seed) {
    const int w = r + dr;
    randn(A, dn, 1.0f, seed);                 // q_nope
    randn(B, dr, 1.0f, seed + 1);             // q_pe
    randn(Cb, (long)dn * r, 0.5f, seed + 2);  // W_uk
    randn(Dm, (long)S * w, 1.0f, seed + 3);   // cache rows [c ; k_pe]
    ex_latent_scores(GOT, A, B, Cb, Dm, S, dn, dr, r);
    stop_if_todo();
    static float c[BUF], kn[BUF];
    for (int s = 0; s < S; s++)
        for (int j = 0; j < r; j++) c[s * r + j] = Dm[(long)s * w + j];
    tw_linear_forward(kn, c, Cb, NULL, S, r, dn);   // (S, dn) the expanded keys' nope part
    for (int s = 0; s < S; s++) {
        float d = 0.0f;
        for (int i = 0; i < dn; i++) d += A[i] * kn[s * dn + i];
        for (int i = 0; i < dr; i++) d += B[i] * Dm[(long)s * w + r + i];
        WANT[s] = d / sqrtf((float)(dn + dr));
    }
    return compare(what, GOT, WANT, S, 1e-5f, 1e-4f);
}
static int run_all(void) {
    static const int cases[][4] = {   // S d_nope d_rope r
        { 1, 1, 2, 1 }, { 5, 4, 2, 3 }, { 9, 8, 4, 6 }, { 33, 16, 8, 32 }, { 7, 64, 32, 16 },
    };
    char what[128];
    for (int i = 0; i < 5; i++) {
        const int *c = cases[i];
        snprintf(what, sizeof what, "S = %d, d_nope = %d, d_rope = %d, r = %d", c[0], c[1], c[2], c[3]);
        if (one(what, c[0], c[1], c[2], c[3], 3800 + 10 * (uint64_t)i)) return 1;
    }
    return 0;
}
#elif EXERCISE == 34
static const char *TITLE = "GPT-2's byte-to-unicode map";
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
        stop_if_todo();
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
#elif EXERCISE == 43
#include "train/grpo.h"
static const char *TITLE = "GRPO: group advantages and the clipped objective's gradient";
// The reference is lib/train/grpo.c (tw_grpo_advantages, then tw_grpo_loss), which sums in double:
// 1e-6 absolute + 1e-5 relative on gradients of order A / (n L) <= 1. The cases: ratios inside
// and outside the clip range on both sides with advantages of both signs (the clip zeroes the
// surrogate's gradient only where the clipped term is the minimum), one group whose rewards are
// all equal and G = 1 (advantages 0: only the KL term is left), beta 0 and rho 1 (the plain
// policy gradient -A / (n L)).
static int one(const char *what, const float *lp, const float *lp_old, const float *lp_ref,
               const float *rewards, const int *lens, int n_groups, int G, float eps, float beta) {
    static float got[64], want[64], adv[16];
    int N = 0;
    for (int i = 0; i < n_groups * G; i++) N += lens[i];
    for (int t = 0; t < N; t++) got[t] = 12345.0f;
    ex_grpo_grad(got, lp, lp_old, lp_ref, rewards, lens, n_groups, G, eps, beta);
    stop_if_todo();
    float loss, kl;
    if (tw_grpo_advantages(adv, rewards, n_groups, G, 1e-4f) != TW_OK ||
        tw_grpo_loss(&loss, &kl, want, lp, lp_old, lp_ref, adv, lens, n_groups * G, eps, beta) != TW_OK) {
        printf("FAIL: %s: the library refused the case\n", what);
        return 1;
    }
    return compare(what, got, want, N, 1e-6f, 1e-5f);
}
static int run_all(void) {
    static float lp[64], lp_old[64], lp_ref[64];
    const int lens[8] = { 3, 1, 4, 2, 5, 2, 6, 3 };   // 26 tokens
    const float rewards[8] = { 1.0f, 0.0f, 1.0f, 0.0f, 2.0f, 0.0f, 0.5f, -1.0f };
    const float equal[8] = { 0.5f, 0.5f, 0.5f, 0.5f, 1.0f, 0.0f, 3.0f, 1.0f };
    randn(lp, 26, 1.0f, 4300);
    randn(lp_old, 26, 0.4f, 4301);   // ratios exp(-noise): many outside [0.8, 1.2], both sides
    randn(lp_ref, 26, 0.5f, 4302);
    for (int t = 0; t < 26; t++) {
        lp[t] = -1.0f - fabsf(lp[t]);
        lp_old[t] += lp[t];
        lp_ref[t] += lp[t];
    }
    if (one("2 groups of 4, clipped ratios, beta 0.04", lp, lp_old, lp_ref, rewards, lens, 2, 4, 0.2f, 0.04f)) return 1;
    if (one("4 groups of 2, clipped ratios, beta 0", lp, lp_old, lp_ref, rewards, lens, 4, 2, 0.2f, 0.0f)) return 1;
    if (one("a group of equal rewards: only the KL term", lp, lp_old, lp_ref, equal, lens, 2, 4, 0.2f, 0.1f)) return 1;
    if (one("G = 1: every advantage 0", lp, lp_old, lp_ref, rewards, lens, 8, 1, 0.2f, 0.1f)) return 1;
    return one("rho = 1, beta 0: the policy gradient", lp, lp, lp_ref, rewards, lens, 2, 4, 0.2f, 0.0f);
}
#elif EXERCISE == 42
static const char *TITLE = "the DPO loss and its gradient";
// The reference is lib/train/dpo.c (tw_dpo_pair_loss), in double. Tolerance 1e-12 absolute +
// 1e-9 relative: both are double, and a solution that takes log(1 + e^-z) where the library takes
// log1p differs by ~1e-16 absolute. The cases: the policy at the reference (z = 0, ln 2), both
// signs of z, beta from 0.05 to 5 (a gradient without beta is off by that factor), and z = +-1000
// (exp(1000) overflows: -log(1 / (1 + e^-z)) is inf there, the loss is 1000).
static int run_all(void) {
    static const double cases[][3] = { { 0.0, 0.0, 0.1 }, { 2.5, -1.0, 0.5 }, { -3.0, 4.0, 0.1 }, { 7.0, 1.0, 5.0 },
                                       { -2.0, -9.5, 0.05 }, { 1000.0, 0.0, 1.0 }, { 0.0, 1000.0, 1.0 },
                                       { -300.0, 100.0, 2.0 } };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const double dw = cases[i][0], dl = cases[i][1], beta = cases[i][2];
        double gw = 12345.0, gl = 12345.0;
        const double loss = ex_dpo_loss(&gw, &gl, dw, dl, beta);
        stop_if_todo();
        tw_dpo_result r;
        tw_dpo_pair_loss(&r, dw, dl, 0.0, 0.0, beta);   // the reference's log-probabilities are 0 here
        const double got[3] = { loss, gw, gl }, want[3] = { r.loss, r.d_chosen, r.d_rejected };
        static const char *const what[3] = { "loss", "d loss / d dw", "d loss / d dl" };
        for (int k = 0; k < 3; k++) {
            if (fabs(got[k] - want[k]) <= 1e-12 + 1e-9 * fabs(want[k])) continue;
            printf("FAIL: dw = %g, dl = %g, beta = %g (z = %g): %s is %.12g, expected %.12g", dw, dl, beta,
                   beta * (dw - dl), what[k], got[k], want[k]);
            if (!isfinite(got[k])) printf(" (not finite: e^-z overflows for z << 0; use log(1 + e^-z) = -z + log(1 + e^z) there)");
            else if (k > 0 && fabs(got[k] * beta - want[k]) <= 1e-12 + 1e-9 * fabs(want[k]))
                printf(" (missing the factor beta of the chain rule)");
            printf("\n");
            return 1;
        }
    }
    return 0;
}
#else
#error "EXERCISE must be one of CEX_NUMS in mk/exercises.mk for check_concepts.c"
#endif

int main(int argc, char **argv) {
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "exercise%d: takes no arguments\nusage: ./exercise%d\n", EXERCISE, EXERCISE);
        return 2;
    }
    printf("exercise %d: %s (%s)\n", EXERCISE, TITLE, ex_source_file);
    if (run_all()) return 1;
    printf("PASS: agrees with the library's reference on every case (tolerance in check_concepts.c)\n");
    return 0;
}
