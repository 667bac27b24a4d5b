// test_matvec_split.c: the decode matvec at every level on shapes large enough to take the
// kernels' streaming path (N K > TW_MATVEC_SMALL_FLOATS), and the row split used for threads
// (tw_matvec_part, tw_matvec_threaded): any split, and one or two threads, give the same bits.
#include <string.h>
#include "testutil.h"
#include "simd_cases.h"

// (N, K): 15M's classifier rows x dim cut to 1000 rows; a K that is no multiple of 16; a long K
// (w2-like); a shape just over the small-matrix threshold; the 15M projection.
static const int SHAPES[][2] = { { 1000, 288 }, { 4100, 17 }, { 37, 2000 }, { 257, 256 }, { 288, 288 } };
enum { N_SHAPES = sizeof SHAPES / sizeof SHAPES[0] };

// Runs check on every available level and every shape of SHAPES, with W (N, K) and x (K) seeded
// random in [-1, 1): seed w_seed + s and x_seed + s for shape s.
typedef void (*shape_check)(const char *lv, const tw_kernels *o, const float *W, const float *x,
                            int N, int K);
static void for_each_level_and_shape(shape_check check, uint64_t w_seed, uint64_t x_seed) {
    char levels[64];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_kernels *o = tw_kernels_for(lv);
        for (int s = 0; s < N_SHAPES; s++) {
            int N = SHAPES[s][0], K = SHAPES[s][1];
            float *W = sc_rand((long)N * K, -1, 1, w_seed + s), *x = sc_rand(K, -1, 1, x_seed + s);
            ck_assert(W && x);
            check(lv, o, W, x, N, K);
            free(W); free(x);
        }
    }
}

// Every level against the naive kernel within 2 K u sum_k |w_ik x_k| per row (the bound of
// tests/simd_cases.h: each of the two sums, in any order, is within K u sum|w x| of the exact).
static void check_against_naive(const char *lv, const tw_kernels *o, const float *W, const float *x,
                                int N, int K) {
    float *got = sc_zeros(N), *want = sc_zeros(N);
    ck_assert(got && want);
    o->matvec(got, W, x, N, K);
    tw_kernels_naive.matvec(want, W, x, N, K);
    for (int i = 0; i < N; i++) {
        double abs_sum = 0;
        for (int k = 0; k < K; k++) abs_sum += fabs((double)W[(long)i * K + k] * x[k]);
        double bound = 2.0 * K * U_ROUND * abs_sum + 1e-30;
        ck_assert_msg(fabs((double)got[i] - want[i]) <= bound,
                      "%s matvec %dx%d row %d: %.9g vs naive %.9g (bound %.3g)", lv, N, K,
                      i, got[i], want[i], bound);
    }
    free(got); free(want);
}

START_TEST(matvec_streaming_path_matches_naive)
{
    for_each_level_and_shape(check_against_naive, 70, 80);
}
END_TEST

// Splitting the rows into 1, 2, 3 or 7 parts (as 1, 2, 3 or 7 threads would, each part a
// separate call on fewer rows, which also moves parts below the small-matrix threshold where the
// AVX-512 kernel changes its loop order) gives bit-identical outputs: tolerance 0.
static void check_row_split(const char *lv, const tw_kernels *o, const float *W, const float *x,
                            int N, int K) {
    float *whole = sc_zeros(N), *split = sc_zeros(N);
    ck_assert(whole && split);
    o->matvec(whole, W, x, N, K);
    const int parts[] = { 1, 2, 3, 7 };
    for (int p = 0; p < 4; p++) {
        for (int i = 0; i < N; i++) split[i] = NAN;
        for (int t = 0; t < parts[p]; t++) tw_matvec_part(o->matvec, split, W, x, N, K, t, parts[p]);
        ck_assert_msg(memcmp(whole, split, (size_t)N * sizeof(float)) == 0,
                      "%s matvec %dx%d split in %d parts differs", lv, N, K, parts[p]);
    }
    free(whole); free(split);
}

START_TEST(row_split_is_bit_identical)
{
    for_each_level_and_shape(check_row_split, 90, 100);
}
END_TEST

// tw_matvec_threaded with one and with two threads: identical bits (tolerance 0). Without
// OpenMP (the default build) both run on one thread, and the split itself is covered above; the
// OpenMP build of the benchmarks checks the same on real decoding (tools/bench_generate.c).
START_TEST(one_and_two_threads_agree)
{
    const tw_kernels *o = tw_kernels_for("auto");
    const int N = 1000, K = 288;
    float *W = sc_rand((long)N * K, -1, 1, 110), *x = sc_rand(K, -1, 1, 111);
    float *y1 = sc_zeros(N), *y2 = sc_zeros(N);
    ck_assert(W && x && y1 && y2);
    int before = tw_threads_set(0);   // 0: leave unchanged, just report
    tw_threads_set(1);
    tw_matvec_threaded(o->matvec, y1, W, x, N, K);
    tw_threads_set(2);
    tw_matvec_threaded(o->matvec, y2, W, x, N, K);
    tw_threads_set(before);
    ck_assert(memcmp(y1, y2, (size_t)N * sizeof(float)) == 0);
    free(W); free(x); free(y1); free(y2);
}
END_TEST

Suite *suite_matvec_split(void) {
    Suite *s = suite_create("matvec_split");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, matvec_streaming_path_matches_naive);
    tcase_add_test(tc, row_split_is_bit_identical);
    tcase_add_test(tc, one_and_two_threads_agree);
    suite_add_tcase(s, tc);
    return s;
}
