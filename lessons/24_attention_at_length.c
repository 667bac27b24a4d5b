// Lesson 24: attention at length: the online softmax and tiled attention.
//
// Teaches: a softmax row does not have to be seen whole. Visit the scores a block at a time,
// keep a running maximum m and a running sum l of exp(score - m), and when a later block raises
// the maximum, multiply what was summed so far by exp(m_old - m_new); divide by l once at the
// end. Attention built this way (tiled, the FlashAttention idea) gives the materialised
// attention's output to float rounding without ever holding the T x T score matrix: per query row
// it keeps two numbers, so its memory grows like T, not T^2. The price: the backward recomputes
// the scores (one more T x T product), since nothing of size T x T was kept.
// Calls: tw_softmax_row, tw_sdpa_forward, tw_sdpa_tiled_forward, tw_block_tensors, tw_block_has.
// Build & run: make lesson24 && ./lesson24 [--seed N] [-T N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/24_memory.gp     (reads out/lesson24/memory.dat)
// Writes: online_row.dat tiled_vs_full.dat memory.dat
// Pictures: memory.png
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    24, "Attention at length: the online softmax and tiled attention",
    "Computes one softmax row by hand a block at a time (the running maximum, the running sum and "
    "the rescaling step when the maximum grows), checks that the attention built this way "
    "(tw_sdpa_tiled_forward) equals the materialised one (tw_sdpa_forward) for several block "
    "sizes, and prints the bytes attention keeps in a model state for T = 256 .. 8192 in both "
    "forms, forward and training, with a picture: T^2 against T."
};

// ---- 1. one row by hand ----

// The online softmax over n scores in blocks of B, printing each step; out = sum p_j v_j for the
// scalar values v. Returns the weighted sum; trace (blocks, 4) receives each block's number, m,
// rescale factor and l.
static double online_row(const float *x, const float *v, int n, int B, float *trace, int *n_trace) {
    double m = -INFINITY, l = 0.0, acc = 0.0;
    printf("  %-10s %9s %9s %10s %12s %12s\n", "block", "block max", "m", "rescale", "l", "acc");
    for (int s0 = 0, b = 0; s0 < n; s0 += B, b++) {
        const int nb = n - s0 < B ? n - s0 : B;
        double bmax = -INFINITY;
        for (int j = 0; j < nb; j++) bmax = x[s0 + j] > bmax ? x[s0 + j] : bmax;
        double scale = 1.0;
        if (bmax > m) {
            if (m != -INFINITY) scale = exp(m - bmax);   // restate the old sums against the new max
            l *= scale;
            acc *= scale;
            m = bmax;
        }
        for (int j = 0; j < nb; j++) {
            const double e = exp(x[s0 + j] - m);
            l += e;
            acc += e * v[s0 + j];
        }
        char name[32];
        snprintf(name, sizeof name, "%d..%d", s0, s0 + nb - 1);
        printf("  %-10s %9.3f %9.3f %10.6f %12.6f %12.6f\n", name, bmax, m, scale, l, acc);
        trace[4 * b] = (float)b; trace[4 * b + 1] = (float)m; trace[4 * b + 2] = (float)scale;
        trace[4 * b + 3] = (float)l;
        *n_trace = b + 1;
    }
    printf("  divide once: acc / l = %.6f / %.6f = %.7f\n", acc, l, acc / l);
    return acc / l;
}

static void section_one_row(void) {
    lesson_section("One softmax row, a block at a time");
    enum { N = 10, B = 4 };
    // Scores that rise in the second block and again in the third: two rescaling steps.
    const float x[N] = { 0.5f, -1.0f, 1.0f, 0.0f, 3.0f, 2.5f, -2.0f, 1.5f, 6.0f, 4.0f };
    const float v[N] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    lesson_say("Ten scores x and ten values v (one number each, as if D = 1). Attention's output "
               "for this row is sum_j softmax(x)_j v_j. The usual way needs every x first (for the "
               "maximum and the sum). The online way takes blocks of %d and keeps three numbers:", B);
    lesson_print_vector("x", x, N);
    lesson_print_vector("v", v, N);
    float trace[4 * 3];
    int n_trace = 0;
    const double online = online_row(x, v, N, B, trace, &n_trace);
    lesson_note("block 4..7 raised the maximum from 1 to 3: everything summed so far was measured "
                "against exp(x - 1), so it is multiplied by exp(1 - 3) = %.6f before the new "
                "terms are added; block 8..9 raised it again, to 6.", exp(-2.0));
    float p[N];
    tw_softmax_row(p, x, N);
    double full = 0.0;
    for (int j = 0; j < N; j++) full += (double)p[j] * v[j];
    printf("  all at once: sum_j tw_softmax_row(x)_j v_j = %.7f\n", full);
    lesson_expect_near("online == all at once (float weights vs double: 1e-6)", online, full, 1e-6);
    lesson_write_columns("online_row.dat", trace, n_trace, 4,
                         (const char *const[]){ "block", "m", "rescale", "l" },
                         "the online softmax of section 1, one line per block");
}

// ---- 2. tiled == materialised ----

static void section_tiled_equals_full(const lesson_args *a) {
    lesson_section("Tiled attention equals the materialised one");
    const int T = a->T, D = 16;
    float *q = lesson_uniform((long)T * D, -2, 2, a->seed), *k = lesson_uniform((long)T * D, -2, 2, a->seed + 1);
    float *v = lesson_uniform((long)T * D, -1, 1, a->seed + 2);
    float *full = lesson_alloc((long)T * D), *w = lesson_alloc((long)T * T);
    float *out = lesson_alloc((long)T * D), *m = lesson_alloc(T), *logl = lesson_alloc(T);
    tw_sdpa_forward(full, NULL, w, q, k, v, NULL, T, T, D, 1, 0);
    lesson_say("Causal self-attention over T = %d positions, one head of size %d. The materialised "
               "form (tw_sdpa_forward) builds the (T, T) weights first: %ld floats. The tiled form "
               "(tw_sdpa_tiled_forward) visits the keys in blocks and keeps, per query row, its "
               "maximum and log-sum: %d floats.", T, D, (long)T * T, 2 * T);
    static const int blocks[] = { 1, 16, 64, 100 };
    float rows[5][2];
    printf("  %8s  %24s\n", "block", "max |tiled - full|");
    int nb = 0;
    for (int i = 0; i < 4; i++) {
        const tw_sdpa_tiling tl = { .T = T, .S = T, .D = D, .q_stride = D, .kv_stride = D,
                                    .mask_stride = T, .causal = 1, .causal_offset = 0,
                                    .block = blocks[i] };
        tw_sdpa_tiled_forward(out, m, logl, q, k, v, NULL, &tl);
        double worst = 0.0;
        for (long j = 0; j < (long)T * D; j++) worst = fmax(worst, fabs((double)out[j] - full[j]));
        printf("  %8d  %24.3g\n", blocks[i], worst);
        rows[nb][0] = (float)blocks[i]; rows[nb][1] = (float)worst; nb++;
        char name[64];
        snprintf(name, sizeof name, "block %d: tiled == full within 2e-6", blocks[i]);
        lesson_expect_close(name, out, full, (long)T * D, 2e-6f);
    }
    lesson_note("not bit for bit: the tiled form divides by l once at the end, the materialised "
                "one divides each weight first; both are within a few float roundings of the "
                "exact answer. Block 100 does not divide T = %d; the last block is short.", T);
    lesson_write_columns("tiled_vs_full.dat", &rows[0][0], nb, 2,
                         (const char *const[]){ "block", "max_abs_diff" }, "section 2");
}

// ---- 3. memory ----

// Bytes of attention's tensors (the block table's rows inside tw_mha_acts) in one layer's state
// for T positions: what tw_model_state_init allocates for them.
static double attention_bytes(const tw_block_config *b, long T) {
    const tw_dims cap = tw_block_dims(b, T, T);
    const size_t at = offsetof(tw_block_acts, attn);
    double n = 0.0;
    for (int i = 0; i < tw_block_n_tensors; i++) {
        const tw_tensor_info *t = &tw_block_tensors[i];
        if (t->field >= at && t->field < at + sizeof(tw_mha_acts) && tw_block_has(b, t->has))
            n += (double)tw_dims_count(&cap, t->shape);
    }
    return 4.0 * n;
}

static void section_memory(void) {
    lesson_section("Memory: T^2 against T");
    tw_model_config c;
    LESSON_TRY(tw_model_config_preset(&c, "llama"));
    tw_block_config full = c.block;   // the stories260K shape: C 64, 8 heads, 4 kv heads, D 8
    full.attn.d_model = 64; full.attn.n_head = 8; full.attn.n_kv_head = 4; full.attn.head_dim = 8;
    tw_block_config tiled = full;
    tiled.attn.tiled = 1;
    const int L = 5;
    lesson_say("Attention's bytes in a model state of the stories260K shape (%d layers, 8 heads), "
               "counted from the block table that tw_model_state_init allocates from: q, k, v, "
               "their rotated copies and z (all T rows), plus the (8, T, T) scores and pattern "
               "(materialised) or two (8, T) rows of statistics (tiled). Training keeps a second "
               "state of the same layout for the gradients.", L);
    printf("  %6s %14s %14s %14s %14s %10s\n", "T", "full fwd MB", "tiled fwd MB", "full train MB",
           "tiled train MB", "tiled/full");
    float rows[6][5];
    int n = 0;
    for (long T = 256; T <= 8192; T *= 2, n++) {
        const double f = L * attention_bytes(&full, T), t = L * attention_bytes(&tiled, T);
        printf("  %6ld %14.2f %14.2f %14.2f %14.2f %10.5f\n", T, f / 1e6, t / 1e6, 2 * f / 1e6,
               2 * t / 1e6, t / f);
        rows[n][0] = (float)T; rows[n][1] = (float)(f / 1e6); rows[n][2] = (float)(t / 1e6);
        rows[n][3] = (float)(2 * f / 1e6); rows[n][4] = (float)(2 * t / 1e6);
    }
    lesson_write_columns("memory.dat", &rows[0][0], n, 5,
                         (const char *const[]){ "T", "full_fwd_MB", "tiled_fwd_MB", "full_train_MB",
                                                "tiled_train_MB" },
                         "attention's bytes in a stories260K-shaped model state (section 3)");
    lesson_plot("24_memory.gp", "memory.dat", "memory.png");
    lesson_expect("at T = 8192 tiled <= 1/16 of full (table, last row)", rows[5][2] <= rows[5][1] / 16);
    lesson_expect("tiled doubles from 4096 to 8192 (x2 within 1e-6)",
                  fabs(rows[5][2] / rows[4][2] - 2.0) < 1e-6);
    lesson_expect("full grows ~4x from 4096 to 8192 (> 3.9x)", rows[5][1] / rows[4][1] > 3.9);
    lesson_note("a claim you may meet: \"block-wise computation keeps the O(n^2) work but cuts "
                "memory from O(n^2) to O(n)\". The table agrees; the work is O(n^2) both ways, "
                "but the tiled backward recomputes the scores, so a training step does about "
                "one more T x T product than the materialised one.");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 24, .T = 257 }, NULL);
    section_one_row();
    section_tiled_equals_full(&a);
    section_memory();
    lesson_say("Try it: make exercise35 (an online softmax), make exercise36 (YaRN's frequencies)");
    return lesson_finish();
}
