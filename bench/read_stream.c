// read_stream.c: the fastest plain way this CPU reads an array once, for the decode roofline of
// tools/bench_generate.c: a decode step can be no faster than the machine reads its bytes.
// Built like bench/autovec.c (-O3 -ffast-math -march=native, this object only), so the compiler
// sums with the CPU's widest vectors and several partial sums (64 floats a step: four 512-bit
// accumulators, eight 256-bit ones); and, as the library's matvec kernels do (simd.h,
// TW_PREFETCH_AHEAD_FLOATS), each step asks for the lines that many floats ahead with a software
// prefetch, so the ceiling is never below what the kernels can reach by the same means.
#include <stdint.h>
#include "read_stream.h"
#include "simd/simd.h"   // TW_PREFETCH_AHEAD_FLOATS

float bench_read_stream(const float *a, long n) {
    float part[64] = { 0 };
    long i = 0;
    for (; i + 64 <= n; i += 64) {
        // the four lines of this step's 256 bytes, that far ahead (past the end of a at the last
        // steps: a prefetch never faults, and the address is formed as an integer)
        const uintptr_t ahead = (uintptr_t)(a + i) + TW_PREFETCH_AHEAD_FLOATS * sizeof(float);
        for (int l = 0; l < 4; l++) __builtin_prefetch((const void *)(ahead + 64 * (uintptr_t)l), 0, 3);
        for (int j = 0; j < 64; j++) part[j] += a[i + j];
    }
    float sum = 0.0f;
    for (; i < n; i++) sum += a[i];
    for (int j = 0; j < 64; j++) sum += part[j];
    return sum;
}
