// probe_avx2.c: the FMA-throughput probe for AVX2 (compiled with -mavx2 -mfma, this object only).
// Twelve independent accumulators: enough to keep two FMA ports busy through a 4-5 cycle latency,
// with no loads at all, so the loop runs at the physical limit of the FMA units.
// Returns a value that depends on every accumulator, so the compiler cannot drop the loop.
// Floating-point operations performed: iters * 12 * 8 * 2.
#include <immintrin.h>

float bench_fma_probe_avx2(long iters) {
    __m256 acc[12];
    const __m256 m = _mm256_set1_ps(0.999f), a = _mm256_set1_ps(0.001f);
    for (int j = 0; j < 12; j++) acc[j] = _mm256_set1_ps((float)j);
    for (long i = 0; i < iters; i++) {
        acc[0] = _mm256_fmadd_ps(acc[0], m, a);   acc[1] = _mm256_fmadd_ps(acc[1], m, a);
        acc[2] = _mm256_fmadd_ps(acc[2], m, a);   acc[3] = _mm256_fmadd_ps(acc[3], m, a);
        acc[4] = _mm256_fmadd_ps(acc[4], m, a);   acc[5] = _mm256_fmadd_ps(acc[5], m, a);
        acc[6] = _mm256_fmadd_ps(acc[6], m, a);   acc[7] = _mm256_fmadd_ps(acc[7], m, a);
        acc[8] = _mm256_fmadd_ps(acc[8], m, a);   acc[9] = _mm256_fmadd_ps(acc[9], m, a);
        acc[10] = _mm256_fmadd_ps(acc[10], m, a); acc[11] = _mm256_fmadd_ps(acc[11], m, a);
    }
    __m256 s = acc[0];
    for (int j = 1; j < 12; j++) s = _mm256_add_ps(s, acc[j]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0] + out[7];
}
