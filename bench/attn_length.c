// attn_length.c: attention at length, materialised (nn/sdpa.h) against tiled (nn/sdpa_tiled.h),
// on the stories260K shape (5 layers, 8 query heads, 4 key/value heads, head size 8).
//
//   make bench-attn   (or build/bench-build/bench/attn_length [--quick]: T = 1024 only)
//
// 1. Memory: attention's bytes in a model state, from the state's own accounting (the block
//    table, nn/block.h, which tw_model_state_init allocates): the rows of tw_mha_acts, for
//    T = 256 .. 8192, forward (one state) and training (a state and its gradient state, as
//    tw_trainer allocates them). Checks the goals: at T = 8192 the tiled form's bytes are at most
//    1/16 of the materialised form's, and they double (not quadruple) from T = 4096 to 8192.
// 2. Speed: one layer's attention over every head (scores, softmax, mix; and its backward), at
//    T = 1024 and 4096, causal: materialised and tiled both at the best SIMD level this CPU has
//    (the tiled kernels: lib/simd/sdpa_tiled_body.h), and the tiled naive loops as the ladder's
//    first rung. Median of several runs; GFLOP/s counting 4 T^2/2 D H flops forward (two causal
//    products) and 8 T^2/2 D H backward with the tiled form's recomputed scores left out (the
//    useful work); against the FMA peak measured in the same run (bench/peak.c), on the CPU the
//    header names.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tw.h"
#include "simd/simd.h"
#include "bench_clock.h"
#include "peak.h"
#include "cpuinfo.h"

enum { L = 5, C = 64, H = 8, G = 4, D = 8 };

// ---- memory, from the block table ----

static tw_block_config stories_block(int tiled) {
    tw_model_config c;
    tw_model_config_preset(&c, "llama");
    tw_block_config b = c.block;
    b.attn.d_model = C; b.attn.n_head = H; b.attn.n_kv_head = G; b.attn.head_dim = D;
    b.ffn_hidden = 172;
    b.attn.tiled = tiled;
    return b;
}

// Bytes of attention's tensors (the rows of the block table that live in tw_mha_acts) in one
// layer's state sized for T positions.
static double attention_bytes(const tw_block_config *b, long T) {
    const tw_dims cap = tw_block_dims(b, T, T);
    const size_t at = offsetof(tw_block_acts, attn);
    double n = 0.0;
    for (int i = 0; i < tw_block_n_tensors; i++) {
        const tw_tensor_info *t = &tw_block_tensors[i];
        if (t->field < at || t->field >= at + sizeof(tw_mha_acts) || !tw_block_has(b, t->has))
            continue;
        n += (double)tw_dims_count(&cap, t->shape);
    }
    return 4.0 * n;
}

static const char *human(char *buf, double bytes) {
    if (bytes >= 1e9) snprintf(buf, 32, "%8.2f GB", bytes / 1e9);
    else if (bytes >= 1e6) snprintf(buf, 32, "%8.2f MB", bytes / 1e6);
    else snprintf(buf, 32, "%8.1f kB", bytes / 1e3);
    return buf;
}

static int memory_table(void) {
    const tw_block_config full = stories_block(0), tiled = stories_block(1);
    printf("attention's bytes in the model state (%d layers; training = state + gradient state)\n", L);
    printf("%6s  %11s %11s  %11s %11s  %9s\n", "T", "full fwd", "tiled fwd", "full train",
           "tiled train", "tiled/full");
    double tiled_4096 = 0, tiled_8192 = 0, full_8192 = 0;
    for (long T = 256; T <= 8192; T *= 2) {
        const double f = L * attention_bytes(&full, T), t = L * attention_bytes(&tiled, T);
        char a[32], b[32], c[32], d[32];
        printf("%6ld  %s %s  %s %s  %9.5f\n", T, human(a, f), human(b, t), human(c, 2 * f),
               human(d, 2 * t), t / f);
        if (T == 4096) tiled_4096 = t;
        if (T == 8192) { tiled_8192 = t; full_8192 = f; }
    }
    const int small = tiled_8192 <= full_8192 / 16, doubles = tiled_8192 == 2 * tiled_4096;
    printf("goal: tiled <= 1/16 of full at T=8192: %s (%.5f)\n", small ? "yes" : "NO",
           tiled_8192 / full_8192);
    printf("goal: tiled doubles from T=4096 to 8192: %s (x%.3f)\n", doubles ? "yes" : "NO",
           tiled_8192 / tiled_4096);
    return small && doubles;
}

// ---- speed ----

typedef struct {
    int T;
    float *q, *k, *v, *out, *dout, *dq, *dk, *dv;   // (T, H*D), (T, G*D) x2, (T, H*D) x2, ...
    float *qh, *kh, *vh, *zh, *gh, *dqh, *dkh, *dvh; // one head's rows (T, D)
    float *scores, *pattern, *dscores;              // (T, T) one head at a time
    float *row_max, *row_logsum;                    // (H, T)
} attn_bufs;

static float *fresh(long n, uint64_t seed) {
    float *p = malloc((size_t)n * sizeof(float));
    if (!p) { fprintf(stderr, "attn_length: out of memory\n"); exit(1); }
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_rng_fill_uniform(&r, p, n, -1.0f, 1.0f);
    return p;
}

static void gather(float *dst, const float *src, int n, int heads, int j) {
    for (int r = 0; r < n; r++) memcpy(dst + (size_t)r * D, src + ((size_t)r * heads + j) * D, D * sizeof(float));
}

// Materialised: what mha.c does per head (gather, tw_sdpa_forward, and backward).
static void full_step(attn_bufs *b, int backward) {
    const int T = b->T;
    for (int h = 0; h < H; h++) {
        gather(b->qh, b->q, T, H, h);
        gather(b->kh, b->k, T, G, h / (H / G));
        gather(b->vh, b->v, T, G, h / (H / G));
        tw_sdpa_forward(b->zh, b->scores, b->pattern, b->qh, b->kh, b->vh, NULL, T, T, D, 1, 0);
        if (!backward) continue;
        gather(b->gh, b->dout, T, H, h);
        memset(b->dqh, 0, (size_t)T * D * sizeof(float));
        memset(b->dkh, 0, (size_t)T * D * sizeof(float));
        memset(b->dvh, 0, (size_t)T * D * sizeof(float));
        tw_sdpa_backward_causal(b->dqh, b->dkh, b->dvh, b->dscores, b->gh, b->qh, b->kh, b->vh,
                                b->pattern, T, T, D, 1, 0);
    }
}

static void tiled_step(attn_bufs *b, int backward) {
    const int T = b->T;
    tw_sdpa_tiled_heads_forward(b->out, b->row_max, b->row_logsum, b->q, b->k, b->v, NULL, T, T,
                                H, G, D, 1, 0, TW_SDPA_TILE);
    if (backward)
        tw_sdpa_tiled_heads_backward(b->dq, b->dk, b->dv, b->dout, b->out, b->row_max,
                                     b->row_logsum, b->q, b->k, b->v, NULL, T, T, H, G, D, 1, 0,
                                     TW_SDPA_TILE);
}

static double time_median(attn_bufs *b, void (*f)(attn_bufs *, int), int backward, int runs) {
    double t[16];
    for (int r = 0; r < runs; r++) {
        const double t0 = now_seconds();
        f(b, backward);
        t[r] = now_seconds() - t0;
    }
    return median(t, runs);
}

// The tiled step with the naive loops (the dispatch set to the naive level for the call).
static void tiled_naive_step(attn_bufs *b, int backward) {
    const char *level = tw_simd.level;
    char keep[32];
    snprintf(keep, sizeof keep, "%s", level ? level : "naive");
    tw_simd_init("naive");
    tiled_step(b, backward);
    tw_simd_init(keep);
}

static void speed(int T, int runs, double peak_gflops) {
    attn_bufs b = { .T = T };
    const long HD = (long)T * H * D, GD = (long)T * G * D, TD = (long)T * D, TT = (long)T * T;
    b.q = fresh(HD, 1); b.k = fresh(GD, 2); b.v = fresh(GD, 3); b.dout = fresh(HD, 4);
    b.out = fresh(HD, 5); b.dq = fresh(HD, 6); b.dk = fresh(GD, 7); b.dv = fresh(GD, 8);
    b.qh = fresh(TD, 9); b.kh = fresh(TD, 9); b.vh = fresh(TD, 9); b.zh = fresh(TD, 9);
    b.gh = fresh(TD, 9); b.dqh = fresh(TD, 9); b.dkh = fresh(TD, 9); b.dvh = fresh(TD, 9);
    b.scores = fresh(TT, 10); b.pattern = fresh(TT, 11); b.dscores = fresh(TT, 12);
    b.row_max = fresh((long)H * T, 13); b.row_logsum = fresh((long)H * T, 14);
    const double causal = (double)T * T / 2.0;
    const double fwd_flops = 4.0 * causal * D * H, train_flops = fwd_flops + 8.0 * causal * D * H;
    const double tf = time_median(&b, full_step, 0, runs), tt = time_median(&b, tiled_step, 0, runs);
    const double bf = time_median(&b, full_step, 1, runs), bt = time_median(&b, tiled_step, 1, runs);
    const double tn = time_median(&b, tiled_naive_step, 0, runs), bn = time_median(&b, tiled_naive_step, 1, runs);
    printf("%5d  prefill   full %8.2f ms %6.2f GFLOP/s %5.1f%%   tiled %8.2f ms %6.2f GFLOP/s %5.1f%%   tiled/full time %5.2f   tiled naive %8.2f ms\n",
           T, 1e3 * tf, fwd_flops / tf / 1e9, 100 * fwd_flops / tf / 1e9 / peak_gflops, 1e3 * tt,
           fwd_flops / tt / 1e9, 100 * fwd_flops / tt / 1e9 / peak_gflops, tt / tf, 1e3 * tn);
    printf("%5d  training  full %8.2f ms %6.2f GFLOP/s %5.1f%%   tiled %8.2f ms %6.2f GFLOP/s %5.1f%%   tiled/full time %5.2f   tiled naive %8.2f ms\n",
           T, 1e3 * bf, train_flops / bf / 1e9, 100 * train_flops / bf / 1e9 / peak_gflops, 1e3 * bt,
           train_flops / bt / 1e9, 100 * train_flops / bt / 1e9 / peak_gflops, bt / bf, 1e3 * bn);
    float *all[] = { b.q, b.k, b.v, b.dout, b.out, b.dq, b.dk, b.dv, b.qh, b.kh, b.vh, b.zh, b.gh,
                     b.dqh, b.dkh, b.dvh, b.scores, b.pattern, b.dscores, b.row_max, b.row_logsum };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

int main(int argc, char **argv) {
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && !quick) {
        fprintf(stderr, "attn_length: unknown argument '%s' (only --quick: T = 1024 only)\n", argv[1]);
        return 2;
    }
    const int ok = memory_table();
    const char *level = tw_simd_init("auto");
    tw_peak p = { 0 };
    const char *isa = tw_peak_best_isa();
    const double peak = isa && tw_peak_fma(&p, isa, 0, 5, 0.05) ? p.gflops : 0.0;
    char cpu[256];
    bench_cpu_describe(cpu, sizeof cpu);
    printf("\nspeed: one layer's attention, %d heads (%d kv), D %d, causal; full and tiled at SIMD "
           "level %s, and the tiled naive loops; FMA peak %.1f GFLOP/s (%s, one core)\nCPU: %s\n",
           H, G, D, level ? level : "?", peak, isa ? isa : "none", cpu);
    speed(1024, 5, peak > 0 ? peak : 1.0);
    if (!quick) speed(4096, 3, peak > 0 ? peak : 1.0);
    return ok ? 0 : 1;
}
