// bench_q8.c: the int8 rows of `make bench` (./run_bench_q8 [--quick]). A benchmark, never a
// test: it prints numbers and only fails if a kernel is wrong.
//
// 1. Verify every int8 level against the naive loops (the cases of tests/q8_cases.h).
// 2. Measure the integer dot-product peak of one core with a VNNI probe (bench/probe_vnni.c:
//    16 independent vpdpbusd chains), when the CPU has VNNI.
// 3. Measure the read bandwidth of one core from L2 (bench/probe_read.c: a buffer that fits L2
//    but not L1), which caps any matvec whose weights stream from L2: printed as the % of the
//    VNNI peak a packed gs-32 matvec could reach at that bandwidth.
// 4. Time y = W x at shapes whose int8 weights fit in L1 (64x288, 128x288) and at the 15M model's
//    shapes (wq 288x288, w1 768x288, w2 288x768, which fit in L2; the classifier 32000x288, which
//    does not), group size 32, and at stories260K's (wq 64x64, w1 172x64, w2 64x172, the
//    classifier 512x64), group size 4, one thread, all in this run: the fp32 matvec of the best
//    fp32 level, the naive int8 loop, a plain int8 loop built as llama2.c builds runq.c (-Ofast
//    -march=native, bench/q8_runq_style.c), each int8 SIMD level, and each level's packed layout
//    where it has one. Each shape says which cache level its int8 weights fit in (this CPU's
//    sizes, bench/cache_size.c: sysfs, else CPUID through the C library). Every int8 kernel is
//    timed twice: with quantizing x (as decode must) and alone, on an x already quantized
//    (runq.c's matmul contract). Printed: microseconds per call
//    (median), the speed-up over fp32 and over the runq-style loop (with quantizing x, medians),
//    and the multiply-adds per second of the fastest run as % of the probe's peak (its fastest
//    run too), for both timings. A kernel can never
//    exceed the probe: if one does, the probe is wrong, and the benchmark says so and fails.
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "quant/q8_0.h"
#include "simd/simd.h"
#include "simd/q8.h"
#include "peak.h"
#include "nn/reference.h"
#include "q8_cases.h"
#include "cache_size.h"
#include "cpuinfo.h"

int32_t bench_vnni_probe(long iters);   // bench/probe_vnni.c (x86-64 builds only)
int64_t bench_read_probe(const void *buf, size_t bytes, long passes);   // bench/probe_read.c (same)
void bench_q8_quantize_runq_style(int8_t *q, float *s, const float *x, int n, int gs);
void bench_q8_matvec_runq_style(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                                const float *xs, int N, int K, int gs);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double g_min_total = 0.3;   // seconds of timed runs per measurement (--quick: 0.1)

typedef void (*job_fn)(void *ctx);
// One warm-up run, then at least 5 timed runs and until g_min_total seconds (at most 2001 runs);
// the median, and the fastest in *fastest if it is not NULL. Short calls are repeated inside one
// timed run so each lasts >= 20 us.
static double time_runs(job_fn f, void *ctx, double *fastest) {
    double t0 = now();
    f(ctx);
    double first = now() - t0;
    int inner = first < 20e-6 ? (int)(20e-6 / (first > 1e-9 ? first : 1e-9)) + 1 : 1;
    static double times[2001];
    int reps = 0;
    double total = 0;
    while (reps < 2001 && (reps < 5 || total < g_min_total)) {
        t0 = now();
        for (int r = 0; r < inner; r++) f(ctx);
        times[reps] = (now() - t0) / inner;
        total += times[reps++] * inner;
    }
    qsort(times, (size_t)reps, sizeof times[0], cmp_double);
    if (fastest) *fastest = times[0];
    return times[reps / 2];
}


// ---- step 1: verify ----

static int verify_all(void) {
    char levels[128], msg[512];
    int ok = 0, bad = 0;
    snprintf(levels, sizeof levels, "%s", tw_q8_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " "))
        for (int c = 0; c < N_Q8_CASES; c++)
            for (int s = 0; s < N_Q8_SHAPES; s++) {
                if (Q8_CASES[c].run(tw_q8_ops_for(lv), s, msg, sizeof msg) == 0) { ok++; continue; }
                bad++;
                fprintf(stderr, "bench_q8: %s at level %s is wrong: %s\n", Q8_CASES[c].name, lv, msg);
            }
    printf("verified before timing: %d int8 kernel checks passed, %d failed (tests/q8_cases.h)\n", ok, bad);
    return bad == 0;
}

// ---- step 2: the peak ----

typedef struct { long iters; int32_t sink; } probe_ctx;
static void run_probe(void *p) {
#ifdef TW_HAVE_AVX512
    probe_ctx *c = p;
    c->sink += bench_vnni_probe(c->iters);
#else
    (void)p;
#endif
}

// Multiply-adds per second (int8 x int8 -> int32) of one core, or 0 without VNNI.
static double vnni_peak(void) {
    if (!tw_q8_ops_for("avx512vnni")) return 0;
    // The fastest run, not the median: other processes only ever slow the probe down, and a
    // peak that reads low would let a kernel's percentage read high.
    probe_ctx c = { 50000, 0 };   // 0.4 ms a run: short, so some runs fit between two other processes
    double t;
    time_runs(run_probe, &c, &t);
    return (double)c.iters * 16 * 64 / t;
}

// ---- step 3: the caches ----

// Where `bytes` of weights fit: "L1", "L2", "L3", "memory", or "" if the sizes are unknown.
static const char *fits_in(double bytes) {
    static long sizes[4] = { -1 };
    if (sizes[0] < 0)
        for (int l = 1; l <= 3; l++) sizes[l] = bench_cache_bytes(l), sizes[0] = 0;
    if (sizes[1] <= 0) return "";
    for (int l = 1; l <= 3; l++)
        if (sizes[l] > 0 && bytes <= (double)sizes[l]) return l == 1 ? "L1" : l == 2 ? "L2" : "L3";
    return "memory";
}

typedef struct { const void *buf; size_t bytes; long passes; int64_t sink; } read_ctx;
static void run_read(void *p) {
#ifdef TW_HAVE_AVX512
    read_ctx *c = p;
    c->sink += bench_read_probe(c->buf, c->bytes, c->passes);
#else
    (void)p;
#endif
}

// Bytes per second one core reads from a buffer half the size of its L2 (in L2, not in L1), the
// fastest of the runs; 0 without AVX-512 or when the L2 size is unknown.
static double l2_read_bandwidth(void) {
    const long l2 = bench_cache_bytes(2), l1 = bench_cache_bytes(1);
    if (!tw_q8_ops_for("avx512bw") || l2 <= 0 || l2 / 2 <= 2 * l1) return 0;
    read_ctx c = { NULL, (size_t)(l2 / 2) / 256 * 256, 20, 0 };
    unsigned char *buf = aligned_alloc(64, c.bytes);   // whole lines: no load straddles two
    if (!buf) return 0;
    for (size_t i = 0; i < c.bytes; i++) buf[i] = (unsigned char)i;
    c.buf = buf;
    double t;
    time_runs(run_read, &c, &t);
    free(buf);
    return (double)c.bytes * (double)c.passes / t;
}

// ---- step 4: the matvecs ----

typedef struct {
    int kind;               // 0 fp32, 1 runq-style, 2 int8 level, 3 its packed layout
    int quantize;           // int8 kinds: 1 quantize x in every call, 0 use xq, xs as they are
    tw_matvec_fn f32;
    const tw_q8_ops *q8;
    float *y, *Wf, *x, *xs, *Ws;
    int8_t *Wq, *xq;
    void *P;       // kind 3: the packed copy of Wq, Ws
    int32_t *scratch;   // kind 3: (K) the packed kernel's working memory
    int N, K, gs;
} mv_ctx;

static void run_mv(void *p) {
    mv_ctx *c = p;
    if (c->kind == 0) {
        c->f32(c->y, c->Wf, c->x, c->N, c->K);
    } else if (c->kind == 1) {
        if (c->quantize) bench_q8_quantize_runq_style(c->xq, c->xs, c->x, c->K, c->gs);
        bench_q8_matvec_runq_style(c->y, c->Wq, c->Ws, c->xq, c->xs, c->N, c->K, c->gs);
    } else if (c->kind == 2) {
        if (c->quantize) tw_q8_quantize_x(c->q8, c->xq, c->xs, c->x, c->K / c->gs, c->gs);
        tw_q8_matvec(c->q8, c->y, c->Wq, c->Ws, c->xq, c->xs, c->N, c->K, c->gs);
    } else {
        if (c->quantize) tw_q8_quantize_x(c->q8, c->xq, c->xs, c->x, c->K / c->gs, c->gs);
        c->q8->matvec_packed(c->y, c->P, c->scratch, c->xq, c->xs, c->N, c->K, c->gs);
    }
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) g_min_total = 0.1;
        else {
            fprintf(stderr, "bench_q8: unknown argument '%s'\nusage: ./run_bench_q8 [--quick]\n", argv[i]);
            return 2;
        }
    }
    char cpu[512];
    bench_cpu_describe(cpu, sizeof cpu);
    const tw_kernels *best32 = tw_kernels_for("auto");
    printf("\n==== int8 (Q8_0) matvec ====\nCPU: %s\nint8 levels available: %s; fp32 level: %s\n",
           cpu, tw_q8_available(), best32->level);
    if (!verify_all()) return 1;

    double peak = vnni_peak();
    double ghz = peak > 0 ? tw_peak_clock_ghz(40, 0.002) : 0;   // many short runs, the fastest
    if (peak > 0) {
        printf("integer dot-product peak (VNNI probe, vpdpbusd zmm, one core): %.1f G multiply-adds/s",
               peak * 1e-9);
        // 64 multiply-adds per vpdpbusd: the instructions per cycle say how many VNNI ports the
        // core has (1 on Ice Lake and Zen 4, whose 512-bit ops use two 256-bit halves; 2 where
        // ports 0 and 5 both take it, and on Zen 5)
        if (ghz > 0) printf(" = %.2f vpdpbusd per cycle at %.2f GHz", peak / (64.0 * ghz * 1e9), ghz);
        printf("\n");
    }
    else
        printf("integer dot-product peak: no probe for this CPU (it needs AVX512_VNNI)\n");
    const double l2bw = peak > 0 ? l2_read_bandwidth() : 0;
    if (l2bw > 0) {
        // the packed gs-32 layout reads 64 weight bytes and 8 bytes of scales per vpdpbusd (72
        // bytes for 64 multiply-adds): streamed from L2, it can do at most l2bw / 72 vpdpbusd a second
        printf("L2 read bandwidth (one core, a %ld KB buffer, 64-byte loads): %.1f GB/s", bench_cache_bytes(2) / 2048,
               l2bw * 1e-9);
        if (ghz > 0) printf(" = %.1f bytes per cycle", l2bw / (ghz * 1e9));
        printf("\n  so a packed gs-32 matvec whose weights stream from L2 (72 bytes a vpdpbusd) reaches at"
               " most %.0f%% of the VNNI peak\n", 100.0 * (l2bw / 72.0 * 64.0) / peak);
    }

    // groups of 32, and stories260K's shapes with groups of 4 (its only power of two above 1 that
    // divides 64 and 172: the group-size-4 kernels, q8_g4_*.c)
    static const struct { const char *what; int N, K, gs; } shapes[] = {
        { "64x288", 64, 288, 32 },  { "128x288", 128, 288, 32 },
        { "15M wq 288x288", 288, 288, 32 },  { "15M w1 768x288", 768, 288, 32 },
        { "15M w2 288x768", 288, 768, 32 },  { "15M cls 32000x288", 32000, 288, 32 },
        { "260K wq 64x64 gs4", 64, 64, 4 }, { "260K w1 172x64 gs4", 172, 64, 4 },
        { "260K w2 64x172 gs4", 64, 172, 4 }, { "260K cls 512x64 gs4", 512, 64, 4 },
    };
    const char *names[8];
    mv_ctx proto[8];
    int nr = 0;
    names[nr] = "fp32"; proto[nr++] = (mv_ctx){ .kind = 0, .f32 = best32->matvec };
    names[nr] = "runq-style"; proto[nr++] = (mv_ctx){ .kind = 1 };
    char levels[128];
    snprintf(levels, sizeof levels, "%s", tw_q8_available());
    for (char *lv = strtok(levels, " "); lv && nr < 8; lv = strtok(NULL, " ")) {
        names[nr] = lv;
        proto[nr++] = (mv_ctx){ .kind = 2, .q8 = tw_q8_ops_for(lv) };
    }
    // the levels that also have a packed layout of the weights (lib/simd/q8.h), e.g. avx512vnni's
    // sixteen interleaved rows: the copy is made before timing, as a model state makes it once
    char packed_names[4][40];
    int n_packed = 0;
    for (int r = 2, n = nr; r < n && nr < 8 && n_packed < 4; r++)
        if (tw_q8_packs(proto[r].q8, 32) && tw_q8_packs(proto[r].q8, 4)) {   // every shape's gs
            snprintf(packed_names[n_packed], sizeof packed_names[0], "%s packed", proto[r].q8->level);
            names[nr] = packed_names[n_packed++];
            proto[nr++] = (mv_ctx){ .kind = 3, .q8 = proto[r].q8 };
        }
    printf("\ny = W x, group size 32 (15M) or 4 (260K), one thread: microseconds per call (median)\n"
           "shape, int8 weights: size, fits in   int8/fp32 MB");
    for (int r = 0; r < nr; r++) printf(" %11s", names[r]);
    printf("\n");
    double worst_pct = 0;   // the highest % of the probe any kernel reached
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int N = shapes[s].N, K = shapes[s].K, gs = shapes[s].gs;
        float *Wf = sc_rand((long)N * K, -0.1f, 0.1f, 11 + s), *x = sc_rand(K, -2, 2, 21 + s);
        float *y = calloc((size_t)N, sizeof(float)), *Ws = malloc((size_t)N * (K / gs) * sizeof(float));
        float *xs = malloc((size_t)(K / gs) * sizeof(float));
        int8_t *Wq = malloc((size_t)N * K), *xq = malloc((size_t)K);
        if (!Wf || !x || !y || !Ws || !xs || !Wq || !xq) { fprintf(stderr, "bench_q8: out of memory\n"); return 1; }
        tw_q8_quantize(Wq, Ws, Wf, N, K, gs);
        // medians with quantizing x and of the matvec alone; the fastest runs of both, for the
        // % of the probe's peak (also its fastest run: other processes only ever slow a run down)
        double us[8] = { 0 }, us_alone[8] = { 0 }, fast[8] = { 0 }, fast_alone[8] = { 0 };
        const double int8_bytes = N * (double)K * (1.0 + 4.0 / gs);   // = the packed copy's, N % 16 == 0
        char what[64];
        snprintf(what, sizeof what, "%s%s%s", shapes[s].what, *fits_in(int8_bytes) ? ", " : "", fits_in(int8_bytes));
        printf("%-30s %5.2f/%5.1f  ", what, int8_bytes / 1e6, 4.0 * N * K / 1e6);
        for (int r = 0; r < nr; r++) {
            mv_ctx c = proto[r];
            c.y = y; c.Wf = Wf; c.x = x; c.xs = xs; c.Ws = Ws; c.Wq = Wq; c.xq = xq;
            c.N = N; c.K = K; c.gs = gs;
            if (c.kind == 3) {
                // 64-byte aligned, as the model's copies are (tw_q8_work_pack): with malloc's
                // 16-byte alignment every 64-byte load of weights straddles two cache lines
                c.P = aligned_alloc(64, (c.q8->packed_bytes(N, K, gs) + 63) / 64 * 64);
                c.scratch = malloc((size_t)K * sizeof *c.scratch);
                if (!c.P || !c.scratch) { fprintf(stderr, "bench_q8: out of memory\n"); return 1; }
                c.q8->pack(c.P, Wq, Ws, N, K, gs);
            }
            c.quantize = 1;
            us[r] = time_runs(run_mv, &c, &fast[r]) * 1e6;
            if (c.kind == 0) us_alone[r] = us[r], fast_alone[r] = fast[r];
            else {   // x quantized once, by the same row's quantizer, then the matvec alone
                if (c.kind == 1) bench_q8_quantize_runq_style(xq, xs, x, K, gs);
                else tw_q8_quantize_x(c.q8, xq, xs, x, K / gs, gs);
                c.quantize = 0;
                us_alone[r] = time_runs(run_mv, &c, &fast_alone[r]) * 1e6;
            }
            if (c.kind == 3) { free(c.P); free(c.scratch); }
            printf(" %11.2f", us[r]);
            fflush(stdout);
        }
        printf("\n  %-42s", "matvec alone (x already quantized), us:");
        for (int r = 0; r < nr; r++) printf(" %11.2f", us_alone[r]);
        printf("\n  %-42s", "speed-up over fp32:");
        for (int r = 0; r < nr; r++) printf(" %10.2fx", us[0] / us[r]);
        printf("\n  %-42s", "speed-up over the runq-style loop:");
        for (int r = 0; r < nr; r++) printf(" %10.2fx", us[1] / us[r]);
        if (peak > 0) {
            const double *rows[2] = { fast_alone, fast };   // seconds
            const char *labels[2] = { "% of VNNI peak, matvec alone (fastest):", "% of VNNI peak, quantizing x (fastest):" };
            for (int k = 0; k < 2; k++) {
                printf("\n  %-42s", labels[k]);
                for (int r = 0; r < nr; r++) {
                    const double pct = 100.0 * N * (double)K / rows[k][r] / peak;
                    if (pct > worst_pct) worst_pct = pct;
                    if (pct <= 100.0) printf(" %10.1f%%", pct);
                    else printf(" %11s", "> probe");
                }
            }
        }
        printf("\n");
        free(Wf); free(x); free(y); free(Ws); free(xs); free(Wq); free(xq);
    }
    printf("(the int8 weights take 1 + 4 / gs bytes a value with their scales: 1.125 with groups of 32,"
           " 2 with groups of 4; %% of the VNNI peak = N K multiply-adds per second over the probe's)\n");
    if (worst_pct > 100.0) {
        fprintf(stderr, "bench_q8: a kernel ran at %.0f%% of the VNNI probe's peak: the probe underestimates"
                        " the peak (bench/probe_vnni.c), so no percentage above can be trusted\n", worst_pct);
        return 1;
    }
    return 0;
}
