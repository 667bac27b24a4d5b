// bench_serve.c: batched decoding against one sequence at a time, on one thread.
//
// One decode step of one sequence reads every weight once and does 2 FLOPs per weight: about
// 0.5 FLOP per byte read, far below what a core can do per byte its memory delivers, so the decode
// is bound by memory. N sequences decoded together read every weight once per step for N tokens:
// the FLOPs per byte grow N-fold, until the core's FMA units are the limit. This prints, for N
// from 1 to 64 (each sequence at its own position after a 32-token prompt), the aggregate tokens/s
// of tw_batch_forward, its ratio to the single-sequence decode (tw_model_forward_next, what
// ./generate runs) measured in the same repeat, the GFLOP/s and their share of the FMA peak
// measured in the same run (bench/peak.h). Every N runs twice: with the decode's own sums (each
// row bit for bit its sequence decoded alone), and "packed", on the weights packed into panels
// (decode/batch_panels.h: one chain of fused multiply-adds per output, other bits). Every
// batch decodes greedily through tw_batch_forward_greedy: packed, the head's argmax is taken
// inside its kernel and the N x 32000 logits never reach memory; with the decode's sums, the
// logits are written and their argmax taken, as the single sequence's are.
//
//   bench_serve MODEL.bin [-d DECODE_STEPS] [-r REPEATS] [--cpu-time]
//
// --cpu-time times every run by the CPU seconds the process got (cpu_seconds) instead of the wall
// clock: on a machine shared with other work, the wall clock also counts the moments another
// process had the core. (It still counts a slower core: a busy sibling hyperthread, a shared
// cache or memory bus.)
//
// FLOPs per token: 2 per weight of every Linear layer and the head, plus attention's
// 4 * layers * H * D * (keys seen): the dot products with the keys and the weighted sum of the
// values. Each figure is the median over the repeats (the rungs take turns within a repeat, so a
// slow moment of a shared machine hits all of them), with the range of the per-repeat ratios.
// The share of the FMA peak: a short probe of the peak runs in every repeat, beside the rungs, and
// each rung's GFLOP/s is divided by the fastest probe of the run (the core's peak is at least
// that; dividing by a probe that a busy moment slowed could pass 100 %). A share that still
// passes 100 % is not printed: the probes, not the rung, were wrong (PROBE FAILURE).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tw.h"
#include "formats/llama2c.h"
#include "decode/batch.h"
#include "decode/sampler.h"
#include "simd/simd.h"
#include "bench_clock.h"
#include "cpuinfo.h"
#include "peak.h"

enum { PROMPT = 32, MAX_N = 64, MAX_REPEATS = 32 };
static double (*clock_s)(void) = now_seconds;   // or cpu_seconds (--cpu-time)
static const int NS[] = { 1, 2, 4, 8, 16, 32, 64 };
enum { N_NS = sizeof NS / sizeof NS[0] };

// FLOPs of one token at a position seeing S keys.
static double flops_per_token(const tw_model *m, double S) {
    const tw_model_config *c = &m->cfg;
    const tw_mha_config *a = &c->block.attn;
    const double C = a->d_model, HD = (double)a->n_head * a->head_dim;
    const double GD = (double)a->n_kv_head * a->head_dim, F = c->block.ffn_hidden;
    const double ffn = c->block.ffn == TW_FFN_SWIGLU ? 3 * C * F : 2 * C * F;
    const double per_layer = 2 * (C * HD + 2 * C * GD + HD * C + ffn) + 4 * HD * S;
    return c->n_layer * per_layer + 2 * C * c->vocab;
}

// Seconds for `steps` decode steps of one sequence after a PROMPT-token prefill.
static double time_single(const tw_model *m, int steps) {
    tw_model_state s;
    if (tw_model_state_init(&s, m, PROMPT, PROMPT + steps) != TW_OK) { fprintf(stderr, "out of memory\n"); exit(1); }
    int tokens[PROMPT];
    for (int t = 0; t < PROMPT; t++) tokens[t] = (t * 131 + 7) % m->cfg.vocab;
    tw_model_forward_next(&s, m, tokens, PROMPT, 0);
    int tok = tw_argmax(s.logits + (size_t)(PROMPT - 1) * m->cfg.vocab, m->cfg.vocab);
    const double t0 = clock_s();
    for (int i = 0; i < steps; i++) {
        tw_model_forward_next(&s, m, &tok, 1, PROMPT + i);
        tok = tw_argmax(s.logits, m->cfg.vocab);
    }
    const double dt = clock_s() - t0;
    tw_model_state_free(&s);
    return dt;
}

// Seconds for `steps` decode steps of N sequences together (each first prefilled with its own
// PROMPT-token prompt, not timed), through the batch and its paged cache.
static double time_batch(tw_batch *b, int N, int steps) {
    const tw_model *m = b->m;
    const int V = m->cfg.vocab;
    tw_block_table tables[MAX_N];
    tw_block_table *rows[MAX_N];
    int tok[MAX_N], pos[MAX_N];
    for (int i = 0; i < N; i++) {
        tw_block_table_init(&tables[i], &b->pool, PROMPT + steps);
        if (tw_block_table_reserve(&tables[i], &b->pool, PROMPT + steps) != TW_OK) {
            fprintf(stderr, "bench_serve: the pool is too small\n");
            exit(1);
        }
        // The prefill: the prompt as PROMPT rows of one call.
        tw_block_table *pt[PROMPT];
        int ptok[PROMPT], ppos[PROMPT];
        for (int t = 0; t < PROMPT; t++) {
            pt[t] = &tables[i];
            ptok[t] = (t * 131 + 7 * i + 7) % V;
            ppos[t] = t;
        }
        unsigned char want[PROMPT] = { 0 };
        want[PROMPT - 1] = 1;
        tw_batch_forward_greedy(b, pt, ptok, ppos, want, PROMPT, &tok[i]);
        rows[i] = &tables[i];
        pos[i] = PROMPT;
    }
    const double t0 = clock_s();
    for (int s = 0; s < steps; s++) {
        int next[MAX_N];
        tw_batch_forward_greedy(b, rows, tok, pos, NULL, N, next);
        for (int i = 0; i < N; i++) {
            tok[i] = next[i];
            pos[i]++;
        }
    }
    const double dt = clock_s() - t0;
    for (int i = 0; i < N; i++) {
        tw_block_table_release(&tables[i], &b->pool);
        tw_block_table_free(&tables[i]);
    }
    return dt;
}

// "median [min - max]" of n ratios.
static void ratio_range(char *out, size_t size, double *ratio, int n) {
    double lo = ratio[0], hi = ratio[0];
    for (int r = 1; r < n; r++) {
        if (ratio[r] < lo) lo = ratio[r];
        if (ratio[r] > hi) hi = ratio[r];
    }
    snprintf(out, size, "%.2f [%.2f - %.2f]", median(ratio, n), lo, hi);
}

// The batched Linear alone, one of three kernels for T rows, seconds per call, best of `calls`:
// ROWS_KERNEL, tw_simd_linear_rows with the level's register-blocked rows kernel (matvec_rows);
// MATVEC_BLOCKS, the same with that slot switched off in the dispatch table for this measurement
// (the level's matvec on blocks of W's rows, what ran before it); PACKED_KERNEL,
// tw_linear_packed on the panels Wp.
enum kernel { ROWS_KERNEL, MATVEC_BLOCKS, PACKED_KERNEL };
// One of the model's matrices: W (C_out, C_in) and its packed panels Wp.
typedef struct { const char *name; const float *W, *Wp; int C_in, C_out; } matrix;
static double time_linear(enum kernel kind, float *y, const float *x, const matrix *mt, int T,
                          int calls) {
    const int C_in = mt->C_in, C_out = mt->C_out;
    const tw_matmul_fn keep = tw_simd.matvec_rows;
    if (kind == MATVEC_BLOCKS) tw_simd.matvec_rows = NULL;
    double best = 1e30;
    for (int i = 0; i < calls; i++) {
        const double t0 = clock_s();
        if (kind == PACKED_KERNEL) tw_linear_packed(y, x, mt->Wp, NULL, T, C_out, C_in);
        else                       tw_simd_linear_rows(y, x, mt->W, NULL, T, C_in, C_out);
        const double dt = clock_s() - t0;
        if (dt < best) best = dt;
    }
    tw_simd.matvec_rows = keep;
    return best;
}

// GFLOP/s of the rows kernel, of the matvec on blocks and of the packed kernel, on the model's own
// matrices, T = 32 and 64, per repeat (the three take turns), with the rows kernel's ratio to the
// matvec on blocks and the packed kernel's to the rows kernel.
static void linear_alone(const tw_model *m, const tw_batch_panels *p, int repeats) {
    if (!tw_simd.matvec_rows) return;   // this level has no rows kernel
    const tw_model_config *c = &m->cfg;
    const int C = c->block.attn.d_model, F = c->block.ffn_hidden, V = c->vocab;
    const matrix mats[] = {
        { "FFN up (F x C)", m->layers[0].ffn_up.f32, p->layers[0].ffn_up, C, F },
        { "FFN down (C x F)", m->layers[0].ffn_down.f32, p->layers[0].ffn_down, F, C },
        { "head (V x C)", m->head.f32, p->head, C, V },
    };
    const int Ts[] = { 32, 64 };
    printf("\nThe batched Linear alone (tw_simd_linear_rows), best of 5 calls a repeat, median of %d repeats:\n", repeats);
    printf("%-18s %4s %18s %18s %22s %12s %22s\n", "matrix", "T", "rows kernel GF/s", "matvec blocks GF/s",
           "ratio [min - max]", "packed GF/s", "packed / rows kernel");
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) {
        if (!mats[i].W || !mats[i].Wp || F <= 0) continue;
        for (int j = 0; j < 2; j++) {
            const int T = Ts[j];
            float *x = malloc((size_t)T * mats[i].C_in * sizeof(float));
            float *y = malloc((size_t)T * mats[i].C_out * sizeof(float));
            if (!x || !y) { fprintf(stderr, "out of memory\n"); exit(1); }
            for (long k = 0; k < (long)T * mats[i].C_in; k++) x[k] = (float)((k * 131) % 97) / 97.0f - 0.5f;
            const double flops = 2.0 * T * mats[i].C_in * mats[i].C_out;
            double fast[MAX_REPEATS], slow[MAX_REPEATS], packed[MAX_REPEATS];
            double ratio[MAX_REPEATS], pratio[MAX_REPEATS];
            for (int r = 0; r < repeats; r++) {
                fast[r] = flops / time_linear(ROWS_KERNEL, y, x, &mats[i], T, 5) * 1e-9;
                slow[r] = flops / time_linear(MATVEC_BLOCKS, y, x, &mats[i], T, 5) * 1e-9;
                packed[r] = flops / time_linear(PACKED_KERNEL, y, x, &mats[i], T, 5) * 1e-9;
                ratio[r] = fast[r] / slow[r];
                pratio[r] = packed[r] / fast[r];
            }
            char rat[64], prat[64];
            ratio_range(rat, sizeof rat, ratio, repeats);
            ratio_range(prat, sizeof prat, pratio, repeats);
            printf("%-18s %4d %18.1f %18.1f %22s %12.1f %22s\n", mats[i].name, T, median(fast, repeats),
                   median(slow, repeats), rat, median(packed, repeats), prat);
            free(x);
            free(y);
        }
    }
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int steps = 32, repeats = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cpu-time") == 0) clock_s = cpu_seconds;
        else if (argv[i][0] != '-' && path == NULL) path = argv[i];
        else { fprintf(stderr, "usage: bench_serve MODEL.bin [-d DECODE_STEPS] [-r REPEATS] [--cpu-time]\n"); return 2; }
    }
    if (path == NULL || steps < 1 || repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "usage: bench_serve MODEL.bin [-d DECODE_STEPS 1..] [-r REPEATS 1..%d] [--cpu-time]\n", MAX_REPEATS);
        return 2;
    }
    const char *level = tw_simd_init(NULL);
    tw_threads_set(1);
    tw_model m = { 0 };
    char err[512];
    int version;
    if (tw_llama2c_load_any(&m, &version, path, err, sizeof err) != TW_OK) {
        fprintf(stderr, "bench_serve: %s\n", err);
        return 1;
    }
    if (PROMPT + steps > m.cfg.max_seq) {
        fprintf(stderr, "bench_serve: -d %d: the model's context holds %d positions, %d after the prompt\n",
                steps, m.cfg.max_seq, m.cfg.max_seq - PROMPT);
        return 2;
    }
    tw_batch b;
    const int blocks_each = (PROMPT + steps + 15) / 16;
    if (tw_batch_init(&b, &m, MAX_N > PROMPT ? MAX_N : PROMPT, PROMPT + steps, 16, MAX_N * blocks_each) != TW_OK) {
        fprintf(stderr, "bench_serve: cannot allocate the batch\n");
        return 1;
    }
    char cpu[256];
    bench_cpu_describe(cpu, sizeof cpu);
    tw_peak peak = { 0 };
    const char *isa = tw_peak_best_isa();
    const int have_peak = isa && tw_peak_fma(&peak, isa, 0, 5, 0.05);
    printf("bench_serve: %s, %s kernels, 1 thread; %s: %ld parameters, %d layers, C %d, vocab %d\n",
           cpu, level, path, tw_model_count_params(&m), m.cfg.n_layer, m.cfg.block.attn.d_model,
           m.cfg.vocab);
    if (have_peak) printf("FMA peak of one core (%s probe): %.1f GFLOP/s\n", peak.isa, peak.gflops);

    const double avg_keys = PROMPT + (steps + 1) / 2.0;   // keys seen, averaged over the steps
    const double fpt = flops_per_token(&m, avg_keys);
    tw_batch_panels panels;
    if (tw_batch_panels_init(&panels, &m) != TW_OK) {
        fprintf(stderr, "bench_serve: cannot allocate the packed weights\n");
        return 1;
    }
    enum { EXACT, PACKED, N_KINDS };   // the batch's Linear: the decode's sums, or the panels
    double single[MAX_REPEATS], batch[N_KINDS * N_NS][MAX_REPEATS], ratio[N_KINDS * N_NS][MAX_REPEATS];
    double share[N_KINDS * N_NS][MAX_REPEATS], peak_r[MAX_REPEATS];
    for (int r = 0; r < repeats; r++) {
        tw_peak pr = { 0 };
        peak_r[r] = have_peak && tw_peak_fma(&pr, isa, 0, 3, 0.02) ? pr.gflops : 0.0;
        single[r] = steps / time_single(&m, steps);
        for (int j = 0; j < N_KINDS * N_NS; j++) {
            b.panels = j / N_NS == PACKED ? &panels : NULL;
            batch[j][r] = (double)NS[j % N_NS] * steps / time_batch(&b, NS[j % N_NS], steps);
            ratio[j][r] = batch[j][r] / single[r];
        }
        b.panels = NULL;
    }
    // "of peak" is over the fastest probe of the run: the core's peak is at least that, and a probe
    // that ran while the machine was busier only saw less of it (a share over a slow probe could
    // pass 100 %, a figure that cannot be true).
    double best_peak = have_peak ? peak.gflops : 0.0;
    for (int r = 0; r < repeats; r++) if (peak_r[r] > best_peak) best_peak = peak_r[r];
    for (int j = 0; j < N_KINDS * N_NS; j++)
        for (int r = 0; r < repeats; r++)
            share[j][r] = best_peak > 0 ? 100.0 * batch[j][r] * fpt * 1e-9 / best_peak : 0.0;
    const double s_med = median(single, repeats);
    printf("\n%d decode steps after a %d-token prompt, median of %d repeats (ratios: per repeat, "
           "median [min - max]); times: %s\n", steps, PROMPT, repeats,
           clock_s == cpu_seconds ? "CPU seconds of the process (--cpu-time)" : "wall clock");
    if (have_peak)
        printf("peak probed in each repeat: median %.1f GFLOP/s (the first probe: %.1f); \"of peak\" "
               "is of the fastest probe, %.1f GFLOP/s, per repeat, median [min - max]\n",
               median(peak_r, repeats), peak.gflops, best_peak);
    printf("%-28s %12s %22s %10s %22s\n", "", "tok/s", "x one sequence", "GFLOP/s", "of peak");
    printf("%-28s %12.1f %22s %10.2f", "one sequence (forward_next)", s_med, "1", s_med * fpt * 1e-9);
    if (have_peak) {
        double one[MAX_REPEATS];
        for (int r = 0; r < repeats; r++) one[r] = best_peak > 0 ? 100.0 * single[r] * fpt * 1e-9 / best_peak : 0.0;
        printf(" %20.1f %%", median(one, repeats));
    }
    printf("\n");
    int probe_failed = 0;
    for (int j = 0; j < N_KINDS * N_NS; j++) {
        const double tps = median(batch[j], repeats), gf = tps * fpt * 1e-9;
        char name[64], rat[64];
        snprintf(name, sizeof name, "batch of %d%s", NS[j % N_NS], j / N_NS == PACKED ? ", packed" : "");
        ratio_range(rat, sizeof rat, ratio[j], repeats);
        printf("%-28s %12.1f %22s %10.2f", name, tps, rat, gf);
        if (have_peak) {
            double slo = share[j][0], shi = share[j][0];
            for (int r = 1; r < repeats; r++) {
                if (share[j][r] < slo) slo = share[j][r];
                if (share[j][r] > shi) shi = share[j][r];
            }
            char sh[64];
            if (shi > 100.0) {   // faster than every probe: the probe, not the rung, is wrong
                snprintf(sh, sizeof sh, "n/a (above the probe)");
                probe_failed = 1;
            } else snprintf(sh, sizeof sh, "%.1f %% [%.1f - %.1f]", median(share[j], repeats), slo, shi);
            printf(" %22s", sh);
        }
        printf("\n");
    }
    printf("(FLOPs per token: %.3g at %.0f keys on average)\n", fpt, avg_keys);
    if (probe_failed)
        printf("PROBE FAILURE: a batch ran faster than every probe of the FMA peak in this run (busier "
               "machine during the probes, or --cpu-time against the probes' wall clock): those shares "
               "are not printed; run again on a quiet machine\n");
    linear_alone(&m, &panels, repeats);
    tw_batch_panels_free(&panels);
    tw_batch_free(&b);
    tw_model_free(&m);
    return 0;
}
