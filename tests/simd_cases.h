// simd_cases.h: the checks of every SIMD kernel against its reference (the loop in the component's
// own file, gathered as tw_kernels_naive in lib/nn/reference.h), written once and run by
// two drivers: the Check suite (tests/test_simd.c) and the Check-free self-test that `make
// test-arm` runs under qemu (tests/arm/simd_selftest.c). Each case takes one level's table and
// one size, returns 0 on success, or 1 with a message saying what differed and by how much.
//
// Tolerances are derived, not guessed. u = 2^-24 is float's unit roundoff. A sum of n products
// computed in any order has an error of at most gamma_n * sum|a_i b_i| with gamma_n ~ n u
// (Higham, Accuracy and Stability of Numerical Algorithms, eq. 3.5), so two differently ordered
// sums differ by at most 2 n u sum|a_i b_i|: that is the bound for dot, matvec and matmul,
// computed per element from the actual inputs. The vectorised exp has a measured relative error
// EXP_RTOL (see case_exp); every bound involving exp adds it. Each case's comment gives its bound.
#ifndef SIMD_CASES_H
#define SIMD_CASES_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/rng.h"
#include "simd/simd.h"
#include "nn/reference.h"
#include "nn/rope.h"
#include "sc_rand.h"

#define U_ROUND 5.9604644775390625e-8   // 2^-24
// Maximum relative error of the vectorised exp against libm's expf, as measured by case_exp over
// [-87.3, 88.7] on x86-64 (AVX2, AVX-512) and under qemu (NEON), rounded up: 4 u. case_exp
// fails if a level exceeds it, so every other bound that uses it stays honest.
#define EXP_RTOL (4.0 * U_ROUND)

static const int SIMD_SIZES[] = { 1, 3, 17, 63, 64, 65, 1000 };
#define N_SIMD_SIZES ((int)(sizeof SIMD_SIZES / sizeof SIMD_SIZES[0]))

// ---- helpers ----

static float *sc_zeros(long n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

// Checks |got[i] - want[i]| <= bound[i] for all i; on failure writes the worst element to msg.
// A NaN anywhere fails (want is never NaN in these cases).
static int sc_within(const char *what, const float *got, const float *want, const double *bound,
                     long n, char *msg, size_t msz) {
    long worst = -1;
    double worst_ratio = 1.0;
    for (long i = 0; i < n; i++) {
        if (isinf(want[i]) && got[i] == want[i]) continue;
        double d = fabs((double)got[i] - want[i]);
        if (isnan(d)) { worst = i; break; }
        double ratio = d / (bound[i] > 0 ? bound[i] : 1e-300);
        if (d > bound[i] && ratio > worst_ratio) { worst_ratio = ratio; worst = i; }
    }
    if (worst < 0) return 0;
    snprintf(msg, msz, "%s: element %ld of %ld: got %.9g want %.9g, |diff| %.3g > bound %.3g",
             what, worst, n, (double)got[worst], (double)want[worst],
             fabs((double)got[worst] - want[worst]), bound[worst]);
    return 1;
}

static int sc_oom(char *msg, size_t msz) {
    snprintf(msg, msz, "out of memory");
    return 1;
}

// ---- dot and matvec: bound 2 n u sum|a b| + tiny (each of the two sums is within n u of exact) ----

static int case_dot(const tw_kernels *o, int n, char *msg, size_t msz) {
    if (!o->dot) return 0;   // no kernel at this level: nothing to check
    float *a = sc_rand(n, -1, 1, 1), *b = sc_rand(n, -1, 1, 2);
    if (!a || !b) { free(a); free(b); return sc_oom(msg, msz); }
    float got = o->dot(a, b, n), want = tw_kernels_naive.dot(a, b, n);
    double abs_sum = 0;
    for (int i = 0; i < n; i++) abs_sum += fabs((double)a[i] * b[i]);
    double bound = 2.0 * n * U_ROUND * abs_sum + 1e-30;
    int bad = sc_within("dot", &got, &want, &bound, 1, msg, msz);
    free(a); free(b);
    return bad;
}

static int case_matvec(const tw_kernels *o, int n, char *msg, size_t msz) {
    if (!o->matvec) return 0;   // no kernel at this level: nothing to check
    // Two shapes per size: n outputs of 37 inputs, and 19 outputs of n inputs.
    const int shapes[2][2] = { { n, 37 }, { 19, n } };
    for (int s = 0; s < 2; s++) {
        int N = shapes[s][0], K = shapes[s][1];
        float *W = sc_rand((long)N * K, -1, 1, 3), *x = sc_rand(K, -1, 1, 4);
        float *got = sc_zeros(N), *want = sc_zeros(N);
        double *bound = calloc((size_t)N, sizeof(double));
        if (!W || !x || !got || !want || !bound) {
            free(W); free(x); free(got); free(want); free(bound);
            return sc_oom(msg, msz);
        }
        o->matvec(got, W, x, N, K);
        tw_kernels_naive.matvec(want, W, x, N, K);
        for (int i = 0; i < N; i++) {
            double abs_sum = 0;
            for (int k = 0; k < K; k++) abs_sum += fabs((double)W[(long)i * K + k] * x[k]);
            bound[i] = 2.0 * K * U_ROUND * abs_sum + 1e-30;
        }
        int bad = sc_within("matvec", got, want, bound, N, msg, msz);
        free(W); free(x); free(got); free(want); free(bound);
        if (bad) return 1;
    }
    return 0;
}

// ---- matmul: per element 2 K u sum_k |a_ik b_kj|; three shapes put the size in M, N and K ----

typedef void (*sc_matmul_fn)(float *C, const float *A, const float *B, int M, int N, int K);

// Compares fn against tw_matmul_naive (nt = 0) or tw_matmul_nt_naive (nt = 1) on one shape.
// exact = 1 demands bit equality (the rungs that keep the naive summation order).
static int sc_matmul_shape(const char *what, sc_matmul_fn fn, int nt, int exact,
                           int M, int N, int K, char *msg, size_t msz) {
    float *A = sc_rand((long)M * K, -1, 1, 5), *B = sc_rand((long)K * N, -1, 1, 6);
    float *got = sc_zeros((long)M * N), *want = sc_zeros((long)M * N);
    double *bound = calloc((size_t)M * N, sizeof(double));
    if (!A || !B || !got || !want || !bound) {
        free(A); free(B); free(got); free(want); free(bound);
        return sc_oom(msg, msz);
    }
    for (long i = 0; i < (long)M * N; i++) got[i] = NAN;   // every element must be written
    fn(got, A, B, M, N, K);
    (nt ? tw_matmul_nt_naive : tw_matmul_naive)(want, A, B, M, N, K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double abs_sum = 0;
            for (int k = 0; k < K; k++) {
                double b = nt ? B[(long)j * K + k] : B[(long)k * N + j];
                abs_sum += fabs((double)A[(long)i * K + k] * b);
            }
            bound[(long)i * N + j] = exact ? 0.0 : 2.0 * K * U_ROUND * abs_sum + 1e-30;
        }
    char label[96];
    snprintf(label, sizeof label, "%s M=%d N=%d K=%d", what, M, N, K);
    int bad = sc_within(label, got, want, bound, (long)M * N, msg, msz);
    free(A); free(B); free(got); free(want); free(bound);
    return bad;
}

static int sc_matmul_sizes(const char *what, sc_matmul_fn fn, int nt, int exact, int n,
                           char *msg, size_t msz) {
    return sc_matmul_shape(what, fn, nt, exact, n, 17, 63, msg, msz)
        || sc_matmul_shape(what, fn, nt, exact, 65, n, 17, msg, msz)
        || sc_matmul_shape(what, fn, nt, exact, 3, 64, n, msg, msz);
}

static int case_matmul(const tw_kernels *o, int n, char *msg, size_t msz) {
    return sc_matmul_sizes("matmul", o->matmul, 0, 0, n, msg, msz)
        || sc_matmul_sizes("matmul_nt", o->matmul_nt, 1, 0, n, msg, msz)
        || sc_matmul_sizes("matmul_mt", o->matmul_mt, 0, 0, n, msg, msz)
        || sc_matmul_sizes("matmul_nt_mt", o->matmul_nt_mt, 1, 0, n, msg, msz);
}

// The ladder's portable rungs (independent of the level): reordered and blocked keep the naive
// summation order per element, so they must match bit for bit; the packed scalar rung sums in
// kc blocks and gets the 2 K u bound.
static int case_ladder(const tw_kernels *o, int n, char *msg, size_t msz) {
    (void)o;
    return sc_matmul_sizes("reordered", tw_matmul_reordered, 0, 1, n, msg, msz)
        || sc_matmul_sizes("blocked", tw_matmul_blocked, 0, 1, n, msg, msz)
        || sc_matmul_sizes("packed_scalar", tw_matmul_packed_scalar, 0, 0, n, msg, msz);
}

// ---- exp: measured maximum relative error against expf, and the special values ----

// Samples 2^20 points evenly over [-87.3, 88.7] (where expf is normal and finite) and reports
// the largest relative error in *max_rel. Fails if it exceeds EXP_RTOL.
static int sc_exp_error(const tw_kernels *o, double *max_rel, char *msg, size_t msz) {
    if (!o->exp) return 0;   // no kernel at this level: nothing to check
    const long n = 1L << 20;
    float *x = sc_zeros(n), *y = sc_zeros(n);
    if (!x || !y) { free(x); free(y); return sc_oom(msg, msz); }
    for (long i = 0; i < n; i++) x[i] = (float)(-87.3 + (88.7 + 87.3) * (double)i / (n - 1));
    o->exp(y, x, n);
    double worst = 0;
    long at = 0;
    for (long i = 0; i < n; i++) {
        double want = expf(x[i]);
        double rel = fabs(y[i] - want) / want;
        if (!(rel <= worst)) { worst = rel; at = i; }
    }
    *max_rel = worst;
    int bad = !(worst <= EXP_RTOL);
    if (bad)
        snprintf(msg, msz, "exp: max relative error %.3g (%.2f u) at x = %.9g exceeds %.2f u",
                 worst, worst / U_ROUND, (double)x[at], EXP_RTOL / U_ROUND);
    free(x); free(y);
    return bad;
}

static int case_exp(const tw_kernels *o, int n, char *msg, size_t msz) {
    if (!o->exp) return 0;   // no kernel at this level: nothing to check
    double max_rel;
    if (n == SIMD_SIZES[0] && sc_exp_error(o, &max_rel, msg, msz)) return 1;
    // Special values and saturation, placed at every position of a length-n array so both the
    // vector body and the tail see them: exp(-inf) = 0, exp(+inf) = inf, exp(0) = 1,
    // exp(-100) = 0 within 1e-38, exp(100) = inf, NaN -> NaN.
    const float special[] = { -INFINITY, INFINITY, 0.0f, -100.0f, 100.0f, NAN };
    float *x = sc_zeros(n), *y = sc_zeros(n);
    if (!x || !y) { free(x); free(y); return sc_oom(msg, msz); }
    for (int i = 0; i < n; i++) x[i] = special[i % 6];
    o->exp(y, x, n);
    for (int i = 0; i < n; i++) {
        int ok;
        switch (i % 6) {
        case 0: ok = y[i] == 0.0f; break;
        case 1: case 4: ok = isinf(y[i]) && y[i] > 0; break;
        case 2: ok = y[i] == 1.0f; break;
        case 3: ok = y[i] >= 0.0f && y[i] < 1e-38f; break;
        default: ok = isnan(y[i]); break;
        }
        if (!ok) {
            snprintf(msg, msz, "exp(%g) at [%d] of %d gave %g", (double)x[i], i, n, (double)y[i]);
            free(x); free(y);
            return 1;
        }
    }
    free(x); free(y);
    return 0;
}

// ---- softmax: rel. error <= 2 EXP_RTOL (two exps) + 2 n u (two sums of positive terms)
//      + 4 u (subtraction, division) ----

static int case_softmax(const tw_kernels *o, int n, char *msg, size_t msz) {
    if (!o->softmax) return 0;   // no kernel at this level: nothing to check
    float *x = sc_rand(n, -10, 10, 7), *got = sc_zeros(n), *want = sc_zeros(n);
    double *bound = calloc((size_t)n, sizeof(double));
    if (!x || !got || !want || !bound) {
        free(x); free(got); free(want); free(bound);
        return sc_oom(msg, msz);
    }
    if (n > 2) x[n / 2] = -INFINITY;           // a masked position must get weight exactly 0
    o->softmax(got, x, n);
    tw_kernels_naive.softmax(want, x, n);
    for (int i = 0; i < n; i++)
        bound[i] = (2 * EXP_RTOL + (2.0 * n + 4) * U_ROUND) * fabs(want[i]) + 1e-38;
    int bad = sc_within("softmax", got, want, bound, n, msg, msz);
    if (!bad && n > 2 && got[n / 2] != 0.0f) {
        snprintf(msg, msz, "softmax: masked position got %g, want 0", (double)got[n / 2]);
        bad = 1;
    }
    // A fully masked row becomes zeros, as in tw_softmax_rows.
    for (int i = 0; i < n && !bad; i++) x[i] = -INFINITY;
    if (!bad) {
        o->softmax(got, x, n);
        for (int i = 0; i < n; i++)
            if (got[i] != 0.0f) {
                snprintf(msg, msz, "softmax of an all -inf row: [%d] = %g, want 0", i, (double)got[i]);
                bad = 1;
                break;
            }
    }
    free(x); free(got); free(want); free(bound);
    return bad;
}

// ---- norms ----

// RMSNorm: the sum of squares has relative error <= n u in either order (positive terms);
// sqrt halves it, and the scaling adds a few u: rel. bound (n + 8) u per element.
static int case_rmsnorm(const tw_kernels *o, int n, char *msg, size_t msz) {
    if (!o->rmsnorm) return 0;   // no kernel at this level: nothing to check
    float *x = sc_rand(n, -3, 3, 8), *w = sc_rand(n, 0.5f, 1.5f, 9);
    float *got = sc_zeros(n), *want = sc_zeros(n);
    double *bound = calloc((size_t)n, sizeof(double));
    if (!x || !w || !got || !want || !bound) {
        free(x); free(w); free(got); free(want); free(bound);
        return sc_oom(msg, msz);
    }
    float rms_got = o->rmsnorm(got, x, w, n, 1e-5f), rms_want = tw_kernels_naive.rmsnorm(want, x, w, n, 1e-5f);
    for (int i = 0; i < n; i++) bound[i] = (n + 8.0) * U_ROUND * fabs(want[i]) + 1e-30;
    int bad = sc_within("rmsnorm", got, want, bound, n, msg, msz);
    double rb = (n + 8.0) * U_ROUND * rms_want;
    if (!bad) bad = sc_within("rmsnorm rms", &rms_got, &rms_want, &rb, 1, msg, msz);
    free(x); free(w); free(got); free(want); free(bound);
    return bad;
}

// LayerNorm: the mean is off by at most 2 n u max|x| between the two orders, which enters
// x - mean as an absolute error; the variance has relative error <= 2 n u + a few u.
// Bound per element: |gamma| rstd (2 n u max|x| + (n + 8) u |x - mean|) + 4 u |want|.
static int case_layernorm(const tw_kernels *o, int n, char *msg, size_t msz) {
    if (!o->layernorm) return 0;   // no kernel at this level: nothing to check
    float *x = sc_rand(n, -3, 3, 10), *g = sc_rand(n, 0.5f, 1.5f, 11), *b = sc_rand(n, -1, 1, 12);
    float *got = sc_zeros(n), *want = sc_zeros(n);
    double *bound = calloc((size_t)n, sizeof(double));
    if (!x || !g || !b || !got || !want || !bound) {
        free(x); free(g); free(b); free(got); free(want); free(bound);
        return sc_oom(msg, msz);
    }
    o->layernorm(got, x, g, b, n, 1e-5f);
    tw_kernels_naive.layernorm(want, x, g, b, n, 1e-5f);
    double mean = 0, var = 0, xmax = 0;
    for (int i = 0; i < n; i++) { mean += x[i]; xmax = fmax(xmax, fabs(x[i])); }
    mean /= n;
    for (int i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
    double rstd = 1.0 / sqrt(var / n + 1e-5);
    for (int i = 0; i < n; i++)
        bound[i] = fabs(g[i]) * rstd * (2.0 * n * U_ROUND * xmax + (n + 8.0) * U_ROUND * fabs(x[i] - mean))
                   + 4 * U_ROUND * fabs(want[i]) + 1e-30;
    int bad = sc_within("layernorm", got, want, bound, n, msg, msz);
    free(x); free(g); free(b); free(got); free(want); free(bound);
    return bad;
}

// ---- RoPE: each output a c -/+ b s is within 2 u (|a c| + |b s|) of exact in either form
//      (with or without FMA), so the two differ by at most 4 u (|a| + |b|) ----

static int case_rope(const tw_kernels *o, int n, char *msg, size_t msz) {
    if (!o->rope) return 0;   // no kernel at this level: nothing to check
    const int H = 3, D = n + (n & 1);          // D must be even
    float *x = sc_rand((long)H * D, -2, 2, 13), *got = sc_zeros((long)H * D);
    float *want = sc_zeros((long)H * D), *c = sc_zeros(D / 2), *s = sc_zeros(D / 2);
    double *bound = calloc((size_t)H * D, sizeof(double));
    if (!x || !got || !want || !c || !s || !bound) {
        free(x); free(got); free(want); free(c); free(s); free(bound);
        return sc_oom(msg, msz);
    }
    tw_rope_angles(c, s, 37, D, 10000.0f);
    memcpy(got, x, (size_t)H * D * sizeof(float));
    memcpy(want, x, (size_t)H * D * sizeof(float));
    o->rope(got, c, s, H, D);
    tw_kernels_naive.rope(want, c, s, H, D);
    for (long i = 0; i < (long)H * D; i++) {
        long pair = i & ~1L;
        bound[i] = 4 * U_ROUND * (fabs(x[pair]) + fabs(x[pair + 1])) + 1e-30;
    }
    int bad = sc_within("rope", got, want, bound, (long)H * D, msg, msz);
    free(x); free(got); free(want); free(c); free(s); free(bound);
    return bad;
}

// ---- SiLU and SwiGLU: x / (1 + e^-x): rel. error <= 2 EXP_RTOL + 6 u ----

static int case_silu(const tw_kernels *o, int n, char *msg, size_t msz) {
    if (!o->silu) return 0;   // no kernel at this level: nothing to check
    float *x = sc_rand(n, -20, 20, 14), *up = sc_rand(n, -2, 2, 15);
    float *got = sc_zeros(n), *want = sc_zeros(n);
    double *bound = calloc((size_t)n, sizeof(double));
    if (!x || !up || !got || !want || !bound) {
        free(x); free(up); free(got); free(want); free(bound);
        return sc_oom(msg, msz);
    }
    o->silu(got, x, n);
    tw_kernels_naive.silu(want, x, n);
    for (int i = 0; i < n; i++) bound[i] = (2 * EXP_RTOL + 6 * U_ROUND) * fabs(want[i]) + 1e-38;
    int bad = sc_within("silu", got, want, bound, n, msg, msz);
    if (!bad) {
        o->swiglu(got, x, up, n);
        tw_kernels_naive.swiglu(want, x, up, n);
        for (int i = 0; i < n; i++) bound[i] = (2 * EXP_RTOL + 8 * U_ROUND) * fabs(want[i]) + 1e-38;
        bad = sc_within("swiglu", got, want, bound, n, msg, msz);
    }
    free(x); free(up); free(got); free(want); free(bound);
    return bad;
}

// ---- attention for one query over S cached positions (q, k, v in [-1, 1]) ----
// Scores differ by at most 2 D u sum|q k| / sqrt(D) <= 2 D^1.5 u; a score error e changes the
// weights by a relative 2e at most; the softmax adds its own bound (above) and the weighted sum
// of values 2 S u max|v|. Bound per output: (4 D^1.5 + 2 S + 2 S + 16) u + 2 EXP_RTOL.
static int case_attend(const tw_kernels *o, int n, char *msg, size_t msz) {
    if (!o->attend) return 0;   // no kernel at this level: nothing to check
    const int dims[] = { 8, 48, 65 };
    for (int di = 0; di < 3; di++) {
        int S = n, D = dims[di], stride = 2 * D;   // stride: two KV heads side by side
        float *q = sc_rand(D, -1, 1, 16), *k = sc_rand((long)S * stride, -1, 1, 17);
        float *v = sc_rand((long)S * stride, -1, 1, 18);
        float *got = sc_zeros(D), *want = sc_zeros(D), *att = sc_zeros(S);
        double *bound = calloc((size_t)D, sizeof(double));
        if (!q || !k || !v || !got || !want || !att || !bound) {
            free(q); free(k); free(v); free(got); free(want); free(att); free(bound);
            return sc_oom(msg, msz);
        }
        // The scores, when asked for, are the scaled dot products: within 2 D^1.5 u (+ u for
        // the scaling) of the naive ones, since sum|q k| <= D.
        float *sc_got = sc_zeros(S), *sc_want = sc_zeros(S);
        double *sc_bound = calloc((size_t)S, sizeof(double));
        if (!sc_got || !sc_want || !sc_bound) {
            free(q); free(k); free(v); free(got); free(want); free(att); free(bound);
            free(sc_got); free(sc_want); free(sc_bound);
            return sc_oom(msg, msz);
        }
        o->attend(got, sc_got, att, q, k, v, S, D, stride);
        tw_kernels_naive.attend(want, sc_want, att, q, k, v, S, D, stride);
        double b = (4.0 * pow(D, 1.5) + 4.0 * S + 16.0) * U_ROUND + 2 * EXP_RTOL;
        for (int d = 0; d < D; d++) bound[d] = b;
        for (int s = 0; s < S; s++) sc_bound[s] = (2.0 * pow(D, 1.5) + 1.0) * U_ROUND;
        char label[64];
        snprintf(label, sizeof label, "attend S=%d D=%d", S, D);
        int bad = sc_within(label, got, want, bound, D, msg, msz);
        snprintf(label, sizeof label, "attend scores S=%d D=%d", S, D);
        if (!bad) bad = sc_within(label, sc_got, sc_want, sc_bound, S, msg, msz);
        // Without a scores buffer the output is identical (the same operations, built in att).
        if (!bad) {
            o->attend(want, NULL, att, q, k, v, S, D, stride);
            for (int d = 0; d < D; d++) bound[d] = 0.0;
            snprintf(label, sizeof label, "attend without scores S=%d D=%d", S, D);
            bad = sc_within(label, want, got, bound, D, msg, msz);
        }
        free(q); free(k); free(v); free(got); free(want); free(att); free(bound);
        free(sc_got); free(sc_want); free(sc_bound);
        if (bad) return 1;
    }
    return 0;
}

// ---- the list both drivers walk ----

typedef struct {
    const char *name;
    int (*run)(const tw_kernels *o, int n, char *msg, size_t msz);
} sc_case;

static const sc_case SIMD_CASES[] = {
    { "dot", case_dot },         { "matvec", case_matvec },   { "matmul", case_matmul },
    { "ladder", case_ladder },   { "exp", case_exp },         { "softmax", case_softmax },
    { "rmsnorm", case_rmsnorm }, { "layernorm", case_layernorm }, { "rope", case_rope },
    { "silu", case_silu },       { "attend", case_attend },
};
#define N_SIMD_CASES ((int)(sizeof SIMD_CASES / sizeof SIMD_CASES[0]))

#endif
