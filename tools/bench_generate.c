// bench_generate.c: tokens per second of a real llama2.c model's forward pass
// (tw_model_forward_next, what ./generate runs), in one run, for three rungs and one or two threads:
//   naive     the library's reference loops (no SIMD);
//   autovec   the best level with its matvec replaced by a plain loop compiled with -O3
//             -ffast-math -march=native in its own object (bench/autovec.c): what llama2.c's
//             matmul is, so "ours / autovec" is "ours / llama2.c's approach on this CPU";
//   best      the best SIMD level (or --simd LEVEL).
// Each rung: prefill (all prompt tokens in one call) and decode (one token per call through the
// KV cache); the best level also without the cache. The rungs run in turn within each repeat, so
// a slow moment of a shared machine hits all of them; each figure is the median over the repeats,
// with the range [min - max]. Then the decode roofline: a decode step reads every weight matrix
// once and the KV cache of the positions so far once, so it cannot beat (read bandwidth) / (those
// bytes per token, at the decode's average position); the bandwidth is measured
// here, in the same run, with one and with two threads, over a buffer as large as the weights,
// so it comes from the cache level (L2, L3) or DRAM where the weights live. A benchmark, not a
// test: the outputs are checked elsewhere (tests/test_llama2c.c, tests/test_simd_model.c); it
// only checks that one and two threads decode the same tokens. Last, the int8 rows: the same
// model in Q8_0 (real/q8model.h), decoded with the best int8 kernels and with a runq-style plain
// int8 loop, against the fp32 decode measured above (tests/test_q8model.c checks the int8
// outputs).
//
//   bench_generate MODEL.bin [-p PREFILL_TOKENS] [-d DECODE_TOKENS] [-r REPEATS] [--simd LEVEL]
//
// The prompt is seeded random token ids (no tokenizer needed); decoding is greedy. REPEATS
// defaults to 5. Threads come from OpenMP (built with it by `make bench-generate`).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tw.h"
#include "real/llama2c.h"
#include "real/sampler.h"
#include "simd/simd.h"
#include "nn/reference.h"
#include "nn/quant.h"
#include "real/q8model.h"
#include "autovec.h"
#include "cpuinfo.h"
#include "bench_clock.h"   // now_seconds, median
#ifdef _OPENMP
#include <omp.h>
#endif

// The runq-style rung (bench/q8_runq_style.c, built as llama2.c builds runq.c: -Ofast -march=native).
void bench_q8_quantize_runq_style(int8_t *q, float *s, const float *x, int n, int gs);
void bench_q8_matvec_runq_style(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                                const float *xs, int N, int K, int gs);
// As an int8 level: its quantizer takes the whole row (n values), ours n_groups.
static void runq_style_quantize(int8_t *q, float *s, const float *x, int n_groups, int gs) {
    bench_q8_quantize_runq_style(q, s, x, n_groups * gs, gs);
}
static const tw_q8_ops RUNQ_STYLE = { .level = "runq-style", .quantize_x = runq_style_quantize,
                                      .matvec = bench_q8_matvec_runq_style, .x_multiple = 1, .w_multiple = 1 };


static void check(tw_status st, const char *what) {
    if (st != TW_OK) {
        fprintf(stderr, "bench_generate: %s: %s\n", what, tw_status_str(st));
        exit(1);
    }
}

// The largest of n values: a bandwidth is a ceiling, and on a shared machine the fastest pass is
// the one where nothing else got in the way, so the rooflines use it (tokens/s use the median).
static double best(const double *v, int n) {
    double b = v[0];
    for (int i = 1; i < n; i++) if (v[i] > b) b = v[i];
    return b;
}

// ---- tokens per second ----

// One run: prefill P tokens, then decode n_dec greedy tokens (written to seq[P..]). Returns the
// two times in seconds. q8_ops: for a model with int8 copies, the int8 kernels to run instead of
// the level's (NULL: the level's, as ./generate runs them).
static void run_once(double *t_pre, double *t_dec, const tw_model *m, int *seq, int P, int n_dec,
                     int with_cache, const tw_q8_ops *q8_ops) {
    const int V = m->cfg.vocab, total = P + n_dec;
    tw_model_state s;
    check(tw_model_state_init(&s, m, with_cache ? P : total, with_cache ? total : 0), "state");
    if (q8_ops && s.q8) s.q8->ops = q8_ops;
    double t0 = now_seconds();
    check(tw_model_forward_next(&s, m, seq, P, 0), "prefill");
    double t1 = now_seconds();
    int next = tw_argmax(s.logits + (size_t)(P - 1) * V, V);
    for (int pos = P; pos < total; pos++) {
        seq[pos] = next;
        if (with_cache) {
            check(tw_model_forward_next(&s, m, &seq[pos], 1, pos), "decode");
            next = tw_argmax(s.logits, V);
        } else {
            check(tw_model_forward_next(&s, m, seq, pos + 1, 0), "decode");
            next = tw_argmax(s.logits + (size_t)pos * V, V);
        }
    }
    double t2 = now_seconds();
    *t_pre = t1 - t0;
    *t_dec = t2 - t1;
    tw_model_state_free(&s);
}

// One row of the table: a level's kernels, optionally with the autovec matvec, a thread count,
// with or without the KV cache; its tokens/s per repeat and the tokens it decoded last.
enum { MAX_REPEATS = 64 };
typedef struct {
    const char *rung, *level;
    int autovec, threads, with_cache;
    double pre[MAX_REPEATS], dec[MAX_REPEATS];
    int *tokens;   // (n_dec): the greedy tokens of the last run
} config;

static void select_config(const config *c) {
    tw_simd_init(c->level);
    // The yardstick: the table's matvec swapped for the compiler's (this benchmark only; the
    // model programs never see bench/autovec.c).
    if (c->autovec) tw_simd.matvec = bench_matvec_autovec;
    tw_threads_set(c->threads);
}

static void run_config(config *c, int rep, const tw_model *m, int *seq, int P, int n_dec) {
    select_config(c);
    double tp, td;
    run_once(&tp, &td, m, seq, P, n_dec, c->with_cache, NULL);
    if (rep >= 0) {
        c->pre[rep] = P / tp;
        c->dec[rep] = n_dec / td;
    }
    memcpy(c->tokens, seq + P, (size_t)n_dec * sizeof *seq);
}

static void min_max(const double *v, int n, double *lo, double *hi) {
    *lo = *hi = v[0];
    for (int i = 1; i < n; i++) {
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
}

// ---- what a decode step must read, and how fast this machine can read it ----

// Bytes of weights one decode token reads: every matrix of every layer, the norms' gains, the
// classifier, and one row of the embedding table (when the classifier is shared, the table is
// the classifier and is counted once, in full).
static double weight_bytes_per_token(const tw_model_config *c) {
    const double C = c->block.attn.d_model, F = c->block.ffn_hidden, D = (double)c->block.attn.head_dim;
    const double H = c->block.attn.n_head, G = c->block.attn.n_kv_head, V = c->vocab;
    double layer = C * H * D + 2.0 * C * G * D + H * D * C + 3.0 * C * F + 2.0 * C;
    double floats = c->n_layer * layer + C + V * C + (c->tied ? 0.0 : C);
    return 4.0 * floats;
}

// The cache level a footprint fits in, from Linux's sysfs (per-core L2, shared L3); "?" where
// sysfs is absent (macOS): the bandwidth below is measured at the right footprint either way.
static long cache_bytes(int index) {
    char path[128], buf[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long v = -1;
    if (fgets(buf, sizeof buf, f)) {
        char unit = 'B';
        if (sscanf(buf, "%ld%c", &v, &unit) >= 1)
            v *= unit == 'K' ? 1024L : unit == 'M' ? 1024L * 1024 : 1;
    }
    fclose(f);
    return v;
}

static const char *footprint_level(double bytes, long l2, long l3) {
    if (l2 < 0 || l3 < 0) return "?";
    return bytes <= 0.75 * l2 ? "L2" : bytes <= 0.75 * l3 ? "L3" : "DRAM";
}

// STREAM's triad a = b + s c over three arrays of n floats (12 bytes per element, STREAM's
// count: reads of b and c, the write of a). Compiled without ISA flags, so it uses the baseline
// vector width (SSE2 on x86-64). Returns GB/s, the fastest of `repeats` passes after a warm-up.
static double triad_gbs(float *a, const float *b, const float *c, long n, int repeats) {
    double gbs[64];
    for (int k = -1; k < repeats; k++) {
        double t0 = now_seconds();
        for (long i = 0; i < n; i++) a[i] = b[i] + 0.5f * c[i];
        double t = now_seconds() - t0;
        if (k >= 0) gbs[k] = 12.0 * n / t * 1e-9;
    }
    return best(gbs, repeats);
}

// A read-only stream, the access pattern of a matvec: the fast level's dot product of the two
// halves of an array of n floats, so every byte is loaded once (two ascending streams, as
// prefetch-friendly as one), split among `threads` threads in contiguous parts. Returns GB/s (4
// bytes per element), the fastest of `repeats` passes after a warm-up.
static float read_part(tw_dot_fn dot, const float *b, long n, int part, int parts) {
    long i0 = n * part / parts, i1 = n * (part + 1) / parts, half = (i1 - i0) / 2;
    float s = 0.0f;
    for (long i = 0; i < half; i += 1L << 24) {   // chunks: the kernel takes an int length
        long len = half - i < (1L << 24) ? half - i : (1L << 24);
        s += dot(b + i0 + i, b + i0 + half + i, (int)len);
    }
    return s;
}

static double read_gbs(const float *b, long n, int threads, int repeats, float *sink) {
    double gbs[MAX_REPEATS];
    const tw_dot_fn dot = tw_kernels_for(tw_simd.level)->dot;   // the level tw_simd_init chose
    for (int k = -1; k < repeats; k++) {
        float s = 0.0f;
        double t0 = now_seconds();
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) reduction(+ : s)
        s += read_part(dot, b, n, omp_get_thread_num(), omp_get_num_threads());
#else
        (void)threads;
        s = read_part(dot, b, n, 0, 1);
#endif
        double t = now_seconds() - t0;
        *sink += s;
        if (k >= 0) gbs[k] = 4.0 * n / t * 1e-9;
    }
    return best(gbs, repeats);
}

// ---- int8 ----

// Medians of prefill and decode tokens/s of n rungs (model ms[r] with int8 kernels ops[r]; NULL:
// its own), the rungs in turn within each repeat after one warm-up each, so that they face the
// same load on a shared machine.   pre, dec: (n)
static void measure_in_turn(double *pre, double *dec, const tw_model *const *ms,
                            const tw_q8_ops *const *ops, int n, int *seq, int P, int n_dec, int repeats) {
    double tp[4][64], td[4][64], wp, wd;
    for (int r = 0; r < n; r++) run_once(&wp, &wd, ms[r], seq, P, n_dec, 1, ops[r]);
    for (int k = 0; k < repeats; k++)
        for (int r = 0; r < n; r++) {
            run_once(&tp[r][k], &td[r][k], ms[r], seq, P, n_dec, 1, ops[r]);
            tp[r][k] = P / tp[r][k];
            td[r][k] = n_dec / td[r][k];
        }
    for (int r = 0; r < n; r++) {
        pre[r] = median(tp[r], repeats);
        dec[r] = median(td[r], repeats);
    }
}

// The same model in Q8_0, made in memory as ./quantize makes the version-2 file and read back as
// ./generate reads it (groups: 64 halved until they divide dim and hidden_dim), decoded with the
// int8 kernels of the fast level and with the runq-style rung (the rest of the step: the fast
// level's fp32 kernels in both), against the fp32 model decoded in turn with them (the ratio
// printed first: the three rows face the same load) and the fp32 table's median.
static void int8_rows(const tw_model *m32, int *seq, int P, int n_dec, int repeats,
                      const char *fast_level, double fp32_dec, double read_gbs_, double triad_gbs_) {
    const tw_model_config *c = &m32->cfg;
    const int widths[2] = { c->block.attn.d_model, c->block.ffn_hidden };
    const int gs = tw_quant_fit_group(widths, 2, 64);
    char err[512];
    tw_q8file q;
    tw_model m8;
    if (tw_q8file_from_model(&q, m32, gs, err, sizeof err) != TW_OK ||
        tw_q8file_to_model(&m8, &q, err, sizeof err) != TW_OK) {
        fprintf(stderr, "bench_generate: int8 model: %s\n", err);
        exit(1);
    }
    tw_q8file_free(&q);
    tw_simd_init(fast_level);
    const tw_q8_ops *q8best = tw_q8_ops_for_simd_level(fast_level);
    printf("int8: Q8_0 in groups of %d (as ./quantize writes it), every Linear layer in int8 with "
           "activations quantized; the rest of the step at the %s level\n", gs, fast_level);
    printf("%-8s %-12s %15s %15s\n", "level", "int8 kernels", "prefill tok/s", "decode tok/s");
    // the runq-style rung, the best int8 kernels, and the fp32 model again, in turn
    const tw_model *const ms[3] = { &m8, &m8, m32 };
    const tw_q8_ops *const ops[3] = { &RUNQ_STYLE, NULL, NULL };
    double pre[3], dec[3];
    measure_in_turn(pre, dec, ms, ops, 3, seq, P, n_dec, repeats);
    const double dec_r = dec[0], dec_b = dec[1], dec_f = dec[2];
    printf("%-8s %-12s %15.1f %15.1f\n", fast_level, RUNQ_STYLE.level, pre[0], dec[0]);
    printf("%-8s %-12s %15.1f %15.1f\n", fast_level, q8best->level, pre[1], dec[1]);
    printf("%-8s %-12s %15.1f %15.1f   (the fp32 model, in turn with the two rows above)\n",
           fast_level, "fp32", pre[2], dec[2]);
    printf("int8 decode %s: %.2fx our fp32 decode (%s, in turn in this run; %.2fx the fp32 table's "
           "median above), %.2fx the runq-style rung (goals for the 15M shape: >= 3x and >= 3x)%s\n",
           q8best->level, dec_b / dec_f, fast_level, dec_b / fp32_dec, dec_b / dec_r,
           !tw_q8_matvec_is_simd(q8best, gs) && !tw_q8_packs(q8best, gs) ? " [this group size is not one the SIMD kernels "
           "take: they run the naive loop]" : "");
    // int8 weights per token: 1 byte per matrix weight plus a 4-byte scale per group, or, where
    // the kernels read a packed copy, that copy's bytes (rows16: also a 4-byte correction per
    // group and row); the norms and the embedding row stay fp32
    const double C = c->block.attn.d_model, F = c->block.ffn_hidden, HD = (double)c->block.attn.n_head * c->block.attn.head_dim;
    const double GD = (double)c->block.attn.n_kv_head * c->block.attn.head_dim, V = c->vocab;
    const double mats = c->n_layer * (C * HD + 2.0 * C * GD + HD * C + 3.0 * C * F) + V * C;
    double mat_bytes = mats * (1.0 + 4.0 / gs);
    if (tw_q8_packs(q8best, gs)) {
        mat_bytes = 0;
        for (int i = 0; i < m8.n_q8; i++)
            mat_bytes += (double)q8best->packed_bytes(m8.q8[i].rows, m8.q8[i].cols, gs);
    }
    const double bytes = mat_bytes + 4.0 * (c->n_layer * 2.0 * C + 2.0 * C);
    printf("int8 roofline: a decode token reads %.2f MiB of int8 weights and scales%s; at the fp32 "
           "footprint's bandwidth (read %.1f GB/s, triad %.1f GB/s, an underestimate if the int8 "
           "weights fit a faster cache) that bounds decode at %.1f / %.1f tok/s: %s decode is %.0f%% "
           "/ %.0f%% of it\n", bytes / 1048576.0,
           tw_q8_packs(q8best, gs) ? " (the packed copies the kernels read)" : "", read_gbs_, triad_gbs_, read_gbs_ * 1e9 / bytes,
           triad_gbs_ * 1e9 / bytes, q8best->level, 100.0 * dec_b / (read_gbs_ * 1e9 / bytes),
           100.0 * dec_b / (triad_gbs_ * 1e9 / bytes));
    tw_model_free(&m8);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_generate MODEL.bin [-p PREFILL] [-d DECODE] [-r REPEATS] [--simd LEVEL]\n");
        return 2;
    }
    int P = 64, n_dec = 64, repeats = 5;
    const char *fast = NULL;
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) { fprintf(stderr, "bench_generate: flag '%s' needs a value\n", argv[i]); return 2; }
        int v = atoi(argv[i + 1]);
        if (strcmp(argv[i], "-p") == 0) P = v;
        else if (strcmp(argv[i], "-d") == 0) n_dec = v;
        else if (strcmp(argv[i], "-r") == 0) repeats = v;
        else if (strcmp(argv[i], "--simd") == 0) fast = argv[i + 1];
        else { fprintf(stderr, "bench_generate: unknown flag '%s'\n", argv[i]); return 2; }
    }
    // The fast level's name (resolving auto and TW_SIMD), checked before any work.
    const char *fast_level = tw_simd_init(fast);
    if (fast_level == NULL) {
        fprintf(stderr, "bench_generate: --simd: level '%s' is not available here (have: %s, auto)\n",
                fast ? fast : getenv("TW_SIMD"), tw_simd_available());
        return 2;
    }
    char err[512];
    tw_model m;
    if (tw_llama2c_load(&m, argv[1], err, sizeof err) != TW_OK) {
        fprintf(stderr, "bench_generate: %s\n", err);
        return 1;
    }
    const tw_model_config *c = &m.cfg;
    if (P < 1 || n_dec < 1 || repeats < 1 || repeats > MAX_REPEATS || P + n_dec > c->max_seq) {
        fprintf(stderr, "bench_generate: need -p >= 1, -d >= 1, 1 <= -r <= %d and p + d <= seq_len %d\n",
                MAX_REPEATS, c->max_seq);
        tw_model_free(&m);
        return 2;
    }
    int *seq = malloc((size_t)(P + n_dec) * sizeof *seq);
    if (!seq) { fprintf(stderr, "bench_generate: out of memory\n"); return 1; }
    tw_rng r;
    tw_rng_init(&r, 1);
    for (int t = 0; t < P; t++) seq[t] = t == 0 ? 1 : 3 + (int)(tw_rng_next(&r) % (uint64_t)(c->vocab - 3));

    const int max_threads = tw_threads_set(0) >= 2 ? 2 : 1;   // 2 if OpenMP and >= 2 CPUs
    char cpu[256];
    bench_cpu_describe(cpu, sizeof cpu);
    printf("CPU: %s\n", cpu);
    printf("%s: dim %d, hidden %d, layers %d, heads %d, kv heads %d, vocab %d, seq_len %d\n",
           argv[1], c->block.attn.d_model, c->block.ffn_hidden, c->n_layer, c->block.attn.n_head,
           c->block.attn.n_kv_head, c->vocab, c->max_seq);
    printf("prefill %d tokens, then decode %d tokens greedily; tw_model_forward_next, as ./generate runs it;\n"
           "%d repeats after a warm-up, the rungs in turn within each repeat; tok/s: median [min - max]\n",
           P, n_dec, repeats);
    if (max_threads < 2)
        printf("(one thread only: built without OpenMP or only one CPU; `make bench-generate` builds with OpenMP)\n");

    // The table's rows. autovec = the fast level with the compiler-vectorised matvec.
    config cf[6];
    int nc = 0;
    cf[nc++] = (config){ "naive", "naive", 0, 1, 1, {0}, {0}, NULL };
    cf[nc++] = (config){ "autovec", fast_level, 1, 1, 1, {0}, {0}, NULL };
    cf[nc++] = (config){ fast_level, fast_level, 0, 1, 1, {0}, {0}, NULL };
    const int i_naive = 0, i_auto1 = 1, i_best1 = 2;
    int i_auto2 = -1, i_best2 = -1;
    if (max_threads >= 2) {
        i_auto2 = nc; cf[nc++] = (config){ "autovec", fast_level, 1, 2, 1, {0}, {0}, NULL };
        i_best2 = nc; cf[nc++] = (config){ fast_level, fast_level, 0, 2, 1, {0}, {0}, NULL };
    }
    const int i_nocache = nc;
    cf[nc++] = (config){ fast_level, fast_level, 0, 1, 0, {0}, {0}, NULL };
    for (int k = 0; k < nc; k++) {
        cf[k].tokens = malloc((size_t)n_dec * sizeof(int));
        if (!cf[k].tokens) { fprintf(stderr, "bench_generate: out of memory\n"); return 1; }
    }
    for (int rep = -1; rep < repeats; rep++)   // rep -1: the warm-up (page-in, caches, clocks)
        for (int k = 0; k < nc; k++) run_config(&cf[k], rep, &m, seq, P, n_dec);

    printf("%-8s %-9s %7s  %-30s %-30s\n", "rung", "kv cache", "threads", "prefill tok/s", "decode tok/s");
    double pre_med[6], dec_med[6], dec_best[6];
    for (int k = 0; k < nc; k++) {
        double plo, phi, dlo, dhi;
        min_max(cf[k].pre, repeats, &plo, &phi);
        min_max(cf[k].dec, repeats, &dlo, &dhi);
        pre_med[k] = median(cf[k].pre, repeats);
        dec_med[k] = median(cf[k].dec, repeats);
        dec_best[k] = dhi;
        char pb[64], db[64];
        snprintf(pb, sizeof pb, "%9.1f [%.1f - %.1f]", pre_med[k], plo, phi);
        snprintf(db, sizeof db, "%9.1f [%.1f - %.1f]", dec_med[k], dlo, dhi);
        printf("%-8s %-9s %7d  %-30s %-30s\n", cf[k].rung, cf[k].with_cache ? "yes" : "no", cf[k].threads, pb, db);
    }
    printf("(autovec = %s with its matvec replaced by bench/autovec.c: `for i: for k: y[i] += W[i][k] x[k]`, "
           "-O3 -ffast-math -march=native)\n", fast_level);
    if (i_best2 >= 0)
        printf("check: %s decodes the same %d greedy tokens with 1 and 2 threads: %s\n", fast_level, n_dec,
               memcmp(cf[i_best1].tokens, cf[i_best2].tokens, (size_t)n_dec * sizeof(int)) == 0 ? "yes" : "NO");

    // The roofline, measured now, at the weights' footprint, with the fast level's dot.
    tw_simd_init(fast_level);
    const double wbytes = weight_bytes_per_token(c);
    const long l2 = cache_bytes(2), l3 = cache_bytes(3);
    const long n = (long)(wbytes / 4.0) + 16;          // read stream: one array of the weights' size
    const long nt = (long)(wbytes / 12.0) + 16;        // triad: three arrays, together that size
    float *a = malloc((size_t)nt * sizeof *a), *b = malloc((size_t)n * sizeof *b),
          *cc = malloc((size_t)nt * sizeof *cc);
    if (!a || !b || !cc) { fprintf(stderr, "bench_generate: out of memory for the bandwidth test\n"); return 1; }
    for (long i = 0; i < n; i++) b[i] = (float)(i % 13) * 0.25f;
    for (long i = 0; i < nt; i++) { a[i] = 0.0f; cc[i] = (float)(i % 7) * 0.5f; }
    float sink = 0.0f;
    const int bw_reps = wbytes < 8e6 ? 51 : 9;
    const double rd1 = read_gbs(b, n, 1, bw_reps, &sink);
    const double rd2 = max_threads >= 2 ? read_gbs(b, n, 2, bw_reps, &sink) : 0;
    const double tr = triad_gbs(a, b, cc, nt, bw_reps);
    const double cache_kv = 4.0 * 2.0 * c->n_layer * (P + n_dec / 2) * c->block.attn.n_kv_head *
                            ((double)c->block.attn.head_dim);
    // A decode step reads every weight once and the cached keys and values of every position so
    // far once (attention); both count, at the average position of the decode.
    const double token_bytes = wbytes + cache_kv;
    const double roof1 = rd1 * 1e9 / token_bytes, roof2 = rd2 * 1e9 / token_bytes;
    printf("roofline: a decode token reads %.2f MiB: %.2f MiB of weights and %.2f MiB of KV cache at "
           "the average position; footprint level %s (L2 %ld KiB per core, L3 %ld KiB)\n",
           token_bytes / 1048576.0, wbytes / 1048576.0, cache_kv / 1048576.0,
           footprint_level(wbytes, l2, l3), l2 / 1024, l3 / 1024);
    printf("roofline: read stream over that footprint (%s dot): 1 thread %.1f GB/s -> %.1f tok/s", fast_level,
           rd1, roof1);
    if (rd2 > 0) printf("; 2 threads %.1f GB/s -> %.1f tok/s", rd2, roof2);
    printf("; STREAM triad (1 thread) %.1f GB/s -> %.1f tok/s%s\n", tr, tr * 1e9 / token_bytes,
           sink == 12345.0f ? " " : "");

    // Each goal as the ratio of the medians and, in brackets, of the fastest runs: on a shared
    // machine the fastest run of each rung is the one least disturbed by other processes.
    printf("goals (decode; ratio of the medians [ratio of the fastest runs] of this run):\n");
    printf("  %s / naive, 1 thread: %.2fx [%.2fx]\n", fast_level, dec_med[i_best1] / dec_med[i_naive],
           dec_best[i_best1] / dec_best[i_naive]);
    printf("  %s / autovec, 1 thread: %.2fx [%.2fx] (goal >= 1.0x)\n", fast_level,
           dec_med[i_best1] / dec_med[i_auto1], dec_best[i_best1] / dec_best[i_auto1]);
    printf("  %s, 1 thread: %.0f%% [%.0f%%] of the 1-thread read roofline (goal for the 15M shape: >= 90%%)\n",
           fast_level, 100.0 * dec_med[i_best1] / roof1, 100.0 * dec_best[i_best1] / roof1);
    printf("  autovec, 1 thread: %.0f%% [%.0f%%] of the 1-thread read roofline\n",
           100.0 * dec_med[i_auto1] / roof1, 100.0 * dec_best[i_auto1] / roof1);
    if (i_best2 >= 0) {
        printf("  %s / autovec, 2 threads: %.2fx [%.2fx]\n", fast_level, dec_med[i_best2] / dec_med[i_auto2],
               dec_best[i_best2] / dec_best[i_auto2]);
        printf("  %s, 2 threads / 1 thread: %.2fx [%.2fx] (goal >= 1.8x on an idle machine); %.0f%% [%.0f%%] "
               "of the 2-thread read roofline\n", fast_level, dec_med[i_best2] / dec_med[i_best1],
               dec_best[i_best2] / dec_best[i_best1], 100.0 * dec_med[i_best2] / roof2,
               100.0 * dec_best[i_best2] / roof2);
    }
    printf("  %s without the KV cache: %.1f tok/s (every step recomputes the prefix)\n", fast_level,
           dec_med[i_nocache]);
    if (roof1 > 0 && dec_best[i_best1] > 1.05 * roof1)
        printf("  note: a decode above its roofline means the bandwidth was measured in a slower moment "
               "of the machine than the decode (other processes); rerun on a quieter machine\n");
    (void)pre_med;
    for (int k = 0; k < nc; k++) free(cf[k].tokens);
    free(a); free(b); free(cc);
    tw_threads_set(1);   // the int8 rows: one thread, against the 1-thread fp32 decode above
    int8_rows(&m, seq, P, n_dec, repeats, fast_level, dec_med[i_best1], rd1, tr);
    free(seq);
    tw_model_free(&m);
    return 0;
}
