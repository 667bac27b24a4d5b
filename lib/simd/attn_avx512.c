// attn_avx512.c: one attention head's products for narrow heads (head size D <= 16), AVX-512.
// Compiled with -mavx512f -mfma on this object only; train_ops.c calls these when the level's
// micro-kernel is the AVX-512 one.
//
// Why: with D = 8 (stories260K) every product of a head has D as one of its sizes, and the packed
// matmul's 14 x 32 tile then computes 4 columns for each one it keeps, while packing the long
// operand costs as much as the product. Here the vectors run along the keys instead (16 keys
// per register), with k, v and their gradients held transposed, (D, S), so that each of the D
// coordinates is one row of S floats: every product is a few fused multiply-adds per 16 keys,
// and a row of queries touches only the keys it can see (the causal pattern's zeros are skipped,
// exactly as the loops in sdpa.c skip them). Sums run in another order than the loops' and the
// packed kernel's: the results differ by rounding (tests/test_train_simd.c bounds it).
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "simd.h"

enum { W = 16 };   // floats per register

// Unrolls a loop over the D <= 16 coordinates of a head. gcc's -O2 does not unroll loops, and the
// copies below for D = 8 and 16 were kept rolled: their per-coordinate accumulators (dq_acc,
// acc) then lived on the stack instead of in registers, and every step paid the loop's counter.
// Unrolled, each stays in one of the 32 zmm registers (AVX-512 has 32 on Intel and on Zen 4 alike).
#define UNROLL_D _Pragma("GCC unroll 16")

// Mask of the first n (0 .. 16) lanes.
static __mmask16 first(int n) { return (__mmask16)((1u << n) - 1u); }

// dst (D, S) = src (S, D) transposed, rows s < n only.
static void transpose_in(float *dst, const float *src, int n, int S, int D) {
    for (int s = 0; s < n; s++)
        for (int d = 0; d < D; d++) dst[(size_t)d * S + s] = src[(size_t)s * D + d];
}

// dst (S, D) += src (D, S) transposed, rows s < n only.
static void transpose_add(float *dst, const float *src, int n, int S, int D) {
    for (int s = 0; s < n; s++)
        for (int d = 0; d < D; d++) dst[(size_t)s * D + d] += src[(size_t)d * S + s];
}

// 1 + the index of the last non-zero entry of w[0 .. S) (-0 counts as zero), 0 if none: the keys
// a row of the pattern can see.
static int visible(const float *w, int S) {
    int s = S;
    while (s >= W) {
        const __m512 x = _mm512_loadu_ps(w + s - W);
        const __mmask16 nz = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NEQ_UQ);
        if (nz) return s - W + 32 - __builtin_clz((unsigned)nz);   // highest set lane + 1
        s -= W;
    }
    while (s > 0 && w[s - 1] == 0.0f) s--;
    return s;
}

// The keys row t of the pattern w (S) can see: under the causal rule (the forward's, passed on
// by the caller) the first t + causal_offset + 1, read from no memory; otherwise visible()'s scan
// from the row's end. The causal count can exceed the scan's where a visible weight underflowed
// to 0: those keys are then taken as the zeros they are (weight 0, no gradient: masked below).
// Reading only the visible part matters: a layer's table was written by the forward long before
// the backward reads it, and its hidden half, which visible() must read to prove it zero, was
// a twentieth of a stories260K training step.
static int row_keys(const float *w, int t, int S, int causal, int causal_offset) {
    return causal ? tw_causal_keys(t, S, 1, causal_offset) : visible(w, S);
}

// The keys any row sees: the largest row_keys() of the rows, from the last row up (under the
// causal rule the last row sees them all, and the scan stops there).
static int visible_any(const float *weights, int T, int S, int causal, int causal_offset) {
    int n_all = 0;
    for (int t = T - 1; t >= 0 && n_all < S; t--) {
        const int n = row_keys(weights + (size_t)t * S, t, S, causal, causal_offset);
        if (n > n_all) n_all = n;
    }
    return n_all;
}

// The sum of a register's 16 lanes, in double.
static double sum_pd(__m512d a, __m512d b) {
    return _mm512_reduce_add_pd(_mm512_add_pd(a, b));
}

// dq[t] += ds[t] k for one row whose scores' gradient ds (S) is scaled first: on entry
// ds = d weights, and it leaves as w (d weights - dot) / sqrt(D), the softmax's backward. kT: (D, S);
// only the first n keys are read (the others have weight 0).
static inline __attribute__((always_inline))
void row_scores_grad_and_dq(float *dq_t, float *ds, const float *w, const float *kT, float dot,
                            float inv_sqrt_d, int n, int S, int D) {
    const __m512 dotv = _mm512_set1_ps(dot), scale = _mm512_set1_ps(inv_sqrt_d);
    __m512 dq_acc[16];   // all 16 set: the unrolled copy for a D known only at run time reads
    UNROLL_D             // none past D, but the compiler cannot prove it
    for (int d = 0; d < 16; d++) dq_acc[d] = _mm512_setzero_ps();
    for (int s = 0; s < n; s += W) {
        const __mmask16 m = n - s >= W ? 0xFFFF : first(n - s);
        const __m512 ws = _mm512_maskz_loadu_ps(m, w + s);
        __m512 g = _mm512_maskz_loadu_ps(m, ds + s);
        // Keys of weight 0 get +0, as the loop in sdpa.c gives them.
        const __mmask16 nz = _mm512_mask_cmp_ps_mask(m, ws, _mm512_setzero_ps(), _CMP_NEQ_UQ);
        g = _mm512_maskz_mul_ps(nz, _mm512_mul_ps(ws, _mm512_sub_ps(g, dotv)), scale);
        _mm512_mask_storeu_ps(ds + s, m, g);
        UNROLL_D
        for (int d = 0; d < D; d++)
            dq_acc[d] = _mm512_fmadd_ps(g, _mm512_maskz_loadu_ps(m, kT + (size_t)d * S + s), dq_acc[d]);
    }
    if (dq_t)
        UNROLL_D
        for (int d = 0; d < D; d++) dq_t[d] += _mm512_reduce_add_ps(dq_acc[d]);
}

enum { ROWS = 4 };   // query rows whose key and value gradients are added in one pass

// dkT += ds^T q and dvT += w^T dout over R (<= ROWS) consecutive query rows: ds, w (R, S), q,
// dout (R, D), row r seeing its first n[r] keys; dkT, dvT (D, S). Each element takes the rows'
// terms one fused multiply-add at a time in row order, exactly as a row-at-a-time loop would add
// them, but is loaded and stored once per R rows instead of once per row.
static inline __attribute__((always_inline))
void add_key_value_grads(float *dkT, float *dvT, const float *ds, const float *w, const float *q,
                         const float *dout, const int *n, int R, int S, int D) {
    int n_max = 0;
    for (int r = 0; r < R; r++) n_max = n[r] > n_max ? n[r] : n_max;
    for (int s = 0; s < n_max; s += W) {
        __m512 g[ROWS], ws[ROWS];
        __mmask16 m[ROWS];
        for (int r = 0; r < R; r++) {
            const int left = n[r] - s;
            m[r] = left >= W ? 0xFFFF : left > 0 ? first(left) : 0;
            g[r] = _mm512_maskz_loadu_ps(m[r], ds + (size_t)r * S + s);
            ws[r] = _mm512_maskz_loadu_ps(m[r], w + (size_t)r * S + s);
            // Keys of weight 0 (hidden, or underflowed) are left alone, as by the loop in sdpa.c.
            m[r] = _mm512_mask_cmp_ps_mask(m[r], ws[r], _mm512_setzero_ps(), _CMP_NEQ_UQ);
        }
        const __mmask16 m_all = n_max - s >= W ? 0xFFFF : first(n_max - s);
        UNROLL_D
        for (int d = 0; d < D; d++) {
            const size_t o = (size_t)d * S + s;
            __m512 dk = _mm512_maskz_loadu_ps(m_all, dkT + o), dv = _mm512_maskz_loadu_ps(m_all, dvT + o);
            for (int r = 0; r < R; r++) {   // lanes a row does not see keep their value
                dk = _mm512_mask3_fmadd_ps(g[r], _mm512_set1_ps(q[(size_t)r * D + d]), dk, m[r]);
                dv = _mm512_mask3_fmadd_ps(ws[r], _mm512_set1_ps(dout[(size_t)r * D + d]), dv, m[r]);
            }
            _mm512_mask_storeu_ps(dkT + o, m_all, dk);
            _mm512_mask_storeu_ps(dvT + o, m_all, dv);
        }
    }
}

// The backward of one head (sdpa.h's tw_sdpa_backward). Inlined into a copy per common D, so
// that the loops over d are unrolled and dq's accumulators stay in registers.
static inline __attribute__((always_inline))
int sdpa_backward_narrow(float *dq, float *dk, float *dv, float *dscores, const float *dout,
                         const float *q, const float *k, const float *v, const float *weights,
                         int T, int S, int D, int causal, int causal_offset) {
    // kT, vT, dkT, dvT: (D, S) each.
    float *work = malloc((size_t)4 * D * S * sizeof(float));
    if (!work) return 0;
    float *kT = work, *vT = kT + (size_t)D * S, *dkT = vT + (size_t)D * S, *dvT = dkT + (size_t)D * S;
    const int n_all = visible_any(weights, T, S, causal, causal_offset);
    transpose_in(kT, k, n_all, S, D);
    transpose_in(vT, v, n_all, S, D);
    memset(dkT, 0, (size_t)2 * D * S * sizeof(float));
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);   // the forward's factor, same rounding
    for (int t0 = 0; t0 < T; t0 += ROWS) {
        const int R = T - t0 < ROWS ? T - t0 : ROWS;
        int n[ROWS];
        for (int r = 0; r < R; r++) {
            const int t = t0 + r;
            const float *w = weights + (size_t)t * S, *go = dout + (size_t)t * D;
            float *ds = dscores + (size_t)t * S;
            n[r] = row_keys(w, t, S, causal, causal_offset);
            // d weights[s] = dout[t] . v[s], zero where the weight is (hidden keys get no
            // gradient); the softmax's dot product sum_s w[s] d weights[s] in double.
            __m512d dot_lo = _mm512_setzero_pd(), dot_hi = _mm512_setzero_pd();
            for (int s = 0; s < n[r]; s += W) {
                const __mmask16 m = n[r] - s >= W ? 0xFFFF : first(n[r] - s);
                __m512 acc = _mm512_setzero_ps();
                UNROLL_D
                for (int d = 0; d < D; d++)
                    acc = _mm512_fmadd_ps(_mm512_set1_ps(go[d]), _mm512_maskz_loadu_ps(m, vT + (size_t)d * S + s), acc);
                const __m512 ws = _mm512_maskz_loadu_ps(m, w + s);
                const __mmask16 nz = _mm512_cmp_ps_mask(ws, _mm512_setzero_ps(), _CMP_NEQ_UQ);
                acc = _mm512_maskz_mov_ps(nz, acc);
                _mm512_mask_storeu_ps(ds + s, m, acc);
                dot_lo = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(ws)),
                                         _mm512_cvtps_pd(_mm512_castps512_ps256(acc)), dot_lo);
                dot_hi = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(ws), 1))),
                                         _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1))),
                                         dot_hi);
            }
            // ds = w (d weights - dot) / sqrt(D) and dq[t] += ds k.
            row_scores_grad_and_dq(dq ? dq + (size_t)t * D : NULL, ds, w, kT,
                                   (float)sum_pd(dot_lo, dot_hi), inv_sqrt_d, n[r], S, D);
            if (n[r] < S) memset(ds + n[r], 0, (size_t)(S - n[r]) * sizeof(float));
        }
        // dk += ds^T q[t], dv += w^T dout[t] for the R rows.
        add_key_value_grads(dkT, dvT, dscores + (size_t)t0 * S, weights + (size_t)t0 * S,
                            q + (size_t)t0 * D, dout + (size_t)t0 * D, n, R, S, D);
    }
    if (dk) transpose_add(dk, dkT, n_all, S, D);
    if (dv) transpose_add(dv, dvT, n_all, S, D);
    free(work);
    return 1;
}

int tw_sdpa_backward_narrow_avx512(float *dq, float *dk, float *dv, float *dscores,
                                   const float *dout, const float *q, const float *k,
                                   const float *v, const float *weights, int T, int S, int D,
                                   int causal, int causal_offset) {
#define BACKWARD(d) sdpa_backward_narrow(dq, dk, dv, dscores, dout, q, k, v, weights, T, S, (d), \
                                         causal, causal_offset)
    if (D == 8) return BACKWARD(8);
    if (D == 16) return BACKWARD(16);
    if (D < 1 || D > 16) return 0;
    return BACKWARD(D);
#undef BACKWARD
}

static inline __attribute__((always_inline))
int sdpa_mix_narrow(float *out, const float *weights, const float *v, int T, int S, int D,
                    int causal, int causal_offset) {
    float *vT = malloc((size_t)D * S * sizeof(float));
    if (!vT) return 0;
    const int n_all = visible_any(weights, T, S, causal, causal_offset);
    transpose_in(vT, v, n_all, S, D);
    for (int t = 0; t < T; t++) {
        const float *w = weights + (size_t)t * S;
        const int n = row_keys(w, t, S, causal, causal_offset);
        __m512 acc[16];   // all 16 set, as dq_acc above
        UNROLL_D
        for (int d = 0; d < 16; d++) acc[d] = _mm512_setzero_ps();
        for (int s = 0; s < n; s += W) {
            const __mmask16 m = n - s >= W ? 0xFFFF : first(n - s);
            const __m512 ws = _mm512_maskz_loadu_ps(m, w + s);
            UNROLL_D
            for (int d = 0; d < D; d++)
                acc[d] = _mm512_fmadd_ps(ws, _mm512_maskz_loadu_ps(m, vT + (size_t)d * S + s), acc[d]);
        }
        UNROLL_D
        for (int d = 0; d < D; d++) out[(size_t)t * D + d] = _mm512_reduce_add_ps(acc[d]);
    }
    free(vT);
    return 1;
}

int tw_sdpa_mix_narrow_avx512(float *out, const float *weights, const float *v, int T, int S, int D,
                              int causal, int causal_offset) {
    if (D == 8) return sdpa_mix_narrow(out, weights, v, T, S, 8, causal, causal_offset);
    if (D == 16) return sdpa_mix_narrow(out, weights, v, T, S, 16, causal, causal_offset);
    if (D < 1 || D > 16) return 0;
    return sdpa_mix_narrow(out, weights, v, T, S, D, causal, causal_offset);
}

// scores[t][s] = (q[t] . k[s]) / sqrt(D) for the keys row t sees (s <= t + causal_offset when
// causal, else every key) and -inf for the others: tw_sdpa_scores without a mask. Where a sum
// overflowed (inf or NaN) it is redone in the reference's order (the Linear layer's loop), as
// tw_simd_linear does, then scaled.
static inline __attribute__((always_inline))
int sdpa_scores_narrow(float *scores, const float *q, const float *k, int T, int S, int D,
                       int causal, int causal_offset) {
    float *kT = malloc((size_t)D * S * sizeof(float));
    if (!kT) return 0;
    transpose_in(kT, k, S, S, D);
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);   // tw_sdpa_scores's factor, same rounding
    const __m512 scale = _mm512_set1_ps(inv_sqrt_d);
    for (int t = 0; t < T; t++) {
        const float *qt = q + (size_t)t * D;
        float *row = scores + (size_t)t * S;
        const long n = tw_causal_keys(t, S, causal, causal_offset);
        __m512 qd[16];   // all 16 set, as dq_acc above
        UNROLL_D
        for (int d = 0; d < 16; d++) qd[d] = d < D ? _mm512_set1_ps(qt[d]) : _mm512_setzero_ps();
        for (int s = 0; s < n; s += W) {
            const __mmask16 m = n - s >= W ? 0xFFFF : first((int)(n - s));
            __m512 acc = _mm512_mul_ps(qd[0], _mm512_maskz_loadu_ps(m, kT + s));
            UNROLL_D
            for (int d = 1; d < D; d++)
                acc = _mm512_fmadd_ps(qd[d], _mm512_maskz_loadu_ps(m, kT + (size_t)d * S + s), acc);
            _mm512_mask_storeu_ps(row + s, m, _mm512_mul_ps(acc, scale));
            // Not finite: x - x is NaN for inf and NaN, 0 otherwise.
            __mmask16 bad = _mm512_mask_cmp_ps_mask(m, _mm512_sub_ps(acc, acc), _mm512_setzero_ps(), _CMP_NEQ_UQ);
            while (bad) {
                const int j = __builtin_ctz(bad);
                bad &= (__mmask16)(bad - 1);
                const float *ks = k + (size_t)(s + j) * D;
                float sum = 0.0f;
                for (int d = 0; d < D; d++) sum += qt[d] * ks[d];
                row[s + j] = sum * inv_sqrt_d;
            }
        }
        const __m512 hidden = _mm512_set1_ps(-INFINITY);   // the future is hidden
        for (long s = n; s < S; s += W)
            _mm512_mask_storeu_ps(row + s, S - s >= W ? 0xFFFF : first((int)(S - s)), hidden);
    }
    free(kT);
    return 1;
}

int tw_sdpa_scores_narrow_avx512(float *scores, const float *q, const float *k, int T, int S,
                                 int D, int causal, int causal_offset) {
    if (D == 8) return sdpa_scores_narrow(scores, q, k, T, S, 8, causal, causal_offset);
    if (D == 16) return sdpa_scores_narrow(scores, q, k, T, S, 16, causal, causal_offset);
    if (D < 1 || D > 16) return 0;
    return sdpa_scores_narrow(scores, q, k, T, S, D, causal, causal_offset);
}
