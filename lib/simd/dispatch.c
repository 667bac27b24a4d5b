// dispatch.c: the levels of the kernels, the one place that names them and asks the CPU what it
// can run, and the dispatch table tw_simd (see simd.h).
//
// Which levels exist is decided twice: at build time (mk/simd.mk and mk/simd_q8.mk compile the
// AVX2/AVX-512 objects only when the compiler targets x86-64, the NEON ones only for AArch64, none
// with SIMD=0, and define TW_HAVE_AVX2 / TW_HAVE_AVX512 / TW_HAVE_NEON accordingly), and at run
// time (cpu_features below: the CPU must report the features, so an x86-64 binary built here
// still runs on a CPU without AVX).
//
// Each level is one table (tw_kernels) carrying its fp32 kernels, its training micro-kernel and its
// int8 kernels. A level whose CPUs may or may not have the int8 dot-product instructions (AVX-512
// VNNI; Arm FEAT_DotProd, sdot) has one table for each, told apart by `variant`: the level's name
// picks the best one this CPU runs, the variant's name picks that one.
#if defined(__linux__)
#define _GNU_SOURCE   // getauxval
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "simd.h"
#include "q8.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if (defined(TW_HAVE_AVX2) || defined(TW_HAVE_AVX512)) && defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(TW_HAVE_NEON) && defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#if defined(TW_HAVE_NEON) && defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#endif

// ---- the one CPU probe ----

enum {
    CPU_AVX2   = 1u << 0,   // AVX2 and FMA (and the OS saves the ymm registers)
    CPU_AVX512 = 1u << 1,   // AVX-512 F, BW and VL (and the OS saves the zmm registers)
    CPU_VNNI   = 1u << 2,   // AVX512_VNNI: vpdpbusd
    CPU_NEON   = 1u << 3,   // Advanced SIMD: baseline on AArch64, Apple silicon included
    CPU_DOT    = 1u << 4,   // FEAT_DotProd: sdot
};

// What this build can use and this CPU reports, as CPU_* bits; asked once, then remembered.
static unsigned cpu_features(void) {
    static int known = 0;
    static unsigned f = 0;
    if (known) return f;
#if (defined(TW_HAVE_AVX2) || defined(TW_HAVE_AVX512)) && defined(__x86_64__)
    __builtin_cpu_init();   // GCC and clang's checks also confirm the OS saves the wide registers
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f |= CPU_AVX2;
    if ((f & CPU_AVX2) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        f |= CPU_AVX512;
    unsigned a, b, c, d;
    if ((f & CPU_AVX512) && __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((c >> 11) & 1u))
        f |= CPU_VNNI;   // CPUID.(EAX=7, ECX=0):ECX[11] = AVX512_VNNI
#endif
#if defined(TW_HAVE_NEON) && defined(__aarch64__)
    f |= CPU_NEON;
#if defined(__linux__)
    if (getauxval(AT_HWCAP) & (1UL << 20)) f |= CPU_DOT;   // HWCAP_ASIMDDP
#elif defined(__APPLE__)
    int v = 0;
    size_t len = sizeof v;
    if (sysctlbyname("hw.optional.arm.FEAT_DotProd", &v, &len, NULL, 0) == 0 && v) f |= CPU_DOT;
#endif
#endif
    known = 1;
    return f;
}

// ---- the int8 kernels of each level (lib/simd/q8.h) ----

#ifdef TW_HAVE_AVX2
static const tw_q8_ops q8_avx2 = { .level = "avx2", .quantize_x = tw_q8_quantize_x_avx2,
                                   .matvec = tw_q8_matvec_avx2, .x_multiple = 8, .w_multiple = 32,
                                   .quantize_x_g4 = tw_q8_quantize_x_g4_avx2,
                                   .matvec_g4 = tw_q8_matvec_g4_avx2 };
#endif
#ifdef TW_HAVE_AVX512
static const tw_q8_ops q8_avx512bw = { .level = "avx512bw", .quantize_x = tw_q8_quantize_x_avx512,
                                       .matvec = tw_q8_matvec_avx512bw, .x_multiple = 8, .w_multiple = 32,
                                       .quantize_x_g4 = tw_q8_quantize_x_g4_avx512,
                                       .matvec_g4 = tw_q8_matvec_g4_avx512bw };
static const tw_q8_ops q8_avx512vnni = { .level = "avx512vnni", .quantize_x = tw_q8_quantize_x_avx512,
                                         .matvec = tw_q8_matvec_avx512vnni, .x_multiple = 8, .w_multiple = 32,
                                         .packed_bytes = tw_q8_rows16_bytes, .pack = tw_q8_rows16_pack,
                                         .matvec_packed = tw_q8_matvec_rows16_avx512vnni,
                                         .pack_multiple = 4, .pack_split_rows = TW_Q8_ROWS16_SPLIT,
                                         .quantize_x_g4 = tw_q8_quantize_x_g4_avx512,
                                         .matvec_g4 = tw_q8_matvec_g4_avx512bw };
#endif
#ifdef TW_HAVE_NEON
static const tw_q8_ops q8_neon = { .level = "neon", .quantize_x = tw_q8_quantize_x_neon,
                                   .matvec = tw_q8_matvec_neon, .x_multiple = 8, .w_multiple = 16,
                                   .quantize_x_g4 = tw_q8_quantize_x_g4_neon,
                                   .matvec_g4 = tw_q8_matvec_g4_neon };
static const tw_q8_ops q8_neon_dot = { .level = "neon_dot", .quantize_x = tw_q8_quantize_x_neon,
                                       .matvec = tw_q8_matvec_neon_dot, .x_multiple = 8, .w_multiple = 16,
                                       .quantize_x_g4 = tw_q8_quantize_x_g4_neon,
                                       .matvec_g4 = tw_q8_matvec_g4_neon_dot };
#endif

// ---- the levels, best last ----

#define AVX2_F32 .dot = tw_dot_avx2, .matvec = tw_matvec_avx2, \
    .matmul = tw_matmul_avx2, .matmul_nt = tw_matmul_nt_avx2, \
    .matmul_mt = tw_matmul_mt_avx2, .matmul_nt_mt = tw_matmul_nt_mt_avx2, \
    .matvec_rows = tw_matvec_rows_avx2, .linear_packed = tw_linear_packed_avx2, \
    .linear_packed_argmax = tw_linear_packed_argmax_avx2, \
    .softmax = tw_softmax_row_avx2, .rmsnorm = tw_rmsnorm_row_avx2, \
    .layernorm = tw_layernorm_row_avx2, .rope = tw_rope_pairs_avx2, .exp = tw_exp_avx2, \
    .silu = tw_silu_avx2, .swiglu = tw_swiglu_avx2, .attend = tw_sdpa_one_avx2, \
    .gemm = &tw_ukernel_avx2, .adamw = tw_adamw_avx2, \
    .attend_rows = tw_sdpa_one_rows_avx2, .argmax = tw_argmax_avx2
// 512-bit versions where they pay (matmul, dot, matvec, exp, softmax, AdamW); AVX2 for the rest.
#define AVX512_F32 .dot = tw_dot_avx512, .matvec = tw_matvec_avx512, \
    .matmul = tw_matmul_avx512, .matmul_nt = tw_matmul_nt_avx512, \
    .matmul_mt = tw_matmul_mt_avx512, .matmul_nt_mt = tw_matmul_nt_mt_avx512, \
    .matvec_rows = tw_matvec_rows_avx512, .linear_packed = tw_linear_packed_avx512, \
    .linear_packed_argmax = tw_linear_packed_argmax_avx512, \
    .softmax = tw_softmax_row_avx512, .rmsnorm = tw_rmsnorm_row_avx2, \
    .layernorm = tw_layernorm_row_avx2, .rope = tw_rope_pairs_avx2, .exp = tw_exp_avx512, \
    .silu = tw_silu_avx2, .swiglu = tw_swiglu_avx2, .attend = tw_sdpa_one_avx2, \
    .gemm = &tw_ukernel_avx512, .adamw = tw_adamw_avx512, \
    .attend_rows = tw_sdpa_one_rows_avx2, .argmax = tw_argmax_avx2
// LayerNorm, RoPE and single-query attention have no NEON version yet (NULL): at this level the
// model runs the components' own loops for them.
#define NEON_F32 .dot = tw_dot_neon, .matvec = tw_matvec_neon, \
    .matmul = tw_matmul_neon, .matmul_nt = tw_matmul_nt_neon, \
    .matmul_mt = tw_matmul_mt_neon, .matmul_nt_mt = tw_matmul_nt_mt_neon, \
    .softmax = tw_softmax_row_neon, .rmsnorm = tw_rmsnorm_row_neon, .exp = tw_exp_neon, \
    .silu = tw_silu_neon, .swiglu = tw_swiglu_neon, .gemm = &tw_ukernel_neon

typedef struct {
    tw_kernels k;
    unsigned   needs;   // CPU_* bits the table's kernels use
} level_row;

// The naive level: every slot NULL, so every hook declines and the components run their own
// loops (and lib/quant/q8_0.c its naive int8 loops).
static const level_row LEVELS[] = {
    { { .level = "naive", .variant = "naive" }, 0 },
#ifdef TW_HAVE_AVX2
    { { .level = "avx2", .variant = "avx2", AVX2_F32, .q8 = &q8_avx2 }, CPU_AVX2 },
#endif
#ifdef TW_HAVE_AVX512
    { { .level = "avx512", .variant = "avx512bw", AVX512_F32, .q8 = &q8_avx512bw }, CPU_AVX512 },
    { { .level = "avx512", .variant = "avx512vnni", AVX512_F32, .q8 = &q8_avx512vnni },
      CPU_AVX512 | CPU_VNNI },
#endif
#ifdef TW_HAVE_NEON
    { { .level = "neon", .variant = "neon", NEON_F32, .q8 = &q8_neon }, CPU_NEON },
    { { .level = "neon", .variant = "neon_dot", NEON_F32, .q8 = &q8_neon_dot }, CPU_NEON | CPU_DOT },
#endif
};
enum { N_LEVELS = (int)(sizeof LEVELS / sizeof LEVELS[0]) };

static int runnable(int i) { return (LEVELS[i].needs & ~cpu_features()) == 0; }

const tw_kernels *tw_simd_kernels(const char *name) {
    if (!name) return NULL;
    int any = strcmp(name, "auto") == 0;
    for (int i = N_LEVELS - 1; i >= 0; i--)   // a level's name: its best table here
        if (runnable(i) && (any || strcmp(name, LEVELS[i].k.level) == 0)) return &LEVELS[i].k;
    for (int i = N_LEVELS - 1; i >= 0; i--)   // else a variant's name: that table
        if (runnable(i) && strcmp(name, LEVELS[i].k.variant) == 0) return &LEVELS[i].k;
    return NULL;
}

const tw_kernels *tw_simd_variant(const char *variant) {
    for (int i = 0; variant && i < N_LEVELS; i++)
        if (runnable(i) && strcmp(variant, LEVELS[i].k.variant) == 0) return &LEVELS[i].k;
    return NULL;
}

// The names of the runnable tables, `level` or `variant`, best last, each once.
static const char *list_names(char *buf, size_t n, int variants) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_LEVELS; i++) {
        const char *name = variants ? LEVELS[i].k.variant : LEVELS[i].k.level;
        if (!runnable(i) || (i > 0 && strcmp(name, variants ? LEVELS[i - 1].k.variant
                                                            : LEVELS[i - 1].k.level) == 0))
            continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? " " : "", name);
        if (w > 0 && (size_t)w < n - used) used += (size_t)w;
    }
    return buf;
}

const char *tw_simd_available(void) {
    static char buf[64];
    return list_names(buf, sizeof buf, 0);
}

const char *tw_simd_variants(void) {
    static char buf[96];
    return list_names(buf, sizeof buf, 1);
}

// The one piece of global state in the library (see simd.h): the naive table until tw_simd_init.
tw_kernels tw_simd = { .level = "naive", .variant = "naive" };

const char *tw_simd_init(const char *level) {
    if (!level) level = getenv("TW_SIMD");
    if (!level || !*level) level = "auto";
    const tw_kernels *k = tw_simd_kernels(level);
    if (!k) return NULL;
    tw_simd = *k;
    // A variant asked for by its own name answers with that name; a level, with the level's.
    return strcmp(level, k->variant) == 0 && strcmp(level, k->level) != 0 ? k->variant : k->level;
}

// 1 if any of y[0 .. n) is inf or NaN: all exponent bits set, the one exponent to which adding
// 1 carries into the sign bit. An OR of additions over the elements, which the compiler
// vectorises (the loop of isfinite tests with a call in its body was scalar, and showed in a
// training step's profile: docs/performance.md, "Kernels").
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
    if (!tw_simd.matvec || !tw_simd.matmul_nt_mt) return 0;
    if (T == 1) tw_matvec_threaded(tw_simd.matvec, y, W, x, C_out, C_in);   // decode: W read once
    else {
        tw_simd.matmul_nt_mt(y, x, W, T, C_out, C_in);
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

int tw_simd_linear_rows(float *y, const float *x, const float *W, const float *b,
                        int T, int C_in, int C_out) {
    if (!tw_simd.matvec) return 0;
    if (tw_simd.matvec_rows)   // register-blocked, the matvec's sums (matvec_avx512.c)
        tw_simd.matvec_rows(y, x, W, T, C_out, C_in);
    else {
        // The level's matvec on blocks of W's rows: a multiple of 4 (the NEON and naive matvecs
        // keep their bits only on splits at multiples of 4) whose floats fill about 16 KiB, at
        // least 4, each used by every row of x while it stays in L1.
        int block = (4096 / (C_in > 0 ? C_in : 1)) & ~3;
        if (block < 4) block = 4;
        for (int o = 0; o < C_out; o += block) {
            const int n = C_out - o < block ? C_out - o : block;
            for (int t = 0; t < T; t++)
                tw_simd.matvec(y + (long)t * C_out + o, W + (long)o * C_in, x + (long)t * C_in, n, C_in);
        }
    }
    if (b)   // as tw_simd_linear: the bias added after the sum
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

int tw_simd_argmax(int *best, const float *x, int n) {
    if (!tw_simd.argmax) return 0;
    *best = tw_simd.argmax(x, n);
    return 1;
}

int tw_simd_attend_one_rows(float *out, float *scores, float *pattern, const float *q,
                            const float *const *k_rows, const float *const *v_rows, long off,
                            int S, int D) {
    if (!tw_simd.attend_rows) return 0;
    tw_simd.attend_rows(out, scores, pattern, q, k_rows, v_rows, off, S, D);
    return 1;
}
