// bench_dist.c: data-parallel training tokens per second, 1 process against 2 (one thread each),
// for the stories260K and stories15M shapes of bench_train.c, with the share of a step spent
// waiting for MPI. Run by `make bench-train` (when Open MPI is installed) as
//   mpirun -np 2 ./build-bench/tools/bench_dist --shape 260k|15m [--steps N] [--rounds N]
// Each round times process 0 alone (tw_dist_step on the one-process communicator: its batch of
// B rows; process 1 sleeps meanwhile, not spinning) and then both processes together (B rows
// each, 2B a step, the gradients reduced over MPI as ./train-mpi does), so the ratio of a round
// compares two figures taken seconds apart; the printed speed-up is the median of the rounds'
// ratios, with their range. A benchmark, not a test: the numbers depend on the machine and its
// load (the equality of the results is tests/test_train_dist.c's and tests/train_mpi_more.sh's).
#define _POSIX_C_SOURCE 200809L   // nanosleep
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "comm.h"
#include "core/rng.h"
#include "nn/model.h"
#include "train/batches.h"
#include "train/dist.h"
#include "train/step.h"
#include "simd/simd.h"

typedef struct { const char *name; int dim, n_layer, n_head, n_kv_head, hidden, vocab, B, T; } shape;
static const shape SHAPES[] = {   // bench_train.c's
    { "stories260K", 64, 5, 8, 4, 172, 512, 8, 256 },
    { "stories15M", 288, 6, 6, 6, 768, 32000, 4, 256 },
};

static void check(tw_status st, const char *what) {
    if (st != TW_OK) {
        fprintf(stderr, "bench_dist: %s: %s\n", what, tw_status_str(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *x, int n) { qsort(x, (size_t)n, sizeof *x, cmp_double); return x[n / 2]; }

// A model of the shape (seeded, as bench_train.c), its trainer, and a data-parallel driver.
typedef struct {
    tw_model m;
    tw_trainer t;
    tw_dist d;
} run;

static void run_init(run *r, const shape *sh, const tw_comm *c) {
    tw_model_config mc;
    check(tw_model_config_preset(&mc, "llama"), "preset");
    mc.vocab = sh->vocab; mc.max_seq = sh->T; mc.n_layer = sh->n_layer; mc.tied = 1;
    mc.block.attn.d_model = sh->dim; mc.block.attn.n_head = sh->n_head;
    mc.block.attn.n_kv_head = sh->n_kv_head; mc.block.attn.head_dim = sh->dim / sh->n_head;
    mc.block.ffn_hidden = sh->hidden; mc.block.norm_eps = 1e-5f;
    check(tw_model_init(&r->m, &mc), "model");
    tw_model_randomize(&r->m, 1234);
    check(tw_trainer_init(&r->t, &r->m, sh->T), "trainer");
    check(tw_dist_init(&r->d, c, &r->t, &r->m, sh->B, sh->T, 1, 0), "data-parallel buffers");
}

static void run_free(run *r) {
    tw_dist_free(&r->d);
    tw_trainer_free(&r->t);
    tw_model_free(&r->m);
}

// Median seconds per step over steps steps; *wait_share: MPI wait over step time, summed.
static double time_steps(double *wait_share, run *r, tw_batcher *b, const tw_train_config *c, int steps) {
    double t[64], wait = 0.0, total = 0.0;
    for (int i = 0; i < steps; i++) {
        tw_train_stats st;
        const double t0 = now();
        check(tw_dist_step(&st, &r->d, &r->t, &r->m, b, c), "step");
        t[i] = now() - t0;
        total += t[i];
        wait += r->d.wait_seconds;
    }
    *wait_share = total > 0 ? wait / total : 0.0;
    return median(t, steps);
}

// Process 1 waits for process 0's word without spinning a core (MPI's own waits poll).
static void sleep_until_told(void) {
    int flag = 0, word;
    const struct timespec ms = { 0, 1000000 };
    while (!flag) {
        MPI_Iprobe(0, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (!flag) nanosleep(&ms, NULL);
    }
    MPI_Recv(&word, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
    tw_comm comm;
    if (train_comm_open(&comm, &argc, &argv) != 0) return 1;
    const shape *sh = &SHAPES[0];
    int steps = 0, rounds = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--shape")) sh = !strcmp(argv[i + 1], "15m") ? &SHAPES[1] : &SHAPES[0];
        else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    }
    const char *level = tw_simd_init(NULL);   // the best kernels this CPU has, as ./train
    const int big = sh == &SHAPES[1];
    if (steps < 1 || steps > 64) steps = big ? 2 : 5;
    if (rounds < 1 || rounds > 64) rounds = big ? 3 : 5;
    if (comm.size != 2) {
        if (comm.rank == 0) fprintf(stderr, "bench_dist: run it as mpirun -np 2 (got %d processes)\n", comm.size);
        return 2;
    }
    // Random tokens, as bench_train.c's batches: 64 steps' worth, in file order.
    const long n = 64L * 2 * sh->B * sh->T + 1;
    int *tokens = malloc((size_t)n * sizeof *tokens);
    if (!tokens) check(TW_ERR_NOMEM, "tokens");
    tw_rng rng;
    tw_rng_init(&rng, 99);
    for (long i = 0; i < n; i++) tokens[i] = (int)(tw_rng_next(&rng) % (uint64_t)sh->vocab);
    const tw_train_config c = { sh->B, sh->T, 1000, 0, 1e-4f, 1e-4f, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    tw_batcher b1, b2;
    check(tw_batcher_init(&b1, tokens, n, sh->B, sh->T, 0, 1), "batches");
    check(tw_batcher_init(&b2, tokens, n, 2 * sh->B, sh->T, 0, 1), "batches");
    const tw_comm single = tw_comm_single();
    run solo, duo;
    if (comm.rank == 0) run_init(&solo, sh, &single);
    run_init(&duo, sh, &comm);
    if (comm.rank == 0)
        printf("%s shape, data parallel (one thread per process, no OpenMP, %s kernels; %s): B = %d rows "
               "per process, T = %d\n", sh->name, level ? level : "?", train_comm_name(), sh->B, sh->T);
    double solo_tps[64], duo_tps[64], ratio[64], share[64];
    for (int r = -1; r < rounds; r++) {   // round -1: warm-up, not counted
        double w1 = 0.0;
        if (comm.rank == 0) {
            const double s1 = time_steps(&w1, &solo, &b1, &c, r < 0 ? 1 : steps);
            if (r >= 0) solo_tps[r] = (double)sh->B * sh->T / s1;
            int word = 1;
            MPI_Send(&word, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        } else {
            sleep_until_told();
        }
        double w2 = 0.0;
        const double s2 = time_steps(&w2, &duo, &b2, &c, r < 0 ? 1 : steps);
        if (r >= 0 && comm.rank == 0) {
            duo_tps[r] = 2.0 * sh->B * sh->T / s2;
            share[r] = w2;
            ratio[r] = duo_tps[r] / solo_tps[r];
        }
    }
    if (comm.rank == 0) {
        double lo = ratio[0], hi = ratio[0];
        for (int r = 1; r < rounds; r++) { lo = ratio[r] < lo ? ratio[r] : lo; hi = ratio[r] > hi ? ratio[r] : hi; }
        const double rs = median(ratio, rounds), ms = median(share, rounds);
        printf("  %-11s 1 process   %9.0f tok/s\n", sh->name, median(solo_tps, rounds));
        printf("  %-11s 2 processes %9.0f tok/s   mpi-wait %4.1f%% of a step   speed-up %.2fx (rounds %.2f..%.2f, %d rounds)\n",
               sh->name, median(duo_tps, rounds), 100.0 * ms, rs, lo, hi, rounds);
        run_free(&solo);
    }
    run_free(&duo);
    tw_batcher_free(&b1);
    tw_batcher_free(&b2);
    free(tokens);
    return 0;
}
