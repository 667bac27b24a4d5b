// bench_moe.c: `make bench-moe`: the mixture-of-experts forward's time per token follows the
// experts a token uses (k), not the experts the layer has (E). Three layers of the same expert
// size, each run on the same tokens, all in this one run:
//   E = 8, k = 2   the MoE (Mixtral's routing)
//   E = 2, k = 2   as many experts in total as the MoE uses per token
//   E = 8, k = 8   every expert of the MoE used by every token (its dense cost)
// If time follows active experts, the first two are close and the third is about k = 8 / 2 = 4
// times the first. Printed: parameters (total, active per token), median ms per token over the
// repetitions, and the ratios. Naive loops (tw_linear_forward's reference), one thread.
#include <stdio.h>
#include <stdlib.h>
#include "bench_clock.h"
#include "cpuinfo.h"
#include "tw.h"

enum { C = 256, F = 512, T = 64, REPS = 7 };

static float *rand_array(long n, uint64_t seed) {
    float *a = malloc((size_t)n * sizeof(float));
    if (!a) { fprintf(stderr, "bench_moe: out of memory\n"); exit(1); }
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_rng_fill_uniform(&r, a, n, -0.1f, 0.1f);
    return a;
}

// Median seconds per token of the forward of a layer with E experts, k per token.
static double time_layer(int E, int k, const float *x, long long *total, long long *active) {
    tw_moe_config cfg = { .router = { .E = E, .k = k, .score = TW_ROUTER_SOFTMAX, .norm_topk = 1,
                                      .scale = 1.0f, .n_group = 1, .topk_group = 1 },
                          .C = C, .F = F, .F_shared = 0 };
    float *router = rand_array((long)E * C, 1), *gate = rand_array((long)E * F * C, 2);
    float *up = rand_array((long)E * F * C, 3), *down = rand_array((long)E * C * F, 4);
    float *y = malloc(sizeof(float) * T * C);
    tw_moe_weights W = { router, NULL, gate, up, down, NULL, NULL, NULL };
    tw_moe_cache cache;
    if (!y || tw_moe_cache_init(&cache, &cfg, T) != TW_OK) {
        fprintf(stderr, "bench_moe: out of memory\n");
        exit(1);
    }
    double t[REPS];
    tw_moe_forward(y, &cache, x, &W, &cfg, T);   // warm-up
    for (int r = 0; r < REPS; r++) {
        double t0 = now_seconds();
        tw_moe_forward(y, &cache, x, &W, &cfg, T);
        t[r] = (now_seconds() - t0) / T;
    }
    *total = tw_moe_params_total(&cfg);
    *active = tw_moe_params_active(&cfg);
    tw_moe_cache_free(&cache);
    free(router); free(gate); free(up); free(down); free(y);
    return median(t, REPS);
}

int main(void) {
    char cpu[256];
    bench_cpu_describe(cpu, sizeof cpu);
    printf("bench_moe: %s\n", cpu);
    printf("MoE FFN forward, C = %d, expert width F = %d, %d tokens, median of %d, naive loops\n",
           C, F, T, REPS);
    float *x = rand_array((long)T * C, 9);
    const int EK[3][2] = { { 8, 2 }, { 2, 2 }, { 8, 8 } };
    double ms[3];
    printf("  %-12s %14s %16s %14s\n", "layer", "params total", "active/token", "ms per token");
    for (int i = 0; i < 3; i++) {
        long long total, active;
        ms[i] = 1e3 * time_layer(EK[i][0], EK[i][1], x, &total, &active);
        char name[32];
        snprintf(name, sizeof name, "E = %d, k = %d", EK[i][0], EK[i][1]);
        printf("  %-12s %14lld %16lld %14.4f\n", name, total, active, ms[i]);
    }
    printf("  E=8,k=2 / E=2,k=2 (same active, 4x total): %.2f\n", ms[0] / ms[1]);
    printf("  E=8,k=8 / E=8,k=2 (same total, 4x active): %.2f\n", ms[2] / ms[0]);
    free(x);
    return 0;
}
