// matmul_5_avx512.c: the AVX-512 micro-kernel for the packed matmul (rung 4, matmul_4_packed.c),
// and the dispatch entries built on it. Compiled with -mavx512f -mfma on this object only.
//
// The tile is 14 x 32: 14 rows of C, each two 16-float registers, is 28 accumulators; with the
// two B registers and one broadcast of A that is 31 of the 32 zmm registers. Per k: 2 loads of
// B, 14 broadcasts of A (a broadcast from memory is a plain load on Intel cores) and 28 FMAs.
// Why this shape: a core with two 512-bit FMA ports needs >= 8 independent FMAs in flight, and
// the more FMAs per load the closer the loop runs to the FMA limit (28 per 16 loads here, against
// 12 per 8 for AVX2's 6 x 16). The B micro-panel streams from L2 (see matmul_4_packed.c), so the
// loop prefetches it PF iterations ahead, which paid where measured (docs/performance.md,
// "Kernels"); a prefetch never faults, so running past the end of the panel is harmless.
#include <immintrin.h>
#include "simd.h"

enum { MR = 14, NR = 32, PF = 8 };

#define DECLARE_ROW(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps();
#define UPDATE_ROW(i) do {                                   \
        __m512 ai = _mm512_set1_ps(a[i]);                    \
        c##i##a = _mm512_fmadd_ps(ai, b0, c##i##a);          \
        c##i##b = _mm512_fmadd_ps(ai, b1, c##i##b);          \
    } while (0)
#define STORE_ROW(i) do {                                                        \
        float *c = C + (i) * ldc;                                                \
        if (accumulate) {                                                        \
            c##i##a = _mm512_add_ps(c##i##a, _mm512_loadu_ps(c));                \
            c##i##b = _mm512_add_ps(c##i##b, _mm512_loadu_ps(c + 16));           \
        }                                                                        \
        _mm512_storeu_ps(c, c##i##a);                                            \
        _mm512_storeu_ps(c + 16, c##i##b);                                       \
    } while (0)

static void ukernel_avx512(int kc, const float *Ap, const float *Bp, float *C, long ldc,
                           int accumulate) {
    DECLARE_ROW(0) DECLARE_ROW(1) DECLARE_ROW(2)  DECLARE_ROW(3)  DECLARE_ROW(4)
    DECLARE_ROW(5) DECLARE_ROW(6) DECLARE_ROW(7)  DECLARE_ROW(8)  DECLARE_ROW(9)
    DECLARE_ROW(10) DECLARE_ROW(11) DECLARE_ROW(12) DECLARE_ROW(13)
    for (int i = 0; i < MR; i++) _mm_prefetch((const char *)(C + i * ldc), _MM_HINT_T0);
    for (int k = 0; k < kc; k++) {
        const float *a = Ap + k * MR;
        _mm_prefetch((const char *)(Bp + (k + PF) * NR), _MM_HINT_T0);
        _mm_prefetch((const char *)(Bp + (k + PF) * NR + 16), _MM_HINT_T0);
        __m512 b0 = _mm512_load_ps(Bp + k * NR), b1 = _mm512_load_ps(Bp + k * NR + 16);
        UPDATE_ROW(0); UPDATE_ROW(1); UPDATE_ROW(2);  UPDATE_ROW(3);  UPDATE_ROW(4);
        UPDATE_ROW(5); UPDATE_ROW(6); UPDATE_ROW(7);  UPDATE_ROW(8);  UPDATE_ROW(9);
        UPDATE_ROW(10); UPDATE_ROW(11); UPDATE_ROW(12); UPDATE_ROW(13);
    }
    STORE_ROW(0); STORE_ROW(1); STORE_ROW(2);  STORE_ROW(3);  STORE_ROW(4);
    STORE_ROW(5); STORE_ROW(6); STORE_ROW(7);  STORE_ROW(8);  STORE_ROW(9);
    STORE_ROW(10); STORE_ROW(11); STORE_ROW(12); STORE_ROW(13);
}

// mr x kc of A = 14 x 256 x 4 B = 14 KiB in L1; kc x nc of B = 256 x 1024 x 4 B = 1 MiB in L2.
// Chosen by timing kc in {128 .. 512}, nc in {512 .. 4096} on a Sapphire Rapids core (2 MiB L2).
const tw_ukernel tw_ukernel_avx512 = { "avx512 14x32", MR, NR, 256, 224, 1024, ukernel_avx512 };

void tw_matmul_avx512(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_avx512, C, A, B, N, 1, M, N, K, 1);
}
void tw_matmul_nt_avx512(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_avx512, C, A, B, 1, K, M, N, K, 1);
}
void tw_matmul_mt_avx512(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_avx512, C, A, B, N, 1, M, N, K, tw_matmul_threads());
}
void tw_matmul_nt_mt_avx512(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_avx512, C, A, B, 1, K, M, N, K, tw_matmul_threads());
}
