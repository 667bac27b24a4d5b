// bench_train.c: training tokens per second (forward, backward and one AdamW step together) of a
// Llama-shaped model on the library's functions, for the shape of llama2.c's stories260K and of
// its stories15M, at the naive level and at the best SIMD level, with 1 and 2 threads, in one run;
// the FLOP/s achieved against the single-core FMA peak measured in the same run; and, when a
// PyTorch timing is given (--torch-cmd, which `make bench-train` sets when Debian's PyTorch is
// installed), PyTorch's tokens/s for the same model, batch and threads, and the ratio.
// A benchmark, not a test: the numbers depend on the machine and its load; the gradients are
// checked elsewhere (tests/test_model_backward.c, tests/test_train_simd.c).
//
//   bench_train [--shape 260k|15m] [--attn default|flash] [--steps N] [--naive-steps N]
//               [--rounds N] [--threads LIST] [--torch-cmd CMD]
//
// The model is seeded random (tw_model_randomize), the batch seeded random tokens; B = 8 for the
// 260K shape and 4 for the 15M shape, T = 256 (the batches of the PyTorch figures).
// At the best SIMD level each thread count takes one warm-up step and then --rounds rounds
// (default 5, the 15M shape 3), the thread counts in turn within each round, so that the
// scaling (2 threads / 1) is a median of paired ratios too; a round's figure is the median over
// --steps timed steps. With a
// PyTorch command, PyTorch runs in one process per thread count, started and warmed up (one step,
// as ours) before our first round, and each of our rounds is followed by one of PyTorch's
// (--steps steps; 2 for the 15M shape, whose PyTorch steps take seconds): the ratio ours/torch is
// the median of the rounds' ratios, each from the two figures of one round, with their range. On
// a shared or virtual machine the host's speed moves from minute to minute; a ratio of figures
// taken minutes apart says little. The naive level runs one round of --naive-steps steps (the 15M
// shape 1 by default), without PyTorch. With N threads the batch is split into N parts trained in
// parallel (tw_model_forward_backward_split, lib/train/parallel.h); with one, tw_model_forward_backward runs it.
// --attn flash trains with the tiled attention of ./train --attn flash (nn/sdpa_tiled.h) instead
// of the default, which keeps every head's (T, S) scores and pattern for the backward; PyTorch's
// model is the same either way (the two attentions compute the same function).
// After each of the best level's one-thread rounds, the step's weight products run alone (every
// Linear's and the head's forward, d x and d W, the step's calls and shapes): their speed, and
// the share of the step's time the rest takes, are printed under the table. They are the step's
// ceiling: however fast the rest became, the step could not pass its FLOP in the products' time.
#define _POSIX_C_SOURCE 200809L   // fork, pipe, fdopen, waitpid, fcntl
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tw.h"
#include "simd/simd.h"
#include "nn/reference.h"

// The FMA-throughput probe of `make bench` (bench/peak.h), read in one place: fma_peak_gflops.
#include "peak.h"
#include "bench_clock.h"   // now_seconds, cpu_seconds, median (bench/)
#include "bench_spread.h"  // spread, paired_ratio, min_max (bench/)

static void check(tw_status st, const char *what) {
    if (st != TW_OK) {
        fprintf(stderr, "bench_train: %s: %s\n", what, tw_status_str(st));
        exit(1);
    }
}

// Single-core FMA peak in GFLOP/s of the widest ISA this build and CPU can probe (the same probe
// as `make bench`), the best of `runs` runs of `seconds`; 0 if there is none.
static double fma_peak_gflops(const char **which, int runs, double seconds) {
    tw_peak p;
    const char *isa = tw_peak_best_isa();
    *which = "none";
    if (!isa || !tw_peak_fma(&p, isa, 0, runs, seconds)) return 0;
    *which = p.isa;
    return p.gflops;
}

// The FMA peak probed beside the rounds: at the start (best of 5 runs of 50 ms) and after every
// round (best of 3 of 30 ms). A share of the peak is taken over the fastest probe of the run: the
// core's peak is at least that, and a probe that a busy moment slowed could make a share pass
// 100 % (one probe at the start, before 2026-12-06, did: the 260K shape read 32 % of a 112 GFLOP/s
// probe in one run, 16 % of a 172 one in the next).
typedef struct { double first, fastest, slowest; int n; } probes;

static void probe_add(probes *p, double gflops) {
    if (gflops <= 0) return;
    if (p->n == 0) p->first = p->slowest = gflops;
    if (gflops > p->fastest) p->fastest = gflops;
    if (gflops < p->slowest) p->slowest = gflops;
    p->n++;
}

// One row of the table, kept until the run's fastest probe is known.
typedef struct {
    const char *level;
    int threads, torch_ok, torch_failed;
    double t_med, cpu_med, tps_med, gf, torch_tps;
    spread vs_torch, vs_torch_cpu;
} row;

// ---- the two shapes ----

typedef struct { const char *name; int dim, n_layer, n_head, n_kv_head, hidden, vocab, B, T; } shape;
static const shape SHAPES[] = {
    { "stories260K", 64, 5, 8, 4, 172, 512, 8, 256 },
    { "stories15M", 288, 6, 6, 6, 768, 32000, 4, 256 },
};

// llama2.c's Llama: RMSNorm, RoPE (adjacent pairs, base 1e4), SwiGLU, tied head, no biases;
// flash: tiled attention (./train --attn flash), which keeps no (H, T, S) tables.
static tw_model_config config_of(const shape *sh, int flash) {
    tw_model_config c;
    check(tw_model_config_preset(&c, "llama"), "preset");
    c.vocab = sh->vocab;
    c.max_seq = sh->T;
    c.n_layer = sh->n_layer;
    c.tied = 1;
    c.block.attn.d_model = sh->dim;
    c.block.attn.n_head = sh->n_head;
    c.block.attn.n_kv_head = sh->n_kv_head;
    c.block.attn.head_dim = sh->dim / sh->n_head;
    c.block.ffn_hidden = sh->hidden;
    c.block.norm_eps = 1e-5f;
    c.block.attn.tiled = flash;
    return c;
}

// Multiply-adds of one training step, times 2: forward 2 N_matmul per token plus attention, and
// the backward twice the forward (the usual 6N rule, with attention's T^2 terms counted).
static double flops_per_step(const shape *sh) {
    const double C = sh->dim, F = sh->hidden, V = sh->vocab, L = sh->n_layer, T = sh->T;
    const double D = C / sh->n_head, KV = sh->n_kv_head * D;
    const double per_token_weights = L * (C * C * 2 + 2 * C * KV + 3 * C * F) + C * V;
    const double attn_per_token = L * sh->n_head * (T + 1) / 2.0 * D * 2;   // scores and mix, causal
    return 6.0 * (double)sh->B * T * (per_token_weights + attn_per_token);
}

enum { MAX_PARTS = 8 };

// The batch is split into one part a thread, at most MAX_PARTS.
static int parts_of(int threads) { return threads < MAX_PARTS ? threads : MAX_PARTS; }

// With n threads the batch is split into n parts run in parallel (tw_model_forward_backward_split),
// each with its own states and, but for the first, its own gradient buffer.
typedef struct {
    tw_model m;
    tw_model_grads g, g_part[MAX_PARTS - 1];
    tw_model_state s[MAX_PARTS], ds[MAX_PARTS];
    int parts;
    float *m1, *m2;   // AdamW moments, (n_floats) each
    int *tokens, *targets;
    int step;
} trainer;

static void trainer_init(trainer *tr, const shape *sh, int parts, int flash) {
    memset(tr, 0, sizeof *tr);
    tw_model_config c = config_of(sh, flash);
    check(tw_model_init(&tr->m, &c), "model");
    tw_model_randomize(&tr->m, 1234);
    tr->parts = parts;
    check(tw_model_grads_init(&tr->g, &tr->m), "gradients");
    for (int p = 0; p < parts; p++) {
        if (p > 0) check(tw_model_grads_init(&tr->g_part[p - 1], &tr->m), "gradients");
        check(tw_model_state_init(&tr->s[p], &tr->m, sh->T, 0), "state");
        check(tw_model_state_init(&tr->ds[p], &tr->m, sh->T, 0), "gradient state");
    }
    tr->m1 = calloc((size_t)tr->m.n_floats, sizeof(float));
    tr->m2 = calloc((size_t)tr->m.n_floats, sizeof(float));
    const long n = (long)sh->B * sh->T;
    tr->tokens = malloc((size_t)n * sizeof(int));
    tr->targets = malloc((size_t)n * sizeof(int));
    if (!tr->m1 || !tr->m2 || !tr->tokens || !tr->targets) check(TW_ERR_NOMEM, "buffers");
    tw_rng r;
    tw_rng_init(&r, 99);
    for (long i = 0; i < n; i++) tr->tokens[i] = (int)(tw_rng_next(&r) % (uint64_t)sh->vocab);
    for (long i = 0; i < n; i++) tr->targets[i] = (int)(tw_rng_next(&r) % (uint64_t)sh->vocab);
}

static void trainer_free(trainer *tr) {
    tw_model_free(&tr->m);
    tw_model_grads_free(&tr->g);
    for (int p = 0; p < tr->parts; p++) {
        if (p > 0) tw_model_grads_free(&tr->g_part[p - 1]);
        tw_model_state_free(&tr->s[p]);
        tw_model_state_free(&tr->ds[p]);
    }
    free(tr->m1); free(tr->m2); free(tr->tokens); free(tr->targets);
}

// One training step: zero the gradients, forward and backward over the batch, AdamW on every
// parameter (decay on matrices, as tw_adamw_decays says).
static float train_step(trainer *tr, const shape *sh) {
    float loss;
    tw_model_grads_zero(&tr->g);
    if (tr->parts == 1)
        check(tw_model_forward_backward(&loss, &tr->g, &tr->ds[0], &tr->s[0], &tr->m, tr->tokens,
                                tr->targets, sh->B, sh->T, 1.0f), "backward");
    else
        check(tw_model_forward_backward_split(&loss, &tr->g, tr->g_part, tr->ds, tr->s, &tr->m, tr->tokens,
                                      tr->targets, sh->B, sh->T, 1.0f, tr->parts), "backward");
    tr->step++;
    // AdamW as ./train runs it: decay on the matrices only, shared among the threads.
    const tw_adamw_hparams hp = { .lr = 1e-4f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                                  .weight_decay = 0.1f };
    tw_adamw_step_model(&tr->m, tr->m1, tr->m2, &tr->g, tr->step, &hp);
    return loss;
}

// One round: the median seconds per step over `steps` steps of a warmed-up trainer, and the
// process's CPU seconds per step (all threads) in *cpu_per_step.
static double time_round(double *cpu_per_step, trainer *tr, const shape *sh, int steps) {
    double t[64];   // (steps)
    if (steps > 64) steps = 64;
    const double c0 = cpu_seconds();
    for (int i = 0; i < steps; i++) {
        double t0 = now_seconds();
        train_step(tr, sh);
        t[i] = now_seconds() - t0;
    }
    *cpu_per_step = (cpu_seconds() - c0) / steps;
    return median(t, steps);
}

// ---- the step's weight products alone: how fast the step could be if nothing else took time ----

// The matrix products of one step that go through the weights: every Linear layer's forward,
// d x and d W and the head's, for each of the B sequences of T rows, with the same calls the
// step makes (tw_linear_forward, tw_linear_backward: the level's packed matmul) on buffers of
// the same shapes. Their FLOP are the step's but for attention's scores and mix. Timed in the
// same rounds as the step, their speed is the step's ceiling: with every other operation
// (attention, norms, RoPE, SwiGLU, cross-entropy, AdamW, zeroing) taking no time, the step would
// run at about the products' share of the peak, and no faster.
enum { N_LINEAR = 7 };   // q, k, v, o; the FFN's gate, up and down

// in, out: the (C_in, C_out) of each Linear of a block, the head's last.
typedef struct {
    float *x, *y, *W, *dx, *dW;   // (T, n_in), (T, n_out) also d y, (n_out, n_in), (T, n_in), (n_out, n_in)
    int in[N_LINEAR + 1], out[N_LINEAR + 1];
} products;

static void products_init(products *p, const shape *sh) {
    const int C = sh->dim, KV = sh->n_kv_head * (sh->dim / sh->n_head), F = sh->hidden;
    const int in[N_LINEAR + 1] = { C, C, C, C, C, C, F, C };
    const int out[N_LINEAR + 1] = { C, KV, KV, C, F, F, C, sh->vocab };
    memcpy(p->in, in, sizeof in);
    memcpy(p->out, out, sizeof out);
    size_t n_in = 0, n_out = 0;
    for (int l = 0; l <= N_LINEAR; l++) {
        if ((size_t)in[l] > n_in) n_in = (size_t)in[l];
        if ((size_t)out[l] > n_out) n_out = (size_t)out[l];
    }
    const size_t T = (size_t)sh->T;
    p->x = malloc(T * n_in * sizeof(float));
    p->y = malloc(T * n_out * sizeof(float));
    p->W = malloc(n_out * n_in * sizeof(float));
    p->dx = calloc(T * n_in, sizeof(float));
    p->dW = calloc(n_out * n_in, sizeof(float));
    if (!p->x || !p->dx || !p->y || !p->W || !p->dW) check(TW_ERR_NOMEM, "products");
    tw_rng r;
    tw_rng_init(&r, 7);
    tw_rng_fill_normal(&r, p->x, (long)(T * n_in), 1.0f);
    tw_rng_fill_normal(&r, p->y, (long)(T * n_out), 1e-3f);
    tw_rng_fill_normal(&r, p->W, (long)(n_out * n_in), 0.02f);
}

static void products_free(products *p) {
    free(p->x); free(p->y); free(p->W); free(p->dx); free(p->dW);
}

// One Linear's three products on T rows: y = x W^T, d x += d y W, d W += d y^T x.
static void linear_products(products *p, int k, int T) {
    tw_linear_forward(p->y, p->x, p->W, NULL, T, p->in[k], p->out[k]);
    tw_linear_backward(p->dx, p->dW, NULL, p->y, p->x, p->W, T, p->in[k], p->out[k]);
}

// FLOP of one step's weight products: the step's, but for attention's.
static double products_flops(const products *p, const shape *sh) {
    double per_row = p->in[N_LINEAR] * (double)p->out[N_LINEAR];   // the head
    for (int k = 0; k < N_LINEAR; k++) per_row += sh->n_layer * (double)p->in[k] * p->out[k];
    return 6.0 * sh->B * sh->T * per_row;
}

// Seconds for one step's weight products, sequence by sequence as the step runs them.
static double time_products(products *p, const shape *sh) {
    const double t0 = now_seconds();
    for (int b = 0; b < sh->B; b++) {
        for (int l = 0; l < sh->n_layer; l++)
            for (int k = 0; k < N_LINEAR; k++) linear_products(p, k, sh->T);
        linear_products(p, N_LINEAR, sh->T);   // the head
    }
    return now_seconds() - t0;
}

// ---- PyTorch, one warm process driven round by round ----

// tools/bench_train_torch.py --serve: it prints "ready" after its warm-up step, then times one
// round for each line written to it and prints the round's figures.
typedef struct {
    pid_t pid;
    FILE *to, *from;   // its stdin, its stdout (and stderr)
} torch_peer;

static void peer_close(torch_peer *p) {
    if (p->to) fclose(p->to);
    if (p->from) fclose(p->from);
    if (p->pid > 0) waitpid(p->pid, NULL, 0);
    memset(p, 0, sizeof *p);
}

// Starts the command (words split at spaces, run with execvp: no shell, so no quoting and no
// $(...) in it) with the shape's sizes and a thread count, and waits for its "ready". Returns 0
// (with *p cleared) if it could not start or ended before being ready.
static int peer_start(torch_peer *p, const char *cmd, const shape *sh, int threads, int steps) {
    char line[1024], nums[9][16];
    char *argv[64];
    int argc = 0;
    memset(p, 0, sizeof *p);
    snprintf(line, sizeof line, "%s", cmd);
    for (char *w = strtok(line, " \t"); w && argc < 40; w = strtok(NULL, " \t")) argv[argc++] = w;
    if (argc == 0) return 0;
    static const char *const flag[9] = { "--dim", "--layers", "--heads", "--kv-heads", "--hidden",
                                         "--vocab", "--batch", "--seq", "--threads" };
    const int val[9] = { sh->dim, sh->n_layer, sh->n_head, sh->n_kv_head, sh->hidden, sh->vocab,
                         sh->B, sh->T, threads };
    for (int i = 0; i < 9; i++) {
        snprintf(nums[i], sizeof nums[i], "%d", val[i]);
        argv[argc++] = (char *)flag[i];
        argv[argc++] = nums[i];
    }
    char steps_s[16];
    snprintf(steps_s, sizeof steps_s, "%d", steps);
    argv[argc++] = "--steps";
    argv[argc++] = steps_s;
    argv[argc++] = "--serve";
    argv[argc] = NULL;
    int in[2], out[2];   // in: we write, it reads; out: it writes, we read
    if (pipe(in) != 0) return 0;
    if (pipe(out) != 0) { close(in[0]); close(in[1]); return 0; }
    // Close-on-exec on all four: a PyTorch process started later must not hold this one's
    // stdin open (it would then never see end-of-file at peer_close, which waits for it). dup2
    // gives the child's 0, 1 and 2 without the flag.
    for (int i = 0; i < 2; i++) {
        fcntl(in[i], F_SETFD, FD_CLOEXEC);
        fcntl(out[i], F_SETFD, FD_CLOEXEC);
    }
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) { close(in[0]); close(in[1]); close(out[0]); close(out[1]); return 0; }
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(out[1], 2);
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    p->pid = pid;
    p->to = fdopen(in[1], "w");
    p->from = fdopen(out[0], "r");
    if (!p->to || !p->from) { peer_close(p); return 0; }
    char buf[512];
    while (fgets(buf, sizeof buf, p->from))
        if (strncmp(buf, "ready", 5) == 0) return 1;
    peer_close(p);
    return 0;
}

// One of PyTorch's rounds: its tokens/s (0 if it failed) and tokens per CPU-second in *cpu_tps.
static double peer_round(double *cpu_tps, torch_peer *p) {
    char buf[512];
    *cpu_tps = 0;
    if (!p->to || fputs("go\n", p->to) == EOF || fflush(p->to) != 0) return 0;
    while (fgets(buf, sizeof buf, p->from)) {
        const char *k = strstr(buf, " tokens/s ");
        const char *c = strstr(buf, "cpu-tokens/s ");
        if (k && c) {
            *cpu_tps = atof(c + 13);
            return atof(k + 10);
        }
    }
    return 0;
}

// The first three fields of /proc/loadavg ("?" where there is none, as on macOS).
static const char *load_average(void) {
    static char buf[64] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fgets(buf, sizeof buf, f)) {
            char *sp = buf;
            for (int i = 0; i < 3 && sp; i++) sp = strchr(sp + 1, ' ');
            if (sp) *sp = '\0';
        }
        fclose(f);
    }
    return buf;
}

// One thread count at one level: its trainer, its PyTorch process, and each round's figures:
// ours (s/step, CPU s/step, tokens/s, tokens per CPU-s) and PyTorch's (tokens/s, per CPU-s).
typedef struct {
    int threads, with_torch, torch_ok;
    trainer tr;
    torch_peer peer;
    double t[BENCH_MAX_REPEATS], cpu[BENCH_MAX_REPEATS], tps[BENCH_MAX_REPEATS];
    double cps[BENCH_MAX_REPEATS], tt[BENCH_MAX_REPEATS], tc[BENCH_MAX_REPEATS];
} config;

// The median of v[0 .. n), v left in round order (median() sorts what it is given, and the
// rounds' figures are paired by index afterwards).
static double median_of(const double *v, int n) {
    double copy[BENCH_MAX_REPEATS];
    memcpy(copy, v, (size_t)n * sizeof *v);
    return median(copy, n);
}

// The table's row of a configuration's rounds. torch_cmd: whether PyTorch was asked for.
static row row_of(const char *level, const config *c, int rounds, double flops, int torch_cmd) {
    row w = { .level = level, .threads = c->threads, .torch_ok = c->torch_ok,
              .torch_failed = torch_cmd && !c->torch_ok };
    if (c->torch_ok) {
        w.vs_torch = paired_ratio(c->tps, c->tt, rounds);
        w.vs_torch_cpu = paired_ratio(c->cps, c->tc, rounds);
        w.torch_tps = median_of(c->tt, rounds);
    }
    w.t_med = median_of(c->t, rounds);
    w.cpu_med = median_of(c->cpu, rounds);
    w.tps_med = median_of(c->tps, rounds);
    w.gf = flops / w.t_med * 1e-9;
    return w;
}

static void usage(void) {
    fprintf(stderr, "usage: bench_train [--shape 260k|15m] [--attn default|flash] [--steps N] "
                    "[--naive-steps N] [--rounds N] [--threads LIST] [--torch-cmd CMD]\n");
    exit(2);
}

// The table, each row's share of the peak over the fastest probe of the run (x its threads). A
// share that still passes 100 % is not printed: the probes, not the row, were wrong.
static void print_rows(const row *rows, int n, const probes *peak) {
    printf("FMA peak probed %d times: first %.1f, slowest %.1f, fastest %.1f GFLOP/s; %%peak is of "
           "the fastest\n", peak->n, peak->first, peak->slowest, peak->fastest);
    printf("%-8s %7s %8s %7s %9s %8s %12s %10s %21s %9s\n", "level", "threads", "s/step", "cpu s",
           "tokens/s", "GFLOP/s", "%peak(x thr)", "torch tok/s", "ours/torch [lo - hi]",
           "per CPU-s");
    int probe_failed = 0;
    for (int i = 0; i < n; i++) {
        const row *w = &rows[i];
        const double pct = peak->fastest > 0 ? 100 * w->gf / (peak->fastest * w->threads) : 0;
        printf("%-8s %7d %8.3f %7.3f %9.0f %8.2f", w->level, w->threads, w->t_med, w->cpu_med,
               w->tps_med, w->gf);
        if (pct > 100) {
            printf(" %12s", "n/a");
            probe_failed = 1;
        } else printf(" %11.1f%%", pct);
        if (w->torch_ok) {
            char r_buf[64];
            snprintf(r_buf, sizeof r_buf, "%.2fx [%.2f - %.2f]", w->vs_torch.median, w->vs_torch.lo,
                     w->vs_torch.hi);
            printf(" %10.0f %21s %8.2fx", w->torch_tps, r_buf, w->vs_torch_cpu.median);
        } else if (w->torch_failed) {
            printf(" %10s %21s", "failed", "-");
        }
        printf("\n");
    }
    if (probe_failed)
        printf("PROBE FAILURE: a row above ran faster than every probe of the FMA peak (the probes "
               "ran at busier moments): its %%peak is not printed; run again on a quiet machine\n");
}

int main(int argc, char **argv) {
    const shape *sh = &SHAPES[0];
    int steps = 5, naive_steps = -1, rounds = -1, flash = 0;
    const char *threads_list = "1,2", *torch_cmd = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) usage();
        const char *v = argv[++i];
        if (strcmp(a, "--shape") == 0) {
            if (strcmp(v, "260k") == 0) sh = &SHAPES[0];
            else if (strcmp(v, "15m") == 0) sh = &SHAPES[1];
            else { fprintf(stderr, "bench_train: --shape: '%s' is not 260k or 15m\n", v); return 2; }
        } else if (strcmp(a, "--attn") == 0) {
            if (strcmp(v, "default") == 0) flash = 0;
            else if (strcmp(v, "flash") == 0) flash = 1;
            else { fprintf(stderr, "bench_train: --attn: '%s' is not default or flash\n", v); return 2; }
        } else if (strcmp(a, "--steps") == 0) {
            steps = atoi(v);
            if (steps < 1 || steps > 64) { fprintf(stderr, "bench_train: --steps: 1 .. 64\n"); return 2; }
        } else if (strcmp(a, "--naive-steps") == 0) {
            naive_steps = atoi(v);
            if (naive_steps < 0 || naive_steps > 64) {
                fprintf(stderr, "bench_train: --naive-steps: 0 .. 64 (0 skips the naive level)\n");
                return 2;
            }
        } else if (strcmp(a, "--rounds") == 0) {
            rounds = atoi(v);
            if (rounds < 1 || rounds > BENCH_MAX_REPEATS) {
                fprintf(stderr, "bench_train: --rounds: 1 .. %d\n", BENCH_MAX_REPEATS);
                return 2;
            }
        } else if (strcmp(a, "--threads") == 0) {
            threads_list = v;
        } else if (strcmp(a, "--torch-cmd") == 0) {
            torch_cmd = v;
        } else {
            usage();
        }
    }
    if (naive_steps < 0) naive_steps = sh == &SHAPES[1] ? 1 : steps;
    if (rounds < 0) rounds = sh == &SHAPES[1] ? 3 : 5;
    // PyTorch 1.13 takes 4 to 20 s per 15M step on a 2-vCPU machine: 2 steps a round there.
    const int torch_steps = sh == &SHAPES[1] && steps > 2 ? 2 : steps;
    int threads[8], n_threads = 0;
    for (const char *p = threads_list; *p && n_threads < 8;) {
        threads[n_threads] = atoi(p);
        if (threads[n_threads] < 1) { fprintf(stderr, "bench_train: --threads: a list like 1,2\n"); return 2; }
        n_threads++;
        p = strchr(p, ',');
        if (!p) break;
        p++;
    }
    if (tw_matmul_threads() == 1 && (n_threads > 1 || threads[0] != 1)) {
        tw_matmul_set_threads(2);
        if (tw_matmul_threads() == 1)
            printf("(the library was built without OpenMP: every thread count runs on one thread)\n");
    }
    signal(SIGPIPE, SIG_IGN);   // a PyTorch process that died is a failed figure, not our end
    const char *best = tw_simd_init("auto");
    if (!best) { fprintf(stderr, "bench_train: no SIMD level usable\n"); return 1; }
    best = strcmp(best, "naive") == 0 ? NULL : best;
    const char *peak_isa;
    probes peak = { 0 };
    probe_add(&peak, fma_peak_gflops(&peak_isa, 5, 0.05));
    const double flops = flops_per_step(sh);
    const double tokens = (double)sh->B * sh->T;
    printf("%s shape: dim %d, %d layers, %d heads (%d kv), hidden %d, vocab %d; B = %d, T = %d; "
           "attention: %s\n", sh->name, sh->dim, sh->n_layer, sh->n_head, sh->n_kv_head, sh->hidden,
           sh->vocab, sh->B, sh->T,
           flash ? "flash (tiled, --attn flash)" : "default (materialised (T, S) tables)");
    printf("one step = forward + backward + AdamW, %.2f GFLOP; FMA peak (%s, one core): probed now, "
           "%.1f GFLOP/s, and after every round\n", flops * 1e-9, peak_isa, peak.first);
    char naive_what[32] = "naive: skipped";
    if (naive_steps > 0) snprintf(naive_what, sizeof naive_what, "naive: 1 round of %d", naive_steps);
    printf("one warm-up step, then %d rounds of %d steps (%s); a round's figure is\n"
           "its median step; s/step is wall time, cpu s the process's CPU seconds per step (all\n"
           "threads), both the median over the rounds; ours/torch is the median over the rounds of\n"
           "each round's ratio of wall-time tokens/s (ours, then PyTorch's right after, one warm\n"
           "PyTorch process; %d steps a round), with its range [lo - hi]; per CPU-s the same for\n"
           "tokens per CPU-second of each process (fairer when the machine is shared);\n"
           "load average now: %s\n", rounds, steps, naive_what, torch_steps, load_average());
    row rows[16];
    int n_rows = 0;
    // The weight products alone, beside the best level's one-thread rounds.
    products prod = { 0 };
    double prod_t[BENCH_MAX_REPEATS], prod_rest[BENCH_MAX_REPEATS];
    int prod_rounds = 0;
    if (best) products_init(&prod, sh);
    static config cf[8];   // one per thread count
    for (int ti = 0; ti < n_threads; ti++) cf[ti].threads = threads[ti];

    // The naive level: one round for each thread count, without PyTorch.
    if (naive_steps > 0) {
        if (!tw_simd_init("naive")) { fprintf(stderr, "bench_train: level naive unavailable\n"); return 1; }
        for (int ti = 0; ti < n_threads; ti++) {
            config *c = &cf[ti];
            tw_matmul_set_threads(c->threads);
            trainer_init(&c->tr, sh, parts_of(c->threads), flash);
            train_step(&c->tr, sh);   // warm-up: first touch of every buffer
            c->t[0] = time_round(&c->cpu[0], &c->tr, sh, naive_steps);
            c->tps[0] = tokens / c->t[0];
            probe_add(&peak, fma_peak_gflops(&peak_isa, 3, 0.03));
            trainer_free(&c->tr);
            rows[n_rows++] = row_of("naive", c, 1, flops, 0);
            fprintf(stderr, "bench_train: naive, %d thread%s: done\n", c->threads,
                    c->threads == 1 ? "" : "s");
        }
    }

    // The best level: every thread count's trainer, and its PyTorch process, made and warmed up
    // first; then each round runs every thread count in turn, each followed by its PyTorch
    // round. A round's figures for 1 and 2 threads are then seconds apart, and their ratio is
    // paired, as ours/torch is: taken one thread count after another (before 2026-12-06), the
    // rows were minutes apart, and a host that slowed in between made 2 threads read 2.74 times
    // 1 thread.
    if (best) {
        if (!tw_simd_init(best)) { fprintf(stderr, "bench_train: level %s unavailable\n", best); return 1; }
        for (int ti = 0; ti < n_threads; ti++) {
            config *c = &cf[ti];
            tw_matmul_set_threads(c->threads);
            // PyTorch first (its start-up and warm-up step outside every timed region), then ours.
            c->with_torch = torch_cmd && peer_start(&c->peer, torch_cmd, sh, c->threads, torch_steps);
            c->torch_ok = c->with_torch;
            trainer_init(&c->tr, sh, parts_of(c->threads), flash);   // each trains the same
            train_step(&c->tr, sh);   // warm-up: first touch of every buffer
        }
        for (int r = 0; r < rounds; r++)
            for (int ti = 0; ti < n_threads; ti++) {
                config *c = &cf[ti];
                tw_matmul_set_threads(c->threads);
                c->t[r] = time_round(&c->cpu[r], &c->tr, sh, steps);
                if (c->threads == 1) {
                    prod_t[r] = time_products(&prod, sh);
                    prod_rest[r] = 1 - prod_t[r] / c->t[r];   // the share of the step left over
                    prod_rounds = r + 1;
                }
                probe_add(&peak, fma_peak_gflops(&peak_isa, 3, 0.03));
                c->tps[r] = tokens / c->t[r];
                c->cps[r] = tokens / c->cpu[r];
                if (c->torch_ok) {
                    c->tt[r] = peer_round(&c->tc[r], &c->peer);
                    if (c->tt[r] <= 0 || c->tc[r] <= 0) c->torch_ok = 0;
                }
            }
        for (int ti = 0; ti < n_threads; ti++) {
            config *c = &cf[ti];
            trainer_free(&c->tr);
            if (c->with_torch) peer_close(&c->peer);
            rows[n_rows++] = row_of(best, c, rounds, flops, torch_cmd != NULL);
        }
        fprintf(stderr, "bench_train: %s: done\n", best);
    }
    print_rows(rows, n_rows, &peak);
    if (prod_rounds > 0) {
        const double prod_flops = products_flops(&prod, sh);
        const double tp = median(prod_t, prod_rounds), gf = prod_flops / tp * 1e-9;
        printf("the step's weight products alone (%s, 1 thread; every Linear's and the head's "
               "forward, d x and d W,\nwith the step's calls and shapes, timed after each round, "
               "the medians of the rounds):\n", best);
        printf("  %.3f s a step, %.2f of its %.2f GFLOP, at %.2f GFLOP/s", tp, prod_flops * 1e-9,
               flops * 1e-9, gf);
        if (peak.fastest > 0 && gf < peak.fastest) printf(" = %.1f%% of the peak", 100 * gf / peak.fastest);
        printf("\n  the rest of the step (attention, norms, RoPE, SwiGLU, cross-entropy, AdamW, "
               "zeroing): %.1f%% of its time\n", 100 * median(prod_rest, prod_rounds));
        const double ceiling = flops / tp * 1e-9;
        if (peak.fastest > 0 && ceiling < peak.fastest)
            printf("  the step's ceiling, all its GFLOP in the products' time: %.1f%% of the peak\n",
                   100 * ceiling / peak.fastest);
    }
    if (best) products_free(&prod);
    // Scaling, paired by round. More than the ratio of the thread counts cannot be true of one
    // batch split into parts: the host's speed moved inside the rounds, and no figure is printed.
    if (best && n_threads > 1)
        for (int ti = 1; ti < n_threads; ti++) {
            const spread sc = paired_ratio(cf[ti].tps, cf[0].tps, rounds);
            printf("%s: %d threads / %d = ", best, threads[ti], threads[0]);
            if (sc.median > (double)threads[ti] / threads[0])
                printf("n/a (the median of the rounds' ratios, %.2fx, passes %.2fx, more than %d "
                       "threads can give over %d: the host's speed moved inside the rounds; run "
                       "again)\n", sc.median, (double)threads[ti] / threads[0], threads[ti],
                       threads[0]);
            else
                printf("%.2fx [%.2f - %.2f] (the median of the rounds' ratios, and their range)\n",
                       sc.median, sc.lo, sc.hi);
        }
    return 0;
}
