// simd_selftest.c: the kernel checks of tests/simd_cases.h without the Check framework, for
// machines where Check is not installed (the AArch64 cross build run under qemu by
// `make test-arm`). Runs every case at every size for every level available, prints one line per
// failure and a summary line "N passed, M failed", and exits 1 if anything failed.
#include <stdio.h>
#include <string.h>
#include "simd_cases.h"

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
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
