// test_matvec_rows.c: the batched Linear's kernel (tw_simd_linear_rows, simd.h): at every level
// this machine runs, y = x W^T for T rows of x gives each row bit for bit what the level's
// decode matvec gives that row alone (tolerance 0: batched decoding promises the decode's
// logits exactly, tests/test_batch.c). The shapes cover every way a sum can end: K below 16, K
// % 64 reaching each of row_partial's tail steps (and the masked rest, on AVX2 K % 32 too), the
// tile's heights (T % 4 and T % 2 = 1, 2, 3), N % 4 = 1, 2, 3 (the lone-row path), the 15M
// model's 288 and 768, and a matrix over TW_MATVEC_SMALL_FLOATS (the streaming matvec); and rows
// whose four partial sums overflow where the in-order sum does not (the redo of
// docs/kernels.md, "Over the whole float range").
#include <string.h>
#include "testutil.h"
#include "simd_cases.h"

static const int KS[] = { 1, 5, 16, 17, 24, 33, 40, 48, 57, 64, 100, 127, 288, 768 };
static const int TS[] = { 1, 2, 3, 5, 6, 7 };
static const int NS[] = { 1, 3, 4, 6, 13 };

// Every row of rows_fn's Y against the matvec of that row: 0 differing bits.
static void check_rows(const char *lv, const tw_kernels *o, const float *W, const float *X, int T,
                       int N, int K) {
    float *Y = sc_zeros((long)T * N), *y = sc_zeros(N);
    ck_assert(Y && y);
    tw_simd = *o;
    ck_assert(tw_simd_linear_rows(Y, X, W, NULL, T, K, N));
    for (int t = 0; t < T; t++) {
        o->matvec(y, W, X + (long)t * K, N, K);
        for (int i = 0; i < N; i++)
            ck_assert_msg(memcmp(&Y[(long)t * N + i], &y[i], sizeof(float)) == 0,
                          "%s rows T %d N %d K %d: row %d output %d is %.9g, the matvec gives %.9g",
                          lv, T, N, K, t, i, Y[(long)t * N + i], y[i]);
    }
    free(Y); free(y);
}

START_TEST(batched_rows_are_the_matvec_bit_for_bit)
{
    char levels[64];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_kernels *o = tw_simd_kernels(lv);
        if (!o || !o->matvec) continue;   // the naive level runs the loop row by row
        uint64_t seed = 500;
        for (size_t a = 0; a < sizeof KS / sizeof KS[0]; a++)
            for (size_t b = 0; b < sizeof NS / sizeof NS[0]; b++) {
                const int K = KS[a], N = NS[b], T = TS[(a + b) % (sizeof TS / sizeof TS[0])];
                float *W = sc_rand((long)N * K, -1, 1, seed++), *X = sc_rand((long)T * K, -1, 1, seed++);
                ck_assert(W && X);
                check_rows(lv, o, W, X, T, N, K);
                free(W); free(X);
            }
        // Streaming-size W (N K > TW_MATVEC_SMALL_FLOATS) with a 15M-like K and every tile height.
        for (int T = 1; T <= 9; T += 4) {
            float *W = sc_rand(301L * 288, -1, 1, seed++), *X = sc_rand((long)T * 288, -1, 1, seed++);
            ck_assert(W && X);
            check_rows(lv, o, W, X, T, 301, 288);
            free(W); free(X);
        }
        // Overflow: products +-1.7e38 alternating, whose in-order sum swings between 1.7e38 and
        // 0 while each lane's partial sum (every 16th or 8th product, all of one sign) reaches
        // inf; the rows kernel must redo those rows as the matvec does.
        enum { K = 96, N = 8, T = 3 };
        float W[N * K], X[T * K];
        for (int i = 0; i < N * K; i++) W[i] = i % 2 ? -1.7e38f : 1.7e38f;
        for (int i = 0; i < T * K; i++) X[i] = 1.0f;
        check_rows(lv, o, W, X, T, N, K);
    }
    ck_assert_ptr_nonnull(tw_simd_init("naive"));
}
END_TEST

Suite *suite_matvec_rows(void) {
    Suite *s = suite_create("matvec_rows");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, batched_rows_are_the_matvec_bit_for_bit);
    suite_add_tcase(s, tc);
    return s;
}
