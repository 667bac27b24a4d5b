// bench.c: the kernel benchmark (`make bench`; `make bench BLAS=openblas` adds OpenBLAS).
// A benchmark, never a test: it prints numbers and only fails if a kernel is wrong.
//
// Order of work, as STYLE.md section 6 asks: verify every variant against its naive twin
// (the cases of tests/simd_cases.h), then measure the machine's limits (an FMA-throughput probe
// for the arithmetic peak, a STREAM-like triad and a read stream for memory bandwidth), then time
// each kernel: the median of repeated runs after one warm-up run. It prints GFLOP/s or GB/s, the
// speed-up over naive, the % of peak, and the ratio to OpenBLAS measured in the same run.
//
//   ./run_bench [--quick] [--out DIR]      --quick: n <= 512 and fewer repeats (about 15 s)
// Writes DIR/matmul.dat (all rows) and DIR/matmul_gflops.dat (for viz/bench_gflops.gp);
// DIR defaults to out/bench.
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "simd/simd.h"
#include "peak.h"
#include "matvec_4row.h"
#include "autovec.h"
#include "cpuinfo.h"
#include "read_stream.h"
#include "simd_cases.h"
#include "nn/reference.h"
#include "nn/rope.h"
#ifdef TW_BENCH_OPENBLAS
#include <cblas.h>
#endif


// ---- timing ----

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef void (*job_fn)(void *ctx);

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double g_min_total = 0.4;   // seconds of timed runs per measurement (--quick: 0.15)

// One warm-up run (caches, page faults, CPU clock ramp-up), then at least 3 timed runs and until
// g_min_total seconds have passed (at most 25); returns the median. A single run that takes
// over 2 s is timed twice only.
static double time_median(job_fn f, void *ctx) {
    double t0 = now();
    f(ctx);
    double first = now() - t0;
    double times[25];
    int reps = 0, min_reps = first > 2.0 ? 2 : 3;
    double total = 0;
    while (reps < 25 && (reps < min_reps || (total < g_min_total && first <= 2.0))) {
        t0 = now();
        f(ctx);
        times[reps] = now() - t0;
        total += times[reps++];
    }
    qsort(times, (size_t)reps, sizeof times[0], cmp_double);
    return reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
}

// A copy of sc_rand's values in 64-byte aligned memory (freed with free): weights are laid out
// like that in the model (lib/nn/model.c aligns its weight block), so the benchmark times the
// loads the model does; malloc's 16-byte alignment would split every 64-byte load in two.
static float *aligned_rand(long n, float lo, float hi, uint64_t seed) {
    float *src = sc_rand(n, lo, hi, seed);
    float *dst = src ? aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64) : NULL;
    if (dst) memcpy(dst, src, (size_t)n * sizeof(float));
    free(src);
    return dst;
}

// The fastest of 15 runs after a warm-up, for bandwidths: a ceiling, so the run nothing else on
// the machine disturbed is the honest estimate (kernel times use the median).
static double time_best(job_fn f, void *ctx) {
    f(ctx);
    double bestt = 0;
    for (int r = 0; r < 15; r++) {
        double t0 = now();
        f(ctx);
        double t = now() - t0;
        if (r == 0 || t < bestt) bestt = t;
    }
    return bestt;
}

// ---- step 1: verify ----

static int verify_all(void) {
    char levels[64], msg[512];
    int ok = 0, bad = 0;
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    const int sizes[] = { 3, 65 };
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_kernels *o = tw_kernels_for(lv);
        for (int c = 0; c < N_SIMD_CASES; c++)
            for (int s = 0; s < 2; s++) {
                if (SIMD_CASES[c].run(o, sizes[s], msg, sizeof msg) == 0) { ok++; continue; }
                bad++;
                fprintf(stderr, "bench: %s at level %s is wrong: %s\n", SIMD_CASES[c].name, lv, msg);
            }
    }
    printf("verified before timing: %d kernel checks passed, %d failed (tests/simd_cases.h)\n", ok, bad);
    return bad == 0;
}

// ---- step 2: the machine's limits ----

// Single-core FMA peak in GFLOP/s of the widest ISA available (bench/peak.c: one register per
// independent chain, in inline assembly, best of 25 runs of 4 ms), 0 if no probe exists here; also
// the clock (dependent integer adds), the rate with twice the chains, and the rate of 4 chains
// against the default on the narrow ISA (AVX2 on x86, NEON on Arm): printed as the evidence that
// the probe measures the FMA units and not their latency (these were timed assertions in
// tests/test_peak.c; a figure belongs here, where a loaded machine cannot fail a test).
typedef struct {
    double ghz, doubled;          // clock; rate with twice the chains (0: not measured)
    const char *narrow;           // "avx2" or "neon"
    double narrow4, narrow_def;   // its rate with 4 chains and with its default count
    int narrow_chains;            // that default count
} peak_evidence;

static double fma_peak(tw_peak *p, peak_evidence *e) {
    const char *isa = tw_peak_best_isa();
    *e = (peak_evidence){ 0 };
    e->ghz = tw_peak_clock_ghz(25, 0.004);
    if (!isa || !tw_peak_fma(p, isa, 0, 25, 0.004)) return 0;
    int n2 = 2 * p->chains > tw_peak_max_chains(isa) ? tw_peak_max_chains(isa) : 2 * p->chains;
    tw_peak p2;
    if (n2 > p->chains && tw_peak_fma(&p2, isa, n2, 25, 0.004)) e->doubled = p2.gflops;
    // 4 chains and the default, in turn, the best of each (another process only slows a run).
    e->narrow = strcmp(isa, "neon") == 0 ? "neon" : "avx2";
    e->narrow_chains = tw_peak_default_chains(e->narrow);
    for (int r = 0; r < 25; r++) {
        tw_peak a, b;
        if (!tw_peak_fma(&a, e->narrow, 4, 1, 0.003) ||
            !tw_peak_fma(&b, e->narrow, e->narrow_chains, 1, 0.003)) {
            e->narrow4 = e->narrow_def = 0;
            break;
        }
        if (a.gflops > e->narrow4) e->narrow4 = a.gflops;
        if (b.gflops > e->narrow_def) e->narrow_def = b.gflops;
    }
    return p->gflops;
}

// "  73%" of the peak, or "PROBE!" when a figure exceeds the peak: then the probe is wrong, not
// the kernel fast, and no percentage is printed (a learner must never read "138 % of peak").
static int g_probe_failed = 0;
static const char *pct_of_peak(char *buf, size_t n, double gflops, double peak) {
    if (peak <= 0) snprintf(buf, n, "%5s", "-");
    else if (gflops > peak) { snprintf(buf, n, "PROBE!"); g_probe_failed = 1; }
    else snprintf(buf, n, "%4.0f%%", 100 * gflops / peak);
    return buf;
}

typedef struct { float *a, *b, *c; long n; float s; int way; float *y; } stream_ctx;
static void run_triad(void *p) {
    stream_ctx *c = p;
    for (long i = 0; i < c->n; i++) c->a[i] = c->b[i] + c->s * c->c[i];
}
static void run_read(void *p) {   // a read stream: every byte of b loaded once, one of the ways of
    stream_ctx *c = p;              // bench/read_stream.h, with the best level's kernels
    c->s += bench_read_once(tw_kernels_for("auto"), c->way, c->b, c->n, c->y);
}

// Triad bandwidth (bytes counted: 3 arrays x 4 bytes; write-allocate traffic not counted, as in
// STREAM) and read bandwidth, in GB/s, for a working set of `bytes` in total; the fastest of 15
// (the read: of 15 each way, the faster way; which one wins depends on the CPU).
static void bandwidth(long bytes, double *triad, double *read) {
    long n = bytes / 12;
    float y[BENCH_READ_K];
    stream_ctx c = { malloc((size_t)n * 4), malloc((size_t)n * 4), malloc((size_t)n * 4), n, 0.5f, 0, y };
    if (!c.a || !c.b || !c.c) { *triad = *read = 0; free(c.a); free(c.b); free(c.c); return; }
    for (long i = 0; i < n; i++) { c.a[i] = 0; c.b[i] = 1; c.c[i] = 2; }
    *triad = 12.0 * n / time_best(run_triad, &c) * 1e-9;
    free(c.a); free(c.c);
    c.n = bytes / 4;   // the read stream covers the same footprint with one array
    float *big = realloc(c.b, (size_t)c.n * 4);
    if (!big) { *read = 0; free(c.b); return; }
    c.b = big;
    for (long i = 0; i < c.n; i++) c.b[i] = 1;
    *read = 0;
    for (c.way = 0; c.way < BENCH_READ_WAYS; c.way++) {
        const double gbs = 4.0 * (double)bench_read_floats(c.way, c.n) / time_best(run_read, &c) * 1e-9;
        if (gbs > *read) *read = gbs;
    }
    free(c.b);
}

// ---- step 3: matmul, every rung ----

typedef struct { tw_matmul_fn fn; float *C; const float *A, *B; int n; } mm_ctx;
static void run_mm(void *p) { mm_ctx *c = p; c->fn(c->C, c->A, c->B, c->n, c->n, c->n); }

#ifdef TW_BENCH_OPENBLAS
static void openblas_sgemm(float *C, const float *A, const float *B, int M, int N, int K) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
}
#endif

typedef struct {
    const char  *name;
    tw_matmul_fn fn;
    int          max_n;     // slower rungs stop early to keep the benchmark short
    int          threads;   // 0: one thread; 1: all of OMP_NUM_THREADS / OpenBLAS's default
    int          blas;
} rung;

static int g_threads = 1;

// The peak a rung is measured against: one core's, or all threads' for a threaded rung.
static double rung_peak(const rung *r, double peak) { return r->threads ? peak * g_threads : peak; }

static void set_threads(const rung *r) {
#ifdef TW_BENCH_OPENBLAS
    if (r->blas) openblas_set_num_threads(r->threads ? g_threads : 1);
#else
    (void)r;
#endif
}

// ---- step 4: matvec and a decode step of a Llama-shaped model ----

typedef struct { tw_matvec_fn fn; float *y; const float *W, *x; int N, K; } mv_ctx;
static void run_mv(void *p) { mv_ctx *c = p; c->fn(c->y, c->W, c->x, c->N, c->K); }

#ifdef TW_BENCH_OPENBLAS
static void openblas_sgemv(float *y, const float *W, const float *x, int N, int K) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, 1.0f, W, K, x, 1, 0.0f, y, 1);
}
#endif

// The per-token work of a llama2.c-style model (RMSNorm, q/k/v/o projections, RoPE, attention
// over S cached positions, SwiGLU FFN, classifier), built from one level's kernels. Its weights
// are random: this measures speed, not text.
typedef struct {
    const char *name;
    int dim, hidden, n_layers, n_heads, vocab, S;
} model_shape;

typedef struct {
    const model_shape *m;
    const tw_kernels *o;
    float *w;          // all weights, one block
    float *x, *xb, *q, *k, *v, *att, *hb, *hb2, *logits, *kcache, *vcache, *cs, *sn;
} decode_ctx;

static long decode_weight_floats(const model_shape *m) {
    long per_layer = 4L * m->dim * m->dim + 3L * m->dim * m->hidden + 2L * m->dim;
    return m->n_layers * per_layer + (long)m->vocab * m->dim + m->dim;
}

// A level's catalogue with its missing kernels (NULL: e.g. NEON's RoPE and attention) taken from
// the references, as the model would run them at that level.
static tw_kernels filled(const tw_kernels *k) {
    tw_kernels f = *k;
    const tw_kernels *r = &tw_kernels_naive;
    if (!f.matvec) f.matvec = r->matvec;
    if (!f.rmsnorm) f.rmsnorm = r->rmsnorm;
    if (!f.rope) f.rope = r->rope;
    if (!f.attend) f.attend = r->attend;
    if (!f.swiglu) f.swiglu = r->swiglu;
    return f;
}

static void run_decode(void *p) {
    decode_ctx *c = p;
    const model_shape *m = c->m;
    const tw_kernels ops = filled(c->o), *o = &ops;
    const int C = m->dim, F = m->hidden, D = m->dim / m->n_heads;
    const float *w = c->w;
    for (int l = 0; l < m->n_layers; l++) {
        const float *rms1 = w, *wq = rms1 + C, *wk = wq + (long)C * C, *wv = wk + (long)C * C;
        const float *wo = wv + (long)C * C, *rms2 = wo + (long)C * C, *w1 = rms2 + C;
        const float *w3 = w1 + (long)F * C, *w2 = w3 + (long)F * C;
        w = w2 + (long)C * F;
        o->rmsnorm(c->xb, c->x, rms1, C, 1e-5f);
        o->matvec(c->q, wq, c->xb, C, C);
        o->matvec(c->k, wk, c->xb, C, C);
        o->matvec(c->v, wv, c->xb, C, C);
        o->rope(c->q, c->cs, c->sn, m->n_heads, D);
        o->rope(c->k, c->cs, c->sn, m->n_heads, D);
        for (int h = 0; h < m->n_heads; h++)   // the cache holds S positions of (H, D)
            o->attend(c->xb + h * D, NULL, c->att, c->q + h * D, c->kcache + h * D, c->vcache + h * D,
                      m->S, D, C);
        o->matvec(c->q, wo, c->xb, C, C);
        for (int i = 0; i < C; i++) c->x[i] += c->q[i];
        o->rmsnorm(c->xb, c->x, rms2, C, 1e-5f);
        o->matvec(c->hb, w1, c->xb, F, C);
        o->matvec(c->hb2, w3, c->xb, F, C);
        o->swiglu(c->hb, c->hb, c->hb2, F);
        o->matvec(c->xb, w2, c->hb, C, F);
        for (int i = 0; i < C; i++) c->x[i] += c->xb[i];
    }
    o->rmsnorm(c->xb, c->x, w, C, 1e-5f);
    o->matvec(c->logits, w + C, c->xb, m->vocab, C);
    for (int i = 0; i < C; i++) c->x[i] = 0.01f * (float)(i % 7);   // same input next time
}

static int decode_alloc(decode_ctx *c, const model_shape *m) {
    const int C = m->dim;
    long nw = decode_weight_floats(m);
    memset(c, 0, sizeof *c);
    c->m = m;
    c->w = aligned_rand(nw, -0.05f, 0.05f, 31);
    c->x = sc_zeros(C); c->xb = sc_zeros(C); c->q = sc_zeros(C); c->k = sc_zeros(C);
    c->v = sc_zeros(C); c->att = sc_zeros(m->S); c->hb = sc_zeros(m->hidden);
    c->hb2 = sc_zeros(m->hidden); c->logits = sc_zeros(m->vocab);
    c->kcache = sc_rand((long)m->S * C, -1, 1, 32); c->vcache = sc_rand((long)m->S * C, -1, 1, 33);
    c->cs = sc_zeros(C); c->sn = sc_zeros(C);
    if (!c->w || !c->x || !c->xb || !c->q || !c->k || !c->v || !c->att || !c->hb || !c->hb2 ||
        !c->logits || !c->kcache || !c->vcache || !c->cs || !c->sn)
        return 0;
    tw_rope_angles(c->cs, c->sn, m->S, C / m->n_heads, 10000.0f);
    return 1;
}

static void decode_free(decode_ctx *c) {
    float *ps[] = { c->w, c->x, c->xb, c->q, c->k, c->v, c->att, c->hb, c->hb2, c->logits,
                    c->kcache, c->vcache, c->cs, c->sn };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) free(ps[i]);
}

// ---- the program ----

static int make_dirs(const char *path) {   // mkdir -p for a relative path
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return 0;
            if (c == '\0') break;
            *p = c;
        }
    }
    return 1;
}

int main(int argc, char **argv) {
    int quick = 0;
    const char *outdir = "out/bench";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) outdir = argv[++i];
        else {
            fprintf(stderr, "bench: unknown argument '%s'\nusage: ./run_bench [--quick] [--out DIR]\n"
                            "example: ./run_bench --quick\n", argv[i]);
            return 2;
        }
    }
    if (quick) g_min_total = 0.15;
    const char *best = tw_simd_init("auto");
    g_threads = tw_matmul_threads();   // OpenMP's count in the library (1 without OpenMP)
    char cpu[256];
    bench_cpu_describe(cpu, sizeof cpu);
    printf("CPU: %s\nSIMD levels available: %s (best: %s); matmul threads: %d%s\n", cpu,
           tw_simd_available(), best, g_threads,
           g_threads > 1 ? "" : " (OpenMP off or OMP_NUM_THREADS=1)");
#ifdef TW_BENCH_OPENBLAS
    // OpenBLAS picks its kernels from the CPU model; one it does not know gets an old core's
    // kernels (0.3.21 runs SSE3 "Prescott" code on an Emerald Rapids Xeon, family 6 model 207),
    // which would make it a straw man. Say which, and how to choose: OPENBLAS_CORETYPE=SkylakeX.
    printf("OpenBLAS: %s, kernels for core %s%s\n", openblas_get_config(), openblas_get_corename(),
           getenv("OPENBLAS_CORETYPE") ? " (OPENBLAS_CORETYPE)" : " (its own detection; "
           "OPENBLAS_CORETYPE=SkylakeX or Haswell or Zen overrides it)");
#endif
    if (!verify_all()) return 1;

    // -- limits --
    tw_peak pk = { "none", 0, 0, 0 };
    peak_evidence ev;
    double peak = fma_peak(&pk, &ev);
    if (peak > 0) {
        printf("\nFMA-throughput probe (%s, one core, %d independent chains, best of 25 runs of 4 ms): peak %.1f GFLOP/s\n",
               pk.isa, pk.chains, peak);
        if (ev.ghz > 0) {
            // At most 2 FMA units per core on any x86-64 (Intel ports 0 and 5; AMD's two FMA
            // pipes), 4 x 128-bit on Arm (Neoverse V, Apple); more means the clock or the probe
            // is wrong (a clock measured 2x too low shows here).
            const double units = strcmp(pk.isa, "neon") == 0 ? 4 : 2;
            const double fma_per_cycle = peak / ev.ghz / (2.0 * pk.lanes);
            printf("  clock %.2f GHz (chain of dependent integer adds) -> %.1f FLOP/cycle = %.2f %d-lane FMAs "
                   "per cycle (%s has at most %.0f FMA units per core: %s)\n", ev.ghz, peak / ev.ghz,
                   fma_per_cycle, pk.lanes, strcmp(pk.isa, "neon") == 0 ? "Arm" : "x86-64", units,
                   fma_per_cycle <= 1.15 * units ? "fits" : "MORE: the clock or the probe is wrong");
        }
        if (ev.doubled > 0)
            printf("  with twice the chains: %.1f GFLOP/s (%+.1f%%): the probe is not latency-bound if this is "
                   "within a few %%\n", ev.doubled, 100 * (ev.doubled / peak - 1));
        if (ev.narrow4 > 0 && ev.narrow_def > 0)
            printf("  %s with 4 chains: %.1f GFLOP/s = %.0f%% of its %d chains (%.1f): 4 chains cover at most "
                   "half of latency x units on these cores, so the probe sees latency if this is well under "
                   "100%%\n", ev.narrow, ev.narrow4, 100 * ev.narrow4 / ev.narrow_def, ev.narrow_chains,
                   ev.narrow_def);
    } else {
        printf("\nFMA-throughput probe: none for this CPU/build, so no %% of peak is printed\n");
    }
    printf("memory bandwidth, one core (triad a = b + s c counts 12 bytes per element; read = every byte of one array once, the faster of two ways: bench/read_stream.h):\n");
    const long footprints[] = { 24L << 10, 1536L << 10, 24L << 20, 384L << 20 };
    for (int i = 0; i < 4; i++) {
        if (quick && i == 3) break;
        double tri, rd;
        bandwidth(footprints[i], &tri, &rd);
        printf("  working set %8.2f MiB: triad %6.1f GB/s   read %6.1f GB/s\n",
               footprints[i] / 1048576.0, tri, rd);
    }

    // -- matmul ladder --
    const tw_kernels *o2 = tw_kernels_for("avx2"), *o5 = tw_kernels_for("avx512");
    const tw_kernels *on = tw_kernels_for("neon"), *ob = tw_kernels_for("auto");
    rung rungs[12];
    int nr = 0;
    rungs[nr++] = (rung){ "naive", tw_matmul_naive, 1024, 0, 0 };
    rungs[nr++] = (rung){ "reordered", tw_matmul_reordered, 2048, 0, 0 };
    rungs[nr++] = (rung){ "autovec", bench_matmul_autovec, 2048, 0, 0 };   // rung 2, -O3 -ffast-math -march=native
    rungs[nr++] = (rung){ "blocked", tw_matmul_blocked, 2048, 0, 0 };
    rungs[nr++] = (rung){ "packed", tw_matmul_packed_scalar, 2048, 0, 0 };
    if (o2) rungs[nr++] = (rung){ "avx2", o2->matmul, 2048, 0, 0 };
    if (o5) rungs[nr++] = (rung){ "avx512", o5->matmul, 2048, 0, 0 };
    if (on) rungs[nr++] = (rung){ "neon", on->matmul, 2048, 0, 0 };
    int top = nr - 1;                       // the top single-thread rung
    rungs[nr++] = (rung){ g_threads > 1 ? "best_mt" : "best_mt(1)", ob->matmul_mt, 2048, 1, 0 };
    int top_mt = nr - 1;
    int blas1 = -1, blas_mt = -1;
#ifdef TW_BENCH_OPENBLAS
    blas1 = nr;
    rungs[nr++] = (rung){ "openblas", openblas_sgemm, 2048, 0, 1 };
    blas_mt = nr;
    rungs[nr++] = (rung){ "openblas_mt", openblas_sgemm, 2048, 1, 1 };
#endif
    const int sizes[] = { 64, 128, 256, 512, 1024, 2048 };
    const int n_sizes = quick ? 4 : 6;
    double gf[6][12];
    memset(gf, 0, sizeof gf);

    char path[600];
    if (!make_dirs(outdir)) {
        fprintf(stderr, "bench: cannot create directory %s\n", outdir);
        return 1;
    }
    snprintf(path, sizeof path, "%s/matmul.dat", outdir);
    FILE *dat = fopen(path, "w");
    if (!dat) { fprintf(stderr, "bench: cannot write %s\n", path); return 1; }
    fprintf(dat, "# matmul C = A B, n x n x n, float32, on %s; peak %.1f GFLOP/s\n"
                 "# n rung ms GFLOP/s speedup_over_naive pct_of_peak\n", cpu, peak);

    printf("\nmatmul C = A B (n x n x n, float32): GFLOP/s = 2 n^3 / median time\n%6s", "n");
    for (int r = 0; r < nr; r++) printf(" %11s", rungs[r].name);
    printf("\n");
    for (int si = 0; si < n_sizes; si++) {
        int n = sizes[si];
        float *A = sc_rand((long)n * n, -1, 1, 41), *B = sc_rand((long)n * n, -1, 1, 42);
        float *Cm = sc_zeros((long)n * n);
        if (!A || !B || !Cm) { fprintf(stderr, "bench: out of memory at n = %d\n", n); return 1; }
        printf("%6d", n);
        fflush(stdout);
        for (int r = 0; r < nr; r++) {
            if (n > rungs[r].max_n) { printf(" %11s", "-"); continue; }
            set_threads(&rungs[r]);
            mm_ctx c = { rungs[r].fn, Cm, A, B, n };
            double t = time_median(run_mm, &c);
            gf[si][r] = 2.0 * n * n * n / t * 1e-9;
            printf(" %11.1f", gf[si][r]);
            fflush(stdout);
            double pr = rung_peak(&rungs[r], peak);
            fprintf(dat, "%d %s %.4f %.2f %.2f %.1f\n", n, rungs[r].name, t * 1e3, gf[si][r],
                    gf[si][0] > 0 ? gf[si][r] / gf[si][0] : 0,
                    pr > 0 && gf[si][r] <= pr ? 100 * gf[si][r] / pr : -1);
        }
        printf("\n");
        free(A); free(B); free(Cm);
    }
    fclose(dat);
    printf("speed-up over naive and %% of the FMA peak (threaded rungs: of %d x the one-core peak):\n",
           g_threads);
    char pct[16];
    for (int si = 0; si < n_sizes; si++) {
        printf("%6d", sizes[si]);
        for (int r = 0; r < nr; r++) {
            pct_of_peak(pct, sizeof pct, gf[si][r], rung_peak(&rungs[r], peak));
            if (gf[si][r] > 0 && gf[si][0] > 0)
                printf(" %4.0fx %6s", gf[si][r] / gf[si][0], pct);
            else if (gf[si][r] > 0)   // naive was not run at this size: % of peak only
                printf(" %5s %6s", "-", pct);
            else printf(" %11s", "-");
        }
        printf("\n");
    }
    if (g_probe_failed)
        printf("PROBE FAILURE: a rung above ran faster than the probe's peak, so the probe is wrong on this "
               "CPU (please report it with this table); no percentage is printed for it\n");

    // The chart's data: GFLOP/s per rung at n = 512 and 1024 (or the largest sizes run).
    snprintf(path, sizeof path, "%s/matmul_gflops.dat", outdir);
    FILE *g = fopen(path, "w");
    if (!g) { fprintf(stderr, "bench: cannot write %s\n", path); return 1; }
    int sa = n_sizes >= 5 ? 3 : n_sizes - 2, sb = n_sizes >= 5 ? 4 : n_sizes - 1;
    fprintf(g, "# GFLOP/s per matmul rung on %s (peak %.1f)\n# rung n=%d n=%d\n", cpu, peak,
            sizes[sa], sizes[sb]);
    for (int r = 0; r < nr; r++) fprintf(g, "%s %.2f %.2f\n", rungs[r].name, gf[sa][r], gf[sb][r]);
    fclose(g);
    printf("wrote %s/matmul.dat and %s (plot: gnuplot -p viz/bench_gflops.gp)\n", outdir, path);

    printf("\ngoals (measured in this run):\n");
    for (int si = 3; si < n_sizes && si <= 4; si++) {
        int n = sizes[si];
        if (blas1 >= 0)
            printf("  n=%4d  %s / OpenBLAS 1 thread: %.2fx  (goal >= 1.0x, floor 0.9x)\n", n,
                   rungs[top].name, gf[si][top] / gf[si][blas1]);
        if (peak > 0)
            printf("  n=%4d  %s: %s of the FMA peak  (goal >= 85%%)\n", n, rungs[top].name,
                   pct_of_peak(pct, sizeof pct, gf[si][top], peak));
        if (g_threads > 1)
            printf("  n=%4d  %d threads / 1 thread: %.2fx  (goal >= 1.8x with 2 threads)\n", n,
                   g_threads, gf[si][top_mt] / gf[si][top]);
        if (blas_mt >= 0)
            printf("  n=%4d  %s / OpenBLAS %d threads: %.2fx\n", n, rungs[top_mt].name, g_threads,
                   gf[si][top_mt] / gf[si][blas_mt]);
    }

    // -- matvec: the decode path --
    static const struct { const char *what; int N, K; } mv_shapes[] = {
        { "260K wq (64x64)", 64, 64 },         { "260K w1 (172x64)", 172, 64 },
        { "260K classifier (512x64)", 512, 64 },
        { "15M wq (288x288)", 288, 288 },      { "15M w1 (768x288)", 768, 288 },
        { "15M w2 (288x768)", 288, 768 },      { "15M classifier (32000x288)", 32000, 288 },
    };
    printf("\nmatvec y = W x (the decode path): GB/s of W read (4 N K bytes / median time)\n%-28s", "shape");
    // Columns: naive; autovec (the compiler-vectorised yardstick); each level's decode kernel
    // (rows in memory order, lib/simd/matvec_*.c); the older four-rows-side-by-side kernels
    // (kernels_avx*.c), kept for comparison; NEON; OpenBLAS's sgemv.
    const char *mv_names[9];
    tw_matvec_fn mv_fns[9];
    int nmv = 0, mv_auto = 1;
    mv_names[nmv] = "naive"; mv_fns[nmv++] = tw_kernels_naive.matvec;
    mv_names[nmv] = "autovec"; mv_fns[nmv++] = bench_matvec_autovec;
    if (o2) { mv_names[nmv] = "avx2"; mv_fns[nmv++] = o2->matvec; }
    if (o5) { mv_names[nmv] = "avx512"; mv_fns[nmv++] = o5->matvec; }
#ifdef TW_HAVE_AVX2
    if (o2) { mv_names[nmv] = "avx2_4row"; mv_fns[nmv++] = bench_matvec_4row_avx2; }
#endif
#ifdef TW_HAVE_AVX512
    if (o5) { mv_names[nmv] = "512_4row"; mv_fns[nmv++] = bench_matvec_4row_avx512; }
#endif
    if (on) { mv_names[nmv] = "neon"; mv_fns[nmv++] = on->matvec; }
#ifdef TW_BENCH_OPENBLAS
    openblas_set_num_threads(1);
    mv_names[nmv] = "openblas"; mv_fns[nmv++] = openblas_sgemv;
#endif
    const char *mv_best = ob->level;   // the column of the level the model uses
    for (int v = 0; v < nmv; v++) printf(" %9s", mv_names[v]);
    printf("  %s/naive  %s/autovec\n", mv_best, mv_best);
    for (size_t s = 0; s < sizeof mv_shapes / sizeof mv_shapes[0]; s++) {
        int N = mv_shapes[s].N, K = mv_shapes[s].K;
        float *W = aligned_rand((long)N * K, -1, 1, 51), *x = sc_rand(K, -1, 1, 52), *y = sc_zeros(N);
        if (!W || !x || !y) { fprintf(stderr, "bench: out of memory\n"); return 1; }
        printf("%-28s", mv_shapes[s].what);
        double bw[9] = { 0 }, bestbw = 0;
        // The columns in turn, three times, keeping each one's best: a cache-resident matvec
        // takes microseconds, so a single disturbed median would skew one column only.
        for (int round = 0; round < 3; round++)
            for (int v = 0; v < nmv; v++) {
                mv_ctx c = { mv_fns[v], y, W, x, N, K };
                double gbs = 4.0 * N * K / time_median(run_mv, &c) * 1e-9;
                if (gbs > bw[v]) bw[v] = gbs;
            }
        for (int v = 0; v < nmv; v++) {
            if (strcmp(mv_names[v], mv_best) == 0) bestbw = bw[v];
            printf(" %9.1f", bw[v]);
        }
        printf("  %11.1fx  %13.2fx\n", bestbw / bw[0], bestbw / bw[mv_auto]);
        free(W); free(x); free(y);
    }

    // -- one decode step of the 260K and 15M shapes, naive kernels against the best --
    static const model_shape shapes[] = {
        { "stories260K shape", 64, 172, 5, 8, 512, 64 },
        { "15M shape", 288, 768, 6, 6, 32000, 128 },
    };
    printf("\ndecode, one token (RMSNorm, projections, RoPE, attention over S cached positions,"
           " SwiGLU, classifier; one thread):\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        decode_ctx c;
        if (!decode_alloc(&c, &shapes[s])) { fprintf(stderr, "bench: out of memory\n"); return 1; }
        double bytes = 4.0 * decode_weight_floats(&shapes[s]);
        // naive, autovec (the best level with the compiler's matvec) and the best level.
        tw_kernels auto_ops = *ob;
        auto_ops.matvec = bench_matvec_autovec;
        c.o = tw_kernels_for("naive");
        double t_naive = time_median(run_decode, &c);
        c.o = &auto_ops;
        double t_auto = time_median(run_decode, &c);
        c.o = ob;
        double t_best = time_median(run_decode, &c);
        // The bandwidth for where the weights live: a read stream over a buffer of exactly
        // their size, so it lands in whichever cache level (or DRAM) holds them.
        double tri_w, read_w;
        bandwidth((long)bytes, &tri_w, &read_w);
        double roof = read_w * 1e9 / bytes;
        if (1 / t_best > 1.05 * roof)
            printf("  (next line: a decode above its roofline: no read pass was as fast as the decode. Either "
                   "the machine was slower during the passes, or the cache kept part of the weights between "
                   "decode steps (they are read in the same order every step); there the roofline is no bound)\n");
        printf("  %-18s weights %6.2f MiB: naive %8.1f, autovec %8.1f, %s %8.1f tok/s = %.1fx naive, "
               "%.2fx autovec (goal >= 1.0x); roofline %.0f tok/s (read %.1f GB/s over %.2f MiB): "
               "%s %.0f%%, autovec %.0f%%\n",
               shapes[s].name, bytes / 1048576.0, 1 / t_naive, 1 / t_auto, ob->level, 1 / t_best,
               t_naive / t_best, t_auto / t_best, roof, read_w, bytes / 1048576.0, ob->level,
               100 * (1 / t_best) / roof, 100 * (1 / t_auto) / roof);
        decode_free(&c);
    }

    // -- vector kernels of one row --
    printf("\nvector kernels, ns per call (n = 32000, a classifier row; speed-up over naive):\n");
    const int n = 32000;
    float *x = sc_rand(n, -5, 5, 61), *y = sc_zeros(n), *w = sc_rand(n, 0.5f, 1.5f, 62);
    if (!x || !y || !w) { fprintf(stderr, "bench: out of memory\n"); return 1; }
    static const char *kernels[] = { "softmax", "rmsnorm", "silu", "exp" };
    char levels[64];
    for (int kidx = 0; kidx < 4; kidx++) {
        printf("  %-8s", kernels[kidx]);
        double t0 = 0;
        snprintf(levels, sizeof levels, "%s", tw_simd_available());
        for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
            const tw_kernels *o = tw_kernels_for(lv);
            double t = 0;
            int reps = 200;
            double start = now();
            for (int r = 0; r < reps; r++) {
                if (kidx == 0) o->softmax(y, x, n);
                else if (kidx == 1) o->rmsnorm(y, x, w, n, 1e-5f);
                else if (kidx == 2) o->silu(y, x, n);
                else o->exp(y, x, n);
            }
            t = (now() - start) / reps;
            if (t0 == 0) t0 = t;
            printf("  %s %8.0f ns (%4.1fx)", lv, t * 1e9, t0 / t);
        }
        printf("\n");
    }
    free(x); free(y); free(w);
    return 0;
}
