// Lesson 15: quantization, int8 and int4 weights.
//
// Teaches: absmax scaling (s = max|w| / 127, q = round(w / s), w ~ q s) worked by hand on one row;
// that the rounding error of every weight lies within half a step, s/2, spread evenly over it
// (a histogram), except the group's largest value, which is exact; how the error grows with the
// group size (16, 32, 64, 128, a whole row) and why one outlier ruins a per-row scale; int4 with
// the same scheme for contrast (16x coarser steps); what Qwen3-8B's weights weigh at fp32, bf16,
// int8 and int4 (scales included) from the parameter counter; and, indicatively, how fast the
// int8 matrix-vector kernel runs against the fp32 one on this machine.
// The error budget on a real model (stories260K: largest logit error, KL, perplexity, greedy
// agreement), twice: with the int8 weights read back into the fp32 forward pass (weights only),
// and with the int8 forward pass ./generate runs on a version-2 file (activations quantized too).
// Calls: tw_quant_groups, tw_dequant_groups, tw_q8_quantize, tw_q4_quantize, tw_q8_ops_for,
//        tw_q8_linear, tw_q8_packs (and the level's pack, matvec_packed), tw_q8_quantize_x,
//        tw_q8_matvec_is_simd, tw_kernels_for, tw_hf_config_from_json, tw_params_count,
//        tw_llama2c_load,
//        tw_q8file_from_model, tw_q8file_to_model, tw_model_q8_free, tw_tokenizer_encode,
//        tw_q8_budget_measure.
// Build & run: make lesson15 && ./lesson15 [--out DIR] [--no-plot]
// Plot:        gnuplot viz/15_rounding_error.gp   (reads out/lesson15/rounding_error.dat)
//              gnuplot viz/15_group_size.gp       (reads out/lesson15/group_size.dat)
// Needs: data/configs/Qwen3-8B.json data/models/stories260K.bin data/models/tok512.bin
// Writes: rounding_error.dat group_size.dat memory.dat speed.txt budget.txt
// Pictures: rounding_error.png group_size.png
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include "lesson.h"
#include "quant/q8_0.h"
#include "quant/model_q8.h"
#include "simd/simd.h"
#include "simd/q8.h"
#include "nn/reference.h"
#include "quant/q8model.h"
#include "quant/q8budget.h"

static const lesson_info INFO = {
    15, "Quantization: int8 and int4 weights",
    "Decoding one token reads every weight once, so its speed is set by the bytes of weights. "
    "Storing each weight as an 8-bit integer with one float scale per group of 32 (llama2.c's "
    "Q8_0) reads (32 + 4) / (4 x 32) = 28% of the fp32 bytes: a quarter, plus the scales. Small "
    "models need small groups (stories260K's width 64 and 172 take groups of 4), where the scale "
    "weighs as much as the weights: (4 + 4) / 16 = half. This lesson quantizes one row by hand, shows where the "
    "rounding error goes (a histogram), how it grows with the group size and why one outlier "
    "spoils a whole row's scale, contrasts int4, prices Qwen3-8B at fp32/bf16/int8/int4, and times "
    "the int8 kernel against the fp32 one on this machine (indicative only), and measures what "
    "int8 costs stories260K, weights only and with activations quantized as ./generate runs it: "
    "logit error, KL, perplexity and greedy agreement."
};

enum { ROWS = 256, COLS = 256, N_BINS = 40 };

// ---- 1. by hand ----

static void absmax_by_hand(void) {
    lesson_section("Absmax scaling by hand, one row of 8 weights");
    const float w[8] = { 0.12f, -0.50f, 0.031f, 0.254f, -0.07f, 0.0f, 0.44f, -0.199f };
    float amax = 0;
    for (int i = 0; i < 8; i++) amax = fmaxf(amax, fabsf(w[i]));
    const float s = amax / 127.0f;
    lesson_say("The largest magnitude in the row is %.3f, so the scale is s = %.3f / 127 = %.6f: "
               "the step between neighbouring int8 values. Each weight becomes q = round(w / s), "
               "an integer in [-127, 127], and is read back as q * s.", amax, amax, s);
    int8_t q_hand[8], q_lib[8];
    float back[8], s_lib;
    printf("    %10s %10s %6s %10s %12s\n", "w", "w / s", "q", "q * s", "error");
    for (int i = 0; i < 8; i++) {
        q_hand[i] = (int8_t)rintf(w[i] / s);
        back[i] = (float)q_hand[i] * s;
        printf("    %10.4f %10.3f %6d %10.6f %12.2e\n", w[i], w[i] / s, q_hand[i], back[i], w[i] - back[i]);
    }
    lesson_note("The largest weight maps to exactly -127 and comes back exact; every other one moves "
                "by at most s/2 = %.2e.", 0.5 * s);
    tw_quant_groups(q_lib, &s_lib, w, 1, 8, TW_Q8_MAX);   // the library does the same
    lesson_expect("the library's q equals the hand computation", memcmp(q_hand, q_lib, 8) == 0 && s_lib == s);
    float worst = 0;
    for (int i = 0; i < 8; i++) worst = fmaxf(worst, fabsf(w[i] - back[i]));
    lesson_expect("every error is within half a step", worst <= 0.5f * s * 1.000001f);
}

// ---- 2. where the error goes ----

static void rounding_error_histogram(const float *W) {
    lesson_section("Where the rounding error goes: a histogram");
    const int gs = 32;
    int8_t *q = lesson_alloc_bytes(ROWS * COLS);
    float *s = lesson_alloc(ROWS * COLS / gs), *back = lesson_alloc(ROWS * COLS);
    LESSON_TRY(tw_q8_quantize(q, s, W, ROWS, COLS, gs));
    tw_dequant_groups(back, q, s, ROWS * COLS / gs, gs);
    // error in units of the group's step: (w - q s) / s, which must lie in [-1/2, 1/2]
    float *hist = lesson_alloc(N_BINS * 3);
    long zeros = 0;
    float worst = 0;
    for (long i = 0; i < (long)ROWS * COLS; i++) {
        float e = (W[i] - back[i]) / s[i / gs];
        worst = fmaxf(worst, fabsf(e));
        if (fabsf(e) <= 1e-5f) zeros++;   // exact up to the float rounding of q * s
        int b = (int)floorf((e + 0.5f) * N_BINS);   // bins of width 1/40 over [-1/2, 1/2]
        if (b < 0) b = 0;
        if (b >= N_BINS) b = N_BINS - 1;
        hist[b * 3 + 1] += 1;
    }
    for (int b = 0; b < N_BINS; b++) {
        hist[b * 3 + 0] = -0.5f + ((float)b + 0.5f) / N_BINS;              // bin centre
        hist[b * 3 + 2] = (float)(ROWS * COLS - zeros) / N_BINS;          // flat, the maxima aside
    }
    const char *cols[3] = { "error_in_steps", "count", "flat_expectation" };
    lesson_write_columns("rounding_error.dat", hist, N_BINS, 3, cols,
                         "lesson 15: (w - q s) / s for 65,536 weights ~ N(0, 0.02^2), int8, groups of 32");
    lesson_say("%d x %d weights drawn from N(0, 0.02^2) are quantized in groups of 32. Measured in "
               "steps of their own group, the errors fill [-1/2, 1/2] evenly: rounding to the nearest "
               "integer leaves a uniform remainder. The bar at 0 is taller by the %d group maxima, "
               "which come back exactly, up to the float rounding of 127 * (max / 127) (%ld errors "
               "below 1e-5 steps).", ROWS, COLS, ROWS * COLS / gs, zeros);
    lesson_expect("no error exceeds half a step", worst <= 0.5f + 1e-5f);
    lesson_expect("every group's maximum comes back exact (to 1e-5 steps)", zeros >= ROWS * COLS / gs);
    lesson_plot("15_rounding_error.gp", "rounding_error.dat", "rounding_error.png");
}

// ---- 3. group size and outliers ----

// Root-mean-square and largest |w - dequant(quant(w))| with groups of gs and qmax.
static void quant_error(double *rms, double *mx, const float *W, int gs, int qmax) {
    int8_t *q = lesson_alloc_bytes(ROWS * COLS);
    float *s = lesson_alloc(ROWS * COLS / gs), *back = lesson_alloc(ROWS * COLS);
    if (qmax == TW_Q8_MAX) LESSON_TRY(tw_q8_quantize(q, s, W, ROWS, COLS, gs));
    else LESSON_TRY(tw_q4_quantize(q, s, W, ROWS, COLS, gs));
    tw_dequant_groups(back, q, s, ROWS * COLS / gs, gs);
    double sum = 0, m = 0;
    for (long i = 0; i < (long)ROWS * COLS; i++) {
        double e = fabs((double)W[i] - back[i]);
        sum += e * e;
        if (e > m) m = e;
    }
    *rms = sqrt(sum / ((double)ROWS * COLS));
    *mx = m;
}

static void error_vs_group_size(const float *W, const float *W_out) {
    lesson_section("Error against group size, and the outlier problem");
    const int gss[5] = { 16, 32, 64, 128, COLS };
    float *table = lesson_alloc(5 * 5);
    printf("    %-12s %14s %14s %18s %18s\n", "group size", "RMS error", "max error", "RMS, with outlier",
           "max, with outlier");
    int grows = 1;
    for (int i = 0; i < 5; i++) {
        double r, m, ro, mo;
        quant_error(&r, &m, W, gss[i], TW_Q8_MAX);
        quant_error(&ro, &mo, W_out, gss[i], TW_Q8_MAX);
        char label[32];
        snprintf(label, sizeof label, i == 4 ? "%d (row)" : "%d", gss[i]);
        printf("    %-12s %14.3e %14.3e %18.3e %18.3e\n", label, r, m, ro, mo);
        float rowv[5] = { (float)gss[i], (float)r, (float)m, (float)ro, (float)mo };
        memcpy(table + i * 5, rowv, sizeof rowv);
        if (i > 0 && r < table[(i - 1) * 5 + 1] * 0.999f) grows = 0;
    }
    const char *cols[5] = { "group_size", "rms", "max", "rms_outlier", "max_outlier" };
    lesson_write_columns("group_size.dat", table, 5, 5, cols,
                         "lesson 15: int8 error vs group size; outlier: one weight of 1.0 (50 sigma) per row");
    lesson_say("Larger groups share one scale among more weights, and the scale is set by the largest "
               "of them, so the step grows with the group: the error of a whole-row scale is %.1fx "
               "that of groups of 16. Real weight matrices have outliers. Put one weight of 1.0 (50 "
               "standard deviations) in every row: with one scale per row, the step becomes 1/127 for "
               "all 255 other weights of that row, and the RMS error grows %.0fx. With groups of 32 "
               "only the outlier's own group pays: %.1fx.", table[4 * 5 + 1] / table[1],
               table[4 * 5 + 3] / table[4 * 5 + 1], table[1 * 5 + 3] / table[1 * 5 + 1]);
    lesson_expect("the error grows with the group size", grows);
    lesson_expect("an outlier multiplies a per-row scale's error by more than 10",
                  table[4 * 5 + 3] > 10 * table[4 * 5 + 1]);
    lesson_expect("groups of 32 contain it better than a per-row scale",
                  table[1 * 5 + 3] < 0.5f * table[4 * 5 + 3]);
    lesson_plot("15_group_size.gp", "group_size.dat", "group_size.png");
}

// ---- 4. int4 ----

static void int4_contrast(const float *W) {
    lesson_section("int4 with the same scheme, for contrast");
    double r8, m8, r4, m4;
    quant_error(&r8, &m8, W, 32, TW_Q8_MAX);
    quant_error(&r4, &m4, W, 32, TW_Q4_MAX);
    lesson_say("With 4 bits the integers run from -7 to 7 (keeping the range symmetric), so the step "
               "is max/7 instead of max/127, about 18 times coarser. In groups of 32: RMS error "
               "%.3e for int8, %.3e for int4 (%.1fx). Practical int4 formats therefore use smaller "
               "groups, extra scales or offsets, and are chosen per tensor with care; int8 with "
               "groups of 32 is close to lossless for most models.", r8, r4, r4 / r8);
    lesson_expect("int4's error is 10-30x int8's (127/7 = 18.1 expected)", r4 / r8 > 10 && r4 / r8 < 30);
    int8_t q4[8], q8[8];
    float s4, s8, b4[8], b8[8];
    tw_quant_groups(q8, &s8, W, 1, 8, TW_Q8_MAX);
    tw_quant_groups(q4, &s4, W, 1, 8, TW_Q4_MAX);
    tw_dequant_groups(b8, q8, &s8, 1, 8);
    tw_dequant_groups(b4, q4, &s4, 1, 8);
    lesson_print_vector("first 8 weights", W, 8);
    lesson_print_vector("int8, group of 8", b8, 8);
    lesson_print_vector("int4, group of 8", b4, 8);
}

// ---- 5. memory ----

static void memory_table(void) {
    lesson_section("What Qwen3-8B weighs");
    const char *file = "data/configs/Qwen3-8B.json";
    char err[512];
    tw_json *root = NULL;
    tw_hf_config cfg;
    tw_param_counts n;
    if (tw_json_read_file(&root, file, err, sizeof err) != TW_OK) lesson_die("%s", err);
    tw_status st = tw_hf_config_from_json(&cfg, root, err, sizeof err);
    tw_json_free(root);
    if (st != TW_OK) lesson_die("%s: %s", file, err);
    LESSON_TRY(tw_params_count(&n, &cfg));
    // Matrices are quantized; norms and biases (a tiny share) stay in fp32, as llama2.c does.
    const int64_t mats = n.tok_embed + n.pos_embed + n.lm_head +
                         cfg.n_layer * (n.q + n.k + n.v + n.o + n.gate + n.up + n.down);
    const int64_t rest = n.total - mats;
    const double gs = 32;
    const double bytes[4] = { 4.0 * n.total, 2.0 * n.total, mats * (1 + 4 / gs) + 4.0 * rest,
                              mats * (0.5 + 4 / gs) + 4.0 * rest };
    const char *fmt[4] = { "fp32", "bf16", "int8 (Q8_0, gs 32)", "int4 (gs 32)" };
    float *table = lesson_alloc(4 * 2);
    lesson_say("The parameter counter (lesson 10) finds %lld parameters in Qwen3-8B, %lld of them in "
               "weight matrices. At int8 each matrix weight takes 1 byte plus 4 bytes of scale per "
               "group of 32 (1.125 bytes); at int4 half a byte plus the same scales (0.625 bytes); "
               "norms stay in fp32.", (long long)n.total, (long long)mats);
    printf("    %-20s %18s %10s %14s\n", "format", "bytes", "GiB", "bytes/param");
    for (int i = 0; i < 4; i++) {
        printf("    %-20s %18.0f %10.2f %14.3f\n", fmt[i], bytes[i], bytes[i] / 1073741824.0, bytes[i] / (double)n.total);
        table[i * 2] = (float)i;
        table[i * 2 + 1] = (float)(bytes[i] / 1073741824.0);
    }
    const char *cols[2] = { "format(0=fp32,1=bf16,2=int8,3=int4)", "GiB" };
    lesson_write_columns("memory.dat", table, 4, 2, cols, "lesson 15: Qwen3-8B weight memory");
    lesson_note("On a 16 GB GPU or laptop: int8 leaves room for the KV cache and activations, bf16 "
                "barely fits, fp32 (%.1f GiB) does not.", bytes[0] / 1073741824.0);
    lesson_expect("Qwen3-8B has 8,190,735,360 parameters (its published total)", n.total == 8190735360LL);
    lesson_expect("fp32 = 4 bytes per parameter", bytes[0] == 4.0 * 8190735360.0);
}

// ---- 6. speed ----

// Microseconds per product of the level's packed layout (the copy a model state makes once:
// sixteen rows interleaved, docs/quantization.md), quantizing x included, best of 3 batches; y
// receives the product. 0 if the level has no packed layout for gs.
static double packed_us(float *y, const tw_q8_ops *i8, const int8_t *Wq, const float *Ws,
                        const float *x, int8_t *xq, float *xs, int N, int K, int gs, int reps) {
    if (!tw_q8_packs(i8, gs)) return 0;
    // 64-byte aligned, as a model state's copy is: calloc's 16-byte alignment would make every
    // 64-byte load of weights straddle two cache lines (1.5 to 1.7x slower, docs/quantization.md)
    unsigned char *raw = lesson_alloc_bytes(i8->packed_bytes(N, K, gs) + 63);
    void *P = raw + (64 - (uintptr_t)raw % 64) % 64;
    int32_t *scratch = lesson_alloc_bytes((size_t)K * sizeof *scratch);
    i8->pack(P, Wq, Ws, N, K, gs);
    double best = 1e9;
    for (int trial = 0; trial < 3; trial++) {
        double t0 = lesson_seconds();
        for (int r = 0; r < reps; r++) {
            tw_q8_quantize_x(i8, xq, xs, x, K / gs, gs);
            i8->matvec_packed(y, P, scratch, xq, xs, N, K, gs);
        }
        best = fmin(best, (lesson_seconds() - t0) / reps);
    }
    return best * 1e6;
}

// One shape timed three ways, microseconds per product, best of 3 batches of reps: the fp32
// matvec, the int8 level's row-major kernels (quantizing x included) and its packed layout (0 if
// it has none). y32, y8 and yp receive the three products (N each).
typedef struct { double fp32, int8, packed; } product_us;

static product_us time_products(float *y32, float *y8, float *yp, const tw_kernels *f32,
                                const tw_q8_ops *i8, const float *Wf, const int8_t *Wq,
                                const float *Ws, const float *x, int8_t *xq, float *xs, int N,
                                int K, int gs, int reps) {
    product_us t = { 1e9, 1e9, 0 };
    for (int trial = 0; trial < 3; trial++) {
        double t0 = lesson_seconds();
        for (int r = 0; r < reps; r++) f32->matvec(y32, Wf, x, N, K);
        double t1 = lesson_seconds();
        for (int r = 0; r < reps; r++) tw_q8_linear(i8, y8, xq, xs, Wq, Ws, x, N, K, gs);
        double t2 = lesson_seconds();
        t.fp32 = fmin(t.fp32, (t1 - t0) / reps * 1e6);
        t.int8 = fmin(t.int8, (t2 - t1) / reps * 1e6);
    }
    t.packed = packed_us(yp, i8, Wq, Ws, x, xq, xs, N, K, gs, reps);
    return t;
}

// stories260K's w1 (172 x 64) in groups of 4, the only size its widths allow (section 7): one
// 32-bit lane's worth of bytes per group, which the int8 kernels of lib/simd/q8_g4_*.c use.
static void speed_groups_of_4(const tw_kernels *f32, const tw_q8_ops *i8) {
    const int N = 172, K = 64, gs = 4, reps = 3000;
    float *Wf = lesson_uniform((long)N * K, -0.1f, 0.1f, 17), *x = lesson_uniform(K, -1, 1, 18);
    float *y32 = lesson_alloc(N), *y8 = lesson_alloc(N), *Ws = lesson_alloc(N * K / gs), *xs = lesson_alloc(K / gs);
    int8_t *Wq = lesson_alloc_bytes((size_t)N * K), *xq = lesson_alloc_bytes(K);
    LESSON_TRY(tw_q8_quantize(Wq, Ws, Wf, N, K, gs));
    const product_us t = time_products(y32, y8, y8, f32, i8, Wf, Wq, Ws, x, xq, xs, N, K, gs, reps);
    lesson_say("stories260K's w1 (172 x 64) in groups of 4 (%s): fp32 %.3f us, int8 %.3f us: %.2fx. "
               "A scale per 4 weights costs a float conversion, multiply and add per 4 products, "
               "where groups of 32 pay them once per 32.",
               tw_q8_matvec_is_simd(i8, gs) ? "the group-size-4 kernels" : "the naive int8 loop",
               t.fp32, t.int8, t.fp32 / t.int8);
    if (t.packed > 0)
        lesson_say("The packed layout in groups of 4: %.3f us: %.2fx fp32.", t.packed, t.fp32 / t.packed);
}

static void speed(void) {
    lesson_section("How fast, on this machine (indicative only)");
    const int N = 768, K = 288, gs = 32, reps = 300;   // the 15M model's w1
    float *Wf = lesson_uniform((long)N * K, -0.1f, 0.1f, 15), *x = lesson_uniform(K, -1, 1, 16);
    float *y32 = lesson_alloc(N), *y8 = lesson_alloc(N), *yp = lesson_alloc(N);
    float *Ws = lesson_alloc(N * K / gs), *xs = lesson_alloc(K / gs);
    int8_t *Wq = lesson_alloc_bytes((size_t)N * K), *xq = lesson_alloc_bytes(K);
    LESSON_TRY(tw_q8_quantize(Wq, Ws, Wf, N, K, gs));
    const tw_kernels *f32 = tw_kernels_for("auto");
    const tw_q8_ops *i8 = tw_q8_ops_for("auto");
    const product_us t = time_products(y32, y8, yp, f32, i8, Wf, Wq, Ws, x, xq, xs, N, K, gs, reps);
    char text[800];
    int len = snprintf(text, sizeof text,
             "# lesson 15: y = W x, W (768, 288), one thread, best of 3 batches of %d (indicative only)\n"
             "fp32 level %s: %.2f us\nint8 level %s: %.2f us (including quantizing x)\nratio: %.2fx\n",
             reps, f32->level, t.fp32, i8->level, t.int8, t.fp32 / t.int8);
    if (t.packed > 0)
        snprintf(text + len, sizeof text - (size_t)len,
                 "int8 level %s, packed layout: %.2f us (including quantizing x)\nratio: %.2fx\n",
                 i8->level, t.packed, t.fp32 / t.packed);
    lesson_write_text("speed.txt", text);
    lesson_say("The 15M model's w1 (768 x 288): fp32 (%s kernel) %.2f us per product, int8 (%s "
               "kernel, quantizing x included) %.2f us: %.2fx. These weights (0.9 MB in fp32) sit "
               "in cache, so this measures arithmetic more than memory; `make bench` measures "
               "properly, with the peak of the integer units.", f32->level, t.fp32, i8->level,
               t.int8, t.fp32 / t.int8);
    if (t.packed > 0)
        lesson_say("A quantized model runs a faster layout of the same int8 numbers: sixteen rows "
                   "interleaved, so each lane of the %s dot-product instruction holds one row's "
                   "group sum and nothing has to be folded across lanes (docs/quantization.md). "
                   "%.2f us: %.2fx fp32.", i8->level, t.packed, t.fp32 / t.packed);
    speed_groups_of_4(f32, i8);
    // The product itself must be right: within the int8 error of the weights and of x, checked
    // against fp32 (a generous 2% of sum |w x|: the relative error of Q8_0 with groups of 32 is
    // far below it, about 0.4% for each operand at these sizes).
    int ok = 1;
    for (int i = 0; i < N; i++) {
        double a = 0;
        for (int k = 0; k < K; k++) a += fabs((double)Wf[(long)i * K + k] * x[k]);
        if (!(fabs((double)y8[i] - y32[i]) <= 0.02 * a)) ok = 0;
        if (t.packed > 0 && !(fabs((double)yp[i] - y32[i]) <= 0.02 * a)) ok = 0;
    }
    lesson_expect("int8 y (both layouts) agrees with fp32 y within 2% of sum |w x|", ok);
}

// ---- 7. the error budget on a real model ----

// The held-out text (written for this lesson, not taken from the training stories).
static const char HELD_OUT[] =
    "Tom had a small red boat. Every morning he took it to the pond and watched it float on the "
    "water. One day the wind pushed the boat far away, and Tom ran around the pond to catch it. "
    "When he got it back, he smiled and hugged his mom. The next day his sister Mia wanted to play "
    "with the boat too. Tom was sad at first, but then he let her hold the string. They laughed "
    "together as the boat went round and round.";

static void print_budget(const char *label, const tw_q8_budget *b) {
    printf("    %-34s %12.4g %12.4g %10.4f %10.4f %+9.3f%% %6d of %d\n", label, b->max_logit_err,
           b->mean_kl, b->ppl_ref, b->ppl_test, 100 * (b->ppl_test / b->ppl_ref - 1), b->agree, b->steps);
}

static void error_budget(void) {
    lesson_section("What int8 costs a real model: stories260K");
    const char *model = "data/models/stories260K.bin", *tokfile = "data/models/tok512.bin";
    char err[512];
    tw_model m32, m8, mw;   // fp32; int8 (weights and activations); int8 weights only
    if (tw_llama2c_load(&m32, model, err, sizeof err) != TW_OK) lesson_die("%s", err);
    tw_tokenizer tok;
    if (tw_tokenizer_load(&tok, tokfile, m32.cfg.vocab, err, sizeof err) != TW_OK) lesson_die("%s", err);
    const int widths[2] = { m32.cfg.block.attn.d_model, m32.cfg.block.ffn_hidden };
    const int gs = tw_quant_fit_group(widths, 2, 64);   // 4 here: 64 does not divide F = 172

    // The int8 model is what ./quantize writes and ./generate runs: the version-2 file built in
    // memory and read back (embeddings dequantized, every Linear layer in int8).
    tw_q8file q;
    if (tw_q8file_from_model(&q, &m32, gs, err, sizeof err) != TW_OK) lesson_die("%s", err);
    if (tw_q8file_to_model(&m8, &q, err, sizeof err) != TW_OK) lesson_die("%s", err);
    if (tw_q8file_to_model(&mw, &q, err, sizeof err) != TW_OK) lesson_die("%s", err);
    tw_model_q8_free(&mw);   // the same dequantized weights, run by the fp32 forward pass
    tw_q8file_free(&q);

    int max_tok = (int)tw_tokenizer_max_tokens(HELD_OUT), T = 0;
    int *text = lesson_alloc_bytes(sizeof(int) * (size_t)max_tok);
    LESSON_TRY(tw_tokenizer_encode(&tok, text, &T, max_tok, HELD_OUT, 1, 0));
    const char *prompt = "Once upon a time";
    const int steps = 200, pmax = (int)tw_tokenizer_max_tokens(prompt);
    int n_prompt = 0, *ptoks = lesson_alloc_bytes(sizeof(int) * (size_t)pmax);
    LESSON_TRY(tw_tokenizer_encode(&tok, ptoks, &n_prompt, pmax, prompt, 1, 0));

    tw_q8_budget bw, b8;
    LESSON_TRY(tw_q8_budget_measure(&bw, &m32, &mw, text, T, ptoks, n_prompt, steps));
    LESSON_TRY(tw_q8_budget_measure(&b8, &m32, &m8, text, T, ptoks, n_prompt, steps));

    lesson_say("stories260K with every weight matrix in int8, groups of %d (64 does not divide its "
               "FFN width 172, so ./quantize halves it until it divides 64 and 172), compared with "
               "the fp32 model on a held-out text of %d tokens, and the greedy story after \"%s\". "
               "Two rows: the int8 weights read back into the fp32 forward pass (weights only), "
               "and the int8 forward pass itself, which also quantizes every activation vector "
               "entering a Linear layer, in the same groups (what ./generate runs).", gs, T, prompt);
    printf("    %-34s %12s %12s %10s %10s %10s %s\n", "", "max|dlogit|", "KL nats", "ppl fp32",
           "ppl int8", "change", "greedy agree");
    print_budget("int8 weights only (fp32 matvec)", &bw);
    print_budget("int8 weights and activations", &b8);
    char report[1024];
    snprintf(report, sizeof report,
             "# lesson 15: stories260K, Q8_0 groups of %d, held-out text of %d tokens, greedy %d tokens from \"%s\"\n"
             "# row: max|logit error| mean_KL(fp32||int8)_nats ppl_fp32 ppl_int8 greedy_agree\n"
             "weights_only %.6g %.6g %.6f %.6f %d\nweights_and_activations %.6g %.6g %.6f %.6f %d\n",
             gs, T, steps, prompt, bw.max_logit_err, bw.mean_kl, bw.ppl_ref, bw.ppl_test, bw.agree,
             b8.max_logit_err, b8.mean_kl, b8.ppl_ref, b8.ppl_test, b8.agree);
    lesson_write_text("budget.txt", report);
    lesson_note("Activation quantization adds its own rounding on top of the weights'; with groups of "
                "%d it is fine-grained (one scale per %d values), so the two rows stay close.", gs, gs);
    lesson_expect("int8 perplexity within 1% of fp32", fabs(b8.ppl_test / b8.ppl_ref - 1) < 0.01);
    lesson_expect("the int8 KL divergence is small (below 0.01 nats)", b8.mean_kl >= 0 && b8.mean_kl < 0.01);
    tw_tokenizer_free(&tok);
    tw_model_free(&mw);
    tw_model_free(&m8);
    tw_model_free(&m32);
}

int main(int argc, char **argv) {
    lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 15 }, NULL);
    absmax_by_hand();

    float *W = lesson_randn((long)ROWS * COLS, 0.02f, 1515);      // (ROWS, COLS) weights
    float *W_out = lesson_alloc((long)ROWS * COLS);               // the same, one outlier per row
    memcpy(W_out, W, sizeof(float) * ROWS * COLS);
    for (int r = 0; r < ROWS; r++) W_out[(long)r * COLS + (r * 37) % COLS] = 1.0f;

    rounding_error_histogram(W);
    error_vs_group_size(W, W_out);
    int4_contrast(W);
    memory_table();
    speed();
    error_budget();
    lesson_say("Try it: make exercise19 (Q8_0: quantizing one group)");
    return lesson_finish();
}
