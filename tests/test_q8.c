// test_q8.c: every int8 kernel (lib/simd/q8.h), at every level this CPU can run (naive, avx2,
// avx512bw, avx512vnni, or neon and neon_dot), agrees with the naive loops of lib/quant/q8_0.c on the
// shapes of tests/q8_cases.h (tolerances and their reasons are there: 0 for quantization and for
// the integer dot products, a derived float-reordering bound for realistic scales); plus the
// dispatcher's contract. Levels are forced through tw_q8_ops_for.
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "q8_cases.h"

static void run_case_at_every_level(int c, int shape) {
    char levels[128], msg[512];
    snprintf(levels, sizeof levels, "%s", tw_q8_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_q8_ops *o = tw_q8_ops_for(lv);
        ck_assert_msg(o != NULL, "int8 level %s is listed as available but has no table", lv);
        msg[0] = '\0';
        int bad = Q8_CASES[c].run(o, shape, msg, sizeof msg);
        ck_assert_msg(!bad, "%s at level %s: %s", Q8_CASES[c].name, lv, msg);
    }
}

// Every case of q8_cases.h (quantize_x bit for bit, the exact and the random matvecs, row-major
// and packed) on every shape: _i = case * N_Q8_SHAPES + shape.
START_TEST(every_case_matches_naive_within_its_bound_at_every_level)
{
    run_case_at_every_level(_i / N_Q8_SHAPES, _i % N_Q8_SHAPES);
}
END_TEST

START_TEST(dispatch_lists_levels_and_auto_is_the_best)
{
    const char *avail = tw_q8_available();
    const char *best = strrchr(avail, ' ') ? strrchr(avail, ' ') + 1 : avail;
    ck_assert_ptr_nonnull(tw_q8_ops_for("auto"));
    ck_assert_str_eq(tw_q8_ops_for("auto")->level, best);
    ck_assert_str_eq(tw_q8_ops_for("naive")->level, "naive");
    ck_assert_ptr_null(tw_q8_ops_for("no-such-level"));
    ck_assert_ptr_null(tw_q8_ops_for(NULL));
    // the fp32 level names map onto the int8 family
    ck_assert_str_eq(tw_q8_ops_for_simd_level("naive")->level, "naive");
    if (tw_q8_ops_for("avx512bw")) {
        const char *want = tw_q8_ops_for("avx512vnni") ? "avx512vnni" : "avx512bw";
        ck_assert_str_eq(tw_q8_ops_for_simd_level("avx512")->level, want);
    }
    if (tw_q8_ops_for("neon")) {
        const char *want = tw_q8_ops_for("neon_dot") ? "neon_dot" : "neon";
        ck_assert_str_eq(tw_q8_ops_for_simd_level("neon")->level, want);
    }
    ck_assert_ptr_null(tw_q8_ops_for_simd_level("bogus"));
    printf("int8 levels available: %s\n", avail);
}
END_TEST

// Group size 4 (stories260K's) runs each SIMD level's own kernels, not the naive loop: the shapes
// with gs 4 above then test those kernels, and bench-generate's note about the naive loop is false.
START_TEST(every_simd_level_takes_group_size_4)
{
    char levels[128];
    snprintf(levels, sizeof levels, "%s", tw_q8_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_q8_ops *o = tw_q8_ops_for(lv);
        int simd = strcmp(lv, "naive") != 0;
        ck_assert_msg(tw_q8_matvec_is_simd(o, 4) == simd, "level %s, gs 4", lv);
        if (simd) ck_assert_msg(o->matvec_g4 && o->quantize_x_g4, "level %s has no gs-4 kernels", lv);
        ck_assert_msg(!tw_q8_matvec_is_simd(o, 12), "level %s claims gs 12", lv);   // naive there
    }
}
END_TEST

// tw_q8_linear is quantize_x then matvec, nothing else: bit for bit the two calls.
START_TEST(linear_is_quantize_then_matvec)
{
    const int N = 5, K = 96, gs = 32;
    float *Wf = tt_rand((long)N * K, -1, 1, 81), *x = tt_rand(K, -1, 1, 82);
    int8_t W[5 * 96], xq[96], xq2[96];
    float Ws[5 * 3], xs[3], xs2[3], y1[5], y2[5];
    ck_assert_int_eq(tw_q8_quantize(W, Ws, Wf, N, K, gs), TW_OK);
    const tw_q8_ops *o = tw_q8_ops_for("auto");
    tw_q8_linear(o, y1, xq, xs, W, Ws, x, N, K, gs);
    tw_q8_quantize_x(o, xq2, xs2, x, K / gs, gs);
    tw_q8_matvec(o, y2, W, Ws, xq2, xs2, N, K, gs);
    ck_assert_mem_eq(y1, y2, sizeof y1);
    ck_assert_mem_eq(xq, xq2, sizeof xq);
    free(Wf); free(x);
}
END_TEST

Suite *suite_q8(void) {
    Suite *s = suite_create("q8");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, every_case_matches_naive_within_its_bound_at_every_level, 0,
                        N_Q8_CASES * N_Q8_SHAPES);
    suite_add_tcase(s, tc);
    TCase *td = tcase_create("dispatch");
    tcase_add_test(td, dispatch_lists_levels_and_auto_is_the_best);
    tcase_add_test(td, linear_is_quantize_then_matvec);
    tcase_add_test(td, every_simd_level_takes_group_size_4);
    suite_add_tcase(s, td);
    return s;
}
