// simd_selftest.c: the kernel checks of tests/simd_cases.h without the Check framework, for
// machines where Check is not installed (the AArch64 cross build run under qemu by
// `make test-arm`). Runs every case at every size for every level available, prints one line per
// failure and a summary line "N passed, M failed", and exits 1 if anything failed.
#include <stdio.h>
#include <string.h>
#include "simd_cases.h"
#include "peak.h"

int main(void) {
    int passed = 0, failed = 0;
    char levels[64], msg[512];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    printf("levels available: %s\n", levels);
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_kernels *o = tw_kernels_for(lv);
        double rel = 0;
        if (o && !sc_exp_error(o, &rel, msg, sizeof msg))
            printf("exp at level %-6s: max relative error vs expf over [-87.3, 88.7]: %.3g (%.2f u)\n",
                   lv, rel, rel / U_ROUND);
        for (int c = 0; c < N_SIMD_CASES; c++)
            for (int s = 0; s < N_SIMD_SIZES; s++) {
                msg[0] = '\0';
                if (o && SIMD_CASES[c].run(o, SIMD_SIZES[s], msg, sizeof msg) == 0) {
                    passed++;
                } else {
                    failed++;
                    printf("FAIL %s at level %s, size %d: %s\n", SIMD_CASES[c].name, lv,
                           SIMD_SIZES[s], o ? msg : "no table");
                }
            }
    }
    // The row split used for threads (tw_matvec_part) at every level: 1000 x 288 split in 2, 3
    // and 7 parts gives the same bits as one call (tolerance 0; tests/test_matvec_split.c on x86).
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_kernels *o = tw_kernels_for(lv);
        const int N = 1000, K = 288;
        float *W = sc_rand((long)N * K, -1, 1, 90), *x = sc_rand(K, -1, 1, 91);
        float *whole = sc_zeros(N), *split = sc_zeros(N);
        if (!o || !W || !x || !whole || !split) { failed++; printf("FAIL split: no memory\n"); }
        else {
            o->matvec(whole, W, x, N, K);
            for (int parts = 2; parts <= 7; parts += parts == 3 ? 4 : 1) {
                for (int t = 0; t < parts; t++) tw_matvec_part(o->matvec, split, W, x, N, K, t, parts);
                if (memcmp(whole, split, (size_t)N * sizeof(float)) == 0) passed++;
                else { failed++; printf("FAIL %s matvec split in %d parts differs\n", lv, parts); }
            }
        }
        free(W); free(x); free(whole); free(split);
    }
    // The FMA probe's NEON loops (bench/peak.c, inline assembly) run here too: under qemu the
    // speed means nothing, but an instruction the assembler or the CPU rejects would show.
    const char *isa = tw_peak_best_isa();
    for (int chains = 4; isa && chains <= tw_peak_max_chains(isa); chains += 4) {
        tw_peak p;
        if (tw_peak_fma(&p, isa, chains, 1, 0.001)) passed++;
        else if (chains % 8 == 0 || chains == 12 || chains == 4) {   // 4, 8, 12, 16, 24, 32 exist
            failed++;
            printf("FAIL the %s FMA probe with %d chains does not run\n", isa, chains);
        }
    }
    printf("FMA probe: %s, clock loop %s\n", isa ? isa : "none here",
           tw_peak_clock_ghz(1, 0.001) > 0 ? "runs" : "does not run");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
