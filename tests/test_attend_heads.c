// test_attend_heads.c: one decode step's attention with its heads shared among threads
// (tw_simd_attend_heads, simd.h) equals the fused kernel called head by head, bit for bit
// (tolerance 0: each head is the same call on the same data, whichever thread makes it), for 1,
// 2 and 3 threads, with grouped kv heads, at every level that has the kernel. `make test` builds
// without OpenMP (one thread, the equality to per-head calls); `make test-q8-threads` runs this
// suite with real threads.
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

Suite *suite_attend_heads(void) {
    Suite *s = suite_create("attend_heads");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, heads_on_threads_equal_heads_one_by_one);
    suite_add_tcase(s, tc);
    return s;
}
