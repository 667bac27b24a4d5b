// dispatch.c: the dispatch table tw_simd and the run-time choice of SIMD level (see simd.h).
// Which levels exist is decided twice: at build time (mk/simd.mk compiles the AVX2/AVX-512
// objects only when the compiler targets x86-64, NEON only for AArch64, none with SIMD=0, and
// defines TW_HAVE_AVX2 / TW_HAVE_AVX512 / TW_HAVE_NEON accordingly), and at run time (the CPU
// must report the features, so an x86-64 binary built here still runs on a CPU without AVX).
#include <stdlib.h>
#include <string.h>
#include "simd.h"

static const tw_simd_ops ops_naive = {
    "naive", tw_dot_naive, tw_matvec_naive,
    tw_matmul_naive, tw_matmul_nt_naive, tw_matmul_naive, tw_matmul_nt_naive,
    tw_softmax_naive, tw_rmsnorm_naive, tw_layernorm_naive, tw_rope_naive,
    tw_exp_naive, tw_silu_naive, tw_swiglu_naive, tw_attend_naive,
};

#ifdef TW_HAVE_AVX2
static const tw_simd_ops ops_avx2 = {
    "avx2", tw_dot_avx2, tw_matvec_seq_avx2,
    tw_matmul_avx2, tw_matmul_nt_avx2, tw_matmul_avx2_mt, tw_matmul_nt_avx2_mt,
    tw_softmax_avx2, tw_rmsnorm_avx2, tw_layernorm_avx2, tw_rope_avx2,
    tw_exp_avx2, tw_silu_avx2, tw_swiglu_avx2, tw_attend_avx2,
};
#endif

#ifdef TW_HAVE_AVX512
// 512-bit versions where they pay (matmul, dot, matvec, exp, softmax); AVX2 for the rest.
static const tw_simd_ops ops_avx512 = {
    "avx512", tw_dot_avx512, tw_matvec_seq_avx512,
    tw_matmul_avx512, tw_matmul_nt_avx512, tw_matmul_avx512_mt, tw_matmul_nt_avx512_mt,
    tw_softmax_avx512, tw_rmsnorm_avx2, tw_layernorm_avx2, tw_rope_avx2,
    tw_exp_avx512, tw_silu_avx2, tw_swiglu_avx2, tw_attend_avx2,
};
#endif

#ifdef TW_HAVE_NEON
// LayerNorm, RoPE and single-query attention have no NEON version yet: naive at this level.
static const tw_simd_ops ops_neon = {
    "neon", tw_dot_neon, tw_matvec_neon,
    tw_matmul_neon, tw_matmul_nt_neon, tw_matmul_neon_mt, tw_matmul_nt_neon_mt,
    tw_softmax_neon, tw_rmsnorm_neon, tw_layernorm_naive, tw_rope_naive,
    tw_exp_neon, tw_silu_neon, tw_swiglu_neon, tw_attend_naive,
};
#endif

// The one piece of global state in the library: written by tw_simd_init only.
tw_simd_ops tw_simd = {
    "naive", tw_dot_naive, tw_matvec_naive,
    tw_matmul_naive, tw_matmul_nt_naive, tw_matmul_naive, tw_matmul_nt_naive,
    tw_softmax_naive, tw_rmsnorm_naive, tw_layernorm_naive, tw_rope_naive,
    tw_exp_naive, tw_silu_naive, tw_swiglu_naive, tw_attend_naive,
};

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

const tw_simd_ops *tw_simd_ops_for(const char *level) {
    if (!level) return NULL;
    if (strcmp(level, "auto") == 0) {
        if (tw_simd_ops_for("avx512")) return tw_simd_ops_for("avx512");
        if (tw_simd_ops_for("avx2")) return tw_simd_ops_for("avx2");
        if (tw_simd_ops_for("neon")) return tw_simd_ops_for("neon");
        return &ops_naive;
    }
    if (strcmp(level, "naive") == 0) return &ops_naive;
#ifdef TW_HAVE_AVX2
    if (strcmp(level, "avx2") == 0) return cpu_has_avx2() ? &ops_avx2 : NULL;
#endif
#ifdef TW_HAVE_AVX512
    if (strcmp(level, "avx512") == 0) return cpu_has_avx512() ? &ops_avx512 : NULL;
#endif
#ifdef TW_HAVE_NEON
    if (strcmp(level, "neon") == 0) return &ops_neon;   // baseline on AArch64
#endif
    return NULL;
}

const char *tw_simd_available(void) {
    if (cpu_has_avx512()) return "naive avx2 avx512";
    if (cpu_has_avx2()) return "naive avx2";
    if (tw_simd_ops_for("neon")) return "naive neon";
    return "naive";
}

const char *tw_simd_init(const char *level) {
    if (!level) level = getenv("TW_SIMD");
    if (!level || !*level) level = "auto";
    const tw_simd_ops *ops = tw_simd_ops_for(level);
    if (!ops) return NULL;
    tw_simd = *ops;
    return tw_simd.level;
}

int tw_simd_linear(float *y, const float *x, const float *W, const float *b,
                   int T, int C_in, int C_out) {
    if (strcmp(tw_simd.level, "naive") == 0) return 0;
    if (T == 1) tw_matvec_threaded(tw_simd.matvec, y, W, x, C_out, C_in);   // decode: W read once
    else        tw_simd.matmul_nt_mt(y, x, W, T, C_out, C_in);
    if (b)
        for (int t = 0; t < T; t++)
            for (int o = 0; o < C_out; o++) y[(long)t * C_out + o] += b[o];
    return 1;
}

// ---- the hooks of softmax.c, norm.c, ffn.c and mha.c (contract in simd.h) ----
// Each declines at the naive level, so the reference files keep their own loops (which differ
// from the _naive kernels here: norm.c and softmax.c accumulate in double) bit for bit.

static int simd_is_naive(void) { return strcmp(tw_simd.level, "naive") == 0; }

int tw_simd_softmax_row(float *y, const float *x, int n) {
    if (simd_is_naive()) return 0;
    tw_simd.softmax(y, x, n);
    return 1;
}

int tw_simd_rmsnorm_rows(float *out, float *rms, const float *x, const float *w, int T, int C,
                         float eps) {
    if (simd_is_naive()) return 0;
    for (int t = 0; t < T; t++) {
        float r = tw_simd.rmsnorm(out + (long)t * C, x + (long)t * C, w, C, eps);
        if (rms) rms[t] = r;
    }
    return 1;
}

int tw_simd_swiglu(float *y, const float *gate, const float *up, long n) {
    if (simd_is_naive()) return 0;
    tw_simd.swiglu(y, gate, up, n);
    return 1;
}

int tw_simd_attend_one(float *out, float *scores, float *weights, const float *q, const float *k,
                       const float *v, int S, int D, int kv_stride) {
    if (simd_is_naive()) return 0;
    tw_simd.attend(out, scores, weights, q, k, v, S, D, kv_stride);
    return 1;
}
