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
// bytes per token, at the decode's average position); the bandwidth is measured right beside
// every run (read passes just before it and, for as long as it took, just after it, with its
// thread count, two ways of reading, the fastest pass kept), over a buffer as large as those
// bytes, so it comes from the cache level (L2, L3) or DRAM where they live, at the moment of
// that run. Every goal is printed as the median of per-repeat ratios
// (both sides from the same repeat), with their range. A benchmark, not a
// test: the outputs are checked elsewhere (tests/test_llama2c.c, tests/test_simd_model.c); it
// only checks that one and two threads decode the same tokens. Last, the int8 rows: the same
// model in Q8_0 (quant/q8model.h), decoded with the best int8 kernels and with a runq-style plain
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
#include "formats/llama2c.h"
#include "decode/sampler.h"
#include "simd/simd.h"
#include "nn/reference.h"
#include "quant/q8_0.h"
#include "quant/q8model.h"
#include "autovec.h"
#include "cpuinfo.h"
#include "cache_size.h"
#include "read_stream.h"
#include "bench_clock.h"   // now_seconds, median
#include "bench_spread.h"  // spread, paired_ratio, min_max
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


enum { MAX_REPEATS = BENCH_MAX_REPEATS };

// ---- tokens per second ----

// One run: prefill P tokens, then decode n_dec greedy tokens (written to seq[P..]). Returns the
// two times in seconds. q8_ops: for a model with int8 copies, the int8 kernels to run instead of
// the level's (NULL: the level's, as ./generate runs them).
static void run_once(double *t_pre, double *t_dec, const tw_model *m, int *seq, int P, int n_dec,
                     int with_cache, const tw_q8_ops *q8_ops) {
    const int V = m->cfg.vocab, total = P + n_dec;
    tw_model_state s;
    check(tw_model_state_init(&s, m, with_cache ? P : total, with_cache ? total : 0), "state");
    if (q8_ops && m->copies) m->copies->work.ops = q8_ops;   // after the state picked its level
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

// The cache level a footprint fits in (bench/cache_size.c: sysfs, else the C library); "?" where
// neither can tell (macOS): the bandwidth below is measured at the right footprint either way.
static const char *footprint_level(double bytes, long l2, long l3) {
    if (l2 <= 0 || l3 <= 0) return "?";
    return bytes <= 0.75 * l2 ? "L2" : bytes <= 0.75 * l3 ? "L3" : "DRAM";
}

// This thread's contiguous part of the n floats at b, read once the given way (bench/read_stream.h).
static float read_part(const tw_kernels *k, int way, const float *b, long n, float *y, int part, int parts) {
    const long i0 = n * part / parts, i1 = n * (part + 1) / parts;
    return bench_read_once(k, way, b + i0, i1 - i0, y);
}

// The floats that `parts` threads read that way in all (each part leaves out its own tail).
static long read_floats(int way, long n, int parts) {
    long sum = 0;
    for (int part = 0; part < parts; part++)
        sum += bench_read_floats(way, n * (part + 1) / parts - n * part / parts);
    return sum;
}

// The buffer the read stream runs over: as many bytes as a decode token reads.   b: (n) floats
typedef struct {
    float *b;
    long n;
    float *y;     // (64 * BENCH_READ_K) BENCH_READ_MATVEC's outputs, BENCH_READ_K per thread
    float sink;   // the reads' sum, printed so that the compiler cannot drop them
    double best[BENCH_READ_WAYS];   // the fastest GB/s each way has read, over the whole run
} read_buffer;

static void read_buffer_init(read_buffer *r, double bytes) {
    r->n = (long)(bytes / 4.0) + 16;
    r->b = malloc((size_t)r->n * sizeof *r->b);
    r->y = malloc((size_t)64 * BENCH_READ_K * sizeof *r->y);
    r->sink = 0.0f;
    for (int w = 0; w < BENCH_READ_WAYS; w++) r->best[w] = 0;
    if (!r->b || !r->y) { fprintf(stderr, "bench_generate: out of memory for the bandwidth test\n"); exit(1); }
    for (long i = 0; i < r->n; i++) r->b[i] = (float)(i % 13) * 0.25f;
}

static void read_buffer_free(read_buffer *r) {
    free(r->b);
    free(r->y);
}

// GB/s of the fastest of the read passes over the buffer with `threads` threads, now: each way in
// turn, 3 passes each, or as many as read 64 MiB in all (at most 64) when the buffer is small
// (an L2-sized one takes a few microseconds, as long as waking a second thread), and then more
// until at least `seconds` have passed (at most READ_MAX_PASSES). Reading for as long as the run
// it bounds lasted gives the ceiling as many chances to meet the host's fast moments as the run
// had: on the AMD EPYC VM one pass over 58.8 MiB read anywhere from 35 to 59 GB/s a second apart,
// and six passes beside a run of a tenth of a second came out below the decode itself. The
// fastest pass, not the median: a bandwidth is a ceiling, and the fastest pass is the one where
// nothing else got in the way (tokens/s use the median).
enum { READ_MAX_PASSES = 4096 };
static double read_gbs_now(read_buffer *r, int threads, double seconds) {
    const tw_kernels *k = tw_kernels_for(tw_simd.level);   // the level tw_simd_init chose
    const double wanted = 64.0 * 1048576.0 / (4.0 * (double)r->n);
    const int passes = wanted < 3 ? 3 : wanted > 64 ? 64 : (int)wanted;
#ifdef _OPENMP
    const int parts = threads < 64 ? threads : 64;
#else
    const int parts = 1;
    (void)threads;
#endif
    const double start = now_seconds();
    double fastest = 0;
    for (int p = 0; p < READ_MAX_PASSES && (p < BENCH_READ_WAYS * passes || now_seconds() - start < seconds); p++) {
        const int way = p % BENCH_READ_WAYS;
        float s = 0.0f;
        double t0 = now_seconds();
#ifdef _OPENMP
#pragma omp parallel num_threads(parts) reduction(+ : s)
        s += read_part(k, way, r->b, r->n, r->y + (size_t)omp_get_thread_num() * BENCH_READ_K,
                       omp_get_thread_num(), omp_get_num_threads());
#else
        s = read_part(k, way, r->b, r->n, r->y, 0, 1);
#endif
        double t = now_seconds() - t0;
        r->sink += s;
        const double gbs = 4.0 * (double)read_floats(way, r->n, parts) / t * 1e-9;
        if (gbs > r->best[way]) r->best[way] = gbs;
        if (gbs > fastest) fastest = gbs;
    }
    return fastest;
}

// The fastest pass of each way over the run (any thread count), so the output says which way set
// the roofline on this CPU.
static void print_read_ways(const read_buffer *r) {
    printf("  the read ways' fastest passes in this run:");
    for (int w = 0; w < BENCH_READ_WAYS; w++) printf("%s %s %.1f GB/s", w ? "," : "", bench_read_way_name(w), r->best[w]);
    printf("\n");
}

// The bandwidth beside one run: read passes with its thread count right before and right after
// it (after: for as long as the run took, run_seconds), the fastest kept (a ceiling: other
// processes only ever slow a pass down). Measured beside every run, because on a shared machine
// the bandwidth itself changes from one second to the next, and a roofline measured at another
// moment than the decode it bounds can come out below it.
static double read_around(read_buffer *r, int threads, double before, double run_seconds) {
    const double after = read_gbs_now(r, threads, run_seconds);
    return after > before ? after : before;
}

// Said under a ratio above 100 % of a roofline, which a true bound cannot give.
static void note_above_roofline(void) {
    printf("  note: above 100%% in some repeat: no read pass beside that repeat (they read for as long "
           "as its decode took) was as fast as the decode itself. Either the machine was slower during "
           "every pass (other processes, a VM's neighbours), or the cache kept part of the decode's bytes "
           "between tokens (the decode reads them in the same order every token, the passes do not); "
           "there the roofline is no bound: rerun, and read the ratio as approximate\n");
}

// roof[k]: the tokens/s that gbs[k] GB/s allows when a token reads `bytes`.   roof, gbs: (n)
static void rooflines(double *roof, const double *gbs, int n, double bytes) {
    for (int k = 0; k < n; k++) roof[k] = gbs[k] * 1e9 / bytes;
}

// ---- the table's rows ----

// One row of the table: a level's kernels, optionally with the autovec matvec, a thread count,
// with or without the KV cache; its tokens/s per repeat and the tokens it decoded last.
typedef struct {
    const char *rung, *level;
    int autovec, threads, with_cache;
    double pre[MAX_REPEATS], dec[MAX_REPEATS];
    double gbs[MAX_REPEATS];   // the read bandwidth with its thread count, right beside each run
    int *tokens;   // (n_dec): the greedy tokens of the last run
} config;

static void select_config(const config *c) {
    tw_simd_init(c->level);
    // The yardstick: the table's matvec swapped for the compiler's (this benchmark only; the
    // model programs never see bench/autovec.c).
    if (c->autovec) tw_simd.matvec = bench_matvec_autovec;
    tw_threads_set(c->threads);
}

static void run_config(config *c, int rep, const tw_model *m, int *seq, int P, int n_dec,
                       read_buffer *rb, const char *fast_level) {
    tw_simd_init(fast_level);   // the read passes use the fast level's dot and matvec
    const double before = read_gbs_now(rb, c->threads, 0);
    select_config(c);
    double tp, td;
    run_once(&tp, &td, m, seq, P, n_dec, c->with_cache, NULL);
    tw_simd_init(fast_level);
    const double gbs = read_around(rb, c->threads, before, td);
    if (rep >= 0) {
        c->pre[rep] = P / tp;
        c->dec[rep] = n_dec / td;
        c->gbs[rep] = gbs;
    }
    memcpy(c->tokens, seq + P, (size_t)n_dec * sizeof *seq);
}

// ---- int8 ----

// Prefill and decode tokens/s of n rungs (model ms[r] with int8 kernels ops[r]; NULL: its own),
// the rungs in turn within each repeat after one warm-up each, so that they face the same load on
// a shared machine, and the one-thread read bandwidth over rb beside each repeat (read_around).
//   pre, dec: (n, MAX_REPEATS), per repeat   gbs: (repeats)
static void measure_in_turn(double pre[][MAX_REPEATS], double dec[][MAX_REPEATS], double *gbs,
                            const tw_model *const *ms, const tw_q8_ops *const *ops,
                            const int *threads, int n, read_buffer *rb, int *seq, int P, int n_dec,
                            int repeats) {
    double wp, wd;
    for (int r = 0; r < n; r++) {
        tw_threads_set(threads[r]);
        run_once(&wp, &wd, ms[r], seq, P, n_dec, 1, ops[r]);
    }
    for (int k = 0; k < repeats; k++) {
        const double before = read_gbs_now(rb, 1, 0);
        double longest = 0;   // the longest decode of the repeat
        for (int r = 0; r < n; r++) {
            tw_threads_set(threads[r]);
            run_once(&pre[r][k], &dec[r][k], ms[r], seq, P, n_dec, 1, ops[r]);
            if (dec[r][k] > longest) longest = dec[r][k];
            pre[r][k] = P / pre[r][k];
            dec[r][k] = n_dec / dec[r][k];
        }
        gbs[k] = read_around(rb, 1, before, longest);
    }
}

// The int8 model's greedy tokens with 1 and with 2 threads: the rows are shared among the threads
// without changing a bit (lib/quant/q8_threads.c), so the tokens must be the same.
static void int8_threads_check(const tw_model *m8, int *seq, int P, int n_dec) {
    int *one = malloc((size_t)n_dec * sizeof *one);
    check(one ? TW_OK : TW_ERR_NOMEM, "tokens");
    double tp, td;
    tw_threads_set(1);
    run_once(&tp, &td, m8, seq, P, n_dec, 1, NULL);
    memcpy(one, seq + P, (size_t)n_dec * sizeof *one);
    tw_threads_set(2);
    run_once(&tp, &td, m8, seq, P, n_dec, 1, NULL);
    tw_threads_set(1);
    const int same = memcmp(one, seq + P, (size_t)n_dec * sizeof *one) == 0;
    printf("check: the int8 model decodes the same %d greedy tokens with 1 and 2 threads: %s\n", n_dec,
           same ? "yes" : "NO");
    free(one);
    if (!same) exit(1);
}

// Bytes of int8 weights and scales one decode token reads: 1 byte per matrix weight plus a 4-byte
// scale per group or, where the kernels read a packed copy, that copy's bytes (rows16: also a
// 4-byte correction per group and row); the norms' gains stay fp32.
static double int8_bytes_per_token(const tw_model *m8, const tw_q8_ops *ops, int gs) {
    const tw_model_config *c = &m8->cfg;
    const double C = c->block.attn.d_model;
    double mat_bytes = 0;
    for (int i = 0; i < m8->copies->n; i++) {
        const int N = m8->copies->mats[i].rows, K = m8->copies->mats[i].cols;
        mat_bytes += tw_q8_packs(ops, gs) ? (double)ops->packed_bytes(N, K, gs) : (double)N * K * (1.0 + 4.0 / gs);
    }
    return mat_bytes + 4.0 * (c->n_layer * 2.0 * C + 2.0 * C);
}

// The same model in Q8_0, made in memory as ./quantize makes the version-2 file and read back as
// ./generate reads it (groups: 64 halved until they divide dim and hidden_dim), decoded with the
// int8 kernels of the fast level and with the runq-style rung (the rest of the step: the fast
// level's fp32 kernels in both), against the fp32 model decoded in turn with them (the ratios
// printed first: the three rows face the same load) and the fp32 table's median; with OpenMP and
// two CPUs (max_threads 2), the best int8 kernels on two threads too, in turn with the others,
// with the ratio 2 threads / 1 thread and a check that both decode the same greedy tokens. kv_bytes: the
// KV cache a decode step reads at the average position (fp32 in both models).
static void int8_rows(const tw_model *m32, int *seq, int P, int n_dec, int repeats,
                      const char *fast_level, double fp32_dec, double kv_bytes, long l2, long l3,
                      int max_threads) {
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
    const double wbytes = int8_bytes_per_token(&m8, q8best, gs), token_bytes = wbytes + kv_bytes;
    read_buffer rb;
    read_buffer_init(&rb, token_bytes);
    printf("int8: Q8_0 in groups of %d (as ./quantize writes it), every Linear layer in int8 with "
           "activations quantized; the rest of the step at the %s level\n", gs, fast_level);
    printf("%-8s %-12s %15s %15s\n", "level", "int8 kernels", "prefill tok/s", "decode tok/s");
    // the runq-style rung, the best int8 kernels, the fp32 model again (one thread each), and the
    // best int8 kernels on two threads (when built with OpenMP and there are two CPUs), in turn
    const int two = max_threads >= 2, n_rows = two ? 4 : 3;
    const tw_model *const ms[4] = { &m8, &m8, m32, &m8 };
    const tw_q8_ops *const ops[4] = { &RUNQ_STYLE, NULL, NULL, NULL };
    const int threads[4] = { 1, 1, 1, 2 };
    double pre[4][MAX_REPEATS], dec[4][MAX_REPEATS], gbs[MAX_REPEATS], roof[MAX_REPEATS];
    measure_in_turn(pre, dec, gbs, ms, ops, threads, n_rows, &rb, seq, P, n_dec, repeats);
    tw_threads_set(1);
    rooflines(roof, gbs, repeats, token_bytes);
    const spread vs_fp32 = paired_ratio(dec[1], dec[2], repeats);
    const spread vs_runq = paired_ratio(dec[1], dec[0], repeats);
    const spread of_roof = paired_ratio(dec[1], roof, repeats);
    double dec_med[4];
    for (int r = 0; r < n_rows; r++) {
        const double p = median(pre[r], repeats);
        dec_med[r] = median(dec[r], repeats);
        printf("%-8s %-12s %15.1f %15.1f%s\n", fast_level, r == 0 ? RUNQ_STYLE.level : r == 2 ? "fp32" : q8best->level,
               p, dec_med[r], r == 2 ? "   (the fp32 model, in turn with the two rows above)"
                              : r == 3 ? "   (2 threads, in turn with the rows above)" : "");
    }
    printf("int8 decode %s: %.2fx our fp32 decode (%s, in turn; range %.2fx - %.2fx; %.2fx the fp32 table's "
           "median above), %.2fx the runq-style rung (range %.2fx - %.2fx) (goals for the 15M shape: >= 3x and >= 3x)%s\n",
           q8best->level, vs_fp32.median, fast_level, vs_fp32.lo, vs_fp32.hi, dec_med[1] / fp32_dec,
           vs_runq.median, vs_runq.lo, vs_runq.hi,
           !tw_q8_matvec_is_simd(q8best, gs) && !tw_q8_packs(q8best, gs) ? " [this group size is not one the SIMD kernels "
           "take: they run the naive loop]" : "");
    printf("int8 roofline: a decode token reads %.2f MiB: %.2f MiB of int8 weights and scales%s and %.2f MiB of "
           "KV cache; footprint level %s; read stream over that footprint, beside each repeat: %.1f GB/s "
           "(median) -> %.1f tok/s\n", token_bytes / 1048576.0, wbytes / 1048576.0,
           tw_q8_packs(q8best, gs) ? " (the packed copies the kernels read)" : "", kv_bytes / 1048576.0,
           footprint_level(token_bytes, l2, l3), median(gbs, repeats), median(roof, repeats));
    if (two) {
        const spread two_over_one = paired_ratio(dec[3], dec[1], repeats);
        printf("int8 decode %s, 2 threads / 1 thread: %.2fx (range %.2fx - %.2fx) (goal for the 15M shape: >= 1.6x)\n",
               q8best->level, two_over_one.median, two_over_one.lo, two_over_one.hi);
        int8_threads_check(&m8, seq, P, n_dec);
    }
    print_read_ways(&rb);
    printf("  %s int8 decode: %.0f%% of the read roofline (median of the repeats; range %.0f%% - %.0f%%)\n",
           q8best->level, 100.0 * of_roof.median, 100.0 * of_roof.lo, 100.0 * of_roof.hi);
    if (of_roof.hi > 1.0)
        note_above_roofline();
    if (rb.sink == 12345.0f) printf(" \n");
    read_buffer_free(&rb);
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
    cf[nc++] = (config){ .rung = "naive", .level = "naive", .autovec = 0, .threads = 1, .with_cache = 1 };
    cf[nc++] = (config){ .rung = "autovec", .level = fast_level, .autovec = 1, .threads = 1, .with_cache = 1 };
    cf[nc++] = (config){ .rung = fast_level, .level = fast_level, .autovec = 0, .threads = 1, .with_cache = 1 };
    const int i_naive = 0, i_auto1 = 1, i_best1 = 2;
    int i_auto2 = -1, i_best2 = -1;
    if (max_threads >= 2) {
        i_auto2 = nc; cf[nc++] = (config){ .rung = "autovec", .level = fast_level, .autovec = 1, .threads = 2, .with_cache = 1 };
        i_best2 = nc; cf[nc++] = (config){ .rung = fast_level, .level = fast_level, .autovec = 0, .threads = 2, .with_cache = 1 };
    }
    const int i_nocache = nc;
    cf[nc++] = (config){ .rung = fast_level, .level = fast_level, .autovec = 0, .threads = 1, .with_cache = 0 };
    for (int k = 0; k < nc; k++) {
        cf[k].tokens = malloc((size_t)n_dec * sizeof(int));
        if (!cf[k].tokens) { fprintf(stderr, "bench_generate: out of memory\n"); return 1; }
    }
    // What a decode step reads: every weight once and the cached keys and values of every
    // position so far once (attention), at the average position of the decode; the read stream
    // runs over a buffer of that size, so its bandwidth comes from the level (L2, L3, DRAM) where
    // they live, measured beside every repeat with the fast level's kernels (read_gbs_now).
    const double wbytes = weight_bytes_per_token(c);
    const double cache_kv = 4.0 * 2.0 * c->n_layer * (P + n_dec / 2) * c->block.attn.n_kv_head *
                            ((double)c->block.attn.head_dim);
    const double token_bytes = wbytes + cache_kv;
    const long l2 = bench_cache_bytes(2), l3 = bench_cache_bytes(3);
    read_buffer rb;
    read_buffer_init(&rb, token_bytes);
    for (int rep = -1; rep < repeats; rep++)   // rep -1: the warm-up (page-in, caches, clocks)
        for (int k = 0; k < nc; k++) run_config(&cf[k], rep, &m, seq, P, n_dec, &rb, fast_level);

    // The per-run rooflines (each from the read passes right beside that run: the bandwidth of
    // its own moment) and the ratios, before the medians below sort the arrays.
    double roof1[MAX_REPEATS], roof1_auto[MAX_REPEATS], roof2[MAX_REPEATS];
    rooflines(roof1, cf[i_best1].gbs, repeats, token_bytes);
    rooflines(roof1_auto, cf[i_auto1].gbs, repeats, token_bytes);
    const spread vs_naive = paired_ratio(cf[i_best1].dec, cf[i_naive].dec, repeats);
    const spread vs_auto1 = paired_ratio(cf[i_best1].dec, cf[i_auto1].dec, repeats);
    const spread of_roof1 = paired_ratio(cf[i_best1].dec, roof1, repeats);
    const spread auto_of_roof1 = paired_ratio(cf[i_auto1].dec, roof1_auto, repeats);
    spread vs_auto2 = { 0 }, scale2 = { 0 }, of_roof2 = { 0 };
    if (i_best2 >= 0) {
        rooflines(roof2, cf[i_best2].gbs, repeats, token_bytes);
        vs_auto2 = paired_ratio(cf[i_best2].dec, cf[i_auto2].dec, repeats);
        scale2 = paired_ratio(cf[i_best2].dec, cf[i_best1].dec, repeats);
        of_roof2 = paired_ratio(cf[i_best2].dec, roof2, repeats);
    }

    printf("%-8s %-9s %7s  %-30s %-30s\n", "rung", "kv cache", "threads", "prefill tok/s", "decode tok/s");
    double dec_med[6];
    for (int k = 0; k < nc; k++) {
        double plo, phi, dlo, dhi;
        min_max(cf[k].pre, repeats, &plo, &phi);
        min_max(cf[k].dec, repeats, &dlo, &dhi);
        const double pre_med = median(cf[k].pre, repeats);
        dec_med[k] = median(cf[k].dec, repeats);
        char pb[64], db[64];
        snprintf(pb, sizeof pb, "%9.1f [%.1f - %.1f]", pre_med, plo, phi);
        snprintf(db, sizeof db, "%9.1f [%.1f - %.1f]", dec_med[k], dlo, dhi);
        printf("%-8s %-9s %7d  %-30s %-30s\n", cf[k].rung, cf[k].with_cache ? "yes" : "no", cf[k].threads, pb, db);
    }
    printf("(autovec = %s with its matvec replaced by bench/autovec.c: `for i: for k: y[i] += W[i][k] x[k]`, "
           "-O3 -ffast-math -march=native)\n", fast_level);
    if (i_best2 >= 0)
        printf("check: %s decodes the same %d greedy tokens with 1 and 2 threads: %s\n", fast_level, n_dec,
               memcmp(cf[i_best1].tokens, cf[i_best2].tokens, (size_t)n_dec * sizeof(int)) == 0 ? "yes" : "NO");

    printf("roofline: a decode token reads %.2f MiB: %.2f MiB of weights and %.2f MiB of KV cache at "
           "the average position; footprint level %s (L2 %ld KiB per core, L3 %ld KiB)\n",
           token_bytes / 1048576.0, wbytes / 1048576.0, cache_kv / 1048576.0,
           footprint_level(token_bytes, l2, l3), l2 / 1024, l3 / 1024);
    double rd_lo, rd_hi;
    min_max(cf[i_best1].gbs, repeats, &rd_lo, &rd_hi);
    printf("roofline: read stream over that footprint (the faster of two ways with the %s kernels), beside each run, "
           "median [min - max]: 1 thread %.1f GB/s [%.1f - %.1f] -> %.1f tok/s", fast_level,
           median(cf[i_best1].gbs, repeats), rd_lo, rd_hi, median(roof1, repeats));
    if (i_best2 >= 0)
        printf("; 2 threads %.1f GB/s -> %.1f tok/s", median(cf[i_best2].gbs, repeats), median(roof2, repeats));
    printf("%s\n", rb.sink == 12345.0f ? " " : "");
    print_read_ways(&rb);

    // Each goal as the median of the per-repeat ratios (both sides measured in the same repeat, so
    // a slow second of a shared machine cancels), with their range.
    printf("goals (decode; the median of the per-repeat ratios of this run, with their range):\n");
    printf("  %s / naive, 1 thread: %.2fx [%.2fx - %.2fx]\n", fast_level, vs_naive.median, vs_naive.lo, vs_naive.hi);
    printf("  %s / autovec, 1 thread: %.2fx [%.2fx - %.2fx] (goal >= 1.0x)\n", fast_level,
           vs_auto1.median, vs_auto1.lo, vs_auto1.hi);
    printf("  %s, 1 thread: %.0f%% [%.0f%% - %.0f%%] of the 1-thread read roofline (goal for the 15M shape: >= 90%%)\n",
           fast_level, 100.0 * of_roof1.median, 100.0 * of_roof1.lo, 100.0 * of_roof1.hi);
    printf("  autovec, 1 thread: %.0f%% [%.0f%% - %.0f%%] of the 1-thread read roofline\n",
           100.0 * auto_of_roof1.median, 100.0 * auto_of_roof1.lo, 100.0 * auto_of_roof1.hi);
    if (i_best2 >= 0) {
        printf("  %s / autovec, 2 threads: %.2fx [%.2fx - %.2fx]\n", fast_level, vs_auto2.median,
               vs_auto2.lo, vs_auto2.hi);
        printf("  %s, 2 threads / 1 thread: %.2fx [%.2fx - %.2fx] (goal >= 1.8x on an idle machine); "
               "%.0f%% [%.0f%% - %.0f%%] of the 2-thread read roofline\n", fast_level, scale2.median,
               scale2.lo, scale2.hi, 100.0 * of_roof2.median, 100.0 * of_roof2.lo, 100.0 * of_roof2.hi);
    }
    printf("  %s without the KV cache: %.1f tok/s (every step recomputes the prefix)\n", fast_level,
           dec_med[i_nocache]);
    if (of_roof1.hi > 1.0 || auto_of_roof1.hi > 1.0 || of_roof2.hi > 1.0)
        note_above_roofline();
    for (int k = 0; k < nc; k++) free(cf[k].tokens);
    read_buffer_free(&rb);
    tw_threads_set(1);   // the int8 rows: one thread (and the best on two), against the 1-thread fp32 decode
    int8_rows(&m, seq, P, n_dec, repeats, fast_level, dec_med[i_best1], cache_kv, l2, l3, max_threads);
    free(seq);
    tw_model_free(&m);
    return 0;
}
