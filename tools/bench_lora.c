// bench_lora.c: what a LoRA step costs against a full step (make bench-train prints it), on
// stories260K's real weights with ./train's default batch (B 8, T 64), LoRA r 4 on wq and wv.
// Both steps run the model's forward and backward in full (a LoRA step trains on the merged
// weights and projects their gradients onto A and B: train/lora_step.h); a LoRA step saves
// AdamW over the frozen parameters and pays the merge and the projection. Each round times
// `steps` steps of each kind back to back (the order alternating between rounds), and the ratio
// is the median of the rounds' ratios with its range (bench/bench_spread.h).
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

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "data/models/stories260K.bin";
    const int B = 8, T = 64, steps = 3, rounds = 7;
    char err[512] = "", cpu[256];
    const char *level = tw_simd_init(NULL);
    if (!level) { fprintf(stderr, "bench_lora: no SIMD level\n"); return 1; }
    tw_model full, base, work;
    if (tw_model_load_file(&full, path, err, sizeof err) != TW_OK ||
        tw_model_load_file(&base, path, err, sizeof err) != TW_OK ||
        tw_model_load_file(&work, path, err, sizeof err) != TW_OK) {
        fprintf(stderr, "bench_lora: %s (make model)\n", err);
        return 1;
    }
    const int targets[2] = { TW_LORA_WQ, TW_LORA_WV };
    tw_lora_set ad;
    check(tw_lora_set_init(&ad, &base.cfg, 4, 8.0f, targets, 2), "adapters");
    tw_lora_set_randomize(&ad, 1);
    tw_trainer tf, tl;
    tw_lora_trainer lt;
    check(tw_trainer_init(&tf, &full, T), "trainer");
    check(tw_trainer_init(&tl, &work, T), "trainer");
    check(tw_lora_trainer_init(&lt, &ad, &base.cfg), "LoRA trainer");
    int *in = malloc(sizeof(int) * B * T), *tg = malloc(sizeof(int) * B * T);
    if (!in || !tg) check(TW_ERR_NOMEM, "batch");
    tw_rng r;
    tw_rng_init(&r, 7);
    for (int i = 0; i < B * T; i++) in[i] = (int)(tw_rng_next(&r) % 512);
    for (int i = 0; i < B * T; i++) tg[i] = (int)(tw_rng_next(&r) % 512);
    const tw_train_config c = { B, T, 1000000, 0, 1e-4f, 1e-4f, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    tw_train_stats st;
    check(tw_train_step(&st, &tf, &full, in, tg, &c), "full step");   // warm-up
    check(tw_lora_train_step(&st, &lt, &tl, &work, &base, &ad, in, tg, &c), "LoRA step");
    double t_full[BENCH_MAX_REPEATS], t_lora[BENCH_MAX_REPEATS];
    for (int k = 0; k < rounds; k++)
        for (int which = 0; which < 2; which++) {
            const int lora = (which + k) % 2;
            const double t0 = now_seconds();
            for (int s = 0; s < steps; s++)
                check(lora ? tw_lora_train_step(&st, &lt, &tl, &work, &base, &ad, in, tg, &c)
                           : tw_train_step(&st, &tf, &full, in, tg, &c), "step");
            (lora ? t_lora : t_full)[k] = (now_seconds() - t0) / steps;
        }
    const spread ratio = paired_ratio(t_lora, t_full, rounds);
    bench_cpu_describe(cpu, sizeof cpu);
    printf("LoRA step vs full step: stories260K, B %d, T %d, r 4 on wq,wv (%ld of %ld parameters "
           "trained), %s kernels, 1 thread; %s\n", B, T, ad.n_floats, tw_model_count_params(&base), level, cpu);
    printf("LoRA step %.2f ms, full step %.2f ms (medians of %d rounds of %d steps); "
           "LoRA / full = %.2f [%.2f - %.2f]\n", 1e3 * median(t_lora, rounds), 1e3 * median(t_full, rounds),
           rounds, steps, ratio.median, ratio.lo, ratio.hi);
    free(in); free(tg);
    tw_lora_trainer_free(&lt);
    tw_trainer_free(&tf);
    tw_trainer_free(&tl);
    tw_lora_set_free(&ad);
    tw_model_free(&full); tw_model_free(&base); tw_model_free(&work);
    return 0;
}
