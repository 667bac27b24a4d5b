// test_peak.c: the FMA-throughput probe (bench/peak.c): its counts, its shapes and its
// arithmetic, never its speed.
//
// Whether the probe measures the FMA units rather than their latency, and whether its rate agrees
// with the clock it is divided by, are measurements: `make bench` prints both (the rate with 4
// chains against the default, and FLOP per cycle against the FMA units a core has), where a
// loaded machine can slow a figure but cannot fail a test. What is checked here holds at any
// speed, under valgrind and qemu too.
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "peak.h"

// The probe's default chain count covers latency x throughput of the FMA units of every core in
// the table of bench/peak.c (AVX-512: 2 ports x latency 4 = 8 zmm chains on Intel; AVX2: 2 x 5 =
// 10 ymm chains on Haswell; Arm: 4 pipes x latency 4 = 16 on Neoverse V and Apple), and the probe
// also runs with twice as many chains (or the most the register file holds). A count, not a
// timing: whether twice the chains raise the rate on this machine is a measurement, which
// `make bench` prints beside the peak ("with twice the chains").
START_TEST(default_chains_cover_latency_times_throughput)
{
    ck_assert_int_ge(tw_peak_default_chains("avx512"), 8);
    ck_assert_int_ge(tw_peak_default_chains("avx2"), 10);
    ck_assert_int_ge(tw_peak_default_chains("neon"), 16);
    const char *isa = tw_peak_best_isa();
    if (!isa) return;   // no probe in this build (SIMD=0, or neither x86-64 nor AArch64)
    int n = tw_peak_default_chains(isa), n2 = 2 * n;
    if (n2 > tw_peak_max_chains(isa)) n2 = tw_peak_max_chains(isa);
    ck_assert_int_gt(n2, n);
    tw_peak p;
    ck_assert(tw_peak_fma(&p, isa, n2, 1, 0.001));
    ck_assert_int_eq(p.chains, n2);
}
END_TEST

// Every chain count the probe has a loop for (4 to 16, then 24 and 32 where the register file
// holds them) runs, and the
// result names what ran: the ISA asked for, its floats per register, the chain count (0: the
// default), and a rate that is a positive finite number (its size is the benchmark's business).
// On x86 with AVX-512 the narrower AVX2 loops run too (bench/bench.c uses them for the 4-chain
// figure).
START_TEST(probe_reports_what_it_ran)
{
    const char *isa = tw_peak_best_isa();
    if (!isa) return;
    const char *isas[2] = { isa, strcmp(isa, "avx512") == 0 ? "avx2" : NULL };
    for (int i = 0; i < 2 && isas[i]; i++) {
        const int lanes = strcmp(isas[i], "avx512") == 0 ? 16 : strcmp(isas[i], "avx2") == 0 ? 8 : 4;
        static const int counts[] = { 0, 4, 8, 12, 16, 24, 32 };   // the loops of bench/peak.c
        for (int c = 0; c < 7 && counts[c] <= tw_peak_max_chains(isas[i]); c++) {
            const int chains = counts[c];
            tw_peak p = { NULL, 0, 0, 0 };
            ck_assert_msg(tw_peak_fma(&p, isas[i], chains, 1, 0.0005), "%s, %d chains", isas[i],
                          chains);
            ck_assert_str_eq(p.isa, isas[i]);
            ck_assert_int_eq(p.lanes, lanes);
            ck_assert_int_eq(p.chains, chains ? chains : tw_peak_default_chains(isas[i]));
            ck_assert(isfinite(p.gflops) && p.gflops > 0);
        }
    }
}
END_TEST

// The probe's arithmetic: each chain is acc = acc + acc * acc from -0.5 (bench/peak.c). The
// sequence must stay a normal, nonzero float however long a run lasts, so that no core meets an
// overflow, a subnormal (slow on some cores) or a zero (which some might shortcut): it rises
// monotonically towards 0 like -1/n. Ten million steps, in the fused form the instructions use,
// more than a run of the probe does per chain at 4 ms.
START_TEST(probe_chain_stays_normal_and_nonzero)
{
    float acc = -0.5f, prev = -1.0f;
    for (long i = 0; i < 10000000L; i++) {
        acc = fmaf(acc, acc, acc);
        if (!(acc > prev && acc < 0 && fpclassify(acc) == FP_NORMAL))
            ck_abort_msg("step %ld: %g after %g", i, (double)acc, (double)prev);
        prev = acc;
    }
    ck_assert(acc > -1e-6f);   // -1/n: about -1e-7 after 1e7 steps
}
END_TEST

START_TEST(unknown_isa_or_chain_count_is_refused)
{
    tw_peak p;
    ck_assert(!tw_peak_fma(&p, "sse9", 16, 1, 0.001));
    ck_assert(!tw_peak_fma(&p, NULL, 16, 1, 0.001));
    const char *isa = tw_peak_best_isa();
    if (!isa) return;
    ck_assert(!tw_peak_fma(&p, isa, 5, 1, 0.001));
    ck_assert(!tw_peak_fma(&p, isa, tw_peak_max_chains(isa) + 4, 1, 0.001));
}
END_TEST

Suite *suite_peak(void) {
    Suite *s = suite_create("peak");
    TCase *tc = tcase_create("probe");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, default_chains_cover_latency_times_throughput);
    tcase_add_test(tc, probe_reports_what_it_ran);
    tcase_add_test(tc, probe_chain_stays_normal_and_nonzero);
    tcase_add_test(tc, unknown_isa_or_chain_count_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
