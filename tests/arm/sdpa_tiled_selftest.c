// sdpa_tiled_selftest.c: the tiled attention's SIMD levels against the naive tiled loops
// (tests/sdpa_tiled_cases.h) without the Check framework, for the AArch64 cross build run under
// qemu by `make test-arm-tiled` (NEON). Prints one line per failure and "N passed, M failed";
// exits 1 if anything failed or no SIMD level was checked.
#include <stdio.h>
#include <string.h>
#include "sdpa_tiled_cases.h"

int main(void) {
    int passed = 0, failed = 0, levels_run = 0;
    char levels[128], msg[512];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    printf("levels available: %s\n", levels);
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        if (strcmp(lv, "naive") == 0) continue;
        levels_run++;
        for (int i = 0; i < (int)N_ST_CASES; i++) {
            msg[0] = '\0';
            if (st_run(lv, i, msg, sizeof msg) == 0) passed++;
            else { failed++; printf("FAIL tiled attention at level %s, case %d: %s\n", lv, i, msg); }
        }
    }
    printf("sdpa_tiled_selftest: %d passed, %d failed (%d SIMD level(s))\n", passed, failed, levels_run);
    return failed == 0 && levels_run > 0 ? 0 : 1;
}
