// Lesson 19: training at scale.
//
// Teaches: what data parallelism computes (P processes, each a slice of the batch, gradients
// added: the gradient of the one big batch, shown by running it); the ring all-reduce, its
// schedule and its cost of 2(P-1)/P times the gradient's bytes sent by every process, simulated
// here and timed; ZeRO stages 1, 2, 3 and FSDP as memory arithmetic for Qwen3-8B (parameters from
// the counter of lesson 10) with mixed-precision AdamW at 16 bytes a parameter, from 1 to 1024
// GPUs, with a picture; tensor parallelism (Megatron: which matrices split by rows or columns and
// where the all-reduces fall, run on a small MLP) and pipeline parallelism (the bubble) as
// arithmetic. ./train-mpi runs the real thing: see the last section.
// Calls: tw_model_forward_backward, tw_params_count, tw_hf_config_from_json, tw_dist_init,
//        tw_dist_memory_per_process
// Build & run: make lesson19 && ./lesson19 [--seed N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/19_zero_memory.gp    (reads out/lesson19/zero_memory.dat)
// Needs: data/configs/Qwen3-8B.json
// Writes: dp_gradients.npy zero_memory.dat ring.dat
// Pictures: zero_memory.png
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "lesson.h"
#include "formats/hf_config.h"
#include "train/dist.h"

static const lesson_info INFO = {
    19, "Training at scale",
    "When a model's training outgrows one machine, the work is split: the batch (data "
    "parallelism), the optimizer state (ZeRO), the weights themselves (FSDP, tensor and pipeline "
    "parallelism). This lesson runs data parallelism in-process and shows its gradient is the big "
    "batch's; simulates the ring all-reduce and counts its bytes; computes what ZeRO 1/2/3 save "
    "for Qwen3-8B on 1 to 1024 GPUs; and splits an MLP the way Megatron does."
};

// ---- 1. data parallelism ----

enum { V = 64, SEQ = 16, ROWS = 8, PROCS = 4 };

static void make_model(tw_model *m, uint64_t seed) {
    tw_model_config c;
    tw_model_config_preset(&c, "llama");
    c.vocab = V; c.max_seq = SEQ; c.n_layer = 2;
    c.block.attn.d_model = 32; c.block.attn.n_head = 4; c.block.attn.n_kv_head = 4;
    c.block.attn.head_dim = 8; c.block.ffn_hidden = 64;
    LESSON_TRY(tw_model_init(m, &c));
    tw_model_randomize(m, seed);
    for (int i = 0; i < m->n_params; i++)
        if (m->params[i].kind == TW_PARAM_GAIN)
            for (long j = 0; j < m->params[i].count; j++) m->params[i].data[j] = 1.0f;
}

// The gradient of the mean loss over rows [r0, r0 + rows) of (tokens, targets), scaled by
// scale, into a zeroed g.
static float gradient_of_rows(tw_model_grads *g, const tw_model *m, const int *tok, const int *tgt,
                              int r0, int rows, float scale) {
    tw_model_state s, ds;
    LESSON_TRY(tw_model_state_init(&s, m, SEQ, 0));
    LESSON_TRY(tw_model_state_init(&ds, m, SEQ, 0));
    tw_model_grads_zero(g);
    float loss = 0.0f;
    LESSON_TRY(tw_model_forward_backward(&loss, g, &ds, &s, m, tok + r0 * SEQ, tgt + r0 * SEQ, rows, SEQ, scale));
    tw_model_state_free(&s);
    tw_model_state_free(&ds);
    return loss;
}

static void data_parallel(uint64_t seed) {
    lesson_section("Data parallelism is one big batch");
    lesson_say("Every process holds the whole model and takes its own rows of the batch. Process p "
               "computes the gradient of the mean loss over its B rows; the P gradients are added, "
               "each weighted by its share of the rows (1/P). Because the batch loss is the mean of "
               "the rows' losses and the gradient is linear, the sum is the gradient of the big "
               "batch of P x B rows. Here %d rows of %d tokens through a 2-layer model: once as one "
               "batch, once as %d processes of %d rows each.", ROWS, SEQ, PROCS, ROWS / PROCS);
    tw_model m;
    make_model(&m, seed);
    int tok[ROWS * SEQ], tgt[ROWS * SEQ];
    tw_rng r;
    tw_rng_init(&r, seed + 7);
    for (int i = 0; i < ROWS * SEQ; i++) tok[i] = (int)(tw_rng_next(&r) % V);
    for (int i = 0; i < ROWS * SEQ; i++) tgt[i] = (int)(tw_rng_next(&r) % V);
    tw_model_grads big, part, sum;
    LESSON_TRY(tw_model_grads_init(&big, &m));
    LESSON_TRY(tw_model_grads_init(&part, &m));
    LESSON_TRY(tw_model_grads_init(&sum, &m));
    const float loss_big = gradient_of_rows(&big, &m, tok, tgt, 0, ROWS, 1.0f);
    const long n = (long)m.n_floats;
    double loss_sum = 0.0;
    printf("  %-10s %-8s %-12s %s\n", "process", "rows", "its loss", "|its gradient|");
    for (int p = 0; p < PROCS; p++) {
        const int rows = ROWS / PROCS;
        const float lp = gradient_of_rows(&part, &m, tok, tgt, p * rows, rows, 1.0f / PROCS);
        double ss = 0.0;
        for (long i = 0; i < n; i++) { sum.memory[i] += part.memory[i]; ss += (double)part.memory[i] * part.memory[i]; }
        loss_sum += lp;
        printf("  %-10d %d..%-5d %-12.6f %.6f\n", p, p * rows, (p + 1) * rows - 1, (double)lp, sqrt(ss));
    }
    double max_diff = 0.0, max_g = 0.0;
    for (long i = 0; i < n; i++) {
        max_diff = fmax(max_diff, fabs((double)sum.memory[i] - big.memory[i]));
        max_g = fmax(max_g, fabs((double)big.memory[i]));
    }
    printf("  one batch of %d rows: loss %.6f; mean of the %d processes' losses: %.6f\n", ROWS,
           (double)loss_big, PROCS, loss_sum / PROCS);
    printf("  largest |sum of the processes' gradients - the big batch's|: %.3g (largest gradient %.3g)\n",
           max_diff, max_g);
    lesson_write_npy2("dp_gradients.npy", sum.memory, n, 0);
    // Tolerance: the two sums group the rows' float gradients differently; each element is a
    // sum of a few hundred products of order 1e-2, so float rounding is ~1e-8: 1e-6 relative to
    // the largest gradient is far above it and far below any real difference.
    lesson_expect("the processes' gradients add up to the big batch's (within float rounding)",
                  max_diff <= 1e-6 * max_g + 1e-9);
    lesson_expect_near("the mean of the processes' losses is the big batch's loss", loss_sum / PROCS,
                       (double)loss_big, 1e-6);
    lesson_note("the sums differ in the last bits only because the rows are grouped differently; "
                "./train-mpi adds the processes' gradients in rank order, the way one process adds "
                "its --grad-accum micro-batches, so mpirun -np 2 and --grad-accum 2 agree to the bit");
    tw_model_grads_free(&big); tw_model_grads_free(&part); tw_model_grads_free(&sum);
    tw_model_free(&m);
}

// ---- 2. the ring all-reduce ----

// Chunk c of n floats cut into P: [c n / P, (c + 1) n / P).
static long chunk_lo(int c, int P, long n) { return (long)((double)c * n / P); }

// The ring all-reduce of P buffers of n floats (bufs: (P, n)), simulated: process p sends only
// to p + 1. Reduce-scatter: at step s (0 .. P-2) process p sends its running sum of chunk
// (p - s) mod P, which p + 1 adds into its own; after P - 1 steps p holds the finished chunk
// (p + 1) mod P. All-gather: at step s process p sends chunk (p + 1 - s) mod P, which p + 1
// copies. msg: (P, n) the messages in flight; sent[p]: floats process p sent.
static void ring_allreduce(float *bufs, float *msg, long *sent, int P, long n) {
    for (int p = 0; p < P; p++) sent[p] = 0;
    for (int phase = 0; phase < 2; phase++)
        for (int s = 0; s < P - 1; s++) {
            for (int p = 0; p < P; p++) {   // every process sends at once...
                const int c = ((phase == 0 ? p - s : p + 1 - s) % P + P) % P;
                const long lo = chunk_lo(c, P, n), hi = chunk_lo(c + 1, P, n);
                memcpy(msg + (size_t)p * n + lo, bufs + (size_t)p * n + lo, (size_t)(hi - lo) * sizeof *msg);
                sent[p] += hi - lo;
            }
            for (int p = 0; p < P; p++) {   // ...then every process receives from p - 1
                const int q = (p + P - 1) % P;
                const int c = ((phase == 0 ? q - s : q + 1 - s) % P + P) % P;
                const long lo = chunk_lo(c, P, n), hi = chunk_lo(c + 1, P, n);
                float *dst = bufs + (size_t)p * n;
                const float *src = msg + (size_t)q * n;
                if (phase == 0) for (long i = lo; i < hi; i++) dst[i] += src[i];
                else memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof *dst);
            }
        }
}

static void ring(uint64_t seed) {
    lesson_section("The ring all-reduce and what it costs");
    lesson_say("Adding P gradients so that every process has the sum is an all-reduce. The naive "
               "way sends every gradient to every other process: (P-1) x bytes out of each. The "
               "ring cuts the gradient into P chunks and passes them around a ring twice: P-1 steps "
               "in which each process adds the chunk it receives to its own and passes the sum on "
               "(reduce-scatter), then P-1 steps passing the finished chunks (all-gather). Each "
               "process sends 2(P-1) chunks of bytes/P: 2(P-1)/P x bytes, under twice the gradient "
               "whatever P is. (./train-mpi does the same two halves: a reduce-scatter, in a fixed "
               "order, then an all-gather.) Simulated here in one process, %ld floats per buffer.",
               840L * 128);
    const long n = 840L * 128;   // divisible by 2..8: every chunk the same size
    const int Ps[] = { 2, 3, 4, 8 };
    float *bufs = lesson_alloc(8 * n), *msg = lesson_alloc(8 * n), *want = lesson_alloc(n);
    float *sum_table = lesson_alloc(4 * 5);
    long sent[8];
    int bytes_ok = 1, sums_ok = 1;
    printf("  %-3s %-16s %-18s %-16s %-12s %s\n", "P", "bytes/process", "2(P-1)/P x bytes", "naive (P-1)x",
           "time (ms)", "max |error|");
    for (int k = 0; k < 4; k++) {
        const int P = Ps[k];
        float *init = lesson_randn((long)P * n, 1.0f, seed + (uint64_t)P);
        memcpy(bufs, init, (size_t)P * n * sizeof *bufs);
        for (long i = 0; i < n; i++) {
            double s = 0.0;
            for (int p = 0; p < P; p++) s += init[(size_t)p * n + i];
            want[i] = (float)s;
        }
        const double t0 = lesson_seconds();
        ring_allreduce(bufs, msg, sent, P, n);
        const double ms = 1e3 * (lesson_seconds() - t0);
        double err = 0.0;
        for (int p = 0; p < P; p++)
            for (long i = 0; i < n; i++) err = fmax(err, fabs((double)bufs[(size_t)p * n + i] - want[i]));
        const double bytes = 4.0 * n, formula = 2.0 * (P - 1) / P * bytes;
        for (int p = 0; p < P; p++) bytes_ok &= 4.0 * sent[p] == formula;
        sums_ok &= err <= 1e-5 * P;
        printf("  %-3d %-16.0f %-18.0f %-16.0f %-12.2f %.2g\n", P, 4.0 * sent[0], formula, (P - 1) * bytes, ms, err);
        const float row[5] = { (float)P, (float)(4.0 * sent[0]), (float)formula, (float)((P - 1) * bytes), (float)ms };
        memcpy(sum_table + k * 5, row, sizeof row);
    }
    const char *cols[] = { "P", "bytes_sent", "formula", "naive", "ms" };
    lesson_write_columns("ring.dat", sum_table, 4, 5, cols,
                         "ring all-reduce simulated in one process (timings vary from run to run)");
    lesson_expect("every process sent exactly 2(P-1)/P x the gradient's bytes", bytes_ok);
    // Tolerance: the ring adds P numbers of size ~1 in another order than the float64 reference:
    // a few float roundings of ~6e-8 each; 1e-5 x P is far above that and far below a wrong chunk.
    lesson_expect("every process ends with the sum of all P buffers", sums_ok);
    lesson_note("the time above is memory traffic in one process (copies and adds), not a network: "
                "on real machines the bytes of the column in the middle cross a link; divide them by "
                "its bandwidth. mpirun -np 2 ./train-mpi prints the share of each step spent in MPI "
                "as mpi-wait");
}

// ---- 3. ZeRO and FSDP ----

static void zero_memory(void) {
    lesson_section("ZeRO 1, 2, 3 and FSDP: memory per GPU for Qwen3-8B");
    char err[512];
    tw_json *root = NULL;
    if (tw_json_read_file(&root, "data/configs/Qwen3-8B.json", err, sizeof err) != TW_OK) lesson_die("%s", err);
    tw_hf_config cfg;
    const tw_status st = tw_hf_config_from_json(&cfg, root, err, sizeof err);
    tw_json_free(root);
    if (st != TW_OK) lesson_die("data/configs/Qwen3-8B.json: %s", err);
    tw_param_counts pc;
    LESSON_TRY(tw_params_count(&pc, &cfg));
    const double psi = (double)pc.total;
    lesson_say("Mixed-precision AdamW keeps, for each of the model's %.0f parameters (lesson 10's "
               "counter), 2 bytes of bf16 weights, 2 of bf16 gradients and 12 of float32 optimizer "
               "state (a master copy of the weight, m and v): 16 bytes a parameter, %.1f GB, before "
               "any activation. Plain data parallelism keeps all 16 on every GPU. ZeRO-1 shards the "
               "12 bytes of optimizer state over the N GPUs, ZeRO-2 the gradients too, ZeRO-3 the "
               "weights as well (PyTorch's FSDP is ZeRO-3: each layer's weights are gathered just "
               "before they are used and dropped after).", psi, 16.0 * psi / 1e9);
    lesson_expect("Qwen3-8B has 8,190,735,360 parameters (its published count)", pc.total == 8190735360LL);
    enum { ROWS_Z = 11 };
    float *table = lesson_alloc(ROWS_Z * 5);
    printf("  %-6s %-12s %-12s %-12s %-12s   (GB per GPU; parameters, gradients, optimizer only)\n",
           "GPUs", "DP", "ZeRO-1", "ZeRO-2", "ZeRO-3/FSDP");
    int fit[4] = { 0, 0, 0, 0 };
    for (int k = 0; k < ROWS_Z; k++) {
        const double N = (double)(1 << k);
        const double gb[4] = { 16.0 * psi, 4.0 * psi + 12.0 * psi / N, 2.0 * psi + 14.0 * psi / N, 16.0 * psi / N };
        printf("  %-6.0f", N);
        for (int j = 0; j < 4; j++) {
            printf(" %-12.2f", gb[j] / 1e9);
            if (!fit[j] && gb[j] <= 80e9) fit[j] = 1 << k;
            table[k * 5 + 1 + j] = (float)(gb[j] / 1e9);
        }
        printf("\n");
        table[k * 5] = (float)N;
    }
    const char *cols[] = { "gpus", "dp_GB", "zero1_GB", "zero2_GB", "zero3_GB" };
    lesson_write_columns("zero_memory.dat", table, ROWS_Z, 5, cols,
                         "Qwen3-8B, mixed-precision AdamW (16 bytes a parameter), GB per GPU");
    lesson_plot("19_zero_memory.gp", "zero_memory.dat", "zero_memory.png");
    printf("  fewest GPUs whose 80 GB hold the training state: DP %s, ZeRO-1 %d, ZeRO-2 %d, ZeRO-3 %d\n",
           fit[0] ? "1" : "never", fit[1], fit[2], fit[3]);
    lesson_expect("at 1 GPU every stage is the same 16 bytes a parameter", table[1] == table[2] && table[2] == table[3] && table[3] == table[4]);
    lesson_expect("ZeRO-1 and ZeRO-2 level off at 4 and 2 bytes a parameter (1024 GPUs: within 1%)",
                  fabs(table[10 * 5 + 2] * 1e9 / psi - 4.0) < 0.04 && fabs(table[10 * 5 + 3] * 1e9 / psi - 2.0) < 0.02);
    lesson_expect("ZeRO-3 divides everything by N (GPUs x GB per GPU constant)",
                  fabs(table[10 * 5 + 4] * 1024.0 - table[4]) < 1e-3 * table[4]);
    lesson_note("plain DP never fits 80 GB (%.0f GB each, however many GPUs); ZeRO-1 fits from %d, "
                "ZeRO-3 from %d. The activations come on top, and they are what tensor and pipeline "
                "parallelism split", 16.0 * psi / 1e9, fit[1], fit[3]);

    lesson_say("./train keeps float32 weights, gradients and both moments: also 16 bytes a "
               "parameter, and --zero 1 shards the 8 bytes of moments. Its own accounting "
               "(tw_dist_memory_per_process) for a small llama model on N processes (each layer's "
               "gradient is a bucket, cut among the processes in whole blocks of %d floats):",
               TW_DIST_CHUNK);
    int ok = 1;
    for (int N = 1; N <= 8; N *= 2) {
        tw_comm c = tw_comm_single();   // as rank 0 of N: the set-up uses no collective
        c.size = N;
        tw_model_config mc;
        tw_model_config_preset(&mc, "llama");
        mc.vocab = 512; mc.block.attn.d_model = 128; mc.n_layer = 4; mc.block.attn.n_head = 4;
        mc.block.attn.n_kv_head = 4; mc.block.attn.head_dim = 32; mc.block.ffn_hidden = 344; mc.max_seq = 64;
        tw_model m;
        LESSON_TRY(tw_model_init(&m, &mc));
        tw_trainer t;
        LESSON_TRY(tw_trainer_init(&t, &m, 8));
        tw_dist d;
        LESSON_TRY(tw_dist_init(&d, &c, &t, &m, 1, 8, 1, 1));
        const tw_dist_memory mem = tw_dist_memory_per_process(&d);
        printf("  N %d: weights %.2f MB, gradients %.2f MB, moments %.3f MB (8 bytes x %.0f / %d = %.3f MB)\n", N,
               mem.weights / 1e6, mem.grads / 1e6, mem.moments / 1e6, (double)m.n_floats, N, 8.0 * m.n_floats / N / 1e6);
        ok &= fabs(mem.moments - 8.0 * m.n_floats / N) <= 8.0 * TW_DIST_CHUNK * d.n_buckets;
        tw_dist_free(&d);
        tw_trainer_free(&t);
        tw_model_free(&m);
    }
    lesson_expect("./train --zero 1 holds 1/N of the moments (to within a block per bucket)", ok);
}

// ---- 4. tensor and pipeline parallelism ----

static void tensor_parallel(uint64_t seed) {
    lesson_section("Tensor parallelism: columns, then rows, then one all-reduce");
    lesson_say("Megatron-LM splits each matrix over t GPUs. In the MLP, W_gate and W_up (F, C) are "
               "split along F, their output features (a column split of x W^T): each GPU computes "
               "its F/t hidden features, and SwiGLU is elementwise, so no GPU needs another's. "
               "W_down (C, F) is split along F too, now its input features (a row split): each GPU "
               "produces a full-size output that is only a partial sum, and one all-reduce adds "
               "them. Attention does the same with whole heads: Wq, Wk, Wv by heads (columns), Wo "
               "by rows, one all-reduce. So a layer costs 2 all-reduces of the activations (T x C) "
               "forward and 2 backward. Run with C = 8, F = 16, t = 2:");
    enum { C = 8, F = 16, TP = 2 };
    float *Wg = lesson_randn(F * C, 0.3f, seed + 1), *Wu = lesson_randn(F * C, 0.3f, seed + 2);
    float *Wd = lesson_randn(C * F, 0.3f, seed + 3), *x = lesson_randn(C, 1.0f, seed + 4);
    float full[C], parts[TP][C], h[F];
    for (int f = 0; f < F; f++) {
        float g = 0.0f, u = 0.0f;
        for (int c = 0; c < C; c++) { g += Wg[f * C + c] * x[c]; u += Wu[f * C + c] * x[c]; }
        h[f] = g / (1.0f + expf(-g)) * u;
    }
    for (int c = 0; c < C; c++) { full[c] = 0.0f; for (int f = 0; f < F; f++) full[c] += Wd[c * F + f] * h[f]; }
    for (int gpu = 0; gpu < TP; gpu++)
        for (int c = 0; c < C; c++) {
            parts[gpu][c] = 0.0f;
            for (int f = gpu * F / TP; f < (gpu + 1) * F / TP; f++) parts[gpu][c] += Wd[c * F + f] * h[f];
        }
    float reduced[C];
    for (int c = 0; c < C; c++) reduced[c] = parts[0][c] + parts[1][c];
    lesson_print_vector("GPU 0's partial output", parts[0], C);
    lesson_print_vector("GPU 1's partial output", parts[1], C);
    lesson_print_vector("their all-reduce (sum)", reduced, C);
    lesson_print_vector("the unsplit MLP       ", full, C);
    // Tolerance: the unsplit sum adds 16 products in one run, the split one in two runs of 8: a
    // float rounding or two of values ~1, so 1e-5.
    lesson_expect_close("split MLP + one all-reduce == unsplit MLP", reduced, full, C, 1e-5f);
    const double Cq = 4096, T = 4096, L = 36, t = 8;
    const double per = T * Cq * 2.0;   // bf16 activations of one sequence
    printf("  Qwen3-8B, one sequence of %.0f tokens, t = %.0f: each all-reduce moves %.0f MB of activations; "
           "4 a layer x %.0f layers, each sending 2(t-1)/t of it: %.2f GB out of every GPU per sequence\n",
           T, t, per / 1e6, L, 4.0 * L * 2.0 * (t - 1) / t * per / 1e9);
    const double dp = 2.0 * (t - 1) / t * 2.0 * 8190735360.0;   // bf16 gradients, ring over t GPUs
    printf("  data parallelism over the same %.0f GPUs: one all-reduce of the bf16 gradient a step, "
           "%.1f GB out of every GPU whatever the batch\n", t, dp / 1e9);
    lesson_note("tensor parallelism's traffic grows with the tokens (each sequence of every step), and "
                "its all-reduces sit between one matmul and the next, so nothing hides them: it stays "
                "inside a machine's fast links. Data parallelism's is one gradient a step, which can "
                "overlap the backward pass, so it is what crosses machines");

    lesson_section("Pipeline parallelism: stages and the bubble");
    lesson_say("Pipeline parallelism gives each of S GPUs a run of consecutive layers and passes the "
               "activations on (one send of T x C per stage boundary, no all-reduce). With one batch, "
               "only one stage works at a time; cutting the batch into M micro-batches lets them "
               "overlap, but the pipe still fills and drains: in GPipe's schedule a fraction "
               "(S-1)/(M+S-1) of the time is idle (the bubble).");
    printf("  %-4s %-6s %s\n", "S", "M", "bubble");
    double bubble_1 = 0.0, bubble_64 = 0.0;
    for (int S = 4; S <= 8; S *= 2)
        for (int M = 1; M <= 64; M *= 4) {
            const double b = (double)(S - 1) / (M + S - 1);
            printf("  %-4d %-6d %.1f%%\n", S, M, 100.0 * b);
            if (S == 4 && M == 1) bubble_1 = b;
            if (S == 4 && M == 64) bubble_64 = b;
        }
    lesson_expect_near("S = 4, M = 1: three stages of four idle, 75%", bubble_1, 0.75, 1e-12);
    lesson_expect("S = 4, M = 64: the bubble is under 5%", bubble_64 < 0.05);
    lesson_note("Qwen3-8B's 36 layers on S = 4 stages: 9 layers each, a quarter of the weights, "
                "gradients and optimizer state per GPU, and each GPU holds the activations of its "
                "own layers only");
}

static void for_real(void) {
    lesson_section("Running it for real");
    lesson_say("./train-mpi (make train-mpi, with Open MPI installed) is ./train over MPI. Two "
               "processes on this machine, each taking --batch 4 rows, a global batch of 8:");
    printf("    mpirun -np 2 ./train-mpi --tokens data/stories/train.bin --batch 4 --steps 200 [--zero 1]\n");
    lesson_say("It prints the share of each step spent waiting for MPI (mpi-wait), and with --zero 1 "
               "the memory each process holds. Across machines, a hostfile names them (docs/training.md).");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 19 }, NULL);
    data_parallel(a.seed);
    ring(a.seed);
    zero_memory();
    tensor_parallel(a.seed);
    for_real();
    lesson_say("Try it: make exercise33 (the ring all-reduce's schedule)");
    return lesson_finish();
}
