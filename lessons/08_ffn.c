// Lesson 8: the feed-forward network, classic and SwiGLU.
//
// Teaches: after attention mixes information between positions, the FFN transforms each position
// on its own: expand to F hidden units, apply a non-linearity, project back. The activations
// (ReLU, GELU, SiLU) drawn side by side; the gated SwiGLU form silu(x Wg^T) * (x Wu^T) used by
// Llama and Qwen, worked step by step against the library; and why a SwiGLU hidden size of
// 2/3 * 4C keeps the parameter count of the classic 4C FFN, with real sizes (Llama 2, stories260K,
// Qwen3-8B, whose 12288 is not the 14336 a hand count you may meet uses).
// Calls: tw_relu1, tw_gelu_erf1, tw_gelu_tanh1, tw_silu1, tw_activation, tw_silu,
//        tw_ffn_forward, tw_swiglu_forward, tw_linear_forward, tw_linear_params.
// Build & run: make lesson8 && ./lesson8 [--seed N] [-T N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/08_activations.gp     (reads out/lesson8/activations.dat)
// Writes: activations.npy activations.dat ffn_x.npy ffn_hidden.npy ffn_out.npy
// Writes: swiglu_gate.npy swiglu_up.npy swiglu_act.npy swiglu_out.npy
// Pictures: activations.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    8, "The feed-forward network: classic and SwiGLU",
    "Every transformer block ends with a feed-forward network applied to each position separately: "
    "Linear up to F hidden units, a non-linearity, Linear back down to C. This lesson draws ReLU, "
    "GELU and SiLU, runs the classic FFN (2017, GPT-2) and the gated SwiGLU FFN (Llama, Qwen) step "
    "by step and compares each with the library, and works out why SwiGLU models use a hidden "
    "size of about 2/3 * 4C: three matrices of C x 8C/3 hold as many parameters as two of C x 4C. "
    "It checks real sizes: Llama-2-7B's 11008, stories260K's 172 and Qwen3-8B's 12288."
};

enum { NX = 161 };   // x from -4 to 4 in steps of 0.05

// What the sections share (tracked memory).
typedef struct {
    int T, C, F, Fg;              // positions, width, classic hidden 4C, SwiGLU hidden
    float *curves;                // (NX, 5) the activation curves
    float *x;                     // (T, C) the FFNs' input
    float *hidden, *out;          // (T, F), (T, C) the classic FFN
    float *gate, *up, *act, *sout;   // (T, Fg) x3, (T, C) SwiGLU
} ffns;

// 1. ReLU, GELU (exact and tanh) and SiLU side by side.
static void three_activations(ffns *f) {
    lesson_section("Three activations");
    lesson_say("Without a non-linearity, Linear followed by Linear is just one Linear: the FFN "
               "would add nothing. The activation is what lets it compute new features.\n"
               "  ReLU(x)  = max(0, x)                       2017 Transformer\n"
               "  GELU(x)  = x * Phi(x)   (Phi: normal CDF)  GPT-2 (tanh approximation), BERT\n"
               "  SiLU(x)  = x * sigmoid(x)                  inside SwiGLU (Llama, Qwen)");
    float *curves = lesson_alloc(NX * 5);                               // (NX, 5)
    double silu_min = 1e9, silu_argmin = 0, gelu_min = 1e9, gelu_argmin = 0, tanh_gap = 0;
    for (int i = 0; i < NX; i++) {
        float x = -4.0f + 0.05f * (float)i;
        float row[5] = { x, tw_relu1(x), tw_gelu_erf1(x), tw_gelu_tanh1(x), tw_silu1(x) };
        memcpy(curves + i * 5, row, sizeof row);
        if (row[4] < silu_min) { silu_min = row[4]; silu_argmin = x; }
        if (row[2] < gelu_min) { gelu_min = row[2]; gelu_argmin = x; }
        tanh_gap = fmax(tanh_gap, fabs((double)row[3] - row[2]));
    }
    printf("  %6s %9s %9s %11s %9s\n", "x", "ReLU", "GELU", "GELU(tanh)", "SiLU");
    static const int SHOW[] = { 0, 40, 60, 70, 75, 80, 85, 90, 100, 120, 160 };
    for (size_t j = 0; j < sizeof SHOW / sizeof SHOW[0]; j++) {
        const float *r = curves + SHOW[j] * 5;
        printf("  %6.2f %9.4f %9.4f %11.4f %9.4f\n", (double)r[0], (double)r[1], (double)r[2],
               (double)r[3], (double)r[4]);
    }
    lesson_say("Unlike ReLU, GELU and SiLU are smooth and dip below zero for negative inputs: SiLU "
               "reaches %.4f near x = %.2f, GELU %.4f near x = %.2f (on this grid of step 0.05). "
               "For large |x| all three agree: ~0 on the left, ~x on the right. GPT-2's tanh "
               "formula stays within %.1e of the exact GELU on [-4, 4].",
               silu_min, silu_argmin, gelu_min, gelu_argmin, tanh_gap);
    float hand = 1.5f / (1.0f + expf(-1.5f));
    float lib = tw_silu1(1.5f);
    lesson_expect_close("silu(1.5) == 1.5 / (1 + exp(-1.5))", &lib, &hand, 1, 1e-7f);
    lesson_expect("GELU tanh form within 1e-3 of exact GELU on [-4, 4]", tanh_gap < 1e-3);
    f->curves = curves;
}

// 2. The classic FFN: expand to 4C, activate, project back.
static void classic_ffn(ffns *f, uint64_t seed) {
    const int T = f->T, C = f->C, F = f->F;
    lesson_section("The classic FFN: expand, activate, project back");
    lesson_say("out = act(x W1^T + b1) W2^T + b2 with W1 (F, C) and W2 (C, F). With C = %d and "
               "the paper's F = 4C = %d, applied to T = %d positions:", C, F, T);
    float *x = lesson_randn((long)T * C, 1.0f, seed);                   // (T, C)
    float *W1 = lesson_randn((long)F * C, 0.35f, seed + 1), *b1 = lesson_randn(F, 0.1f, seed + 2);
    float *W2 = lesson_randn((long)C * F, 0.18f, seed + 3), *b2 = lesson_randn(C, 0.1f, seed + 4);
    float *hidden = lesson_alloc((long)T * F), *out = lesson_alloc((long)T * C);
    tw_ffn_forward(out, hidden, x, tw_weight_fp32(W1), b1, tw_weight_fp32(W2), b2, T, C, F,
                   TW_ACT_GELU_ERF);
    printf("  x (%d, %d) -> x W1^T + b1 (%d, %d) -> GELU (%d, %d) -> . W2^T + b2 (%d, %d)\n",
           T, C, T, F, T, F, T, C);
    lesson_print_matrix("x", x, T, C);
    lesson_print_matrix("hidden = gelu(x W1^T + b1)", hidden, T, F);
    lesson_print_matrix("out", out, T, C);
    // step by step with the separate library pieces
    float *h2 = lesson_alloc((long)T * F), *o2 = lesson_alloc((long)T * C);
    tw_linear_forward(h2, x, W1, b1, T, C, F);
    tw_activation(h2, h2, (long)T * F, TW_ACT_GELU_ERF);
    tw_linear_forward(o2, h2, W2, b2, T, F, C);
    lesson_expect_close("tw_ffn_forward == linear, gelu, linear", out, o2, (long)T * C, 0.0f);
    int zeros = 0;
    float *hr = lesson_alloc((long)T * F);
    tw_linear_forward(hr, x, W1, b1, T, C, F);
    tw_activation(hr, hr, (long)T * F, TW_ACT_RELU);
    for (long i = 0; i < (long)T * F; i++) zeros += hr[i] == 0.0f;
    lesson_note("with ReLU instead, %d of the %d hidden values would be exactly 0: each position "
                "switches on its own subset of hidden units.", zeros, T * F);
    f->x = x;
    f->hidden = hidden;
    f->out = out;
}

// 3. SwiGLU, step by step against tw_swiglu_forward.
static void swiglu(ffns *f, uint64_t seed) {
    lesson_section("SwiGLU: a gated FFN");
    const int T = f->T, C = f->C, Fg = f->Fg;
    const float *x = f->x;
    lesson_say("Llama and Qwen replace the first Linear by two, a gate and an up projection, and "
               "multiply them element by element (Shazeer 2020):\n"
               "  out = (silu(x Wg^T) * (x Wu^T)) Wd^T      Wg, Wu: (F, C)   Wd: (C, F), no biases\n"
               "Here F = %d (2/3 of 4C = %.1f, rounded up to a multiple of 8 as Llama rounds to a "
               "multiple of 256).", Fg, 2.0 / 3.0 * 4 * C);
    float *Wg = lesson_randn((long)Fg * C, 0.35f, seed + 5), *Wu = lesson_randn((long)Fg * C, 0.35f, seed + 6);
    float *Wd = lesson_randn((long)C * Fg, 0.2f, seed + 7);
    float *gate = lesson_alloc((long)T * Fg), *up = lesson_alloc((long)T * Fg);
    float *act = lesson_alloc((long)T * Fg), *sout = lesson_alloc((long)T * C);
    tw_swiglu_forward(sout, gate, up, act, x, tw_weight_fp32(Wg), tw_weight_fp32(Wu),
                      tw_weight_fp32(Wd), T, C, Fg);
    printf("  x (%d, %d) -> gate, up (%d, %d) each -> silu(gate) * up (%d, %d) -> . Wd^T (%d, %d)\n",
           T, C, T, Fg, T, Fg, T, C);
    lesson_print_matrix("gate = x Wg^T (before SiLU)", gate, T, Fg);
    lesson_print_matrix("up = x Wu^T", up, T, Fg);
    lesson_print_matrix("act = silu(gate) * up", act, T, Fg);
    lesson_print_matrix("out", sout, T, C);
    float *g2 = lesson_alloc((long)T * Fg), *u2 = lesson_alloc((long)T * Fg), *s2 = lesson_alloc((long)T * C);
    tw_linear_forward(g2, x, Wg, NULL, T, C, Fg);
    tw_linear_forward(u2, x, Wu, NULL, T, C, Fg);
    tw_silu(g2, g2, (long)T * Fg);
    for (long i = 0; i < (long)T * Fg; i++) g2[i] *= u2[i];
    tw_linear_forward(s2, g2, Wd, NULL, T, Fg, C);
    lesson_expect_close("tw_swiglu_forward == step by step", sout, s2, (long)T * C, 0.0f);
    lesson_note("the gate is computed from the same input: for each hidden unit and each token, "
                "silu(gate) decides how much of the linear signal \"up\" passes (near 0 when the "
                "gate is very negative). The product of two projections is what makes it "
                "\"gated\", and why it needs three matrices instead of two.");
    f->gate = gate;
    f->up = up;
    f->act = act;
    f->sout = sout;
}

// 4. Why SwiGLU's hidden size is about 2/3 * 4C, with real models' sizes.
static void two_thirds_rule(void) {
    lesson_section("Why the hidden size is about 2/3 * 4C");
    lesson_say("Classic FFN: two matrices of C x 4C = 8C^2 weights. SwiGLU: three matrices of C x F "
               "= 3CF. Equal when 3CF = 8C^2, i.e. F = 8C/3 = (2/3) * 4C. A claim you may meet writes this as "
               "\"4d -> 2 x (8d/3) = 5.33d\": the gate and up projections together are 5.33C wide, "
               "more than 4C, but the down projection is narrower, and the total is the same 8C^2. "
               "Per token the FLOPs are 2 x weights in both, so compute matches too.");
    long long classic = 2 * tw_linear_params(4096, 4 * 4096, 0);
    long long swi = 3 * tw_linear_params(4096, 11008, 0);
    printf("  %-38s %6s %7s %8s %18s\n", "model", "C", "F", "F / C", "FFN weights/layer");
    // kind 0: classic without biases, 1: SwiGLU, 2: classic with biases
    struct { const char *name; int C, F, kind; } M[] = {
        { "classic 4C, C = 4096", 4096, 16384, 0 },
        { "SwiGLU exactly 8C/3, C = 4096", 4096, 10923, 1 },
        { "Llama-2-7B (rounded to 256)", 4096, 11008, 1 },
        { "stories260K (rounded to 4)", 64, 172, 1 },
        { "Qwen3-8B (config: 12288 = 3C)", 4096, 12288, 1 },
        { "claimed \"Qwen3-8B\" 14336 (Llama-3-8B)", 4096, 14336, 1 },
        { "GPT-2 small (classic, with biases)", 768, 3072, 2 },
    };
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++) {
        long long w = M[i].kind == 1 ? 3 * tw_linear_params(M[i].C, M[i].F, 0)
                    : tw_linear_params(M[i].C, M[i].F, M[i].kind == 2) +
                      tw_linear_params(M[i].F, M[i].C, M[i].kind == 2);
        printf("  %-38s %6d %7d %8.3f %18lld\n", M[i].name, M[i].C, M[i].F,
               (double)M[i].F / M[i].C, w);
    }
    // Llama's rule: hidden = int(2 * 4C / 3), then rounded up to a multiple of multiple_of
    int llama_h = 2 * 4 * 4096 / 3, llama_f = 256 * ((llama_h + 255) / 256);
    int s260_h = 2 * 4 * 64 / 3, s260_f = 4 * ((s260_h + 3) / 4);
    lesson_say("Llama computes int(2 * 4C / 3) = %d, then rounds up to a multiple of 256: %d, "
               "Llama-2-7B's intermediate_size. The same rule with a multiple of 4 gives "
               "stories260K's %d (lesson 11 runs it). SwiGLU at 11008 has %.1f%% more weights "
               "than the classic 4C FFN.", llama_h, llama_f, s260_f,
               100.0 * ((double)swi / (double)classic - 1.0));
    lesson_expect("Llama's rule gives 11008 for C = 4096", llama_f == 11008);
    lesson_expect("the same rule with multiple 4 gives 172 for C = 64", s260_f == 172);
    lesson_say("Qwen3-8B does not follow the 2/3 rule: its config says intermediate_size 12288 = "
               "3C, so each layer's MLP holds 3 x 4096 x 12288 = %lld weights. A hand count you may "
               "meet uses 14336 (Llama-3-8B's size) and get 3 x 58.7M = 176M per layer; the correct "
               "figure is 151.0M, and over 36 layers the difference is %.2f billion parameters.",
               3 * tw_linear_params(4096, 12288, 0),
               36.0 * 3 * (double)(tw_linear_params(4096, 14336, 0) - tw_linear_params(4096, 12288, 0)) * 1e-9);
    lesson_expect("Qwen3-8B MLP weights per layer = 150,994,944",
                  3 * tw_linear_params(4096, 12288, 0) == 150994944LL);
}

// The curves and both FFNs' tensors as .npy; the curves for gnuplot.
static void write_files(const ffns *f) {
    const int T = f->T, C = f->C, F = f->F, Fg = f->Fg;
    lesson_section("Files");
    lesson_write_npy2("activations.npy", f->curves, NX, 5);
    static const char *const ACOLS[5] = { "x", "relu", "gelu", "gelu_tanh", "silu" };
    lesson_write_columns("activations.dat", f->curves, NX, 5, ACOLS,
                         "lesson 8: activation functions on [-4, 4], step 0.05");
    lesson_write_npy2("ffn_x.npy", f->x, T, C);
    lesson_write_npy2("ffn_hidden.npy", f->hidden, T, F);
    lesson_write_npy2("ffn_out.npy", f->out, T, C);
    lesson_write_npy2("swiglu_gate.npy", f->gate, T, Fg);
    lesson_write_npy2("swiglu_up.npy", f->up, T, Fg);
    lesson_write_npy2("swiglu_act.npy", f->act, T, Fg);
    lesson_write_npy2("swiglu_out.npy", f->sout, T, C);
    lesson_plot("08_activations.gp", "activations.dat", "activations.png");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 8, .T = 3 }, NULL);
    // C = 8; the classic hidden size is 4C; SwiGLU's about 2/3 of 4C = 21.3, rounded up to a
    // multiple of 8
    ffns f = { .T = a.T, .C = 8, .F = 32, .Fg = 24 };
    three_activations(&f);
    classic_ffn(&f, a.seed);
    swiglu(&f, a.seed);
    two_thirds_rule();
    write_files(&f);
    lesson_say("Try it: make exercise9 (SwiGLU)");
    return lesson_finish();
}
