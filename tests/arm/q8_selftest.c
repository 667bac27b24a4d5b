// q8_selftest.c: the int8 kernel checks of tests/q8_cases.h without the Check framework, for the
// AArch64 cross build run under qemu by `make test-arm-q8` (and natively by `make q8-selftest`).
// Runs every case on every shape at every int8 level available, prints one line per failure and
// a summary "N passed, M failed", and exits 1 if anything failed. With an argument, also requires
// that level to be available (so a run on a CPU model with the dot-product extension proves the
// sdot kernel was really exercised).
#include <stdio.h>
#include <string.h>
#include "q8_cases.h"

int main(int argc, char **argv) {
    int passed = 0, failed = 0;
    char levels[128], msg[512];
    snprintf(levels, sizeof levels, "%s", tw_q8_available());
    printf("int8 levels available: %s (auto: %s)\n", levels, tw_q8_ops_for("auto")->level);
    if (argc > 1 && !tw_q8_ops_for(argv[1])) {
        printf("FAIL: level %s was expected on this CPU but is not available\n", argv[1]);
        failed++;
    }
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_q8_ops *o = tw_q8_ops_for(lv);
        for (int c = 0; c < N_Q8_CASES; c++)
            for (int s = 0; s < N_Q8_SHAPES; s++) {
                msg[0] = '\0';
                if (o && Q8_CASES[c].run(o, s, msg, sizeof msg) == 0) {
                    passed++;
                } else {
                    failed++;
                    printf("FAIL %s at level %s: %s\n", Q8_CASES[c].name, lv, o ? msg : "no table");
                }
            }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
