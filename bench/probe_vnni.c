// probe_vnni.c: the integer dot-product peak probe for AVX-512 VNNI (compiled with -mavx512f
// -mavx512bw -mavx512vnni, this object only; called only when the CPU has VNNI).
// Sixteen independent vpdpbusd chains on 512-bit registers: with a latency of about 5 cycles and
// at most two issued per cycle, 16 chains are more than enough to keep every VNNI port busy; no
// loads at all. Each vpdpbusd is 64 byte products (u8 x s8) added into 16 int32 lanes.
// Multiply-adds performed: iters * 16 * 64. Returns a value depending on every chain.
#include <immintrin.h>
#include <stdint.h>

int32_t bench_vnni_probe(long iters) {
    const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
    // Named accumulators (not an array), so every chain lives in a register.
    __m512i c0 = _mm512_set1_epi32(0), c1 = _mm512_set1_epi32(1), c2 = _mm512_set1_epi32(2),
            c3 = _mm512_set1_epi32(3), c4 = _mm512_set1_epi32(4), c5 = _mm512_set1_epi32(5),
            c6 = _mm512_set1_epi32(6), c7 = _mm512_set1_epi32(7), c8 = _mm512_set1_epi32(8),
            c9 = _mm512_set1_epi32(9), c10 = _mm512_set1_epi32(10), c11 = _mm512_set1_epi32(11),
            c12 = _mm512_set1_epi32(12), c13 = _mm512_set1_epi32(13), c14 = _mm512_set1_epi32(14),
            c15 = _mm512_set1_epi32(15);
    for (long i = 0; i < iters; i++) {
        c0 = _mm512_dpbusd_epi32(c0, a, b);   c1 = _mm512_dpbusd_epi32(c1, a, b);
        c2 = _mm512_dpbusd_epi32(c2, a, b);   c3 = _mm512_dpbusd_epi32(c3, a, b);
        c4 = _mm512_dpbusd_epi32(c4, a, b);   c5 = _mm512_dpbusd_epi32(c5, a, b);
        c6 = _mm512_dpbusd_epi32(c6, a, b);   c7 = _mm512_dpbusd_epi32(c7, a, b);
        c8 = _mm512_dpbusd_epi32(c8, a, b);   c9 = _mm512_dpbusd_epi32(c9, a, b);
        c10 = _mm512_dpbusd_epi32(c10, a, b); c11 = _mm512_dpbusd_epi32(c11, a, b);
        c12 = _mm512_dpbusd_epi32(c12, a, b); c13 = _mm512_dpbusd_epi32(c13, a, b);
        c14 = _mm512_dpbusd_epi32(c14, a, b); c15 = _mm512_dpbusd_epi32(c15, a, b);
    }
    __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                                 _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7)));
    s = _mm512_add_epi32(s, _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c8, c9), _mm512_add_epi32(c10, c11)),
                                             _mm512_add_epi32(_mm512_add_epi32(c12, c13), _mm512_add_epi32(c14, c15))));
    return _mm512_reduce_add_epi32(s);
}
