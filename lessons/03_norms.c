// Lesson 3: normalisation, LayerNorm against RMSNorm.
//
// Teaches: both norms rescale each token's vector (each row) on its own; LayerNorm subtracts the
// row's mean and divides by its standard deviation, RMSNorm only divides by the root mean square,
// so a row with a large common offset stays offset after RMSNorm; the learned gain (and LayerNorm's
// bias) come back afterwards: 2C parameters against C, which is a rounding error in a real model;
// and what each call costs, timed on this machine against the "50% less compute" claim.
// Calls: tw_layernorm_forward, tw_rmsnorm_forward, tw_print_matrix, tw_npy_write_f32.
// Build & run: make lesson3 && ./lesson3 [--seed N] [-T N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/03_norm_stats.gp      (reads out/lesson3/norm_stats.dat)
// Writes: x.npy layernorm.npy rmsnorm.npy affine.npy norm_stats.npy norm_stats.dat timing.dat
// Pictures: norm_stats.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    3, "Normalisation: LayerNorm vs RMSNorm",
    "Deep networks keep adding to the same vectors, so their scale drifts from layer to layer. A "
    "norm layer puts every token's vector back on a fixed scale before the next sub-layer reads it. "
    "This lesson builds rows with very different means and spreads, runs LayerNorm (2017, GPT-2) "
    "and RMSNorm (Llama, Qwen) on the same rows, prints each row's mean, standard deviation and "
    "root mean square before and after, works one row out by hand, counts the parameters (2C vs C) "
    "and times both calls on a (T, 4096) input."
};

// Mean, standard deviation (biased, as the norms use) and root mean square of one row.
static void row_stats(const float *x, int C, double *mean, double *std, double *rms) {
    double m = 0.0, ss = 0.0;
    for (int c = 0; c < C; c++) { m += x[c]; ss += (double)x[c] * x[c]; }
    m /= C;
    double v = 0.0;
    for (int c = 0; c < C; c++) v += (x[c] - m) * (x[c] - m);
    *mean = m;
    *std = sqrt(v / C);
    *rms = sqrt(ss / C);
}

// Why a LayerNorm row's std is a little under 1 (e.g. 0.9996): the division is by
// sqrt(var + eps), not sqrt(var), so the output's std is sqrt(var / (var + eps)). Explained on
// the row with the smallest spread, where eps matters most.   x, ln: (T, C)
static void explain_eps(const float *x, const float *ln, int T, int C, float eps) {
    int t_min = 0;
    double s_min = 1e30;
    for (int t = 0; t < T; t++) {
        double m, s, r;
        row_stats(x + (long)t * C, C, &m, &s, &r);
        if (s < s_min) { s_min = s; t_min = t; }
    }
    double m1, s1, r1;
    row_stats(ln + (long)t_min * C, C, &m1, &s1, &r1);
    double want = sqrt(s_min * s_min / (s_min * s_min + eps));
    lesson_note("why row %d's LayerNorm std is %.4f, not 1: the row is divided by sqrt(var + eps), "
                "not by sqrt(var). Its std is %.4f, so var = %.3e, and the output's std is "
                "sqrt(var / (var + eps)) = sqrt(%.3e / %.3e) = %.4f. eps = %g keeps a constant "
                "row (var = 0) from dividing by zero; it only shows on rows whose spread is small.",
                t_min, s1, s_min, s_min * s_min, s_min * s_min, s_min * s_min + eps, want,
                (double)eps);
    // float32 statistics of 64 values: agree with the double formula to ~1e-6; 1e-5 is loose.
    lesson_expect_near("smallest-spread row: LN std == sqrt(var / (var + eps))", s1, want, 1e-5);
}

// Best time of `reps` calls of one norm, in microseconds.
static double time_norm(int rmsnorm, float *out, const float *x, const float *g, const float *b,
                        int T, int C, int reps) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = lesson_seconds();
        if (rmsnorm) tw_rmsnorm_forward(out, NULL, x, g, T, C, 1e-5f);
        else         tw_layernorm_forward(out, NULL, NULL, x, g, b, T, C, 1e-5f);
        double dt = lesson_seconds() - t0;
        if (dt < best) best = dt;
    }
    return best * 1e6;
}

enum { NS = 10 };   // columns of the statistics table

// What the sections share: the rows and both norms of them (tracked memory).
typedef struct {
    int T, C;
    float eps;
    float *x;            // (T, C) the input rows
    float *ln, *rn;      // (T, C) LayerNorm(x) and RMSNorm(x), gain 1
    float *mean, *rstd;  // (T) LayerNorm's statistics
    float *stats;        // (T, NS) per-row statistics before and after
    float *aff;          // (T, C) LayerNorm with gamma 2, beta 0.5
} norms;

// 1. Rows with very different offsets and spreads.
static void make_rows(norms *n, uint64_t seed) {
    const int T = n->T, C = n->C;
    lesson_section("Activations with very different scales");
    lesson_say("We make T = %d rows (tokens) of C = %d numbers: row t is offset[t] + spread[t] * "
               "noise, with noise drawn from N(0, 1). Inside a real model such differences come "
               "from residual additions piling up over the layers.", T, C);
    static const float OFFSET[] = { 0.0f, 3.0f, -2.0f, 0.0f, 10.0f, 0.0f };
    static const float SPREAD[] = { 1.0f, 0.5f, 2.0f, 8.0f, 1.0f, 0.1f };
    float *x = lesson_randn((long)T * C, 1.0f, seed);                    // (T, C)
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++)
            x[t * C + c] = OFFSET[t % 6] + SPREAD[t % 6] * x[t * C + c];
    lesson_print_matrix("x", x, T, C);
    n->x = x;
}

// 2. LayerNorm and RMSNorm of the same rows, gain 1.
static void both_norms(norms *n) {
    const int T = n->T, C = n->C;
    const float eps = n->eps, *x = n->x;
    lesson_section("LayerNorm and RMSNorm on the same rows");
    lesson_say("  LayerNorm: y = (x - mean) / sqrt(var + eps) * gamma + beta\n"
               "  RMSNorm:   y = x / sqrt(mean(x^2) + eps) * weight\n"
               "Both run with gain 1 (and beta 0) for now, eps = %g.", (double)eps);
    float *ones = lesson_alloc(C), *ln = lesson_alloc((long)T * C), *rn = lesson_alloc((long)T * C);
    for (int c = 0; c < C; c++) ones[c] = 1.0f;
    float *mean = lesson_alloc(T), *rstd = lesson_alloc(T), *rms = lesson_alloc(T);
    tw_layernorm_forward(ln, mean, rstd, x, ones, NULL, T, C, eps);
    tw_rmsnorm_forward(rn, rms, x, ones, T, C, eps);
    lesson_print_matrix("layernorm(x)", ln, T, C);
    lesson_print_matrix("rmsnorm(x)", rn, T, C);
    n->ln = ln;
    n->rn = rn;
    n->mean = mean;
    n->rstd = rstd;
}

// 3. Each row's mean, std and rms before and after, in a table (kept for norm_stats.dat).
static void row_statistics(norms *n) {
    const int T = n->T, C = n->C;
    const float eps = n->eps, *x = n->x, *ln = n->ln, *rn = n->rn;
    lesson_section("Row statistics before and after");
    float *stats = lesson_alloc((long)T * NS);                          // (T, 10)
    printf("  %3s | %8s %7s %7s | %8s %7s | %8s %7s %7s\n", "row", "mean", "std", "rms",
           "LN mean", "LN std", "RMS mean", "RMS std", "RMS rms");
    int ln_ok = 1, rms_ok = 1;
    for (int t = 0; t < T; t++) {
        double m0, s0, r0, m1, s1, r1, m2, s2, r2;
        row_stats(x + t * C, C, &m0, &s0, &r0);
        row_stats(ln + t * C, C, &m1, &s1, &r1);
        row_stats(rn + t * C, C, &m2, &s2, &r2);
        printf("  %3d | %8.3f %7.3f %7.3f | %8.1e %7.4f | %8.4f %7.4f %7.4f\n",
               t, m0, s0, r0, m1, s1, m2, s2, r2);
        float row[NS] = { (float)t, (float)m0, (float)s0, (float)r0, (float)m1, (float)s1,
                          (float)r1, (float)m2, (float)s2, (float)r2 };
        memcpy(stats + t * NS, row, sizeof row);
        // eps shrinks the std below 1 by var/(var+eps): at most 1e-5/0.01 = 1e-3 for these rows
        if (fabs(m1) > 1e-5 || fabs(s1 - 1.0) > 1e-3) ln_ok = 0;
        if (fabs(r2 - 1.0) > 1e-3) rms_ok = 0;
    }
    lesson_expect("LayerNorm rows have mean 0 and std 1", ln_ok);
    lesson_expect("RMSNorm rows have root mean square 1", rms_ok);
    if (T > 4) {
        double m, s, r;
        row_stats(rn + 4 * C, C, &m, &s, &r);
        lesson_note("look at row 4 (offset 10, spread 1): LayerNorm removes the offset, but "
                    "after RMSNorm the row is still almost constant, mean %.3f with std %.3f. "
                    "RMSNorm divides by the rms, which the offset dominates, and never centres. "
                    "It works in practice because the model learns not to rely on a large "
                    "common offset.", m, s);
        lesson_expect("RMSNorm keeps row 4's offset (mean > 0.9)", m > 0.9);
    }
    lesson_note("every row, whatever its scale (std 0.1 or 8), leaves with the same scale: that "
                "is the whole point of a norm layer.");
    explain_eps(x, ln, T, C, eps);
    n->stats = stats;
}

// 4. One row's LayerNorm by hand against the library's.
static void one_row_by_hand(const norms *n) {
    const int T = n->T, C = n->C;
    const float eps = n->eps, *x = n->x, *ln = n->ln, *mean = n->mean, *rstd = n->rstd;
    const int r = T > 1 ? 1 : 0;   // row 1 (offset 3, spread 0.5), or row 0 with -T 1
    const float *xr = x + (long)r * C;
    lesson_section("One row by hand");
    double s = 0.0;
    for (int c = 0; c < C; c++) s += xr[c];
    double m = s / C, v = 0.0;
    for (int c = 0; c < C; c++) v += (xr[c] - m) * (xr[c] - m);
    v /= C;
    double rs = 1.0 / sqrt(v + eps);
    lesson_say("Row %d: mean = sum / C = %.6f / %d = %.6f; variance = mean of squared deviations "
               "= %.6f (divided by C, not C-1, as PyTorch's LayerNorm); 1/sqrt(var + eps) = %.6f. "
               "Its first output is (x[%d][0] - mean) * rstd = (%.6f - %.6f) * %.6f = %.6f.",
               r, s, C, m, v, rs, r, (double)xr[0], m, rs, (xr[0] - m) * rs);
    lesson_expect_near("hand mean == tw_layernorm_forward's mean", m, mean[r], 1e-6);
    lesson_expect_near("hand rstd == tw_layernorm_forward's rstd", rs, rstd[r], 1e-5 * rs);
    float hand0 = (float)((xr[0] - m) * rs);
    lesson_expect_close("hand y[r][0] == layernorm y[r][0]", &hand0, ln + (long)r * C, 1, 1e-6f);
}

// 5. The learned gain and bias, and what the norms' parameters amount to in a real model.
static void gain_and_bias(norms *n) {
    const int T = n->T, C = n->C;
    const float eps = n->eps, *x = n->x;
    lesson_section("The learned gain and bias, and what they cost");
    lesson_say("After normalising, the layer multiplies by a learned gain per column (gamma or "
               "weight, C numbers) and LayerNorm also adds a learned bias (beta, C numbers). With "
               "gamma = 2 and beta = 0.5 every LayerNorm row gets std 2 and mean 0.5: the model can "
               "choose any scale per feature, but it is the same for every token.");
    float *g2 = lesson_alloc(C), *b2 = lesson_alloc(C), *aff = lesson_alloc((long)T * C);
    for (int c = 0; c < C; c++) { g2[c] = 2.0f; b2[c] = 0.5f; }
    tw_layernorm_forward(aff, NULL, NULL, x, g2, b2, T, C, eps);
    double am, as, ar;
    const int r3 = T > 3 ? 3 : T - 1;
    row_stats(aff + (long)r3 * C, C, &am, &as, &ar);
    printf("  row %d after gamma = 2, beta = 0.5: mean %.4f, std %.4f\n", r3, am, as);
    lesson_expect_near("affine row has mean 0.5", am, 0.5, 1e-5);
    const long qwen_norm = 36L * 2 * 4096 + 4096 + 36L * 2 * 128;
    lesson_say("Parameters: LayerNorm has 2C (gamma and beta), RMSNorm C. For C = 4096 that is "
               "8192 against 4096: RMSNorm does halve the norm's parameters, as a claim you may meet says (\"half the "
               "parameters\"), "
               "but all of Qwen3-8B's norms together (2 per layer x 36 layers, the final norm, and "
               "the 128-wide QK-norms on q and k in each layer) hold %ld parameters, %.4f%% of its "
               "8,190,735,360. The saving that matters is speed, not memory.",
               qwen_norm, 100.0 * qwen_norm / 8190735360.0);
    n->aff = aff;
}

// 6. Time per call of both norms on a (16, 4096) input: timing.dat only, never the .npy files.
static void time_per_call(uint64_t seed) {
    lesson_section("Time per call on this machine");
    const int Tt = 16, Ct = 4096, reps = 100;
    float *xt = lesson_randn((long)Tt * Ct, 1.0f, seed + 1), *yt = lesson_alloc((long)Tt * Ct);
    float *gt = lesson_alloc(Ct), *bt = lesson_alloc(Ct);
    for (int c = 0; c < Ct; c++) gt[c] = 1.0f;
    double us_ln = time_norm(0, yt, xt, gt, bt, Tt, Ct, reps);
    double us_rms = time_norm(1, yt, xt, gt, NULL, Tt, Ct, reps);
    printf("  input (%d, %d), best of %d calls:\n", Tt, Ct, reps);
    printf("    LayerNorm  %8.1f us per call  (%.2f ns per element)\n", us_ln, 1e3 * us_ln / (Tt * Ct));
    printf("    RMSNorm    %8.1f us per call  (%.2f ns per element)\n", us_rms, 1e3 * us_rms / (Tt * Ct));
    lesson_say("RMSNorm took %.0f%% of LayerNorm's time here. A claim you may meet promises "
               "\"~50%% less compute\"; that is not what a measurement shows. LayerNorm reads each row three "
               "times (mean, variance, output) and RMSNorm twice, so somewhat less is expected; "
               "both are tiny next to the matrix multiplications around them (one 4096x4096 "
               "projection of the same 16 rows is 2*16*4096*4096 = %.2f GFLOPs). These are the "
               "plain reference loops; timings vary from run to run and machine to machine, so "
               "they go to timing.dat, never into the .npy files.",
               100.0 * us_rms / us_ln, 2.0 * 16 * 4096 * 4096 * 1e-9);
    char timing[512];
    snprintf(timing, sizeof timing,
             "# lesson 3: best time of %d calls on a (%d, %d) input; varies between runs\n"
             "# norm microseconds_per_call ns_per_element\n"
             "LayerNorm %.3f %.4f\nRMSNorm %.3f %.4f\n",
             reps, Tt, Ct, us_ln, 1e3 * us_ln / (Tt * Ct), us_rms, 1e3 * us_rms / (Tt * Ct));
    lesson_write_text("timing.dat", timing);
}

// The rows, both norms and the statistics as .npy; the statistics for gnuplot.
static void write_files(const norms *n) {
    const int T = n->T, C = n->C;
    const float *x = n->x, *ln = n->ln, *rn = n->rn, *aff = n->aff, *stats = n->stats;
    lesson_section("Files");
    lesson_write_npy2("x.npy", x, T, C);
    lesson_write_npy2("layernorm.npy", ln, T, C);
    lesson_write_npy2("rmsnorm.npy", rn, T, C);
    lesson_write_npy2("affine.npy", aff, T, C);
    lesson_write_npy2("norm_stats.npy", stats, T, NS);
    static const char *const COLS[NS] = { "row", "mean_in", "std_in", "rms_in", "mean_ln",
                                          "std_ln", "rms_ln", "mean_rms", "std_rms", "rms_rms" };
    lesson_write_columns("norm_stats.dat", stats, T, NS, COLS,
                         "lesson 3: per-row statistics of x, LayerNorm(x) and RMSNorm(x), "
                         "gain 1, bias 0");
    lesson_plot("03_norm_stats.gp", "norm_stats.dat", "norm_stats.png");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 3, .T = 6 }, NULL);
    norms n = { .T = a.T, .C = 64, .eps = 1e-5f };
    make_rows(&n, a.seed);
    both_norms(&n);
    row_statistics(&n);
    one_row_by_hand(&n);
    gain_and_bias(&n);
    time_per_call(a.seed);
    write_files(&n);
    lesson_say("Try it: make exercise6 (LayerNorm and RMSNorm)");
    return lesson_finish();
}
