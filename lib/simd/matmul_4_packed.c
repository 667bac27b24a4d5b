// matmul_4_packed.c: rung 4 of the matmul ladder, packed panels around a register-blocked
// micro-kernel (the GotoBLAS/BLIS scheme), and rung 5, the same loops shared among OpenMP threads.
//   C: (M, N)   A: (M, K)   op(B): (K, N); C must not alias A or B.
//
// What changes from rung 3 (matmul_3_blocked.c):
//  1. A micro-kernel (one per ISA: matmul_5_avx2.c, matmul_5_avx512.c, matmul_5_neon.c, and the
//     portable one below) keeps an mr x nr tile of C in registers for the whole k loop. Per k it
//     loads nr floats of B and mr floats of A and does mr x nr multiply-adds: C is loaded and
//     stored once per kc multiply-adds instead of once per multiply-add, so the FMA units, not
//     the load ports, set the speed.
//  2. Packing copies the blocks the micro-kernel reads into contiguous buffers, in exactly the
//     order it reads them (A as mr-row micro-panels, k-major; B as nr-column micro-panels,
//     k-major). Every load is then unit stride, aligned, and free of TLB misses and cache-set
//     conflicts (a power-of-two N otherwise maps a column of B onto a handful of cache sets).
//     Padding the last panels with zeros lets the micro-kernel always run full tiles.
//  3. Three block sizes pick which cache holds what: a kc x nr micro-panel of B stays in L1 while
//     the micro-kernel sweeps down the mc rows of the packed A block, which stays in L2; the
//     kc x nc packed B panel is reused by every A block from L2/L3.
// Rung 5: inside one parallel region every thread walks the same jc/pc loops. The packing of
// the shared B panel is split among the threads with `omp for` (its implied barrier keeps
// packing and use apart); then the threads take blocks of C's rows from a queue (`schedule
// (dynamic)`), each packing its block of A into its own buffer (which stays in its core's L2)
// and running the macro-kernel on it without waiting for anyone; one barrier before B is
// repacked. That is two barriers per kc x nc panel of B, and a thread whose vCPU is shared with
// another process simply takes fewer blocks. (The first version split the A packing and the micro-panel loop with
// `omp for` too: three barriers per mc block, 10x more, and every one of them stalls when the
// other vCPU is busy, which on a shared 2-vCPU machine cost far more than the work.) No tile is
// split, so the result does not depend on the number of threads. Built without OpenMP, the
// pragmas vanish and this is rung 4.
//
// The sum for C[i][j] is taken in blocks of kc, and within a block in order of k, so it differs
// from the naive loop by rounding only (the tests bound the difference).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "simd.h"

#ifdef _OPENMP
#include <omp.h>
#define TW_OMP(directive) _Pragma(directive)
#else
#define TW_OMP(directive)
#endif

enum { TILE_MAX = 32 * 32 };   // the largest mr * nr of any micro-kernel here

int tw_matmul_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

void tw_matmul_set_threads(int n) {
#ifdef _OPENMP
    if (n >= 1) omp_set_num_threads(n);
#else
    (void)n;
#endif
}

static int min_int(int a, int b) { return a < b ? a : b; }
static int round_up(int x, int m) { return (x + m - 1) / m * m; }

// The fallback when no packing memory can be had: plain loops over the strided operands.
static void matmul_strided(float *C, long ldc, const float *A, long rs_a, long cs_a,
                           const float *B, long rs_b, long cs_b, int M, int N, int K,
                           int accumulate) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float sum = 0.0f;
            for (int k = 0; k < K; k++) sum += A[i * rs_a + k * cs_a] * B[k * rs_b + j * cs_b];
            C[(long)i * ldc + j] = accumulate ? C[(long)i * ldc + j] + sum : sum;
        }
}

#if defined(__SSE2__)   // every x86-64 compiler: baseline, no ISA flag needed
#include <xmmintrin.h>
// dst[k * mr + i] = src[i * rs + k] for i < 4, k < 4: a 4 x 4 block of a row-major A, transposed
// with four loads, the shuffles of _MM_TRANSPOSE4_PS and four stores (16 loads and 16 stores
// element by element: packing a row-major A was a tenth of a stories260K training step).
static void transpose_4x4(float *dst, const float *src, long rs, int mr) {
    __m128 r0 = _mm_loadu_ps(src), r1 = _mm_loadu_ps(src + rs);
    __m128 r2 = _mm_loadu_ps(src + 2 * rs), r3 = _mm_loadu_ps(src + 3 * rs);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(dst, r0);
    _mm_storeu_ps(dst + mr, r1);
    _mm_storeu_ps(dst + 2 * mr, r2);
    _mm_storeu_ps(dst + 3 * mr, r3);
}

// The same for a 2 x 4 block (i < 2): AVX-512's 14-row panels end in two rows that the 4 x 4
// blocks leave over, a seventh of the panel, which went element by element.
static void transpose_2x4(float *dst, const float *src, long rs, int mr) {
    const __m128 r0 = _mm_loadu_ps(src), r1 = _mm_loadu_ps(src + rs);
    const __m128 lo = _mm_unpacklo_ps(r0, r1), hi = _mm_unpackhi_ps(r0, r1);   // pairs by k
    _mm_storel_pi((__m64 *)(void *)dst, lo);
    _mm_storeh_pi((__m64 *)(void *)(dst + mr), lo);
    _mm_storel_pi((__m64 *)(void *)(dst + 2 * mr), hi);
    _mm_storeh_pi((__m64 *)(void *)(dst + 3 * mr), hi);
}
#endif

// dst[0 .. n) = src[0 .. n): four floats a move where SSE2 is there, else memcpy. A packed row
// of B is nr floats (32 at AVX-512: 128 bytes), so short that calling memcpy for each (which
// halved the element loop's time) still cost its call and size dispatch every 128 bytes: 3 to
// 4 % of a training step on either bench-train shape went to memmove.
static void copy_floats(float *dst, const float *src, int n) {
#if defined(__SSE2__)
    int i = 0;
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(dst + i, _mm_loadu_ps(src + i));
    for (; i < n; i++) dst[i] = src[i];
#else
    memcpy(dst, src, (size_t)n * sizeof(float));
#endif
}

// One micro-panel of a row-major A (cs_a = 1), rows < mr: the element loop of pack_A, with the
// rows and columns that fill whole 4 x 4 blocks moved by transpose_4x4 (and two more rows by
// transpose_2x4) where SSE2 is there. The
// same values land in the same places.
static void pack_A_panel_row_major(float *dst, const float *src, long rs_a, int rows, int kb,
                                   int mr) {
    int i_done = 0, k_done = 0;   // rows and columns the blocks covered
#if defined(__SSE2__)
    i_done = rows / 4 * 4;
    k_done = kb / 4 * 4;
    for (int i = 0; i < i_done; i += 4)
        for (int k = 0; k < k_done; k += 4) transpose_4x4(dst + k * mr + i, src + i * rs_a + k, rs_a, mr);
    if (rows - i_done >= 2) {
        for (int k = 0; k < k_done; k += 4)
            transpose_2x4(dst + k * mr + i_done, src + i_done * rs_a + k, rs_a, mr);
        i_done += 2;
    }
#endif
    for (int k = 0; k < kb; k++) {
        for (int i = k < k_done ? i_done : 0; i < rows; i++) dst[k * mr + i] = src[i * rs_a + k];
        for (int i = rows; i < mr; i++) dst[k * mr + i] = 0.0f;
    }
}

// One micro-panel of an A stored transposed (rs_a = 1: A(i, k) = src[i + k * cs_a]), rows < mr:
// each k is `rows` contiguous floats, copied four at a time where SSE2 is there (the element loop
// alone, with its run-time strides, is not vectorised: packing the transposed d y of the weights'
// gradient was a third of the packing in a stories15M training step). The same values land in
// the same places.
static void pack_A_panel_transposed(float *dst, const float *src, long cs_a, int rows, int kb,
                                    int mr) {
    for (int k = 0; k < kb; k++) {
        const float *s = src + k * cs_a;
        float *d = dst + k * mr;
        int i = 0;
#if defined(__SSE2__)
        for (; i + 4 <= rows; i += 4) _mm_storeu_ps(d + i, _mm_loadu_ps(s + i));
#endif
        for (; i < rows; i++) d[i] = s[i];
        for (; i < mr; i++) d[i] = 0.0f;
    }
}

// Ap: micro-panels of mr rows; element (i, k) of panel p at Ap[p*mr*kb + k*mr + i].
// Rows past mb are zero. Called by one thread for its own rows.
// A(i, k) = A[i * rs_a + k * cs_a] (row-major: rs_a = K, cs_a = 1; transposed: rs_a = 1).
static void pack_A(float *Ap, const float *A, long rs_a, long cs_a, int i0, int k0, int mb, int kb,
                   int mr) {
    int n_panels = (mb + mr - 1) / mr;
    for (int p = 0; p < n_panels; p++) {
        float *dst = Ap + (long)p * mr * kb;
        int rows = min_int(mr, mb - p * mr);
        const float *src = A + (long)(i0 + p * mr) * rs_a + (long)k0 * cs_a;
        if (cs_a == 1) {
            pack_A_panel_row_major(dst, src, rs_a, rows, kb, mr);
            continue;
        }
        if (rs_a == 1) {
            pack_A_panel_transposed(dst, src, cs_a, rows, kb, mr);
            continue;
        }
        // k outside, rows inside: the writes are contiguous, the reads are `rows` short streams.
        for (int k = 0; k < kb; k++) {
            for (int i = 0; i < rows; i++) dst[k * mr + i] = src[i * rs_a + k * cs_a];
            for (int i = rows; i < mr; i++) dst[k * mr + i] = 0.0f;
        }
    }
}

// Bp: micro-panels of nr columns; element (k, j) of panel p at Bp[p*nr*kb + k*nr + j].
// Columns past nb are zero. The loop order follows B's unit stride (rows for NN, columns for NT).
static void pack_B(float *Bp, const float *B, long rs_b, long cs_b, int k0, int j0,
                   int kb, int nb, int nr) {
    int n_panels = (nb + nr - 1) / nr;
    TW_OMP("omp for schedule(dynamic, 4)")
    for (int p = 0; p < n_panels; p++) {
        float *dst = Bp + (long)p * nr * kb;
        int cols = min_int(nr, nb - p * nr);
        const float *src = B + (long)k0 * rs_b + (long)(j0 + p * nr) * cs_b;
        if (cs_b == 1 && cols == nr) {
            // A full panel of a row-major B: each k row is nr contiguous floats, moved by
            // copy_floats (this file is built without ISA flags, and the element loop below is
            // not vectorised at -O2).
            for (int k = 0; k < kb; k++) copy_floats(dst + (long)k * nr, src + k * rs_b, nr);
        } else if (cs_b == 1) {
            for (int k = 0; k < kb; k++) {
                for (int j = 0; j < cols; j++) dst[k * nr + j] = src[k * rs_b + j];
                for (int j = cols; j < nr; j++) dst[k * nr + j] = 0.0f;
            }
        } else if (rs_b == 1) {
            // B stored transposed (NT: op(B)(k, j) = src[k + j * cs_b]): the panel is the transpose
            // of a row-major block of `cols` rows, which is what pack_A does for a row-major A
            // (4 x 4 transposes); the element loop below was half the packing time of a
            // stories15M training step, through the forward's x W^T.
            pack_A_panel_row_major(dst, src, cs_b, cols, kb, nr);
        } else {
            for (int j = 0; j < cols; j++)
                for (int k = 0; k < kb; k++) dst[k * nr + j] = src[k * rs_b + j * cs_b];
            for (int j = cols; j < nr; j++)
                for (int k = 0; k < kb; k++) dst[k * nr + j] = 0.0f;
        }
    }
}

// Runs the micro-kernel over one packed A block (mb x kb) and one packed B panel (kb x nb):
// A micro-panels outside (each stays in L1), B micro-panels inside (streamed from L2).
// Full tiles write straight into C; edge tiles go through a small buffer and only the valid
// part is copied, so the micro-kernel never needs to know about edges. One thread's rows.
static void macro_kernel(const tw_ukernel *uk, float *C, long ldc, const float *Ap, const float *Bp,
                         int mb, int nb, int kb, int accumulate) {
    const int mr = uk->mr, nr = uk->nr;
    int n_panels = (mb + mr - 1) / mr;
    for (int ip = 0; ip < n_panels; ip++) {
        int ir = ip * mr;
        _Alignas(64) float tile[TILE_MAX];
        for (int jr = 0; jr < nb; jr += nr) {
            const float *a = Ap + (long)ir * kb, *b = Bp + (long)jr * kb;
            float *c = C + (long)ir * ldc + jr;
            int rows = min_int(mr, mb - ir), cols = min_int(nr, nb - jr);
            if (rows == mr && cols == nr) {
                uk->fn(kb, a, b, c, ldc, accumulate);
            } else {
                uk->fn(kb, a, b, tile, nr, 0);
                for (int i = 0; i < rows; i++)
                    for (int j = 0; j < cols; j++)
                        c[(long)i * ldc + j] = (accumulate ? c[(long)i * ldc + j] : 0.0f)
                                             + tile[i * nr + j];
            }
        }
    }
}

// Packing buffers start on a 64-byte boundary so the micro-kernels' loads never split a line.
static float *align64(void *p) {
    return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

void tw_matmul_packed(const tw_ukernel *uk, float *C, const float *A, const float *B,
                      long rs_b, long cs_b, int M, int N, int K, int threads) {
    tw_matmul_packed_strided(uk, C, N, A, K, 1, B, rs_b, cs_b, M, N, K, 0, threads);
}

void tw_matmul_packed_strided(const tw_ukernel *uk, float *C, long ldc, const float *A, long rs_a,
                              long cs_a, const float *B, long rs_b, long cs_b, int M, int N, int K,
                              int accumulate, int threads) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) C[(long)i * ldc + j] = 0.0f;
        return;
    }
    const int kc = uk->kc, mc = uk->mc, nc = uk->nc;
    // Below about 2^24 multiply-adds (n = 256) the barriers cost more than a second thread
    // gains, and on a busy machine a descheduled thread stalls every barrier: stay single.
    if (threads < 1 || (double)M * N * K < 16777216.0) threads = 1;
#ifndef _OPENMP
    threads = 1;
#endif
    // One shared B panel, and one A block per thread; each buffer a multiple of 16 floats so
    // that every one starts on a 64-byte boundary.
    size_t b_floats = (size_t)round_up(kc * round_up(min_int(nc, N), uk->nr), 16);
    size_t a_floats = (size_t)round_up(kc * round_up(min_int(mc, M), uk->mr), 16);
    void *mem = malloc((b_floats + (size_t)threads * a_floats) * sizeof(float) + 64);
    if (!mem) {
        matmul_strided(C, ldc, A, rs_a, cs_a, B, rs_b, cs_b, M, N, K, accumulate);
        return;
    }
    float *Bp = align64(mem);
    // Blocks of rows handed out to the threads: mc rows alone; with threads, about four blocks
    // per thread (whole micro-panels, at most mc rows) so that the queue can balance the load.
    const int n_panels = (M + uk->mr - 1) / uk->mr;
    int block = mc;
    if (threads > 1)
        block = min_int(mc, uk->mr * ((n_panels + 4 * threads - 1) / (4 * threads)));
    const int n_blocks = (M + block - 1) / block;

    TW_OMP("omp parallel num_threads(threads) if(threads > 1)")
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        float *Ap = Bp + b_floats + (size_t)t * a_floats;   // this thread's A block
        for (int jc = 0; jc < N; jc += nc) {
            int nb = min_int(nc, N - jc);
            for (int pc = 0; pc < K; pc += kc) {
                int kb = min_int(kc, K - pc);
                pack_B(Bp, B, rs_b, cs_b, pc, jc, kb, nb, uk->nr);   // shared; ends in a barrier
                TW_OMP("omp for schedule(dynamic, 1) nowait")
                for (int ib = 0; ib < n_blocks; ib++) {
                    int ic = ib * block, mb = min_int(block, M - ic);
                    pack_A(Ap, A, rs_a, cs_a, ic, pc, mb, kb, uk->mr);
                    macro_kernel(uk, C + (long)ic * ldc + jc, ldc, Ap, Bp, mb, nb, kb,
                                 accumulate || pc > 0);
                }
                TW_OMP("omp barrier")   // everyone is done with Bp before it is repacked
            }
        }
    }
    free(mem);
}

// ---- the portable micro-kernel: the packing rung without any SIMD ----

enum { SC_MR = 4, SC_NR = 8 };

// A 4 x 8 tile of C in 32 local accumulators. Written with plain arrays, the compiler keeps
// them in registers (and may use SSE on x86-64); the point of this rung is to show how much
// packing plus register blocking gives before any intrinsic is written.
static void ukernel_scalar(int kc, const float *Ap, const float *Bp, float *C, long ldc,
                           int accumulate) {
    float c[SC_MR][SC_NR] = {{0}};
    for (int k = 0; k < kc; k++) {
        const float *a = Ap + k * SC_MR, *b = Bp + k * SC_NR;
        for (int i = 0; i < SC_MR; i++)
            for (int j = 0; j < SC_NR; j++) c[i][j] += a[i] * b[j];
    }
    for (int i = 0; i < SC_MR; i++)
        for (int j = 0; j < SC_NR; j++)
            C[i * ldc + j] = (accumulate ? C[i * ldc + j] : 0.0f) + c[i][j];
}

const tw_ukernel tw_ukernel_scalar = { "scalar 4x8", SC_MR, SC_NR, 256, 128, 1024, ukernel_scalar };

void tw_matmul_packed_scalar(float *C, const float *A, const float *B, int M, int N, int K) {
    tw_matmul_packed(&tw_ukernel_scalar, C, A, B, N, 1, M, N, K, 1);
}
