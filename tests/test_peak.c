// test_peak.c: the FMA-throughput probe (bench/peak.c) measures the FMA units, not their
// latency, and agrees with the clock it is divided by.
//
// These are ratios of two measurements taken in the same test, interleaved, never a threshold on
// an absolute speed. Each side is the best of 25 short runs (about 3 ms each, shorter than the
// scheduler's time slice, so on a loaded machine most runs still run undisturbed): another
// process can only slow a run down, so the best run of each is the undisturbed one, and
// interleaving the two sides exposes both to the same moments of the machine.
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "peak.h"

// Under an emulator or instrumenting tool (valgrind, whose CPU has no latency model) the ratios
// mean nothing: `make valgrind` sets TW_NO_TIMING_RATIOS=1 and these tests then check only that
// the probe runs. Everywhere else they must hold.
static int ratios_meaningful(void) {
    const char *e = getenv("TW_NO_TIMING_RATIOS");
    return !(e && *e && strcmp(e, "0") != 0);
}

enum { RUNS = 25 };
static const double RUN_SECONDS = 0.003;

// Best GFLOP/s of `isa` at chains a and b, measured alternately.
static void best_pair(const char *isa, int a, int b, double *ga, double *gb) {
    *ga = *gb = 0;
    for (int r = 0; r < RUNS; r++) {
        tw_peak pa, pb;
        ck_assert(tw_peak_fma(&pa, isa, a, 1, RUN_SECONDS));
        ck_assert(tw_peak_fma(&pb, isa, b, 1, RUN_SECONDS));
        if (pa.gflops > *ga) *ga = pa.gflops;
        if (pb.gflops > *gb) *gb = pb.gflops;
    }
}

// The probe's default chain count covers latency x throughput of the FMA units of every core in
// the table of bench/peak.c (AVX-512: 2 ports x latency 4 = 8 zmm chains on Intel; AVX2: 2 x 5 =
// 10 ymm chains on Haswell; Arm: 4 pipes x latency 4 = 16 on Neoverse V and Apple), and the probe
// also runs with twice as many chains (or the most the register file holds). A count, not a
// timing: whether twice the chains raise the rate on this machine is a measurement, which
// `make bench` prints beside the peak ("with twice the chains"), where a loaded machine cannot fail a test.
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

// The measurement can tell a latency-bound loop from the peak: 4 chains of 8-float (AVX2) or
// 4-float (NEON) FMAs cover at most half of what any of these cores can issue (x86: 2 FMAs per
// cycle x latency >= 4 needs >= 8 chains; Arm big cores: >= 8 to 16), so they run at <= 50-60% of
// the default probe. The bound 0.75 leaves room for noise and for cores we have not seen.
START_TEST(four_chains_are_latency_bound)
{
    const char *isa = tw_peak_best_isa();
    if (!isa) return;
    const char *narrow = strcmp(isa, "neon") == 0 ? "neon" : "avx2";
    double g4, gd;
    best_pair(narrow, 4, tw_peak_default_chains(narrow), &g4, &gd);
    if (!ratios_meaningful()) return;
    ck_assert_msg(g4 <= 0.75 * gd, "%s: 4 chains %.1f GFLOP/s vs %d chains %.1f: the probe cannot "
                  "see latency", narrow, g4, tw_peak_default_chains(narrow), gd);
}
END_TEST

// GFLOP/s divided by the clock from the integer-add chain is a count of FMA units: at most 2 per
// cycle on any x86-64 core (Intel: ports 0 and 5; AMD Zen: two FMA pipes) and 4 on Arm (4 x
// 128-bit pipes, Neoverse V, Apple). 15% slack: the two loops are timed separately, and a core
// may run them at slightly different clocks. A clock measured 2x too low would fail here.
START_TEST(flop_per_cycle_fits_the_fma_units)
{
    const char *isa = tw_peak_best_isa();
    if (!isa) return;
    // Clock and probe in turn, the best of each (as best_pair does).
    double ghz = 0;
    tw_peak p = { NULL, 0, 0, 0 };
    for (int r = 0; r < RUNS; r++) {
        double g = tw_peak_clock_ghz(1, RUN_SECONDS);
        tw_peak q;
        ck_assert(tw_peak_fma(&q, isa, 0, 1, RUN_SECONDS));
        if (g > ghz) ghz = g;
        if (q.gflops > p.gflops) p = q;
    }
    if (!ratios_meaningful()) return;
    ck_assert_msg(ghz > 0.2 && ghz < 8.0, "clock %.2f GHz is implausible", ghz);
    double units = strcmp(isa, "neon") == 0 ? 4 : 2;
    double flop_per_cycle = p.gflops / ghz, most = 2.0 * p.lanes * units;
    ck_assert_msg(flop_per_cycle > 0 && flop_per_cycle <= 1.15 * most,
                  "%s: %.1f GFLOP/s at %.2f GHz = %.1f FLOP/cycle, more than %.0f", isa, p.gflops,
                  ghz, flop_per_cycle, most);
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
    tcase_add_test(tc, four_chains_are_latency_bound);
    tcase_add_test(tc, flop_per_cycle_fits_the_fma_units);
    tcase_add_test(tc, unknown_isa_or_chain_count_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
