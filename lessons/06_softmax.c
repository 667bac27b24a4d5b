// Lesson 6: softmax: turning scores into probabilities, safely.
//
// Teaches: softmax(z)_i = exp(z_i) / sum_j exp(z_j) turns any real scores into positive numbers
// that sum to 1; the textbook formula overflows for scores like 1000 (exp(1000) = inf in float and
// inf/inf = NaN), and subtracting the row's maximum first fixes it without changing the answer;
// temperature divides the scores before the softmax (0.5 sharpens, 2 flattens); and the causal
// mask is an additive -inf, which exp turns into an exact 0.
// Also checks two quoted answers a learner may meet, one of which is wrong.
// Calls: tw_softmax_rows, tw_print_matrix, tw_npy_write_f32, tw_write_labelled_matrix.
// Build & run: make lesson6 && ./lesson6 [--seed N] [-T N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/06_temperature.gp     (reads out/lesson6/temperature.dat)
//              gnuplot viz/06_causal.gp          (reads out/lesson6/causal_weights.dat)
// Writes: temperature.npy temperature.dat causal_scores.npy causal_weights.npy
// Writes: causal_weights.dat
// Pictures: temperature.png causal_weights.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    6, "Softmax: stability, temperature and the causal mask",
    "Attention weights and next-token probabilities both come out of a softmax. This lesson computes "
    "softmax by hand and with tw_softmax_rows, shows the textbook formula breaking on the scores "
    "[1000, 1000.1, 1000.2] (and that an answer you may meet for them, [0.0900, 0.2447, 0.6652], is "
    "the softmax of different numbers), sweeps the temperature from 0.5 to 2 and shows how the "
    "distribution sharpens or flattens, and builds a causal mask with -inf so each position can "
    "only attend to itself and the past."
};

// The textbook formula, in float, as a reader would first write it: no max subtraction.
static void softmax_naive(float *y, const float *x, int n) {
    float sum = 0.0f;
    for (int j = 0; j < n; j++) sum += expf(x[j]);
    for (int j = 0; j < n; j++) y[j] = expf(x[j]) / sum;
}

// The same in double after subtracting the max: the yardstick the lib result is compared to.
static void softmax_double(double *y, const float *x, int n, double temperature) {
    double max = x[0], sum = 0.0;
    for (int j = 1; j < n; j++) if (x[j] > max) max = x[j];
    for (int j = 0; j < n; j++) { y[j] = exp((x[j] - max) / temperature); sum += y[j]; }
    for (int j = 0; j < n; j++) y[j] /= sum;
}

static double entropy_bits(const float *p, int n) {
    double h = 0.0;
    for (int j = 0; j < n; j++) if (p[j] > 0) h -= p[j] * log2(p[j]);
    return h;
}

static const float Z[3] = { 2.0f, 1.0f, 0.1f };   // the scores of sections 1 and 3
enum { NT = 60 };                                 // temperatures in the picture's sweep

// 1. The definition: exp, then divide by the sum.
static void scores_to_probabilities(void) {
    lesson_section("Scores in, probabilities out");
    const float *z = Z;
    float p[3];
    lesson_say("Take three scores z = [2, 1, 0.1]. Exponentiate each (exp makes everything "
               "positive and widens gaps), then divide by the sum so they add up to 1:");
    double ez[3], ezsum = 0.0;
    for (int j = 0; j < 3; j++) { ez[j] = exp(z[j]); ezsum += ez[j]; }
    printf("  exp(z)           = [%.4f, %.4f, %.4f]   sum %.4f\n", ez[0], ez[1], ez[2], ezsum);
    printf("  exp(z) / sum     = [%.4f, %.4f, %.4f]\n", ez[0] / ezsum, ez[1] / ezsum, ez[2] / ezsum);
    tw_softmax_rows(p, z, 1, 3, 1.0f);
    printf("  tw_softmax_rows  = [%.4f, %.4f, %.4f]   sum %.7f\n", (double)p[0], (double)p[1],
           (double)p[2], (double)(p[0] + p[1] + p[2]));
    float want[3] = { (float)(ez[0] / ezsum), (float)(ez[1] / ezsum), (float)(ez[2] / ezsum) };
    lesson_expect_close("tw_softmax_rows == exp / sum", p, want, 3, 1e-7f);
    lesson_note("the biggest score gets the biggest share, but not all of it: softmax is a soft "
                "version of \"pick the max\" (an argmax would give [1, 0, 0]).");

}

// 2. The textbook formula overflows at scores near 1000; subtracting the maximum does not.
static void subtract_the_maximum(void) {
    lesson_section("Why the maximum is subtracted first");
    const float big[3] = { 1000.0f, 1000.1f, 1000.2f };
    float naive[3], stable[3];
    softmax_naive(naive, big, 3);
    tw_softmax_rows(stable, big, 1, 3, 1.0f);
    lesson_say("Now z = [1000, 1000.1, 1000.2]. The largest float is about 3.4e38, and exp(1000) "
               "is about 2e434, so expf(1000) = %g. The textbook formula then divides inf by inf:",
               (double)expf(1000.0f));
    // print NaN the same way everywhere (glibc writes "-nan", macOS "nan")
    printf("  naive exp(z) / sum        = [%s, %s, %s]\n", isnan(naive[0]) ? "nan" : "number",
           isnan(naive[1]) ? "nan" : "number", isnan(naive[2]) ? "nan" : "number");
    lesson_say("Softmax does not change if the same number is subtracted from every score "
               "(it cancels between the top and the bottom of the fraction). Subtracting the max "
               "gives z - max = [-0.2, -0.1, 0]: every exp is at most 1 and nothing overflows.");
    printf("  stable (tw_softmax_rows)  = [%.4f, %.4f, %.4f]\n", (double)stable[0],
           (double)stable[1], (double)stable[2]);
    double ref[3];
    softmax_double(ref, big, 3, 1.0);
    float reff[3] = { (float)ref[0], (float)ref[1], (float)ref[2] };
    lesson_expect("the naive formula gives NaN here", isnan(naive[0]) && isnan(naive[2]));
    lesson_expect_close("stable softmax == float64 reference", stable, reff, 3, 1e-6f);
    const float quoted[3] = { 0.0900f, 0.2447f, 0.6652f };
    const float z012[3] = { 0.0f, 1.0f, 2.0f };
    float p012[3];
    tw_softmax_rows(p012, z012, 1, 3, 1.0f);
    lesson_say("A claim you may meet: for this input softmax gives tensor([0.0900, 0.2447, "
               "0.6652]). That is wrong: it is the softmax of scores one apart, [1000, 1001, 1002] (or [0, 1, 2]: "
               "%.4f, %.4f, %.4f). Scores 0.1 apart are much closer to uniform: %.4f, %.4f, %.4f. "
               "Only differences between scores matter, and these differences are small.",
               (double)p012[0], (double)p012[1], (double)p012[2],
               (double)stable[0], (double)stable[1], (double)stable[2]);
    lesson_expect_close("the quoted numbers are softmax([0,1,2])", p012, quoted, 3, 5e-5f);
    lesson_expect("the quoted numbers are not softmax([1000,1000.1,1000.2])",
                  fabsf(stable[2] - quoted[2]) > 0.1f);

}

// 3. Temperature against a quoted table. Returns the picture's sweep (NT, 5), tracked.
static float *temperature(void) {
    lesson_section("Temperature: dividing the scores before the softmax");
    const float *z = Z;
    lesson_say("Sampling divides the logits by a temperature tau: softmax(z / tau). A small tau "
               "stretches the gaps (sharper, towards argmax), a large tau shrinks them (flatter, "
               "towards uniform). Entropy, in bits, measures the flatness: log2(3) = %.3f bits is "
               "uniform over three choices, 0 is certain.", log2(3.0));
    static const float TAUS[] = { 0.5f, 0.75f, 1.0f, 1.5f, 2.0f };
    // A quoted temperature table gives three of these; -1 marks "not given".
    static const float QUOTED[][3] = { { 0.84f, 0.11f, 0.04f }, { -1, -1, -1 },
                                      { 0.67f, 0.24f, 0.09f }, { -1, -1, -1 },
                                      { 0.51f, 0.31f, 0.19f } };
    printf("  %5s   %7s %7s %7s   %7s   %s\n", "tau", "p(2)", "p(1)", "p(0.1)", "entropy",
           "a quoted table says");
    float quoted_off[5] = { 0 };
    int temps_ok = 1;
    for (int i = 0; i < 5; i++) {
        float pt[3];
        double r[3];
        tw_softmax_rows(pt, z, 1, 3, TAUS[i]);
        softmax_double(r, z, 3, TAUS[i]);
        for (int j = 0; j < 3; j++) if (fabs(pt[j] - r[j]) > 1e-6) temps_ok = 0;
        printf("  %5.2f   %7.4f %7.4f %7.4f   %7.3f   ", (double)TAUS[i], (double)pt[0],
               (double)pt[1], (double)pt[2], entropy_bits(pt, 3));
        if (QUOTED[i][0] < 0) { printf("-\n"); continue; }
        for (int j = 0; j < 3; j++) quoted_off[i] = fmaxf(quoted_off[i], fabsf(pt[j] - QUOTED[i][j]));
        // the quoted table rounds to 2 decimals, so a correct entry is off by at most 0.005
        printf("[%.2f, %.2f, %.2f]  off by up to %.3f%s\n", (double)QUOTED[i][0],
               (double)QUOTED[i][1], (double)QUOTED[i][2], (double)quoted_off[i],
               quoted_off[i] > 0.0051f ? " (more than rounding)" : " (rounding)");
    }
    lesson_expect("every temperature row matches float64 within 1e-6", temps_ok);
    float p05[3];
    tw_softmax_rows(p05, z, 1, 3, 0.5f);
    lesson_say("At tau = 0.5 the scores become [4, 2, 0.2], so the last probability is "
               "exp(0.2) / (exp(4) + exp(2) + exp(0.2)) = %.4f, not the quoted table's 0.04: that row "
               "is off by %.3f. Its rows for tau = 1 and 2 are close but not correctly rounded "
               "either (the same source's first example, [0.66, 0.24, 0.10], is right). Halving "
               "the temperature squares the odds: p(2)/p(1) goes from e = %.2f to "
               "e^2 = %.2f.", (double)p05[2], (double)quoted_off[0], exp(1.0), exp(2.0));
    lesson_expect("the quoted tau = 0.5 row is off by more than 0.02", quoted_off[0] > 0.02f);
    lesson_expect_near("softmax([2,1,0.1] / 0.5)[0] = 0.8638", p05[0], 0.8638, 5e-5);

    // a fine sweep for the picture
    float *sweep = lesson_alloc(NT * 5);                               // (NT, 5)
    for (int i = 0; i < NT; i++) {
        float tau = 0.1f + 0.05f * (float)i;                           // 0.1 .. 3.05
        float pt[3];
        tw_softmax_rows(pt, z, 1, 3, tau);
        float row[5] = { tau, pt[0], pt[1], pt[2], (float)entropy_bits(pt, 3) };
        memcpy(sweep + i * 5, row, sizeof row);
    }
    return sweep;
}

// 4. The causal mask as an additive -inf on random scores (T, T). Returns the weights (T, T)
// and sets *scores_out to the masked scores (both tracked).
static float *causal_mask(float **scores_out, int T, uint64_t seed) {
    lesson_section("The causal mask is an additive -inf");
    lesson_say("In a language model position t may only look at positions 0..t: the future is "
               "what it must predict. Attention enforces this by adding -inf to the score of every "
               "later position (column s > row t) before the softmax. exp(-inf) = %g exactly, so "
               "those weights are exactly zero and the rest still sum to 1.", (double)expf(-INFINITY));
    float *scores = lesson_randn((long)T * T, 1.0f, seed);             // (T, T)
    for (int t = 0; t < T; t++)
        for (int s = t + 1; s < T; s++) scores[t * T + s] = -INFINITY;
    float *w = lesson_alloc((long)T * T);                              // (T, T)
    tw_softmax_rows(w, scores, T, T, 1.0f);
    lesson_print_matrix("scores with the causal mask", scores, T, T);
    lesson_print_causal("softmax weights", w, T, T);
    int upper_zero = 1, rows_one = 1;
    for (int t = 0; t < T; t++) {
        double sum = 0.0;
        for (int s = 0; s < T; s++) {
            sum += w[t * T + s];
            if (s > t && w[t * T + s] != 0.0f) upper_zero = 0;
        }
        if (fabs(sum - 1.0) > 1e-6) rows_one = 0;
    }
    lesson_expect("every weight above the diagonal is exactly 0", upper_zero);
    lesson_expect("every row sums to 1 (within 1e-6)", rows_one);
    lesson_expect("row 0 can only attend to itself: weight 1", w[0] == 1.0f);
    lesson_note("row 0 has a single visible score, so its weight is 1 whatever the score was. A "
                "row where everything is masked has no softmax at all (0/0); tw_softmax_rows "
                "returns zeros for it rather than NaN, so such a row contributes nothing.");
    float allmasked[3] = { -INFINITY, -INFINITY, -INFINITY }, am[3];
    tw_softmax_rows(am, allmasked, 1, 3, 1.0f);
    lesson_expect("a fully masked row becomes zeros, not NaN", am[0] == 0.0f && am[2] == 0.0f);
    *scores_out = scores;
    return w;
}

// The sweep and the causal example as .npy and for gnuplot.
static void write_files(const float *sweep, const float *scores, const float *w, int T) {
    lesson_section("Files");
    lesson_write_npy2("temperature.npy", sweep, NT, 5);
    static const char *const TCOLS[5] = { "tau", "p_2", "p_1", "p_0.1", "entropy_bits" };
    lesson_write_columns("temperature.dat", sweep, NT, 5, TCOLS,
                         "lesson 6: softmax([2, 1, 0.1] / tau) for tau from 0.1 to 3.05");
    lesson_write_npy2("causal_scores.npy", scores, T, T);
    lesson_write_npy2("causal_weights.npy", w, T, T);
    const char **lab = lesson_alloc_bytes((size_t)T * sizeof *lab);
    for (int t = 0; t < T; t++) {
        char buf[16];
        snprintf(buf, sizeof buf, "pos%d", t);
        lab[t] = lesson_strdup(buf);
    }
    lesson_write_matrix_dat("causal_weights.dat", w, T, T, lab, lab,
                            "lesson 6: causal softmax weights; rows: query position t, columns: "
                            "key position s, value: weight (0 above the diagonal)");
    lesson_plot("06_temperature.gp", "temperature.dat", "temperature.png");
    lesson_plot("06_causal.gp", "causal_weights.dat", "causal_weights.png");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 6, .T = 6 }, NULL);
    scores_to_probabilities();
    subtract_the_maximum();
    float *sweep = temperature();
    float *scores;
    float *w = causal_mask(&scores, a.T, a.seed);
    write_files(sweep, scores, w, a.T);
    lesson_say("Try it: make exercise5 (softmax with a temperature), make exercise3 (a stable softmax)");
    return lesson_finish();
}
