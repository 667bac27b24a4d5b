// bench_train.c: training speed (make bench-train). For one llama2.c checkpoint's shape, times
// whole training steps (forward, backward, gradient clipping and AdamW: lib/nn/train.c) at the
// naive level and at the best SIMD level on one thread, and reports tokens/s, the GFLOP/s
// achieved and their share of the FMA peak measured in the same run, and, when Debian's PyTorch
// is installed, the tokens/s of the same model and batch in PyTorch (bench/bench_train.py, one
// thread) with the ratio.
//
//   bench_train MODEL.bin [-b B] [-t T] [-s STEPS]
//
// FLOPs per trained token, as llm.c and the PaLM paper count them: 6 N (N = the parameters of the
// matmuls: every weight but norm gains and the embedding lookup; the classifier counts) plus the
// attention 6 L T C (scores and mix, causal: half of 12 L T C). Times are the median of the
// steps after one warm-up step. The binary is single-threaded (the library is built without
// OpenMP by default), so there is no two-thread figure here.
#define _POSIX_C_SOURCE 200809L   // clock_gettime, popen
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "nn/model.h"
#include "nn/train.h"
#include "nn/rng.h"
#include "real/checkpoint.h"
#include "simd/simd.h"
#include "nn/reference.h"   // tw_kernels_for

#if defined(TW_HAVE_AVX2)
float bench_fma_probe_avx2(long iters);     // bench/probe_avx2.c
float bench_fma_probe_avx512(long iters);   // bench/probe_avx512.c
#endif

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Single-core FMA peak in GFLOP/s (the widest probe this CPU runs), 0 where there is none.
static double fma_peak(const char **which) {
    *which = "none";
#if defined(TW_HAVE_AVX2)
    const long iters = 20000000;
    float (*probe)(long) = NULL;
    double lanes = 0;
    if (tw_kernels_for("avx512")) { probe = bench_fma_probe_avx512; lanes = 16; *which = "avx512"; }
    else if (tw_kernels_for("avx2")) { probe = bench_fma_probe_avx2; lanes = 8; *which = "avx2"; }
    if (probe == NULL) return 0;
    double best = 1e30;
    volatile float sink = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = now_seconds();
        sink += probe(iters);
        double t = now_seconds() - t0;
        if (t < best) best = t;
    }
    (void)sink;
    return (double)iters * 12 * lanes * 2 / best * 1e-9;
#else
    return 0;
#endif
}

static double flops_per_token(const tw_model *m, int T) {
    double n = 0;
    for (int i = 0; i < m->n_params; i++)
        if (m->params[i].ndim == 2 && strcmp(m->params[i].name, "tok_emb") != 0) n += (double)m->params[i].count;
    n += (double)m->cfg.vocab * m->cfg.block.attn.d_model;   // the classifier (tied or not) is a matmul
    const double attn = 6.0 * m->cfg.n_layer * T * (double)m->cfg.block.attn.n_head * m->cfg.block.attn.head_dim;
    return 6.0 * n + attn;
}

// Median seconds per training step at the current kernel level.
static double time_steps(const char *path, int B, int T, int steps) {
    tw_model m;
    char err[512];
    if (tw_model_load_file(&m, path, err, sizeof err) != TW_OK) { fprintf(stderr, "bench_train: %s\n", err); exit(1); }
    tw_trainer t;
    if (tw_trainer_init(&t, &m, T) != TW_OK) { fprintf(stderr, "bench_train: out of memory\n"); exit(1); }
    int *in = malloc((size_t)B * T * sizeof *in), *tg = malloc((size_t)B * T * sizeof *tg);
    tw_rng r;
    tw_rng_init(&r, 3);
    for (long i = 0; i < (long)B * T; i++) {
        in[i] = (int)(tw_rng_next(&r) % (uint64_t)m.cfg.vocab);
        tg[i] = (int)(tw_rng_next(&r) % (uint64_t)m.cfg.vocab);
    }
    const tw_train_config c = { B, T, 1000, 0, 1e-4f, 1e-4f, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    double *dt = malloc((size_t)steps * sizeof *dt);
    tw_train_stats st;
    tw_train_step(&st, &t, &m, in, tg, &c);   // warm-up
    for (int s = 0; s < steps; s++) {
        double t0 = now_seconds();
        tw_train_step(&st, &t, &m, in, tg, &c);
        dt[s] = now_seconds() - t0;
    }
    qsort(dt, (size_t)steps, sizeof *dt, cmp_double);
    double med = dt[steps / 2];
    free(dt); free(in); free(tg);
    tw_trainer_free(&t);
    tw_model_free(&m);
    return med;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: bench_train MODEL.bin [-b B] [-t T] [-s STEPS]\n"); return 2; }
    const char *path = argv[1];
    int B = 8, T = 256, steps = 5;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-b")) B = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-t")) T = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-s")) steps = atoi(argv[i + 1]);
        else { fprintf(stderr, "bench_train: unknown flag '%s'\n", argv[i]); return 2; }
    }
    if (B < 1 || T < 1 || steps < 1) { fprintf(stderr, "bench_train: -b, -t and -s must be >= 1\n"); return 2; }
    tw_model m;
    char err[512];
    if (tw_model_load_file(&m, path, err, sizeof err) != TW_OK) { fprintf(stderr, "bench_train: %s\n", err); return 1; }
    const double fpt = flops_per_token(&m, T);
    printf("bench_train: %s: %ld parameters, C %d, L %d, H %d, V %d; batch %d x %d, one thread, "
           "median of %d steps (forward + backward + clip + AdamW)\n", path, tw_model_count_params(&m),
           m.cfg.block.attn.d_model, m.cfg.n_layer, m.cfg.block.attn.n_head, m.cfg.vocab, B, T, steps);
    tw_model_free(&m);
    const char *peak_isa;
    const double peak = fma_peak(&peak_isa);
    printf("FMA peak (%s probe, one core, this run): %.1f GFLOP/s\n", peak_isa, peak);
    const char *levels[2] = { "naive", NULL };
    double best_tps = 0;
    for (int li = 0; li < 2; li++) {
        const char *lv = tw_simd_init(levels[li]);
        const double sec = time_steps(path, B, T, steps);
        const double tps = (double)B * T / sec, gf = tps * fpt * 1e-9;
        printf("  %-7s %9.0f tok/s  %7.3f s/step  %6.2f GFLOP/s  %5.1f%% of peak\n", lv, tps, sec, gf,
               peak > 0 ? 100.0 * gf / peak : 0.0);
        if (li == 1) best_tps = tps;
    }
    // PyTorch, same shape and batch, one thread, if Debian's python3-torch is there.
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 bench/bench_train.py %s %d %d %d 2>/dev/null", path, B, T, steps);
    FILE *p = popen(cmd, "r");
    double torch_tps = 0;
    char line[256];
    while (p && fgets(line, sizeof line, p)) sscanf(line, "torch_tok_per_s %lf", &torch_tps);
    if (p) pclose(p);
    if (torch_tps > 0)
        printf("  pytorch %9.0f tok/s  (torch, float32, 1 thread)   ours/pytorch: %.2fx\n", torch_tps,
               best_tps / torch_tps);
    else
        printf("  pytorch: not measured (/usr/bin/python3 with torch not found)\n");
    return 0;
}
