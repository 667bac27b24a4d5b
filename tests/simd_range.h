// simd_range.h: every SIMD kernel family against the reference the naive model actually runs
// (the component loops, gathered as tw_kernels_naive in lib/nn/reference.h: linear.c, norm.c,
// softmax.c, activation.c, ffn.c, sdpa.c; dot and exp from lib/simd/ref.c),
// over the whole finite float range: subnormals to +-3.4e38, rows of huge values, rows mixing
// 1e30 and 1e-30, all-equal rows, a single non-zero element. Written once, used by two drivers:
// the Check suite (tests/test_simd_range.c: crafted extreme rows at fixed sizes) and the
// differential fuzz targets (fuzz/fuzz_kernels_*.c: rows and sizes made from random bytes).
//
// Each sr_check_* runs one level's kernel and the reference on the same inputs and returns 0 if
// every output agrees within its bound wherever the reference output is finite, else 1 with a
// message naming the element, both values and the bound. (Where the reference itself overflows
// to inf or NaN the issue asks nothing; a kernel may then differ.) The functions are static
// inline because each fuzz target uses one family, and unused static inline functions draw no
// warning.
//
// The bounds extend those of tests/simd_cases.h (u = 2^-24, EXP_RTOL) by the one thing extreme
// inputs add: results below 2^-126 are subnormal, where a rounding costs up to one unit of the
// smallest subnormal, SR_SUB = 2^-149 ~ 1.4e-45, absolutely rather than relatively. Each check
// states its bound.
#ifndef SIMD_RANGE_H
#define SIMD_RANGE_H
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tw.h"
#include "simd/simd.h"
#include "nn/reference.h"

#define SR_U     5.9604644775390625e-8    // 2^-24, float's unit roundoff
#define SR_UD    1.1102230246251565e-16   // 2^-53, double's
#define SR_SUB   1.401298464324817e-45    // 2^-149, the smallest subnormal float
#define SR_EXP_RTOL (4.0 * SR_U)          // the vectorised exp's measured bound (simd_cases.h)
// Softmax weights below 2^-126 (exponent differences under -87.3) may come out as 0 at the x86
// levels: computing them as subnormals costs a microcode assist each on Intel (docs/kernels.md).
#define SR_WEIGHT_FLUSH 1.1754943508222875e-38   // 2^-126

// ---- the reference: the component loops (tw_kernels_naive) ----
// They do not consult the dispatch table, except the Linear layer's hook that sr_check_linear
// exercises on purpose; REF names the catalogue.
#define REF (&tw_kernels_naive)

// ---- comparing ----

// |got[i] - want[i]| <= bound[i] for every i where want[i] is finite (or got is the infinity
// that want rounds to within its bound); on failure msg says where.
static inline int sr_within(const char *what, const char *level, int n_in, const float *got,
                     const float *want, const double *bound, long n, char *msg, size_t msz) {
    for (long i = 0; i < n; i++) {
        if (!isfinite(want[i])) continue;   // the reference overflowed: nothing to match
        double d = fabs((double)got[i] - (double)want[i]);
        if (d <= bound[i]) continue;        // false for NaN: a NaN where want is finite fails
        // A reference within its bound of the largest float: the kernel's value, as close to
        // the exact one, may lie beyond FLT_MAX and round to an infinity of the same sign.
        if (isinf(got[i]) && (got[i] > 0) == (want[i] > 0) && fabs((double)want[i]) + bound[i] > FLT_MAX)
            continue;
        snprintf(msg, msz, "%s at level %s, n = %d: element %ld: got %.9g want %.9g, |diff| %.3g "
                 "> bound %.3g", what, level, n_in, i, (double)got[i], (double)want[i], d, bound[i]);
        return 1;
    }
    return 0;
}

// Scratch for one check: outputs of kernel and reference, and the bounds. Freed by sr_free.
typedef struct { float *got, *want; double *bound; } sr_buf;

static inline int sr_alloc(sr_buf *b, long n) {
    size_t m = (size_t)(n > 0 ? n : 1);
    b->got = calloc(m, sizeof(float));
    b->want = calloc(m, sizeof(float));
    b->bound = calloc(m, sizeof(double));
    return b->got && b->want && b->bound;
}

static inline void sr_free(sr_buf *b) {
    free(b->got); free(b->want); free(b->bound);
    memset(b, 0, sizeof *b);
}

static inline int sr_oom(char *msg, size_t msz) { snprintf(msg, msz, "out of memory"); return 1; }

// ---- dot, matvec and the Linear hook: reference tw_linear_naive (float, index order) ----
// Two sums of n products in any order, each within n u sum|a b| / (1 - n u) of the exact one,
// differ by at most (2n + 2) u sum|a b| (n <= 2^20); a product that falls below 2^-126 loses up
// to half a subnormal unit in the reference (the kernels fuse it), so add n SR_SUB.
static inline double sr_dot_bound(const float *a, const float *b, int n) {
    double abs_sum = 0;
    for (int i = 0; i < n; i++) abs_sum += fabs((double)a[i] * b[i]);
    return (2.0 * n + 2.0) * SR_U * abs_sum + n * SR_SUB;
}

static inline int sr_check_dot(const tw_kernels *o, const float *a, const float *b, int n,
                        char *msg, size_t msz) {
    if (!o->dot) return 0;   // no kernel at this level: the reference itself runs
    float want;
    REF->matvec(&want, a, b, 1, n);   // the Linear layer on one row: the same order as REF->dot
    float got = o->dot(a, b, n);
    double bound = sr_dot_bound(a, b, n);
    return sr_within("dot", o->level, n, &got, &want, &bound, 1, msg, msz);
}

//   W: (N, K)   x: (K)
static inline int sr_check_matvec(const tw_kernels *o, const float *W, const float *x, int N, int K,
                           char *msg, size_t msz) {
    if (!o->matvec) return 0;   // no kernel at this level: the reference itself runs
    sr_buf b;
    if (!sr_alloc(&b, N)) { sr_free(&b); return sr_oom(msg, msz); }
    REF->matvec(b.want, W, x, N, K);
    o->matvec(b.got, W, x, N, K);
    for (int i = 0; i < N; i++) b.bound[i] = sr_dot_bound(W + (long)i * K, x, K);
    int bad = sr_within("matvec", o->level, K, b.got, b.want, b.bound, N, msg, msz);
    sr_free(&b);
    return bad;
}

// The Linear layer at level o (the tw_simd_linear hook: matvec for T = 1, the packed matmul
// otherwise) against tw_linear_naive, y = x W^T: the dot bound per element. The hook reads the
// global table, so it is set to o's level for the call and put back after.
//   x: (T, C_in)   W: (C_out, C_in)
static inline int sr_check_linear(const tw_kernels *o, const float *x, const float *W, int T,
                                  int C_in, int C_out, char *msg, size_t msz) {
    if (!o->matvec) return 0;   // no kernel at this level: the reference itself runs
    sr_buf b;
    if (!sr_alloc(&b, (long)T * C_out)) { sr_free(&b); return sr_oom(msg, msz); }
    tw_linear_naive(b.want, x, W, NULL, T, C_in, C_out);
    const tw_kernels saved = tw_simd;
    tw_simd_init(o->level);
    tw_linear_forward(b.got, x, W, NULL, T, C_in, C_out);
    tw_simd = saved;
    for (long i = 0; i < (long)T * C_out; i++)
        b.bound[i] = sr_dot_bound(x + i / C_out * C_in, W + i % C_out * C_in, C_in);
    int bad = sr_within("linear", o->level, C_in, b.got, b.want, b.bound, (long)T * C_out, msg, msz);
    sr_free(&b);
    return bad;
}

// ---- norms: reference tw_rmsnorm_row / tw_layernorm_row (norm.c, double statistics) ----
// The kernels accumulate in double too, so only the order of the sums differs: a relative
// (n + 4) u_d on the statistics, far below float rounding. Each output is a double rounded to
// float once on both sides, so they differ by at most one float unit: 2 u |want|, or SR_SUB below
// 2^-126. Bound: (2 u + (n + 4) u_d) |want| + SR_SUB. LayerNorm adds the mean's difference
// (2 n u_d max|x|, an absolute error in x - mean) times |gamma| rstd.
//   x, w: (n); w may be NULL
static inline int sr_check_rmsnorm(const tw_kernels *o, const float *x, const float *w, int n,
                            float eps, char *msg, size_t msz) {
    if (!o->rmsnorm) return 0;   // no kernel at this level: the reference itself runs
    sr_buf b;
    if (!sr_alloc(&b, n)) { sr_free(&b); return sr_oom(msg, msz); }
    float rms_want = REF->rmsnorm(b.want, x, w, n, eps);
    float rms_got = o->rmsnorm(b.got, x, w, n, eps);
    const double rel = 2 * SR_U + (n + 4.0) * SR_UD;
    for (int i = 0; i < n; i++) b.bound[i] = rel * fabs(b.want[i]) + SR_SUB;
    int bad = sr_within("rmsnorm", o->level, n, b.got, b.want, b.bound, n, msg, msz);
    double rb = rel * fabs(rms_want) + SR_SUB;
    if (!bad) bad = sr_within("rmsnorm rms", o->level, n, &rms_got, &rms_want, &rb, 1, msg, msz);
    sr_free(&b);
    return bad;
}

//   x, gamma: (n)   beta: (n) or NULL
static inline int sr_check_layernorm(const tw_kernels *o, const float *x, const float *gamma,
                              const float *beta, int n, float eps, char *msg, size_t msz) {
    if (!o->layernorm) return 0;   // no kernel at this level: the reference itself runs
    sr_buf b;
    if (!sr_alloc(&b, n)) { sr_free(&b); return sr_oom(msg, msz); }
    REF->layernorm(b.want, x, gamma, beta, n, eps);
    o->layernorm(b.got, x, gamma, beta, n, eps);
    // rstd for the bound, in double (as a float it can overflow)
    double xmax = 0, m = 0, var = 0;
    for (int i = 0; i < n; i++) { xmax = fmax(xmax, fabs((double)x[i])); m += x[i]; }
    m /= n;
    for (int i = 0; i < n; i++) var += (x[i] - m) * (x[i] - m);
    const double r = 1.0 / sqrt(var / n + (double)eps);
    const double rel = 2 * SR_U + (2.0 * n + 4.0) * SR_UD;
    for (int i = 0; i < n; i++)
        b.bound[i] = rel * fabs(b.want[i]) + fabs((double)gamma[i]) * r * 4.0 * n * SR_UD * xmax
                     + SR_SUB;
    int bad = sr_within("layernorm", o->level, n, b.got, b.want, b.bound, n, msg, msz);
    sr_free(&b);
    return bad;
}

// ---- softmax and exp ----
// exp against libm's expf: EXP_RTOL relative, plus SR_SUB for results below 2^-126 (the kernels
// round p * 2^n into the subnormal range once, expf within one unit).
static inline int sr_check_exp(const tw_kernels *o, const float *x, int n, char *msg, size_t msz) {
    if (!o->exp) return 0;   // no kernel at this level: the reference itself runs
    sr_buf b;
    if (!sr_alloc(&b, n)) { sr_free(&b); return sr_oom(msg, msz); }
    o->exp(b.got, x, n);
    for (int i = 0; i < n; i++) {
        b.want[i] = expf(x[i]);
        b.bound[i] = SR_EXP_RTOL * fabs(b.want[i]) + 2 * SR_SUB;
    }
    int bad = sr_within("exp", o->level, n, b.got, b.want, b.bound, n, msg, msz);
    sr_free(&b);
    return bad;
}

// Softmax of one row against tw_softmax_row (softmax.c; sum in double). The kernel's contract is the rows
// softmax.c hands to its hook: no NaN, maximum not +inf (the caller ensures; -inf entries are
// masks). Bound as in simd_cases.h, (2 EXP_RTOL + (2n + 4) u) |want|, plus SR_WEIGHT_FLUSH +
// 8 SR_SUB for weights below 2^-126 (flushed to 0, or an exp and a scaling each rounded into the
// subnormal range).
static inline int sr_check_softmax(const tw_kernels *o, const float *x, int n, char *msg, size_t msz) {
    if (!o->softmax) return 0;   // no kernel at this level: the reference itself runs
    sr_buf b;
    if (!sr_alloc(&b, n)) { sr_free(&b); return sr_oom(msg, msz); }
    REF->softmax(b.want, x, n);
    o->softmax(b.got, x, n);
    for (int i = 0; i < n; i++)
        b.bound[i] = (2 * SR_EXP_RTOL + (2.0 * n + 4) * SR_U) * fabs(b.want[i]) + SR_WEIGHT_FLUSH
                     + 8 * SR_SUB;
    int bad = sr_within("softmax", o->level, n, b.got, b.want, b.bound, n, msg, msz);
    sr_free(&b);
    return bad;
}

// ---- SiLU and SwiGLU: reference tw_silu (activation.c) and tw_swiglu (ffn.c) ----
// x / (1 + e^-x): relative (2 EXP_RTOL + 6 u), one more u for the product with up, plus 2 SR_SUB
// for outputs below 2^-126.
static inline int sr_check_silu(const tw_kernels *o, const float *x, const float *up, int n,
                         char *msg, size_t msz) {
    if (!o->silu) return 0;   // no kernel at this level: the reference itself runs
    sr_buf b;
    if (!sr_alloc(&b, n)) { sr_free(&b); return sr_oom(msg, msz); }
    REF->silu(b.want, x, n);
    o->silu(b.got, x, n);
    for (int i = 0; i < n; i++)
        b.bound[i] = (2 * SR_EXP_RTOL + 6 * SR_U) * fabs(b.want[i]) + 2 * SR_SUB;
    int bad = sr_within("silu", o->level, n, b.got, b.want, b.bound, n, msg, msz);
    if (!bad) {
        REF->swiglu(b.want, x, up, n);   // ffn.c's gating
        o->swiglu(b.got, x, up, n);
        for (int i = 0; i < n; i++)
            b.bound[i] = (2 * SR_EXP_RTOL + 8 * SR_U) * fabs(b.want[i]) + 2 * SR_SUB;
        bad = sr_within("swiglu", o->level, n, b.got, b.want, b.bound, n, msg, msz);
    }
    sr_free(&b);
    return bad;
}

// ---- one query over S keys: reference tw_sdpa_one (sdpa.c) on the strided rows ----
// Scores: the dot bound times 1/sqrt(D) (+ u for the scaling). Weights: a score error e changes
// a weight by a factor within exp(+-2e) (the two largest errors, in the numerator and the
// normaliser), on top of the softmax's own bound (with its SR_WEIGHT_FLUSH); where the scores are huge, e is large and
// the bound rightly says little (the reference is that ill-conditioned). Output: sum_s |dw_s|
// |v_s| + the weighted sum's (2S + 2) u sum_s w_s |v_s| + S SR_SUB.
// If a reference score overflowed (its in-order float sum passed 3.4e38 on the way), only the
// finite scores are compared: the reference's weights then come from an inf that a kernel
// summing in another order may never form (docs/kernels.md names this limit).
//   q: (D)   k, v: S rows of D floats, row s at s * kv_stride
static inline int sr_check_attend(const tw_kernels *o, const float *q, const float *k, const float *v,
                           int S, int D, int kv_stride, char *msg, size_t msz) {
    if (!o->attend) return 0;   // no kernel at this level: the reference itself runs
    sr_buf bs, bw, bo;
    float *kh = malloc((size_t)S * D * sizeof(float)), *vh = malloc((size_t)S * D * sizeof(float));
    int ok = sr_alloc(&bs, S);
    ok &= sr_alloc(&bw, S);   // every buffer allocated (or NULL), so sr_free is always safe
    ok &= sr_alloc(&bo, D);
    ok &= kh != NULL && vh != NULL;
    if (!ok) { sr_free(&bs); sr_free(&bw); sr_free(&bo); free(kh); free(vh); return sr_oom(msg, msz); }
    for (int s = 0; s < S; s++) {
        memcpy(kh + (long)s * D, k + (long)s * kv_stride, (size_t)D * sizeof(float));
        memcpy(vh + (long)s * D, v + (long)s * kv_stride, (size_t)D * sizeof(float));
    }
    REF->attend(bo.want, bs.want, bw.want, q, k, v, S, D, kv_stride);
    o->attend(bo.got, bs.got, bw.got, q, k, v, S, D, kv_stride);
    const double scale = 1.0 / sqrt((double)D);
    double e = 0;   // the largest score bound
    for (int s = 0; s < S; s++) {
        bs.bound[s] = sr_dot_bound(q, kh + (long)s * D, D) * scale + SR_U * fabs(bs.want[s]) + SR_SUB;
        e = fmax(e, bs.bound[s]);
    }
    int scores_finite = 1;
    for (int s = 0; s < S; s++) scores_finite &= isfinite(bs.want[s]) != 0;
    const double grow = expm1(2.0 * e);   // inf when e is huge: then any weight in [0, 1] passes
    for (int s = 0; s < S; s++)
        bw.bound[s] = isinf(grow) ? 1.0
                    : (grow + 2 * SR_EXP_RTOL + (2.0 * S + 4) * SR_U) * fabs(bw.want[s])
                      + SR_WEIGHT_FLUSH + 8 * SR_SUB;
    for (int d = 0; d < D; d++) {
        double sum = 0, dev = 0;
        for (int s = 0; s < S; s++) {
            double av = fabs((double)vh[(long)s * D + d]);
            sum += fabs((double)bw.want[s]) * av;
            dev += bw.bound[s] * av;
        }
        bo.bound[d] = dev + (2.0 * S + 2) * SR_U * sum + S * SR_SUB;
    }
    char what[64];
    snprintf(what, sizeof what, "attend scores (S=%d D=%d)", S, D);
    int bad = sr_within(what, o->level, S, bs.got, bs.want, bs.bound, S, msg, msz);
    snprintf(what, sizeof what, "attend weights (S=%d D=%d)", S, D);
    if (!scores_finite) goto done;
    if (!bad) bad = sr_within(what, o->level, S, bw.got, bw.want, bw.bound, S, msg, msz);
    snprintf(what, sizeof what, "attend output (S=%d D=%d)", S, D);
    if (!bad) bad = sr_within(what, o->level, S, bo.got, bo.want, bo.bound, D, msg, msz);
done:
    sr_free(&bs); sr_free(&bw); sr_free(&bo); free(kh); free(vh);
    return bad;
}

// ---- rows from bytes (the fuzz targets) and from a seed (the Check suite) ----
// A byte reader that yields zeros once the input is used up, so every input is valid.
typedef struct { const uint8_t *p; size_t n; } sr_bytes;

static inline unsigned sr_byte(sr_bytes *b) {
    if (b->n == 0) return 0;
    b->n--;
    return *b->p++;
}

// One finite float, chosen by a control byte: the extremes of the range (zero, the smallest
// subnormal, FLT_MIN, 1e-30, 1, 1e19 where a float square overflows, 1e30, 3e38, FLT_MAX), a
// power of two with a random exponent, or four raw bytes (a random bit pattern; inf and NaN
// patterns become FLT_MAX). The sign comes from the control byte's top bit.
static inline float sr_float(sr_bytes *b) {
    static const float palette[] = { 0.0f, 1.401298464e-45f, 1.17549435e-38f, 1e-30f, 1e-19f,
                                     0.5f, 1.0f, 3.0f, 1e19f, 1e30f, 1e37f, 3e38f, FLT_MAX };
    const unsigned n_pal = (unsigned)(sizeof palette / sizeof palette[0]);
    unsigned c = sr_byte(b);
    float sign = (c & 0x80) ? -1.0f : 1.0f;
    unsigned pick = (c & 0x7f) % (n_pal + 3);
    if (pick < n_pal) return sign * palette[pick];
    if (pick == n_pal)   // 2^e, e in [-149, 127], times a mantissa from one byte
        return sign * ldexpf(1.0f + (float)sr_byte(b) / 256.0f, (int)(sr_byte(b) % 277) - 149);
    if (pick == n_pal + 1)   // an ordinary value in [-4, 4)
        return sign * ((float)sr_byte(b) / 32.0f - 4.0f);
    uint32_t u = 0;
    for (int i = 0; i < 4; i++) u = u << 8 | sr_byte(b);
    float f;
    memcpy(&f, &u, sizeof f);
    return isfinite(f) ? f : sign * FLT_MAX;
}

// Fills x (n) in one of five shapes picked by a byte: free (each element its own sr_float), all
// equal, a single non-zero element, an ordinary row scaled by one extreme factor (so a row of
// 1e30s or of subnormals), or a mix of two magnitudes (e.g. 1e30 and 1e-30).
static inline void sr_fill_row(float *x, int n, sr_bytes *b) {
    unsigned mode = sr_byte(b) % 5;
    if (mode == 1) {
        float c = sr_float(b);
        for (int i = 0; i < n; i++) x[i] = c;
    } else if (mode == 2) {
        for (int i = 0; i < n; i++) x[i] = 0.0f;
        x[sr_byte(b) % (unsigned)n] = sr_float(b);
    } else if (mode == 3) {
        float scale = sr_float(b);
        for (int i = 0; i < n; i++) x[i] = scale * ((float)sr_byte(b) / 128.0f - 1.0f);
    } else if (mode == 4) {
        float big = sr_float(b), small = sr_float(b);
        for (int i = 0; i < n; i++) {
            unsigned c = sr_byte(b);
            x[i] = ((c & 1) ? big : small) * ((c & 2) ? -1.0f : 1.0f);
        }
    } else {
        for (int i = 0; i < n; i++) x[i] = sr_float(b);
    }
}

// A size in [1, max], from one or two bytes; small sizes (the vector tails) most often.
static inline int sr_size(sr_bytes *b, int max) {
    unsigned c = sr_byte(b);
    int n = (c & 0x80) ? (int)((c & 0x7f) << 8 | sr_byte(b)) : (int)(c & 0x7f);
    return 1 + n % max;
}

// Runs check on every level this CPU has except naive (at the naive level the model runs the
// reference itself: the hooks decline). Returns 0, or 1 with msg from the first failure.
#define SR_EVERY_LEVEL(result, msg, msz, call)                                   \
    do {                                                                         \
        char sr_levels_[64];                                                     \
        snprintf(sr_levels_, sizeof sr_levels_, "%s", tw_simd_available());      \
        (result) = 0;                                                            \
        for (char *lv_ = strtok(sr_levels_, " "); lv_ && !(result);              \
             lv_ = strtok(NULL, " ")) {                                          \
            if (strcmp(lv_, "naive") == 0) continue;                             \
            const tw_kernels *o = tw_simd_kernels(lv_);                          \
            (result) = (call);                                                   \
        }                                                                        \
        (void)(msz);                                                             \
    } while (0)

// ---- one input per family, from bytes: what each fuzz target runs ----
// Each parses sizes and rows from the bytes, runs its checks at every level, and returns 0 or 1
// with msg. SR_MAX_N bounds the row length (long rows add no new kind of value, only time).
#define SR_MAX_N 600

static inline int sr_run_dot(sr_bytes *b, char *msg, size_t msz) {
    int n = sr_size(b, SR_MAX_N), N = sr_size(b, 9);
    float *a = malloc((size_t)n * N * sizeof(float)), *x = malloc((size_t)n * sizeof(float));
    if (!a || !x) { free(a); free(x); return sr_oom(msg, msz); }
    for (int r = 0; r < N; r++) sr_fill_row(a + (long)r * n, n, b);
    sr_fill_row(x, n, b);
    int bad;
    SR_EVERY_LEVEL(bad, msg, msz, sr_check_dot(o, a, x, n, msg, msz) ||
                                  sr_check_matvec(o, a, x, N, n, msg, msz) ||
                                  sr_check_linear(o, a, a, N, n, N, msg, msz));
    free(a); free(x);
    return bad;
}

static inline int sr_run_norm(sr_bytes *b, char *msg, size_t msz) {
    static const float eps_choice[4] = { 1e-5f, 1e-6f, 1e-12f, 0.0f };
    int n = sr_size(b, SR_MAX_N);
    float eps = eps_choice[sr_byte(b) % 4];
    unsigned flags = sr_byte(b);
    float *x = malloc((size_t)n * sizeof(float)), *w = malloc((size_t)n * sizeof(float));
    float *beta = malloc((size_t)n * sizeof(float));
    if (!x || !w || !beta) { free(x); free(w); free(beta); return sr_oom(msg, msz); }
    sr_fill_row(x, n, b);
    sr_fill_row(w, n, b);
    sr_fill_row(beta, n, b);
    int bad;
    SR_EVERY_LEVEL(bad, msg, msz,
                   sr_check_rmsnorm(o, x, (flags & 1) ? NULL : w, n, eps, msg, msz) ||
                   sr_check_layernorm(o, x, w, (flags & 2) ? NULL : beta, n, eps, msg, msz));
    free(x); free(w); free(beta);
    return bad;
}

// Softmax rows may hold -inf (masked positions), never NaN or +inf (softmax.c keeps those rows
// from its hook); exp gets the same row as arguments, plus +-inf.
static inline int sr_run_softmax(sr_bytes *b, char *msg, size_t msz) {
    int n = sr_size(b, SR_MAX_N);
    unsigned masks = sr_byte(b);
    float *x = malloc((size_t)n * sizeof(float));
    if (!x) return sr_oom(msg, msz);
    sr_fill_row(x, n, b);
    int bad;
    SR_EVERY_LEVEL(bad, msg, msz, sr_check_exp(o, x, n, msg, msz));
    if (!bad && masks) {
        for (int i = 0; i < n; i++)
            if ((masks >> (i % 8)) & 1 && (i % 3) == 0) x[i] = -INFINITY;
    }
    if (!bad) SR_EVERY_LEVEL(bad, msg, msz, sr_check_softmax(o, x, n, msg, msz));
    free(x);
    return bad;
}

static inline int sr_run_silu(sr_bytes *b, char *msg, size_t msz) {
    int n = sr_size(b, SR_MAX_N);
    float *g = malloc((size_t)n * sizeof(float)), *up = malloc((size_t)n * sizeof(float));
    if (!g || !up) { free(g); free(up); return sr_oom(msg, msz); }
    sr_fill_row(g, n, b);
    sr_fill_row(up, n, b);
    int bad;
    SR_EVERY_LEVEL(bad, msg, msz, sr_check_silu(o, g, up, n, msg, msz));
    free(g); free(up);
    return bad;
}

// Head sizes 8 and 16 take the eight-keys-at-once path of the AVX2 kernel; others the general one.
static inline int sr_run_attend(sr_bytes *b, char *msg, size_t msz) {
    static const int dims[6] = { 8, 16, 64, 3, 12, 65 };
    int S = sr_size(b, 80), D = dims[sr_byte(b) % 6], G = 1 + (int)(sr_byte(b) % 3);
    int stride = G * D;   // G kv heads side by side, as in a KV cache; this one is head 0
    float *q = malloc((size_t)D * sizeof(float));
    float *k = calloc((size_t)S * stride, sizeof(float)), *v = calloc((size_t)S * stride, sizeof(float));
    if (!q || !k || !v) { free(q); free(k); free(v); return sr_oom(msg, msz); }
    sr_fill_row(q, D, b);
    for (int s = 0; s < S; s++) {
        sr_fill_row(k + (long)s * stride, D, b);
        sr_fill_row(v + (long)s * stride, D, b);
    }
    int bad;
    SR_EVERY_LEVEL(bad, msg, msz, sr_check_attend(o, q, k, v, S, D, stride, msg, msz));
    free(q); free(k); free(v);
    return bad;
}

#endif
