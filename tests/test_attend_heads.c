// test_attend_heads.c: one decode step's attention with its heads shared among threads
// (tw_simd_attend_heads, simd.h) equals the fused kernel called head by head, bit for bit
// (tolerance 0: each head is the same call on the same data, whichever thread makes it), for 1,
// 2 and 3 threads, with grouped kv heads, at every level that has the kernel. `make test` builds
// without OpenMP (one thread, the equality to per-head calls); `make test-q8-threads` runs this
// suite with real threads. And the kernel that reads a paged cache's rows in place through row
// pointers (tw_simd_attend_one_rows) equals the fused kernel over the same rows made contiguous.
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "simd_cases.h"

START_TEST(heads_on_threads_equal_heads_one_by_one)
{
    enum { H = 6, G = 2, S = 60, D = 48 };   // H S D = 17280: above the threshold for threads
    float *q = sc_rand(H * D, -2, 2, 11), *k = sc_rand((long)S * G * D, -2, 2, 12);
    float *v = sc_rand((long)S * G * D, -2, 2, 13);
    float want[H * D], got[H * D], sc_w[H * S], p_w[H * S], sc_g[H * S], p_g[H * S];
    char levels[64];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    const int before = tw_threads_set(0);   // 0: leave unchanged, just report
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        ck_assert_ptr_nonnull(tw_simd_init(lv));
        if (!tw_simd.attend) {   // no kernel: declines, touching nothing
            ck_assert_int_eq(tw_simd_attend_heads(got, sc_g, p_g, q, k, v, H, G, S, D, S), 0);
            continue;
        }
        for (int h = 0; h < H; h++)
            ck_assert(tw_simd_attend_one(want + h * D, sc_w + h * S, p_w + h * S, q + h * D,
                                         k + (h / (H / G)) * D, v + (h / (H / G)) * D, S, D, G * D));
        for (int n = 1; n <= 3; n++) {
            tw_threads_set(n);
            memset(got, 0xff, sizeof got);
            ck_assert(tw_simd_attend_heads(got, sc_g, p_g, q, k, v, H, G, S, D, S));
            ck_assert_msg(memcmp(got, want, sizeof got) == 0, "%s, %d threads: outputs differ", lv, n);
            ck_assert_msg(memcmp(p_g, p_w, sizeof p_g) == 0, "%s, %d threads: patterns differ", lv, n);
        }
        tw_threads_set(before);
    }
    ck_assert_ptr_nonnull(tw_simd_init("naive"));
    free(q); free(k); free(v);
}
END_TEST

// The in-place kernel (tw_simd_attend_one_rows: a paged cache read through row pointers, as
// batched decoding does) against the fused kernel over the same rows laid out contiguously, bit
// for bit: rows in reverse order, every kv head's offset, head sizes with and without
// a multiple of 8, key counts around the kernel's groups of 8 and 4, and rows that overflow (an
// infinite score, an infinite value) so the kernels' recomputation in order runs too.
START_TEST(rows_in_place_equal_rows_contiguous)
{
    enum { G = 3, S_MAX = 70, D_MAX = 64 };
    const int Ss[] = { 1, 3, 4, 7, 8, 9, 16, 33, 70 }, Ds[] = { 5, 8, 12, 48, 64 };
    char levels[64];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        ck_assert_ptr_nonnull(tw_simd_init(lv));
        for (size_t i = 0; i < sizeof Ds / sizeof Ds[0]; i++)
            for (size_t j = 0; j < sizeof Ss / sizeof Ss[0]; j++)
                for (int extreme = 0; extreme <= 2; extreme++) {
                    const int D = Ds[i], S = Ss[j], GD = G * D;
                    const unsigned seed = (unsigned)(100 * i + 10 * j + extreme);
                    float *q = sc_rand(D, -2, 2, seed + 1);
                    float *pool_k = sc_rand((long)S * GD, -2, 2, seed + 2);   // slot p: a row of G heads
                    float *pool_v = sc_rand((long)S * GD, -2, 2, seed + 3);
                    float *k = malloc((size_t)S * GD * sizeof *k), *v = malloc((size_t)S * GD * sizeof *v);
                    const float *k_rows[S_MAX], *v_rows[S_MAX];
                    for (int s = 0; s < S; s++) {   // key s in slot S-1-s: the rows reversed
                        k_rows[s] = pool_k + (long)(S - 1 - s) * GD;
                        v_rows[s] = pool_v + (long)(S - 1 - s) * GD;
                    }
                    if (extreme == 1) for (int d = 0; d < GD; d++) pool_k[d] *= 1e38f;   // scores overflow
                    if (extreme == 2) pool_v[GD - 1] = INFINITY;                            // a value does
                    for (int s = 0; s < S; s++) {
                        memcpy(k + (long)s * GD, k_rows[s], (size_t)GD * sizeof *k);
                        memcpy(v + (long)s * GD, v_rows[s], (size_t)GD * sizeof *v);
                    }
                    for (int g = 0; g < G; g++) {
                        float want[D_MAX], got[D_MAX], sc_w[S_MAX], p_w[S_MAX], sc_g[S_MAX], p_g[S_MAX];
                        memset(got, 0xff, sizeof got);
                        memset(sc_g, 0xff, sizeof sc_g);
                        memset(p_g, 0xff, sizeof p_g);
                        float keep[D_MAX];
                        memcpy(keep, got, sizeof keep);
                        if (!tw_simd.attend_rows) {   // no kernel: declines, touching nothing
                            ck_assert_int_eq(tw_simd_attend_one_rows(got, sc_g, p_g, q, k_rows, v_rows,
                                                                     (long)g * D, S, D), 0);
                            ck_assert(memcmp(got, keep, sizeof got) == 0);
                            continue;
                        }
                        ck_assert(tw_simd_attend_one(want, sc_w, p_w, q, k + g * D, v + g * D, S, D, GD));
                        ck_assert(tw_simd_attend_one_rows(got, sc_g, p_g, q, k_rows, v_rows, (long)g * D,
                                                          S, D));
                        ck_assert_msg(memcmp(got, want, (size_t)D * sizeof *got) == 0,
                                      "%s D %d S %d head %d extreme %d: outputs differ", lv, D, S, g, extreme);
                        ck_assert_msg(memcmp(sc_g, sc_w, (size_t)S * sizeof *sc_g) == 0 &&
                                      memcmp(p_g, p_w, (size_t)S * sizeof *p_g) == 0,
                                      "%s D %d S %d head %d extreme %d: scores or pattern differ", lv, D,
                                      S, g, extreme);
                    }
                    free(q); free(pool_k); free(pool_v); free(k); free(v);
                }
    }
    ck_assert_ptr_nonnull(tw_simd_init("naive"));
}
END_TEST

Suite *suite_attend_heads(void) {
    Suite *s = suite_create("attend_heads");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, heads_on_threads_equal_heads_one_by_one);
    tcase_add_test(tc, rows_in_place_equal_rows_contiguous);
    suite_add_tcase(s, tc);
    return s;
}
