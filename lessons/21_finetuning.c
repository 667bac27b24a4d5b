// Lesson 21: fine-tuning a model that exists: LoRA by hand on one matrix, and SFT's loss mask.
//
// Teaches: LoRA keeps a trained weight W frozen and learns a low-rank change, y = x W^T +
// (alpha/r) (x A^T) B^T, with B starting at zero so that nothing changes at first; what alpha/r
// does (it scales the update, so the learning rate need not be retuned when r changes); that a
// rank below the change's true rank cannot fit it and a rank at or above it can; how few bytes an
// adapter takes against the model; that merging (W += (alpha/r) B A) gives the same outputs to
// float rounding; and what supervised fine-tuning's loss mask changes (masked positions get no
// gradient, the mean is over the counted ones).
// Calls: tw_lora_linear_forward, tw_lora_linear_backward, tw_lora_merge, tw_lora_set_floats,
//        tw_cross_entropy_forward, tw_cross_entropy_backward.
// Build & run: make lesson21 && ./lesson21 [--seed N] [--steps N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/21_lora_rank.gp        (reads out/lesson21/lora_rank.dat)
// Writes: lora_rank.dat W.npy A_r2.npy B_r2.npy
// Pictures: lora_rank.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    21, "Fine-tuning: LoRA by hand, and the loss mask of SFT",
    "A frozen 32 x 32 weight W must learn a change of rank 2. LoRA trains only A (r x 32) and B "
    "(32 x r) with tw_lora_linear_forward and tw_lora_linear_backward; the lesson fits the change "
    "with r = 1, 2, 4 and 8 (rank against quality), shows that a fresh adapter changes no output "
    "and what alpha/r does, counts adapter bytes against model bytes (stories260K and a 7B "
    "Llama), merges and unmerges, and shows what supervised fine-tuning's loss mask changes in "
    "the cross-entropy and its gradient."
};

enum { C = 32, N = 64, TRUE_RANK = 2 };   // the matrix is (C, C); N training rows
static const int RANKS[4] = { 1, 2, 4, 8 };

// Mean squared error of the LoRA layer's output against target (N, C); fills dy = 2 (y - t) / n.
static double mse(float *dy, const float *y, const float *target, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++) {
        const double d = (double)y[i] - target[i];
        s += d * d;
        if (dy) dy[i] = (float)(2.0 * d / n);
    }
    return s / n;
}

// Trains A (r, C) and B (C, r) on frozen W to map x to target by plain gradient descent; returns
// the final mean squared error. A starts small and random, B at zero.
static double fit_rank(float *A, float *B, const float *W, const float *x, const float *target,
                       int r, float alpha, int steps, uint64_t seed) {
    const float s = alpha / (float)r;
    float *init = lesson_uniform((long)r * C, -1.0f / sqrtf(C), 1.0f / sqrtf(C), seed);
    memcpy(A, init, sizeof(float) * (size_t)r * C);
    memset(B, 0, sizeof(float) * (size_t)C * r);
    float *y = lesson_alloc((long)N * C), *u = lesson_alloc((long)N * r), *dy = lesson_alloc((long)N * C);
    float *dA = lesson_alloc((long)r * C), *dB = lesson_alloc((long)C * r);
    double loss = 0.0;
    for (int it = 0; it < steps; it++) {
        tw_lora_linear_forward(y, u, x, W, NULL, A, B, s, N, C, C, r);
        loss = mse(dy, y, target, (long)N * C);
        memset(dA, 0, sizeof(float) * (size_t)r * C);
        memset(dB, 0, sizeof(float) * (size_t)C * r);
        tw_lora_linear_backward(NULL, dA, dB, dy, x, u, W, A, B, s, N, C, C, r);
        const float lr = 0.5f;   // plain gradient descent; scale 1 (alpha = r)
        for (int i = 0; i < r * C; i++) A[i] -= lr * dA[i];
        for (int i = 0; i < C * r; i++) B[i] -= lr * dB[i];
    }
    tw_lora_linear_forward(y, u, x, W, NULL, A, B, s, N, C, C, r);
    return mse(NULL, y, target, (long)N * C);
    (void)loss;
}

// ---- the sections of main() ----

// 1. The task: a frozen W (C, C), inputs x (N, C), and target (N, C) = x (W + U Vt)^T, a change
// of rank TRUE_RANK. Fills W, x and target.
static void frozen_weight_and_change(float *W, float *x, float *target, uint64_t seed) {
    memcpy(W, lesson_randn((long)C * C, 1.0f / sqrtf(C), seed), sizeof(float) * C * C);
    float *U = lesson_randn((long)C * TRUE_RANK, 0.5f, seed + 1);             // (C, 2)
    float *Vt = lesson_randn((long)TRUE_RANK * C, 0.5f, seed + 2);            // (2, C)
    float *W_new = lesson_alloc((long)C * C);                                   // W + U Vt
    memcpy(W_new, W, sizeof(float) * C * C);
    tw_lora_merge(W_new, Vt, U, 1.0f, +1, C, C, TRUE_RANK);
    memcpy(x, lesson_randn((long)N * C, 1.0f, seed + 3), sizeof(float) * N * C);
    tw_linear_forward(target, x, W_new, NULL, N, C, C);
    lesson_say("W (%d x %d) is frozen. The behaviour we want is that of W + U V, where U V is a change "
               "of rank %d: %d numbers of W would move, but the change is described by %d. LoRA learns "
               "B A in place of U V with A (r x %d) and B (%d x r), training r (%d + %d) numbers.",
               C, C, TRUE_RANK, C * C, TRUE_RANK * 2 * C, C, C, C, C);
}

// 2. A fresh adapter (B = 0) changes no output bit; alpha / r scales the update. Fills y_base
// (N, C), the frozen layer's outputs.
static void fresh_adapter_and_alpha(float *y_base, const float *W, const float *x, uint64_t seed) {
    float *A0 = lesson_uniform(4L * C, -1.0f / sqrtf(C), 1.0f / sqrtf(C), seed + 4), *B0 = lesson_alloc(4L * C);
    float *y_lora = lesson_alloc((long)N * C);
    tw_linear_forward(y_base, x, W, NULL, N, C, C);
    tw_lora_linear_forward(y_lora, NULL, x, W, NULL, A0, B0, 16.0f / 4.0f, N, C, C, 4);
    const int same = memcmp(y_base, y_lora, sizeof(float) * N * C) == 0;
    lesson_say("A is random but B is zero, so s (x A^T) B^T adds exactly zero: the %d x %d outputs are "
               "%s to the frozen layer's, bit for bit. Training can start from the pretrained model "
               "itself.", N, C, same ? "identical" : "NOT identical");
    lesson_expect("a fresh adapter (B = 0) leaves every output bit unchanged", same);
    for (int i = 0; i < 4 * C; i++) B0[i] = 0.01f * (float)((i % 7) - 3);
    float *y_a1 = lesson_alloc((long)N * C), *y_a2 = lesson_alloc((long)N * C);
    tw_lora_linear_forward(y_a1, NULL, x, W, NULL, A0, B0, 8.0f / 4.0f, N, C, C, 4);    // alpha 8
    tw_lora_linear_forward(y_a2, NULL, x, W, NULL, A0, B0, 16.0f / 4.0f, N, C, C, 4);   // alpha 16
    double ratio_num = 0.0, ratio_den = 0.0;
    for (long i = 0; i < (long)N * C; i++) {
        ratio_num += fabs((double)y_a2[i] - y_base[i]);
        ratio_den += fabs((double)y_a1[i] - y_base[i]);
    }
    printf("  same A and B, alpha 8 -> 16 (r = 4): the change of the outputs grows by %.4f\n", ratio_num / ratio_den);
    lesson_say("The update is multiplied by s = alpha / r: doubling alpha doubles it. With alpha fixed, "
               "a larger r divides each of its r terms by more, which is what lets one learning rate "
               "serve several ranks (the LoRA paper sets alpha once and varies r).");
    lesson_expect_near("doubling alpha doubles the adapter's change", ratio_num / ratio_den, 2.0, 1e-3);
}

// 3. Fits the rank-2 change with r = 1, 2, 4, 8; writes lora_rank.dat, W.npy, A_r2.npy, B_r2.npy.
static void rank_against_quality(const float *W, const float *x, const float *target,
                                 const float *y_base, int steps, uint64_t seed) {
    float table[4 * 3];
    float *A = lesson_alloc(8L * C), *B = lesson_alloc(8L * C);
    const double start = mse(NULL, y_base, target, (long)N * C);
    printf("  %4s %10s %14s %14s\n", "r", "trained", "MSE at start", "MSE after");
    double err[4];
    for (int i = 0; i < 4; i++) {
        const int r = RANKS[i];
        err[i] = fit_rank(A, B, W, x, target, r, (float)r, steps, seed + 10 + (uint64_t)i);
        printf("  %4d %10d %14.5f %14.2e\n", r, 2 * r * C, start, err[i]);
        table[i * 3 + 0] = (float)r;
        table[i * 3 + 1] = (float)start;
        table[i * 3 + 2] = (float)err[i];
        if (r == 2) {
            const long shA[2] = { r, C }, shB[2] = { C, r };
            lesson_write_npy("A_r2.npy", A, shA, 2);
            lesson_write_npy("B_r2.npy", B, shB, 2);
        }
    }
    const long shW[2] = { C, C };
    lesson_write_npy("W.npy", W, shW, 2);
    const char *cols[3] = { "r", "mse_start", "mse_after" };
    lesson_write_columns("lora_rank.dat", table, 4, 3, cols, "lesson 21: LoRA rank against the error left");
    lesson_plot("21_lora_rank.gp", "lora_rank.dat", "lora_rank.png");
    lesson_say("With r = 1 the adapter can express only one direction of a rank-2 change: the error "
               "stalls. From r = 2, the change's own rank, it falls by orders of magnitude; more rank "
               "buys nothing here. Real fine-tuning changes are not exactly low-rank, but the LoRA "
               "paper found small r (1 to 8) enough for its tasks.");
    lesson_expect("r = 1 leaves at least 10x the error of r = 2", err[0] > 10.0 * err[1]);
    lesson_expect("r = 2 removes 99.9% of the starting error", err[1] < 1e-3 * start);
}

// 4. Adapter floats against model floats, for stories260K and a 7B Llama.
static void adapter_bytes(void) {
    tw_model_config c260;
    tw_model_config_preset(&c260, "llama");
    c260.vocab = 512; c260.max_seq = 512; c260.n_layer = 5; c260.block.attn.d_model = 64;
    c260.block.attn.n_head = 8; c260.block.attn.n_kv_head = 4; c260.block.attn.head_dim = 8;
    c260.block.ffn_hidden = 172;
    c260.tied = 1;   // stories260K's classifier is its token embedding table
    const int wq_wv[2] = { TW_LORA_WQ, TW_LORA_WV };
    const long ad260 = tw_lora_set_floats(&c260, 4, wq_wv, 2), all260 = tw_model_config_floats(&c260);
    // A 7B Llama: dim 4096, 32 layers, 32 heads of 128 (kv 32), hidden 11008, vocab 32000.
    tw_model_config c7 = c260;
    c7.vocab = 32000; c7.max_seq = 4096; c7.n_layer = 32; c7.block.attn.d_model = 4096;
    c7.block.attn.n_head = 32; c7.block.attn.n_kv_head = 32; c7.block.attn.head_dim = 128;
    c7.block.ffn_hidden = 11008;
    c7.tied = 0;
    const long ad7 = tw_lora_set_floats(&c7, 8, wq_wv, 2), all7 = tw_model_config_floats(&c7);
    printf("  %-22s %14s %14s %10s\n", "model, adapter", "model floats", "adapter floats", "share");
    printf("  %-22s %14ld %14ld %9.2f%%\n", "stories260K, r 4 wq,wv", all260, ad260, 100.0 * ad260 / all260);
    printf("  %-22s %14ld %14ld %9.3f%%\n", "Llama-2-7B, r 8 wq,wv", all7, ad7, 100.0 * ad7 / all7);
    lesson_say("An adapter file holds only A and B (plus a 36-byte header for two targets): %.1f KB for "
               "stories260K against its %.1f MB, %.1f MB for a 7B model against its %.1f GB. One base "
               "model can carry many small adapters, one per task.", (36.0 + 4.0 * ad260) / 1e3,
               4.0 * all260 / 1e6, 4.0 * ad7 / 1e6, 4.0 * all7 / 1e9);
    lesson_expect("r 4 on wq, wv trains under 2% of stories260K", 100.0 * ad260 / all260 < 2.0);
}

// 5. Merging W += s B A gives the unmerged outputs to float rounding; unmerging returns W.
static void merging_is_exact(const float *W, const float *x, const float *target, int steps,
                             uint64_t seed) {
    const int r = 2;
    float *Wm = lesson_alloc((long)C * C), *y_merged = lesson_alloc((long)N * C), *y_lora = lesson_alloc((long)N * C);
    float *A = lesson_alloc((long)r * C), *B = lesson_alloc((long)C * r);
    fit_rank(A, B, W, x, target, r, (float)r, steps, seed + 11);
    memcpy(Wm, W, sizeof(float) * C * C);
    tw_lora_merge(Wm, A, B, 1.0f, +1, C, C, r);
    tw_linear_forward(y_merged, x, Wm, NULL, N, C, C);
    tw_lora_linear_forward(y_lora, NULL, x, W, NULL, A, B, 1.0f, N, C, C, r);
    double worst = 0.0;
    for (long i = 0; i < (long)N * C; i++) worst = fmax(worst, fabs((double)y_merged[i] - y_lora[i]));
    tw_lora_merge(Wm, A, B, 1.0f, -1, C, C, r);
    double back = 0.0;
    for (long i = 0; i < C * C; i++) back = fmax(back, fabs((double)Wm[i] - W[i]));
    printf("  merged vs unmerged outputs: largest difference %.2e; W after merge + unmerge: %.2e from W\n",
           worst, back);
    lesson_say("W + s B A is one matrix again: a merged model runs at the base model's speed and loads "
               "in any program (./train --merged writes one). The two ways differ only in where float "
               "rounding happens: a few units in the last place of outputs of size ~1.");
    lesson_expect("merged and unmerged outputs agree within 1e-5", worst < 1e-5);
    lesson_expect("unmerge returns W within 1e-6", back < 1e-6);
}

// 6. What SFT's loss mask changes in the cross-entropy and its gradient.
static void sft_loss_mask(uint64_t seed) {
    enum { T = 6, V = 5 };
    float *logits = lesson_randn(T * V, 1.0f, seed + 30), *probs = lesson_alloc(T * V);
    float *d_all = lesson_alloc(T * V), *d_masked = lesson_alloc(T * V);
    const int all_t[T] = { 1, 3, 0, 2, 4, 1 };
    const int masked_t[T] = { TW_IGNORE_INDEX, TW_IGNORE_INDEX, TW_IGNORE_INDEX, 2, 4, 1 };   // prompt, answer
    float l_all, l_masked;
    tw_cross_entropy_forward(&l_all, NULL, probs, logits, all_t, T, V, TW_IGNORE_INDEX);
    tw_cross_entropy_backward(d_all, 1.0f, probs, all_t, T, V, TW_IGNORE_INDEX);
    tw_cross_entropy_forward(&l_masked, NULL, probs, logits, masked_t, T, V, TW_IGNORE_INDEX);
    tw_cross_entropy_backward(d_masked, 1.0f, probs, masked_t, T, V, TW_IGNORE_INDEX);
    lesson_say("An instruction is a prompt then an answer. The model reads both, but is trained only to "
               "write the answer: the mask sets the prompt's 3 targets to the ignore index. The loss is "
               "then the mean over the 3 counted targets, and the prompt's rows of d logits are zero.");
    lesson_print_matrix("d logits, every target counted", d_all, T, V);
    lesson_print_matrix("d logits, prompt masked", d_masked, T, V);
    printf("  loss over all 6 targets %.4f; over the 3 answer targets %.4f\n", (double)l_all, (double)l_masked);
    int zero_rows = 1;
    for (int i = 0; i < 3 * V; i++) zero_rows = zero_rows && d_masked[i] == 0.0f;
    double ratio = 0.0;   // an answer row's gradient grows from 1/6 to 1/3 of (p - onehot)
    for (int i = 3 * V; i < T * V; i++) ratio = fmax(ratio, fabs(d_masked[i] / (d_all[i] != 0.0f ? d_all[i] : 1.0f)));
    lesson_expect("masked rows get exactly zero gradient", zero_rows);
    lesson_expect_near("an answer row's gradient doubles (mean over 3 instead of 6)", ratio, 2.0, 1e-5);
}

int main(int argc, char **argv) {
    int steps = 400;
    const lesson_opt extra[] = { { "--steps", 'i', &steps, "N", "gradient steps per rank (default 400)" },
                                 { NULL, 0, NULL, NULL, NULL } };
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 21 }, extra);
    if (steps < 1 || steps > 100000) lesson_die("--steps: %d is outside 1 .. 100000", steps);

    float *W = lesson_alloc((long)C * C), *x = lesson_alloc((long)N * C);        // (C, C), (N, C)
    float *target = lesson_alloc((long)N * C), *y_base = lesson_alloc((long)N * C);   // (N, C)

    lesson_section("A frozen weight and the change it needs");
    frozen_weight_and_change(W, x, target, a.seed);

    lesson_section("A fresh adapter changes nothing; alpha / r scales what it learns");
    fresh_adapter_and_alpha(y_base, W, x, a.seed);

    lesson_section("Rank against quality");
    rank_against_quality(W, x, target, y_base, steps, a.seed);

    lesson_section("Adapter bytes against model bytes");
    adapter_bytes();

    lesson_section("Merging is exact up to rounding");
    merging_is_exact(W, x, target, steps, a.seed);

    lesson_section("What supervised fine-tuning's mask changes");
    sft_loss_mask(a.seed);
    lesson_say("Try it: make exercise30 (the LoRA Linear's backward)");
    return lesson_finish();
}
