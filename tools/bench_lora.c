// bench_lora.c: what a LoRA step costs against a full step (make bench-train prints it), LoRA r 4
// on wq and wv, on two shapes: stories260K's real weights with ./train's default batch (B 8, T 64),
// and the stories15M shape (random weights, B 4, T 256, as tools/bench_train.c).
// Both steps run the model's forward and the backward's activation gradients in full; a LoRA step
// trains on the merged weights and projects the targets' weight gradients onto A and B
// (train/lora_step.h), forms no other weight gradient (the frozen base's dW products, the largest
// of them the tied head's (V, C)), zeroes and updates only the adapters, and pays the merge and
// the projection. Each round times `steps` steps of each kind back to back (the order alternating
// between rounds), and the ratio is the median of the rounds' ratios with its range
// (bench/bench_spread.h).
//   bench_lora [MODEL.bin]   (default data/models/stories260K.bin)
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_clock.h"
#include "bench_spread.h"
#include "cpuinfo.h"
#include "core/rng.h"
#include "train/checkpoint.h"
#include "train/lora_step.h"
#include "simd/simd.h"

static void check(tw_status st, const char *what) {
    if (st != TW_OK) {
        fprintf(stderr, "bench_lora: %s: %s\n", what, tw_status_str(st));
        exit(1);
    }
}

// The stories15M shape: llama2.c's Llama (RMSNorm, RoPE, SwiGLU, tied head, no biases), dim 288,
// 6 layers of 6 heads, hidden 768, vocabulary 32000, seeded random weights.
static void make_15m(tw_model *m, int T) {
    tw_model_config c;
    check(tw_model_config_preset(&c, "llama"), "preset");
    c.vocab = 32000;
    c.max_seq = T;
    c.n_layer = 6;
    c.tied = 1;
    c.block.attn.d_model = 288;
    c.block.attn.n_head = 6;
    c.block.attn.n_kv_head = 6;
    c.block.attn.head_dim = 48;
    c.block.ffn_hidden = 768;
    c.block.norm_eps = 1e-5f;
    check(tw_model_init(m, &c), "15M model");
    tw_model_randomize(m, 1234);
}

// A copy of m (same configuration, same weights).
static void copy_model(tw_model *dst, const tw_model *m) {
    check(tw_model_init(dst, &m->cfg), "model copy");
    memcpy(dst->memory, m->memory, (size_t)m->n_floats * sizeof(float));
}

// Times LoRA steps against full steps on base (whose weights the full steps move) and prints a line.
static void bench_shape(const char *name, tw_model *base, int B, int T, int steps, int rounds,
                        const char *level) {
    tw_model full, work;
    copy_model(&full, base);
    copy_model(&work, base);
    const int targets[2] = { TW_LORA_WQ, TW_LORA_WV };
    tw_lora_set ad;
    check(tw_lora_set_init(&ad, &base->cfg, 4, 8.0f, targets, 2), "adapters");
    tw_lora_set_randomize(&ad, 1);
    tw_trainer tf, tl;
    tw_lora_trainer lt;
    check(tw_trainer_init(&tf, &full, T), "trainer");
    check(tw_trainer_init(&tl, &work, T), "trainer");
    check(tw_lora_trainer_init(&lt, &ad, &base->cfg), "LoRA trainer");
    const int V = base->cfg.vocab;
    int *in = malloc(sizeof(int) * B * T), *tg = malloc(sizeof(int) * B * T);
    if (!in || !tg) check(TW_ERR_NOMEM, "batch");
    tw_rng r;
    tw_rng_init(&r, 7);
    for (int i = 0; i < B * T; i++) in[i] = (int)(tw_rng_next(&r) % (uint64_t)V);
    for (int i = 0; i < B * T; i++) tg[i] = (int)(tw_rng_next(&r) % (uint64_t)V);
    const tw_train_config c = { B, T, 1000000, 0, 1e-4f, 1e-4f, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    tw_train_stats st;
    check(tw_train_step(&st, &tf, &full, in, tg, &c), "full step");   // warm-up
    check(tw_lora_train_step(&st, &lt, &tl, &work, base, &ad, in, tg, &c), "LoRA step");
    // Wall and CPU seconds of each round's steps (one thread: on a machine shared with other jobs
    // the CPU time is the steadier figure; both ratios are printed).
    double t_full[BENCH_MAX_REPEATS], t_lora[BENCH_MAX_REPEATS];
    double c_full[BENCH_MAX_REPEATS], c_lora[BENCH_MAX_REPEATS];
    for (int k = 0; k < rounds; k++)
        for (int which = 0; which < 2; which++) {
            const int lora = (which + k) % 2;
            const double t0 = now_seconds(), c0 = cpu_seconds();
            for (int s = 0; s < steps; s++)
                check(lora ? tw_lora_train_step(&st, &lt, &tl, &work, base, &ad, in, tg, &c)
                           : tw_train_step(&st, &tf, &full, in, tg, &c), "step");
            (lora ? t_lora : t_full)[k] = (now_seconds() - t0) / steps;
            (lora ? c_lora : c_full)[k] = (cpu_seconds() - c0) / steps;
        }
    const spread ratio = paired_ratio(t_lora, t_full, rounds), cpu = paired_ratio(c_lora, c_full, rounds);
    printf("%s, B %d, T %d, r 4 on wq,wv (%ld of %ld parameters trained), %s kernels, 1 thread, "
           "medians of %d rounds of %d steps:\n", name, B, T, ad.n_floats, tw_model_count_params(base),
           level, rounds, steps);
    printf("  wall: LoRA step %.1f ms, full step %.1f ms, LoRA / full = %.2f [%.2f - %.2f]\n",
           1e3 * median(t_lora, rounds), 1e3 * median(t_full, rounds), ratio.median, ratio.lo, ratio.hi);
    printf("  CPU:  LoRA step %.1f ms, full step %.1f ms, LoRA / full = %.2f [%.2f - %.2f]\n",
           1e3 * median(c_lora, rounds), 1e3 * median(c_full, rounds), cpu.median, cpu.lo, cpu.hi);
    fflush(stdout);
    free(in); free(tg);
    tw_lora_trainer_free(&lt);
    tw_trainer_free(&tf);
    tw_trainer_free(&tl);
    tw_lora_set_free(&ad);
    tw_model_free(&full); tw_model_free(&work);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "data/models/stories260K.bin";
    char err[512] = "", cpu[256];
    const char *level = tw_simd_init(NULL);
    if (!level) { fprintf(stderr, "bench_lora: no SIMD level\n"); return 1; }
    tw_matmul_set_threads(1);   // the packed products on one thread (an OpenMP build has more)
    tw_model base;
    if (tw_model_load_file(&base, path, err, sizeof err) != TW_OK) {
        fprintf(stderr, "bench_lora: %s (make model)\n", err);
        return 1;
    }
    bench_cpu_describe(cpu, sizeof cpu);
    printf("LoRA step vs full step; %s\n", cpu);
    bench_shape("stories260K", &base, 8, 64, 3, 7, level);
    tw_model_free(&base);
    make_15m(&base, 256);
    bench_shape("stories15M shape", &base, 4, 256, 1, 3, level);
    tw_model_free(&base);
    return 0;
}
