// Lesson 12: naive and optimised kernels on this machine.
//
// Teaches, for a reader who has never tuned code: where a model spends its time (multiply-adds
// in its Linear layers), why the obvious loops are slow and what each faster version changes.
// The dot product waits on one running sum; several partial sums in SIMD registers fix that.
// The matrix multiply climbs a ladder (lib/simd/matmul_*.c): loop order, cache blocking, packed
// panels around a SIMD micro-kernel. Every rung is checked against the naive loop before it is
// timed, and faster code gives the same numbers up to rounding. Finally the model's Linear layer
// switches to the fast kernels with one call, tw_simd_init. What a kernel engineer measures
// beyond this (instruction placement, peaks, threads) is in docs/kernels.md.
// Calls: tw_simd_available, tw_kernels_for, tw_simd_init, tw_dot_naive, tw_matmul_naive,
//        tw_matmul_reordered, tw_matmul_blocked, tw_matmul_packed_scalar, tw_linear_forward,
//        tw_linear_naive.
// Build & run: make lesson12 && ./lesson12 [--simd naive|avx2|avx512|neon] [--out DIR] [--no-plot]
// Plot:        gnuplot -e "datafile='out/lesson12/ladder.dat'" viz/bench_gflops.gp
// The full benchmark (every size, OpenBLAS side by side, % of peak): make bench BLAS=openblas
// Writes: ladder.dat
// Pictures: ladder.png
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lesson.h"
#include "simd/simd.h"
#include "nn/reference.h"

static const lesson_info INFO = {
    12, "Naive and optimised kernels",
    "Almost all of a language model's time goes into multiply-adds in its Linear layers. The "
    "library computes them with plain loops a reader can check by eye; this lesson times those "
    "against faster versions on this machine: a dot product with several running sums in SIMD "
    "registers, and the matrix multiply ladder (loop order, cache blocking, packed panels with a "
    "SIMD micro-kernel). Each faster version is first checked against the plain one, then timed. "
    "It ends by switching the Linear layer to the fast kernels with tw_simd_init. More for kernel "
    "engineers: docs/kernels.md."
};

// Best of `reps` runs, in seconds, after one warm-up run.
typedef void (*mm_fn)(float *C, const float *A, const float *B, int M, int N, int K);
static double time_matmul(mm_fn f, float *C, const float *A, const float *B, int n, int reps) {
    f(C, A, B, n, n, n);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = lesson_seconds();
        f(C, A, B, n, n, n);
        double t = lesson_seconds() - t0;
        if (t < best) best = t;
    }
    return best;
}

// 1. Where the time goes: stories260K's Linear layers against everything else, in multiply-adds.
static void where_the_time_goes(void) {
    lesson_section("Where a model spends its time");
    // stories260K (lesson 11): C 64, F 172, 5 layers, 8 query heads and 4 kv heads of 8, V 512.
    const long C = 64, F = 172, L = 5, kv = 32, V = 512, t = 100;   // t: the position's context
    const long linear = L * (C * C + 2 * C * kv + C * C + 3 * C * F) + C * V;
    const long attention = L * 2 * t * C;   // q.k over t keys, then t weighted values, 8 heads x 8
    lesson_say("To predict one token, stories260K multiplies its input by every weight matrix: "
               "%ld multiply-adds in its Linear layers (q, k, v, output, the three FFN matrices, "
               "the classifier). Attention itself, at a context of %ld tokens, is %ld more; norms "
               "and softmax are a few thousand. So the speed of one loop, the multiply-add of a "
               "row by a vector (or of a matrix by a matrix, for many tokens at once), is the "
               "speed of the model. That loop is what this lesson times.", linear, t, attention);
    lesson_expect("the Linear layers hold most of the multiply-adds", linear > 2 * attention);
}

// 2. The levels: which instruction sets this CPU has, found at run time.
static void the_levels(const tw_kernels *fast) {
    lesson_section("The levels this machine offers");
    lesson_say("The kernels in lib/simd/ exist at several levels: naive (plain C, always), avx2 and "
               "avx512 on x86-64, neon on 64-bit Arm. SIMD (single instruction, multiple data) "
               "instructions work on 8 or 16 floats at once. Which levels can run is decided at run "
               "time from what the CPU reports, so the same binary runs on a machine without AVX.");
    lesson_note("available here: %s; this lesson compares naive with %s", tw_simd_available(),
                fast->level);
}

// 3. The dot product: one running sum against several.
static void dot_product(const tw_kernels *fast) {
    lesson_section("A dot product: one running sum against many");
    const int n = 4096;
    float *a = lesson_uniform(n, -1, 1, 1), *b = lesson_uniform(n, -1, 1, 2);
    float d_naive = tw_dot_naive(a, b, n), d_fast = fast->dot(a, b, n);
    double abs_sum = 0;
    for (int i = 0; i < n; i++) abs_sum += fabs((double)a[i] * b[i]);
    lesson_say("The naive loop adds one product at a time into one sum. A CPU can start a new add "
               "every cycle, but each add takes several cycles to finish, and the next one needs "
               "its result: the loop waits. The fast version keeps many sums (several SIMD "
               "registers of 8 or 16 floats each), so many adds are in flight at once, and adds "
               "them together at the end. The same mathematics in a different order, so the "
               "rounding differs: two orders of a sum of n products differ by at most "
               "2 n u sum|a b| (u = 2^-24, the float's relative rounding step).");
    lesson_expect_near("fast dot == naive dot within 2 n u sum|ab|", d_fast, d_naive,
                       2.0 * n * 5.96e-8 * abs_sum);
    double t0 = lesson_seconds();
    volatile float sink = 0;
    for (int r = 0; r < 2000; r++) sink += tw_dot_naive(a, b, n);
    double t_naive = (lesson_seconds() - t0) / 2000;
    t0 = lesson_seconds();
    for (int r = 0; r < 2000; r++) sink += fast->dot(a, b, n);
    double t_fast = (lesson_seconds() - t0) / 2000;
    (void)sink;
    lesson_note("n = %d: naive %.2f us, %s %.2f us: %.1fx faster", n, t_naive * 1e6, fast->level,
                t_fast * 1e6, t_naive / t_fast);
}

// 4. The matrix multiply ladder at n = 128 and 256: each rung checked, then timed.
static void matmul_ladder(const tw_kernels *fast) {
    lesson_section("The matrix multiply ladder");
    lesson_say("C = A B for n x n matrices costs 2 n^3 floating-point operations (n^3 "
               "multiply-adds). Each rung below is a separate file in lib/simd/ whose comment says "
               "what it changes: naive (i-j-k: walks B down a column, jumping through memory), "
               "reordered (i-k-j: walks rows, the next float is always the next in memory), "
               "blocked (works on tiles small enough to stay in the cache), packed (copies tiles "
               "in the order the inner loop reads them, and keeps a 4 x 8 tile of C in "
               "registers), and the SIMD micro-kernel of the chosen level. Every rung is checked "
               "against naive before it is timed.");
    struct { const char *name; mm_fn fn; } rungs[] = {
        { "naive", tw_matmul_naive },     { "reordered", tw_matmul_reordered },
        { "blocked", tw_matmul_blocked }, { "packed", tw_matmul_packed_scalar },
        { fast->level, fast->matmul },
    };
    const int n_rungs = (int)(sizeof rungs / sizeof rungs[0]);
    const int sizes[2] = { 128, 256 };
    double gflops[5][2];
    for (int s = 0; s < 2; s++) {
        int m = sizes[s];
        float *A = lesson_uniform((long)m * m, -1, 1, 3), *B = lesson_uniform((long)m * m, -1, 1, 4);
        float *want = lesson_alloc((long)m * m), *got = lesson_alloc((long)m * m);
        tw_matmul_naive(want, A, B, m, m, m);
        printf("  n = %d:\n", m);
        for (int r = 0; r < n_rungs; r++) {
            if (r > 0) {
                rungs[r].fn(got, A, B, m, m, m);
                char what[96];
                // |A|, |B| <= 1: each element's two sums differ by at most 2 n u n = 2 n^2 u.
                snprintf(what, sizeof what, "%s == naive (n = %d, tol 2 n^2 u)", rungs[r].name, m);
                lesson_expect_close(what, got, want, (long)m * m, (float)(2.0 * m * m * 5.96e-8));
            }
            double t = time_matmul(rungs[r].fn, got, A, B, m, 3);
            gflops[r][s] = 2.0 * m * m * m / t * 1e-9;
            printf("    %-10s %8.2f ms  %7.1f GFLOP/s  %6.1fx naive\n", rungs[r].name, t * 1e3,
                   gflops[r][s], gflops[r][s] / gflops[0][s]);
        }
    }
    lesson_note("the top rung against naive at n = 256: %.0fx. `make bench` adds larger sizes, the "
                "machine's peak, threads and OpenBLAS.", gflops[n_rungs - 1][1] / gflops[0][1]);
    lesson_say("Two things to notice. Reordered, blocked and packed change only the order of "
               "the loops, not the sum each element of C adds up, so their results should equal "
               "naive's exactly (the max |diff| above); the SIMD rung adds in another order and "
               "differs by rounding only. And \"blocked\" is no faster than "
               "\"reordered\" here (%.2fx and %.2fx of its time at n = 128 and 256): at these sizes "
               "the matrices fit in the cache anyway, so tiles have nothing to save; tiling pays "
               "on large matrices (`make bench`, n = 1024 and up). If the two differ here, that is "
               "where the compiler and linker placed two copies of the same loop: "
               "docs/kernels.md measures it.", gflops[1][0] / gflops[2][0], gflops[1][1] / gflops[2][1]);
    char table[1024];
    int len = snprintf(table, sizeof table, "# GFLOP/s per matmul rung (lesson 12)\n# rung n=%d n=%d\n",
                       sizes[0], sizes[1]);
    for (int r = 0; r < n_rungs && len < (int)sizeof table; r++)
        len += snprintf(table + len, sizeof table - (size_t)len, "%s %.2f %.2f\n", rungs[r].name,
                        gflops[r][0], gflops[r][1]);
    lesson_write_text("ladder.dat", table);
    lesson_plot("bench_gflops.gp", "ladder.dat", "ladder.png");
}

// 5. The model's Linear layer on the fast kernels: one call, the same numbers up to rounding.
static void switch_the_model(const tw_kernels *fast) {
    lesson_section("Switching the model to the fast kernels");
    lesson_say("The Linear layer (tw_linear_forward) is the naive loop until a program calls "
               "tw_simd_init once at start-up (from a --simd flag, or with NULL to honour the "
               "environment variable TW_SIMD=naive|avx2|avx512|neon). After that it runs the "
               "selected kernel for one token and the packed matmul for many. The numbers change "
               "by rounding only.");
    const int T = 7, C_in = 288, C_out = 768;   // the 15M model's FFN shape, 7 tokens
    float *x = lesson_uniform((long)T * C_in, -1, 1, 5), *W = lesson_uniform((long)C_out * C_in, -0.1f, 0.1f, 6);
    float *y_ref = lesson_alloc((long)T * C_out), *y = lesson_alloc((long)T * C_out);
    tw_linear_naive(y_ref, x, W, NULL, T, C_in, C_out);
    const char *chosen = tw_simd_init(fast->level);
    lesson_expect("tw_simd_init accepted the level", chosen != NULL);
    tw_linear_forward(y, x, W, NULL, T, C_in, C_out);
    // |x| <= 1, |W| <= 0.1: the bound 2 C_in u sum|x w| <= 2 * 288 * u * 28.8 = 1e-3.
    lesson_expect_close("Linear layer after tw_simd_init == naive loop (tol 1e-3)", y, y_ref,
                        (long)T * C_out, 1e-3f);
    tw_simd_init("naive");   // back to the default for anything after this
    lesson_note("level now in use by the library: %s (restored)", tw_simd.level);
}

int main(int argc, char **argv) {
    const char *level = NULL;
    const lesson_opt extra[] = {
        { "--simd", 's', &level, "LEVEL", "the fast level to compare (default: the best this CPU has)" },
        { NULL, 0, NULL, NULL, NULL },
    };
    lesson_start(argc, argv, &INFO, (lesson_args){ .no_seed = 1 }, extra);
    const tw_kernels *fast = tw_kernels_for(level ? level : "auto");
    if (!fast) {   // bad usage: exit 2, as for any bad flag
        fprintf(stderr, "lesson12: --simd %s: unknown or not available on this machine "
                        "(available: %s)\n", level, tw_simd_available());
        return 2;
    }
    where_the_time_goes();
    the_levels(fast);
    dot_product(fast);
    matmul_ladder(fast);
    switch_the_model(fast);
    lesson_say("Try it: make exercise1 .. exercise4 (dot product, matvec, softmax, micro-kernel)");
    return lesson_finish();
}
