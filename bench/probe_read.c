// probe_read.c: the read bandwidth of one core from a buffer of a given size (compiled with
// -mavx512f, this object only; called only when the CPU has AVX-512F). bench_q8 sizes the buffer
// to sit in L2 but not in L1, which gives the bound on any kernel whose weights stream from L2.
// Every 64-byte line is loaded once a pass, into four independent sums (no other work per load).
// Returns a value depending on every byte read, so the loads cannot be dropped.
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

int64_t bench_read_probe(const void *buf, size_t bytes, long passes) {
    const unsigned char *p = buf;   // (bytes), bytes a multiple of 256
    __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
    for (long r = 0; r < passes; r++)
        for (size_t i = 0; i < bytes; i += 256) {
            s0 = _mm512_add_epi64(s0, _mm512_loadu_si512(p + i));
            s1 = _mm512_add_epi64(s1, _mm512_loadu_si512(p + i + 64));
            s2 = _mm512_add_epi64(s2, _mm512_loadu_si512(p + i + 128));
            s3 = _mm512_add_epi64(s3, _mm512_loadu_si512(p + i + 192));
        }
    return _mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_add_epi64(s0, s1), _mm512_add_epi64(s2, s3)));
}
