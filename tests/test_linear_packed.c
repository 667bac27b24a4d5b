// test_linear_packed.c: the batch's fast Linear on packed panels (tw_linear_packed, simd.h).
//   - The layout: tw_linear_pack puts W[n][k] where simd.h says, and zeros past N.
//   - Every level this machine runs (AVX2, AVX-512) gives exactly the bits of the naive loop
//     tw_linear_packed_naive (tolerance 0: each lane's fused multiply-add is fmaf, and every
//     level follows the same order), over shapes that end each way: K below, at and past a block
//     (tw_linear_packed_kc), N below, at and past a panel of 32, and T at every tile height.
//   - Row t's outputs do not depend on the other rows: T rows at once give each row the bits of
//     that row alone (tolerance 0; what makes batched decoding with it batch-invariant).
//   - Against float64: each output within gamma_K sum_k |w_k x_k|, gamma_K = K u / (1 - K u)
//     (u = 2^-24): the error bound of any order of summing K products whose additions are at most
//     K deep (Higham, eq. 3.5); the products of a fused multiply-add are exact.
//   - The bias is added after the sum.
//   - The greedy head (tw_linear_packed_argmax) gives, at every level and with the naive level's
//     panel-by-panel path, each row's tw_argmax_naive over the naive loop's Y: the same index
//     exactly, also when outputs tie (the first wins), when output 0 is a NaN (nothing beats it)
//     and when a later one is (it never wins).
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "sc_rand.h"
#include "simd/simd.h"

static const int KS[] = { 1, 5, 16, 143, 256, 257, 288, 513, 768 };
static const int NS[] = { 1, 15, 16, 17, 31, 32, 33, 70, 172 };
static const int TS[] = { 1, 2, 3, 4, 5, 7, 8, 9, 13, 17, 33 };
#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

static float *packed(const float *W, int N, int K) {
    float *Wp = malloc(tw_linear_packed_floats(N, K) * sizeof(float));
    ck_assert_ptr_nonnull(Wp);
    tw_linear_pack(Wp, W, N, K);
    return Wp;
}

START_TEST(the_panels_hold_w_k_major_with_zeros_past_n)
{
    enum { N = 37, K = 5 };
    float W[N * K];
    for (int i = 0; i < N * K; i++) W[i] = (float)(i + 1);
    ck_assert_uint_eq(tw_linear_packed_floats(N, K), 64 * K);
    float *Wp = packed(W, N, K);
    for (int n = 0; n < 64; n++)
        for (int k = 0; k < K; k++) {
            const float got = Wp[(n / TW_PANEL) * TW_PANEL * K + k * TW_PANEL + n % TW_PANEL];
            ck_assert_msg(got == (n < N ? W[n * K + k] : 0.0f), "row %d column %d: %g", n, k, got);
        }
    free(Wp);
}
END_TEST

START_TEST(the_blocks_of_k_are_equal_parts_of_at_most_256)
{
    ck_assert_int_eq(tw_linear_packed_kc(1), 1);
    ck_assert_int_eq(tw_linear_packed_kc(256), 256);
    ck_assert_int_eq(tw_linear_packed_kc(257), 129);
    ck_assert_int_eq(tw_linear_packed_kc(288), 144);
    ck_assert_int_eq(tw_linear_packed_kc(768), 256);
    ck_assert_int_eq(tw_linear_packed_kc(769), 193);
}
END_TEST

// Y of every level against the naive loop's: 0 differing bits.
START_TEST(every_level_gives_the_naive_loops_bits)
{
    char levels[64];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    uint64_t seed = 900;
    int levels_checked = 0;
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_kernels *o = tw_simd_kernels(lv);
        if (!o || !o->linear_packed) continue;   // this level runs the naive loop itself
        levels_checked++;
        for (int a = 0; a < COUNT(KS); a++)
            for (int b = 0; b < COUNT(NS); b++) {
                const int K = KS[a], N = NS[b], T = TS[(a * 3 + b) % COUNT(TS)];
                float *W = sc_rand((long)N * K, -1, 1, seed++), *X = sc_rand((long)T * K, -1, 1, seed++);
                float *Y = malloc((size_t)T * N * sizeof(float)), *Z = malloc((size_t)T * N * sizeof(float));
                ck_assert(W && X && Y && Z);
                float *Wp = packed(W, N, K);
                o->linear_packed(Y, X, Wp, T, N, K);
                tw_linear_packed_naive(Z, X, Wp, T, N, K);
                for (long i = 0; i < (long)T * N; i++)
                    ck_assert_msg(memcmp(&Y[i], &Z[i], sizeof(float)) == 0,
                                  "%s T %d N %d K %d: row %ld output %ld is %.9g, the naive loop %.9g",
                                  lv, T, N, K, i / N, i % N, Y[i], Z[i]);
                free(W); free(X); free(Y); free(Z); free(Wp);
            }
    }
    if (strstr(tw_simd_available(), "avx2")) ck_assert_int_ge(levels_checked, 1);   // not vacuous
}
END_TEST

START_TEST(a_row_gets_the_same_bits_among_any_rows)
{
    const char *avail = tw_simd_available(), *sp = strrchr(avail, ' ');
    ck_assert_ptr_nonnull(tw_simd_init(sp ? sp + 1 : avail));
    enum { N = 70, K = 288, T = 13 };
    float *W = sc_rand((long)N * K, -1, 1, 77), *X = sc_rand((long)T * K, -1, 1, 78);
    float Y[T * N], y[N];
    ck_assert(W && X);
    float *Wp = packed(W, N, K);
    ck_assert(tw_linear_packed(Y, X, Wp, NULL, T, N, K));
    for (int t = 0; t < T; t++) {
        ck_assert(tw_linear_packed(y, X + (size_t)t * K, Wp, NULL, 1, N, K));
        ck_assert_msg(memcmp(y, Y + (size_t)t * N, sizeof y) == 0, "row %d differs alone", t);
    }
    free(W); free(X); free(Wp);
    ck_assert_str_eq(tw_simd_init("naive"), "naive");
}
END_TEST

START_TEST(the_sums_are_within_the_bound_of_float64)
{
    const double u = ldexp(1.0, -24);
    uint64_t seed = 1300;
    for (int a = 0; a < COUNT(KS); a++) {
        const int K = KS[a], N = 33, T = 3;
        float *W = sc_rand((long)N * K, -1, 1, seed++), *X = sc_rand((long)T * K, -1, 1, seed++);
        float *b = sc_rand(N, -1, 1, seed++);
        float Y[T * N];
        ck_assert(W && X && b);
        float *Wp = packed(W, N, K);
        ck_assert(tw_linear_packed(Y, X, Wp, b, T, N, K));
        const double gamma = K * u / (1.0 - K * u);
        for (int t = 0; t < T; t++)
            for (int n = 0; n < N; n++) {
                double exact = 0.0, mag = 0.0;
                for (int k = 0; k < K; k++) {
                    const double p = (double)W[(size_t)n * K + k] * X[(size_t)t * K + k];
                    exact += p;
                    mag += fabs(p);
                }
                // The bias is one more rounded addition: its own half ulp of the result.
                const double bound = gamma * mag + u * fabs(exact + b[n]);
                const double err = fabs((double)Y[t * N + n] - (exact + b[n]));
                ck_assert_msg(err <= bound, "K %d row %d output %d: error %.3g, bound %.3g", K, t, n,
                              err, bound);
            }
        free(W); free(X); free(b); free(Wp);
    }
}
END_TEST

// The hard cases of an argmax, in rows 1 and 2 of X and outputs 0, 5, N - 2 and N - 1 of W:
//  - W's row N - 1 a copy of row 5, both scaled up: the two outputs tie, often as the largest,
//    and the first must win;
//  - row 1 of X has an infinite x[0], and W's rows 0 and N - 2 a zero there: outputs 0 and N - 2
//    are NaN (0 times infinity), every other one is +inf or -inf: nothing beats the NaN at 0;
//  - row 2 of X has an infinite x[K - 1], and W's row N - 2 a zero there: output N - 2 is a NaN
//    among infinities, which never wins, and the first +inf (a tie of many) does.
// (Rows 1 and 2 share their column when K = 1: then both are the first case.)
static void hard_cases(float *W, float *X, int T, int N, int K) {
    if (N < 8 || T < 3) return;
    for (int k = 0; k < K; k++) {
        W[(size_t)5 * K + k] *= 4.0f;
        W[(size_t)(N - 1) * K + k] = W[(size_t)5 * K + k];
    }
    X[(size_t)1 * K] = INFINITY;
    W[0] = W[(size_t)(N - 2) * K] = 0.0f;
    X[(size_t)2 * K + K - 1] = INFINITY;
    W[(size_t)(N - 2) * K + K - 1] = 0.0f;
}

// Each row's argmax of the naive loop's Y.   arg: (T)
static void naive_argmax(int *arg, const float *X, const float *Wp, int T, int N, int K) {
    float *Z = malloc((size_t)T * N * sizeof(float));
    ck_assert_ptr_nonnull(Z);
    tw_linear_packed_naive(Z, X, Wp, T, N, K);
    for (int t = 0; t < T; t++) arg[t] = tw_argmax_naive(Z + (size_t)t * N, N);
    free(Z);
}

START_TEST(the_greedy_head_picks_the_naive_argmax_at_every_level)
{
    char levels[64];
    snprintf(levels, sizeof levels, "naive %s", tw_simd_available());
    uint64_t seed = 2100;
    int levels_checked = 0, ties = 0, nans = 0;   // rows where output 5 won; row 1 picked 0
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        if (!tw_simd_init(lv)) continue;
        levels_checked++;
        for (int a = 0; a < COUNT(KS); a++)
            for (int b = 0; b < COUNT(NS); b++) {
                const int K = KS[a], N = NS[b], T = TS[(a * 5 + b) % COUNT(TS)] + 3;
                float *W = sc_rand((long)N * K, -1, 1, seed++), *X = sc_rand((long)T * K, -1, 1, seed++);
                int *arg = malloc((size_t)T * sizeof(int)), *want = malloc((size_t)T * sizeof(int));
                float *scratch = malloc(tw_linear_packed_argmax_floats(T) * sizeof(float));
                ck_assert(W && X && arg && want && scratch);
                hard_cases(W, X, T, N, K);
                float *Wp = packed(W, N, K);
                ck_assert(tw_linear_packed_argmax(arg, scratch, X, Wp, T, N, K));
                naive_argmax(want, X, Wp, T, N, K);
                for (int t = 0; t < T; t++) {
                    ck_assert_msg(arg[t] == want[t], "%s T %d N %d K %d: row %d picks %d, the naive argmax %d",
                                  lv, T, N, K, t, arg[t], want[t]);
                    ties += N >= 8 && want[t] == 5;
                }
                nans += N >= 8 && want[1] == 0;
                free(W); free(X); free(arg); free(want); free(scratch); free(Wp);
            }
    }
    ck_assert_str_eq(tw_simd_init("naive"), "naive");
    ck_assert_int_ge(levels_checked, 1);
    ck_assert_int_gt(nans, 0);   // the cases were met: not vacuous
    ck_assert_int_gt(ties, 0);
}
END_TEST

Suite *suite_linear_packed(void) {
    Suite *s = suite_create("linear_packed");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_panels_hold_w_k_major_with_zeros_past_n);
    tcase_add_test(tc, the_blocks_of_k_are_equal_parts_of_at_most_256);
    tcase_add_test(tc, every_level_gives_the_naive_loops_bits);
    tcase_add_test(tc, a_row_gets_the_same_bits_among_any_rows);
    tcase_add_test(tc, the_sums_are_within_the_bound_of_float64);
    tcase_add_test(tc, the_greedy_head_picks_the_naive_argmax_at_every_level);
    suite_add_tcase(s, tc);
    return s;
}
