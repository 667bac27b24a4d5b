// q8_dispatch.c: which SIMD int8 kernels this build has and this CPU can run (see q8.h). The build side
// is the same as dispatch.c's (mk/simd.mk defines TW_HAVE_AVX2 / TW_HAVE_AVX512 / TW_HAVE_NEON;
// mk/simd_q8.mk compiles the q8 objects under the same conditions); the run-time side asks the CPU
// for the two extra features the int8 kernels use: AVX512_VNNI (CPUID leaf 7, ECX bit 11) and
// the Arm dot-product instructions (Linux: HWCAP_ASIMDDP; macOS: hw.optional.arm.FEAT_DotProd).
// Each level also carries its group-size-4 kernels (q8_g4_*.c), built under the same conditions.
#if defined(__linux__)
#define _GNU_SOURCE   // getauxval
#endif
#include <string.h>
#include "q8.h"
#if (defined(TW_HAVE_AVX2) || defined(TW_HAVE_AVX512)) && defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(TW_HAVE_NEON) && defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#if defined(TW_HAVE_NEON) && defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#endif

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
                                         .matvec_packed = tw_q8_rows16_matvec, .pack_multiple = 4,
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

// ---- what the CPU can run ----

static int cpu_avx2(void) {
#if defined(TW_HAVE_AVX2) && defined(__x86_64__)
    __builtin_cpu_init();   // these checks also confirm the OS saves the wide registers
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

static int cpu_avx512bw(void) {
#if defined(TW_HAVE_AVX512) && defined(__x86_64__)
    __builtin_cpu_init();
    return cpu_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vl");
#else
    return 0;
#endif
}

static int cpu_avx512vnni(void) {
#if defined(TW_HAVE_AVX512) && defined(__x86_64__)
    unsigned a, b, c, d;
    if (!cpu_avx512bw() || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (c >> 11) & 1u;   // CPUID.(EAX=7, ECX=0):ECX[11] = AVX512_VNNI
#else
    return 0;
#endif
}

#ifdef TW_HAVE_NEON
static int cpu_neon_dot(void) {
#if defined(TW_HAVE_NEON) && defined(__aarch64__) && defined(__linux__)
    return (getauxval(AT_HWCAP) & (1UL << 20)) != 0;   // HWCAP_ASIMDDP
#elif defined(TW_HAVE_NEON) && defined(__aarch64__) && defined(__APPLE__)
    int v = 0;
    size_t len = sizeof v;
    return sysctlbyname("hw.optional.arm.FEAT_DotProd", &v, &len, NULL, 0) == 0 && v;
#else
    return 0;
#endif
}
#endif

const tw_q8_ops *tw_q8_simd_ops(const char *level) {
    if (!level) return NULL;
    if (strcmp(level, "auto") == 0) {
        static const char *const best_first[] = { "avx512vnni", "avx512bw", "avx2", "neon_dot", "neon" };
        for (int i = 0; i < 5; i++)
            if (tw_q8_simd_ops(best_first[i])) return tw_q8_simd_ops(best_first[i]);
        return NULL;
    }
#ifdef TW_HAVE_AVX2
    if (strcmp(level, "avx2") == 0) return cpu_avx2() ? &q8_avx2 : NULL;
#endif
#ifdef TW_HAVE_AVX512
    if (strcmp(level, "avx512bw") == 0) return cpu_avx512bw() ? &q8_avx512bw : NULL;
    if (strcmp(level, "avx512vnni") == 0) return cpu_avx512vnni() ? &q8_avx512vnni : NULL;
#endif
#ifdef TW_HAVE_NEON
    if (strcmp(level, "neon") == 0) return &q8_neon;
    if (strcmp(level, "neon_dot") == 0) return cpu_neon_dot() ? &q8_neon_dot : NULL;
#endif
    return NULL;
}

const char *tw_q8_simd_available(void) {
    if (cpu_avx512vnni()) return "avx2 avx512bw avx512vnni";
    if (cpu_avx512bw()) return "avx2 avx512bw";
    if (cpu_avx2()) return "avx2";
    if (tw_q8_simd_ops("neon_dot")) return "neon neon_dot";
    if (tw_q8_simd_ops("neon")) return "neon";
    return "";
}
