// dispatch.c: the dispatch table tw_simd and the run-time choice of SIMD level (see simd.h).
// Which levels exist is decided twice: at build time (mk/simd.mk compiles the AVX2/AVX-512
// objects only when the compiler targets x86-64, NEON only for AArch64, none with SIMD=0, and
// defines TW_HAVE_AVX2 / TW_HAVE_AVX512 / TW_HAVE_NEON accordingly), and at run time (the CPU
// must report the features, so an x86-64 binary built here still runs on a CPU without AVX).
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "simd.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#ifdef TW_HAVE_AVX2
static const tw_kernels kernels_avx2 = {
    .level = "avx2", .dot = tw_dot_avx2, .matvec = tw_matvec_seq_avx2,
    .matmul = tw_matmul_avx2, .matmul_nt = tw_matmul_nt_avx2,
    .matmul_mt = tw_matmul_avx2_mt, .matmul_nt_mt = tw_matmul_nt_avx2_mt,
    .softmax = tw_softmax_avx2, .rmsnorm = tw_rmsnorm_avx2, .layernorm = tw_layernorm_avx2,
    .rope = tw_rope_avx2, .exp = tw_exp_avx2, .silu = tw_silu_avx2, .swiglu = tw_swiglu_avx2,
    .attend = tw_attend_avx2,
};
#endif

#ifdef TW_HAVE_AVX512
// 512-bit versions where they pay (matmul, dot, matvec, exp, softmax); AVX2 for the rest.
static const tw_kernels kernels_avx512 = {
    .level = "avx512", .dot = tw_dot_avx512, .matvec = tw_matvec_seq_avx512,
    .matmul = tw_matmul_avx512, .matmul_nt = tw_matmul_nt_avx512,
    .matmul_mt = tw_matmul_avx512_mt, .matmul_nt_mt = tw_matmul_nt_avx512_mt,
    .softmax = tw_softmax_avx512, .rmsnorm = tw_rmsnorm_avx2, .layernorm = tw_layernorm_avx2,
    .rope = tw_rope_avx2, .exp = tw_exp_avx512, .silu = tw_silu_avx2, .swiglu = tw_swiglu_avx2,
    .attend = tw_attend_avx2,
};
#endif

#ifdef TW_HAVE_NEON
// LayerNorm, RoPE and single-query attention have no NEON version yet (NULL): at this level the
// model runs the components' own loops for them.
static const tw_kernels kernels_neon = {
    .level = "neon", .dot = tw_dot_neon, .matvec = tw_matvec_neon,
    .matmul = tw_matmul_neon, .matmul_nt = tw_matmul_nt_neon,
    .matmul_mt = tw_matmul_neon_mt, .matmul_nt_mt = tw_matmul_nt_neon_mt,
    .softmax = tw_softmax_neon, .rmsnorm = tw_rmsnorm_neon, .exp = tw_exp_neon,
    .silu = tw_silu_neon, .swiglu = tw_swiglu_neon,
};
#endif

// The one piece of global state in the library (see simd.h): the naive table, every kernel
// NULL, until tw_simd_init.
static const tw_simd_ops ops_naive = { .level = "naive" };
tw_simd_ops tw_simd = { .level = "naive" };

// ---- what the CPU can run ----

static int cpu_has_avx2(void) {
#if defined(TW_HAVE_AVX2) && (defined(__x86_64__) || defined(_M_X64))
    __builtin_cpu_init();
    // GCC and clang's runtime checks also confirm the OS saves the wide registers (XGETBV).
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

static int cpu_has_avx512(void) {
#if defined(TW_HAVE_AVX512) && (defined(__x86_64__) || defined(_M_X64))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && cpu_has_avx2();
#else
    return 0;
#endif
}

const tw_kernels *tw_simd_kernels(const char *level) {
    if (!level) return NULL;
    if (strcmp(level, "auto") == 0) {
        if (tw_simd_kernels("avx512")) return tw_simd_kernels("avx512");
        if (tw_simd_kernels("avx2")) return tw_simd_kernels("avx2");
        return tw_simd_kernels("neon");
    }
#ifdef TW_HAVE_AVX2
    if (strcmp(level, "avx2") == 0) return cpu_has_avx2() ? &kernels_avx2 : NULL;
#endif
#ifdef TW_HAVE_AVX512
    if (strcmp(level, "avx512") == 0) return cpu_has_avx512() ? &kernels_avx512 : NULL;
#endif
#ifdef TW_HAVE_NEON
    if (strcmp(level, "neon") == 0) return &kernels_neon;   // baseline on AArch64
#endif
    return NULL;
}

const char *tw_simd_available(void) {
    if (cpu_has_avx512()) return "naive avx2 avx512";
    if (cpu_has_avx2()) return "naive avx2";
    if (tw_simd_kernels("neon")) return "naive neon";
    return "naive";
}

// The micro-kernel behind a level's matmuls, for the training path's strided products.
static const tw_ukernel *gemm_ukernel(const char *level) {
#ifdef TW_HAVE_AVX512
    if (strcmp(level, "avx512") == 0) return &tw_ukernel_avx512;
#endif
#ifdef TW_HAVE_AVX2
    if (strcmp(level, "avx2") == 0) return &tw_ukernel_avx2;
#endif
#ifdef TW_HAVE_NEON
    if (strcmp(level, "neon") == 0) return &tw_ukernel_neon;
#endif
    (void)level;
    return NULL;
}

const char *tw_simd_init(const char *level) {
    if (!level) level = getenv("TW_SIMD");
    if (!level || !*level) level = "auto";
    if (strcmp(level, "naive") == 0 || (strcmp(level, "auto") == 0 && !tw_simd_kernels("auto"))) {
        tw_simd = ops_naive;
        return tw_simd.level;
    }
    const tw_kernels *k = tw_simd_kernels(level);
    if (!k) return NULL;
    // The model's slots only: the rest of the catalogue is for the benchmark and the lessons.
    tw_simd = (tw_simd_ops){ .level = k->level, .matvec = k->matvec, .matmul_nt = k->matmul_nt_mt,
                             .softmax = k->softmax, .rmsnorm = k->rmsnorm, .swiglu = k->swiglu,
                             .attend = k->attend, .exp = k->exp, .gemm = gemm_ukernel(k->level) };
    return tw_simd.level;
}

// 1 if any of y[0 .. n) is inf or NaN: all exponent bits set, the one exponent to which adding
// 1 carries into the sign bit. An OR of additions over the elements, which the compiler
// vectorises (the loop of isfinite tests with a call in its body was scalar: 3% of a
// stories260K training step).
static int any_not_finite(const float *y, long n) {
    uint32_t carries = 0;
    long i = 0;
#if defined(__SSE2__)   // x86-64's baseline: four at a time (gcc -O2 leaves the loop scalar)
    const __m128i exponent = _mm_set1_epi32(0x7f800000), one = _mm_set1_epi32(0x00800000);
    __m128i acc = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4)
        acc = _mm_or_si128(acc, _mm_add_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)(y + i)),
                                                            exponent), one));
    uint32_t lanes[4];
    _mm_storeu_si128((__m128i *)lanes, acc);
    carries = lanes[0] | lanes[1] | lanes[2] | lanes[3];
#endif
    for (; i < n; i++) {
        uint32_t u;
        memcpy(&u, &y[i], sizeof u);
        carries |= (u & 0x7f800000u) + 0x00800000u;
    }
    return (carries & 0x80000000u) != 0;
}

int tw_simd_linear(float *y, const float *x, const float *W, const float *b,
                   int T, int C_in, int C_out) {
    if (!tw_simd.matvec || !tw_simd.matmul_nt) return 0;
    if (T == 1) tw_matvec_threaded(tw_simd.matvec, y, W, x, C_out, C_in);   // decode: W read once
    else {
        tw_simd.matmul_nt(y, x, W, T, C_out, C_in);
        // The packed kernels sum in blocks; where such a sum overflowed (inf or NaN) and the
        // reference's in-order sum may not have, that element is redone in the reference's order
        // (docs/kernels.md, "Over the whole float range"). One vectorised scan of y, then the
        // element loop only when something is not finite.
        if (any_not_finite(y, (long)T * C_out))
            for (long i = 0; i < (long)T * C_out; i++)
                if (!isfinite(y[i]))
                    y[i] = tw_dot_naive(x + i / C_out * C_in, W + i % C_out * C_in, C_in);
    }
    if (b)
        for (int t = 0; t < T; t++)
            for (int o = 0; o < C_out; o++) y[(long)t * C_out + o] += b[o];
    return 1;
}

int tw_simd_linear_one_row_many(int n, float *const y[], const float *x, const float *const W[],
                                const float *const b[], const int C_out[], int C_in) {
    enum { MAX_JOBS = 8 };
    if (!tw_simd.matvec || n < 1 || n > MAX_JOBS) return 0;
    tw_matvec_job jobs[MAX_JOBS];
    for (int i = 0; i < n; i++) jobs[i] = (tw_matvec_job){ .y = y[i], .W = W[i], .N = C_out[i] };
    tw_matvec_threaded_jobs(tw_simd.matvec, jobs, n, x, C_in);
    for (int i = 0; i < n; i++)
        if (b[i])
            for (int o = 0; o < C_out[i]; o++) y[i][o] += b[i][o];
    return 1;
}

// ---- the hooks of softmax.c, norm.c, ffn.c and mha.c (contract in simd.h) ----
// Each declines when the table has no kernel for it (always at the naive level), so the
// components keep their own loops, bit for bit.

int tw_simd_softmax_row(float *y, const float *x, int n) {
    if (!tw_simd.softmax) return 0;
    tw_simd.softmax(y, x, n);
    return 1;
}

int tw_simd_rmsnorm_rows(float *out, float *rms, const float *x, const float *w, int T, int C,
                         float eps) {
    if (!tw_simd.rmsnorm) return 0;
    for (int t = 0; t < T; t++) {
        float r = tw_simd.rmsnorm(out + (long)t * C, x + (long)t * C, w, C, eps);
        if (rms) rms[t] = r;
    }
    return 1;
}

int tw_simd_swiglu(float *y, const float *gate, const float *up, long n) {
    if (!tw_simd.swiglu) return 0;
    tw_simd.swiglu(y, gate, up, n);
    return 1;
}

int tw_simd_attend_one(float *out, float *scores, float *pattern, const float *q, const float *k,
                       const float *v, int S, int D, int kv_stride) {
    if (!tw_simd.attend) return 0;
    tw_simd.attend(out, scores, pattern, q, k, v, S, D, kv_stride);
    return 1;
}
