// fuzz_kernels_silu.c: differential libFuzzer target for the SIMD kernel family "silu" (issue 16).
// The bytes become row sizes and float rows that favour the extremes of the range (subnormals,
// 1e-30 next to 1e30, 3e38, all-equal rows, one non-zero element; tests/simd_range.h, sr_fill_row),
// and every SIMD level this CPU has runs them against the reference the naive model runs. The first
// disagreement beyond the bound stated in tests/simd_range.h (only where the reference result is
// finite) prints what differed and aborts, so libFuzzer keeps the input as a crash artifact.
#include "simd_range.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sr_bytes b = { data, size };
    char msg[512] = "";
    if (sr_run_silu(&b, msg, sizeof msg)) {
        fprintf(stderr, "fuzz_kernels_silu: %s\n", msg);
        abort();
    }
    return 0;
}
