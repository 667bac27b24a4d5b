// peak.c (bench/): the FMA-throughput probe and the clock calibration of peak.h.
//
// What the probe must get right. A fused multiply-add has a latency L (cycles before its result
// can feed the next one) and the core can start P of them per cycle. A loop that keeps only c
// independent chains of FMAs in flight runs at min(c / L, P) FMAs per cycle: with too few chains
// it measures the latency, not the peak. Counting what each core needs, c >= L x P:
//   Intel Skylake-SP .. Sapphire/Emerald Rapids, AVX-512: 2 FMA ports x latency 4  = 8 zmm chains
//   Intel Haswell (AVX2): 2 ports x latency 5 = 10 ymm chains
//   AMD Zen 2 / Zen 3 (AVX2): 2 x 256-bit pipes x latency 5 / 4 = 10 / 8 ymm chains
//   AMD Zen 4 (AVX-512 split into two 256-bit halves): 2 x 256-bit pipes x latency 4 = 8 ymm
//     chains, or 4 zmm chains (each zmm FMA occupies both pipes for one cycle)
//   Arm Neoverse V1/V2, Apple M1..M3: 4 x 128-bit pipes x latency 4 = 16 v-register chains;
//   Cortex-A72/A76: 2 pipes x latency 7 / 4 = 14 / 8
// The defaults below are 16 zmm, 12 ymm and 24 v-register chains: at least 1.5x every row.
//
// Why inline assembly and not intrinsics. The probe has to execute exactly the instructions it
// counts. With intrinsics the compiler is free to keep the accumulators in memory (gcc at -O2
// did, for an array of 12 __m512: a load and a store per FMA, which halves the rate on a core
// that stores one 256-bit half per cycle, as Zen 4 does) or to merge or drop chains (clang kept
// 11 of 12). Here each chain is one register, updated in place by
//   acc = acc + acc * acc        (vfmadd231ps r, r, r  /  fmla v.4s, v.4s, v.4s)
// starting from -0.5: the sequence -0.5, -0.25, -0.1875, ... tends to 0 like -1/n, so it never
// overflows and never reaches the subnormal range (that would take ~1e38 steps), and no value is
// a zero that some core might shortcut. The loop holds no loads, no stores and no constants, so
// the FMA units are the only limit, and all 32 vector registers can be chains.
//
// The clock: a chain of dependent integer additions `add reg, reg` (latency 1 on every x86-64
// and AArch64 core; an add with an immediate is avoided because Intel's Golden Cove can fold
// those at rename) runs one add per cycle, so adds per second is the core clock. It is measured
// in its own loop, just before or after the probe: a core that lowers its clock for wide vector
// code (older Intel server parts with AVX-512) shows up as fewer FLOP per cycle than nominal.
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include <string.h>
#include <time.h>
#include "peak.h"
#include "simd/simd.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef void (*loop_fn)(long iters);   // iters >= 1

// ---- x86-64: AVX-512 (32 zmm registers) and AVX2 (16 ymm registers) ----
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__) && defined(TW_HAVE_AVX2)
#define X86_PROBES 1

#define Z(r)  "vfmadd231ps %%zmm" #r ", %%zmm" #r ", %%zmm" #r "\n\t"
#define ZC(r) "vmovaps %%zmm0, %%zmm" #r "\n\t"
#define Z4(a, b, c, d) Z(a) Z(b) Z(c) Z(d)
#define Y(r)  "vfmadd231ps %%ymm" #r ", %%ymm" #r ", %%ymm" #r "\n\t"
#define YC(r) "vmovaps %%ymm0, %%ymm" #r "\n\t"
#define Y4(a, b, c, d) Y(a) Y(b) Y(c) Y(d)

#define ZMM_INIT "vbroadcastss %[h], %%zmm0\n\t" \
    ZC(1) ZC(2) ZC(3) ZC(4) ZC(5) ZC(6) ZC(7) ZC(8) ZC(9) ZC(10) ZC(11) ZC(12) ZC(13) ZC(14) \
    ZC(15) ZC(16) ZC(17) ZC(18) ZC(19) ZC(20) ZC(21) ZC(22) ZC(23) ZC(24) ZC(25) ZC(26) ZC(27) \
    ZC(28) ZC(29) ZC(30) ZC(31)
#define ZMM_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", \
    "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", \
    "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", \
    "xmm29", "xmm30", "xmm31"
#define YMM_INIT "vbroadcastss %[h], %%ymm0\n\t" \
    YC(1) YC(2) YC(3) YC(4) YC(5) YC(6) YC(7) YC(8) YC(9) YC(10) YC(11) YC(12) YC(13) YC(14) YC(15)
#define YMM_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", \
    "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

// One function per chain count: the loop body is `chains` FMAs on registers 0 .. chains-1.
#define X86_PROBE(name, isa_flags, INIT, CLOBBERS, BODY)                                      \
    __attribute__((target(isa_flags))) static void name(long iters) {                          \
        const float h = -0.5f;                                                               \
        __asm__ volatile(INIT "1:\n\t" BODY "sub $1, %[n]\n\t" "jnz 1b\n\t" "vzeroupper\n\t" \
                         : [n] "+r"(iters) : [h] "m"(h) : CLOBBERS, "cc");                   \
    }

#define ZB4  Z4(0, 1, 2, 3)
#define ZB8  ZB4 Z4(4, 5, 6, 7)
#define ZB12 ZB8 Z4(8, 9, 10, 11)
#define ZB16 ZB12 Z4(12, 13, 14, 15)
#define ZB24 ZB16 Z4(16, 17, 18, 19) Z4(20, 21, 22, 23)
#define ZB32 ZB24 Z4(24, 25, 26, 27) Z4(28, 29, 30, 31)
X86_PROBE(zmm4,  "avx512f", ZMM_INIT, ZMM_CLOBBERS, ZB4)
X86_PROBE(zmm8,  "avx512f", ZMM_INIT, ZMM_CLOBBERS, ZB8)
X86_PROBE(zmm12, "avx512f", ZMM_INIT, ZMM_CLOBBERS, ZB12)
X86_PROBE(zmm16, "avx512f", ZMM_INIT, ZMM_CLOBBERS, ZB16)
X86_PROBE(zmm24, "avx512f", ZMM_INIT, ZMM_CLOBBERS, ZB24)
X86_PROBE(zmm32, "avx512f", ZMM_INIT, ZMM_CLOBBERS, ZB32)

#define YB4  Y4(0, 1, 2, 3)
#define YB8  YB4 Y4(4, 5, 6, 7)
#define YB12 YB8 Y4(8, 9, 10, 11)
#define YB16 YB12 Y4(12, 13, 14, 15)
X86_PROBE(ymm4,  "avx2,fma", YMM_INIT, YMM_CLOBBERS, YB4)
X86_PROBE(ymm8,  "avx2,fma", YMM_INIT, YMM_CLOBBERS, YB8)
X86_PROBE(ymm12, "avx2,fma", YMM_INIT, YMM_CLOBBERS, YB12)
X86_PROBE(ymm16, "avx2,fma", YMM_INIT, YMM_CLOBBERS, YB16)

// 32 dependent `add reg, reg` per iteration: 32 cycles (the loop counter runs beside them).
#define A(x) "add %[one], %[acc]\n\t"
#define A8 A(0) A(1) A(2) A(3) A(4) A(5) A(6) A(7)
static void add_chain(long iters) {
    long acc = 0, one = 1;
    __asm__ volatile("1:\n\t" A8 A8 A8 A8 "sub $1, %[n]\n\t" "jnz 1b\n\t"
                     : [acc] "+r"(acc), [n] "+r"(iters) : [one] "r"(one) : "cc");
}
#endif

// ---- AArch64: 32 v registers of 4 floats ----
#if defined(__aarch64__) && defined(__GNUC__) && defined(TW_HAVE_NEON)
#define ARM_PROBES 1

#define V(r)  "fmla v" #r ".4s, v" #r ".4s, v" #r ".4s\n\t"
#define VC(r) "fmov v" #r ".4s, #-0.5\n\t"
#define V4(a, b, c, d) V(a) V(b) V(c) V(d)
#define VC4(a, b, c, d) VC(a) VC(b) VC(c) VC(d)
#define V_INIT VC4(0, 1, 2, 3) VC4(4, 5, 6, 7) VC4(8, 9, 10, 11) VC4(12, 13, 14, 15) \
    VC4(16, 17, 18, 19) VC4(20, 21, 22, 23) VC4(24, 25, 26, 27) VC4(28, 29, 30, 31)
#define V_CLOBBERS "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", \
    "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", \
    "v25", "v26", "v27", "v28", "v29", "v30", "v31"
#define ARM_PROBE(name, BODY)                                                                  \
    static void name(long iters) {                                                             \
        __asm__ volatile(V_INIT "1:\n\t" BODY "subs %[n], %[n], #1\n\t" "b.ne 1b\n\t"          \
                         : [n] "+r"(iters) : : V_CLOBBERS, "cc");                              \
    }
#define VB4  V4(0, 1, 2, 3)
#define VB8  VB4 V4(4, 5, 6, 7)
#define VB12 VB8 V4(8, 9, 10, 11)
#define VB16 VB12 V4(12, 13, 14, 15)
#define VB24 VB16 V4(16, 17, 18, 19) V4(20, 21, 22, 23)
#define VB32 VB24 V4(24, 25, 26, 27) V4(28, 29, 30, 31)
ARM_PROBE(v4, VB4)
ARM_PROBE(v8, VB8)
ARM_PROBE(v12, VB12)
ARM_PROBE(v16, VB16)
ARM_PROBE(v24, VB24)
ARM_PROBE(v32, VB32)

#define A(x) "add %[acc], %[acc], %[one]\n\t"
#define A8 A(0) A(1) A(2) A(3) A(4) A(5) A(6) A(7)
static void add_chain(long iters) {
    long acc = 0, one = 1;
    __asm__ volatile("1:\n\t" A8 A8 A8 A8 "subs %[n], %[n], #1\n\t" "b.ne 1b\n\t"
                     : [acc] "+r"(acc), [n] "+r"(iters) : [one] "r"(one) : "cc");
}
#endif

// ---- the choice of loop ----

static int isa_is(const char *isa, const char *name) { return isa && strcmp(isa, name) == 0; }

const char *tw_peak_best_isa(void) {
#ifdef X86_PROBES
    if (tw_simd_kernels("avx512")) return "avx512";   // the catalogue has asked the CPU
    if (tw_simd_kernels("avx2")) return "avx2";
#endif
#ifdef ARM_PROBES
    return "neon";
#endif
    return NULL;
}

int tw_peak_default_chains(const char *isa) {
    return isa_is(isa, "avx512") ? 16 : isa_is(isa, "avx2") ? 12 : isa_is(isa, "neon") ? 24 : 0;
}

int tw_peak_max_chains(const char *isa) {
    return isa_is(isa, "avx512") ? 32 : isa_is(isa, "avx2") ? 16 : isa_is(isa, "neon") ? 32 : 0;
}

// The loop for (isa, chains), its floats per register, or NULL.
static loop_fn probe_loop(const char *isa, int chains, int *lanes) {
    const char *best = tw_peak_best_isa();
    if (!best) return NULL;
    // An ISA is usable if it is the best one or, on x86, AVX2 under AVX-512.
    if (!isa_is(isa, best) && !(isa_is(isa, "avx2") && isa_is(best, "avx512"))) return NULL;
#ifdef X86_PROBES
    if (isa_is(isa, "avx512")) {
        *lanes = 16;
        switch (chains) {
        case 4: return zmm4;   case 8: return zmm8;   case 12: return zmm12;
        case 16: return zmm16; case 24: return zmm24; case 32: return zmm32;
        default: return NULL;
        }
    }
    if (isa_is(isa, "avx2")) {
        *lanes = 8;
        switch (chains) {
        case 4: return ymm4; case 8: return ymm8; case 12: return ymm12; case 16: return ymm16;
        default: return NULL;
        }
    }
#endif
#ifdef ARM_PROBES
    if (isa_is(isa, "neon")) {
        *lanes = 4;
        switch (chains) {
        case 4: return v4;   case 8: return v8;   case 12: return v12;
        case 16: return v16; case 24: return v24; case 32: return v32;
        default: return NULL;
        }
    }
#endif
    (void)chains; (void)lanes;
    return NULL;
}

// The shortest time of `runs` runs of `f`, each sized to last about `seconds`; *iters receives
// the iteration count used. A first short run measures the speed to size the others.
static double best_time(loop_fn f, int runs, double seconds, long *iters) {
    long n = 1L << 12;
    double t = 0;
    for (;;) {   // grow the trial until it takes >= 1 ms, so its timing means something
        double t0 = now();
        f(n);
        t = now() - t0;
        if (t >= 1e-3 || n > (1L << 40)) break;
        n *= 8;
    }
    double want = seconds > 0 ? seconds : 0.02;
    long n_run = (long)((double)n * want / t);
    if (n_run < 1) n_run = 1;
    double best = 0;
    for (int r = 0; r < (runs > 0 ? runs : 1); r++) {
        double t0 = now();
        f(n_run);
        double dt = now() - t0;
        if (r == 0 || dt < best) best = dt;
    }
    *iters = n_run;
    return best;
}

int tw_peak_fma(tw_peak *p, const char *isa, int chains, int runs, double run_seconds) {
    if (chains == 0) chains = tw_peak_default_chains(isa);
    int lanes = 0;
    loop_fn f = probe_loop(isa, chains, &lanes);
    if (!f) return 0;
    long iters = 0;
    double t = best_time(f, runs, run_seconds, &iters);
    p->isa = isa_is(isa, "avx512") ? "avx512" : isa_is(isa, "avx2") ? "avx2" : "neon";
    p->lanes = lanes;
    p->chains = chains;
    p->gflops = 2.0 * lanes * chains * (double)iters / t * 1e-9;
    return 1;
}

double tw_peak_clock_ghz(int runs, double run_seconds) {
#if defined(X86_PROBES) || defined(ARM_PROBES)
    long iters = 0;
    double t = best_time(add_chain, runs, run_seconds, &iters);
    return 32.0 * (double)iters / t * 1e-9;
#else
    (void)runs; (void)run_seconds;
    return 0;
#endif
}
