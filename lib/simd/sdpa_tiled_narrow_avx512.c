// sdpa_tiled_narrow_avx512.c: the tiled attention (nn/sdpa_tiled.h) for narrow heads (D <= 16)
// over at most 256 keys and without a mask, each query row whole in registers, AVX-512.
// Compiled with -mavx512f -mfma on this object only; sdpa_tiled_avx512.c tries it first.
//
// Why: sdpa_tiled_body.h serves every head size and length on every ISA, in blocks of keys whose
// scores, exponentials and partial sums go through stack scratch; for stories260K's heads (D = 8,
// 256 keys) that bookkeeping, and the keys transposed again for every 16 query rows, cost more than
// the arithmetic. Here a head's keys and values are transposed once, (D, S), the vectors run along
// the keys (16 a register, as in attn_avx512.c), and a row's 256 keys are 16 registers: its
// scores, their maximum, the exponentials, the sum and the weighted values are one pass over the
// registers, with no running rescale (the whole row is one block). The backward recomputes each
// probability from the forward's row statistics, p = exp(score - m - log l), as the body does.
// Sums run in another order than the naive tiled loop's: tests/test_sdpa_tiled_simd.c bounds it.
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "simd.h"
#include "simd/exp_avx512.h"
#include "simd/key_transpose.h"

enum { W = 16, MAX_D = 16, MAX_KEYS = 256, MAX_VECS = MAX_KEYS / W };

// Unrolls the loops over a head's D coordinates, so that per-coordinate registers stay registers
// (gcc's -O2 does not unroll; see attn_avx512.c).
#define UNROLL_D _Pragma("GCC unroll 16")

// The first n (>= 1) lanes; all 16 from n = 16 up.
static __mmask16 first(int n) { return n >= W ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u); }

// The scores of keys 16 j .. 16 j + 15 for one query: (q . k_s) / sqrt(D), -inf in the lanes
// outside mask (keys the row does not see, or past S), so that they never are the row's maximum.
//   qd: D registers, each one coordinate of q broadcast   kT: (D, Sp)
static inline __attribute__((always_inline))
__m512 key_scores(const __m512 *qd, const float *kT, int j, int Sp, int D, __mmask16 mask,
                  __m512 inv_sqrt_d) {
    __m512 acc = _mm512_mul_ps(qd[0], _mm512_load_ps(kT + (size_t)j * W));
    UNROLL_D
    for (int d = 1; d < D; d++)
        acc = _mm512_fmadd_ps(qd[d], _mm512_load_ps(kT + (size_t)d * Sp + (size_t)j * W), acc);
    return _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), mask, _mm512_mul_ps(acc, inv_sqrt_d));
}

// x (D) broadcast into D registers; the registers past D are zero.
static inline __attribute__((always_inline))
void broadcast(__m512 *xd, const float *x, int D) {
    UNROLL_D
    for (int d = 0; d < MAX_D; d++) xd[d] = d < D ? _mm512_set1_ps(x[d]) : _mm512_setzero_ps();
}

// One head's keys and values transposed, (D, Sp) each, 64-byte aligned; with grads, two more
// zeroed for their gradients. NULL if there is no memory.
static float *transposed(const float *k, const float *v, int S, int Sp, int D, int stride,
                         int grads) {
    const size_t one = (size_t)D * Sp, n = (grads ? 4 : 2) * one;   // Sp: a multiple of 16 floats
    float *buf = aligned_alloc(64, n * sizeof(float));
    if (!buf) return NULL;
    tw_keys_transpose(buf, k, S, Sp, D, stride);
    tw_keys_transpose(buf + one, v, S, Sp, D, stride);
    if (grads) memset(buf + 2 * one, 0, 2 * one * sizeof(float));
    return buf;
}

static inline __attribute__((always_inline))
int narrow_forward(float *out, float *row_max, float *row_logsum, const float *q, const float *k,
                   const float *v, const tw_simd_tiling *a, int D) {
    const int S = a->S, Sp = (S + W - 1) / W * W;
    float *kT = transposed(k, v, S, Sp, D, a->kv_stride, 0);
    if (!kT) return 0;
    const float *vT = kT + (size_t)D * Sp;
    const __m512 inv = _mm512_set1_ps(1.0f / sqrtf((float)D));   // the naive loop's factor
    for (int t = 0; t < a->T; t++) {
        float *o = out + (size_t)t * a->q_stride;
        const int n = tw_causal_keys(t, S, a->causal, a->causal_offset), nv = (n + W - 1) / W;
        if (n <= 0) {   // a row that sees no key: out 0, and statistics that say so
            for (int d = 0; d < D; d++) o[d] = 0.0f;
            row_max[t] = row_logsum[t] = -INFINITY;
            continue;
        }
        __m512 qd[MAX_D], e[MAX_VECS], acc[MAX_D];
        broadcast(qd, q + (size_t)t * a->q_stride, D);
        __m512 mx = _mm512_set1_ps(-INFINITY);
        for (int j = 0; j < nv; j++) {
            e[j] = key_scores(qd, kT, j, Sp, D, first(n - j * W), inv);
            mx = _mm512_max_ps(mx, e[j]);
        }
        const float m = _mm512_reduce_max_ps(mx);
        const __m512 mv = _mm512_set1_ps(m);
        __m512 sum = _mm512_setzero_ps();
        UNROLL_D
        for (int d = 0; d < MAX_D; d++) acc[d] = _mm512_setzero_ps();
        // e = exp(score - m), 0 for the keys the row does not see. Their exp is not taken: at
        // -inf exp512 clamps to -104 and vscalefps then underflows to 0, which costs a microcode
        // assist on Intel cores (the last register of every causal row: a third of the forward).
        for (int j = 0; j < nv; j++) {
            const __mmask16 seen = first(n - j * W);
            e[j] = _mm512_maskz_mov_ps(seen, exp512(_mm512_maskz_sub_ps(seen, e[j], mv)));
        }
        for (int j = 0; j < nv; j++) {   // summed, and weighting the values
            sum = _mm512_add_ps(sum, e[j]);
            UNROLL_D
            for (int d = 0; d < D; d++)
                acc[d] = _mm512_fmadd_ps(e[j], _mm512_load_ps(vT + (size_t)d * Sp + (size_t)j * W), acc[d]);
        }
        const float l = _mm512_reduce_add_ps(sum);   // >= 1: the largest term is exp(0)
        const double inv_l = 1.0 / l;
        UNROLL_D
        for (int d = 0; d < D; d++) o[d] = (float)(_mm512_reduce_add_ps(acc[d]) * inv_l);
        row_max[t] = m;
        row_logsum[t] = l;   // log l below: a call here spilled the row's registers every row
    }
    for (int t = 0; t < a->T; t++)
        if (row_max[t] != -INFINITY) row_logsum[t] = (float)log(row_logsum[t]);
    free(kT);
    return 1;
}

static inline __attribute__((always_inline))
int narrow_backward(float *dq, float *dk, float *dv, const float *dout, const float *out,
                    const float *row_max, const float *row_logsum, const float *q, const float *k,
                    const float *v, const tw_simd_tiling *a, int D) {
    const int S = a->S, Sp = (S + W - 1) / W * W;
    const size_t one = (size_t)D * Sp;
    float *kT = transposed(k, v, S, Sp, D, a->kv_stride, 1);
    if (!kT) return 0;
    float *vT = kT + one, *dkT = vT + one, *dvT = dkT + one;   // (D, Sp) each
    const float inv_sqrt_d = 1.0f / sqrtf((float)D);
    const __m512 inv = _mm512_set1_ps(inv_sqrt_d);
    for (int t = 0; t < a->T; t++) {
        if (row_max[t] == -INFINITY) continue;   // the row saw no key: its output was the constant 0
        const size_t row = (size_t)t * a->q_stride;
        const float *go = dout + row, *o = out + row;
        const int n = tw_causal_keys(t, S, a->causal, a->causal_offset), nv = (n + W - 1) / W;
        double Dt = 0.0;   // rowsum(dout * out), as the naive loop
        for (int d = 0; d < D; d++) Dt += (double)go[d] * o[d];
        __m512 qd[MAX_D], gd[MAX_D], dqa[MAX_D];
        broadcast(qd, q + row, D);
        broadcast(gd, go, D);
        UNROLL_D
        for (int d = 0; d < MAX_D; d++) dqa[d] = _mm512_setzero_ps();
        const __m512 shift = _mm512_set1_ps(row_max[t]), log_l = _mm512_set1_ps(row_logsum[t]);
        const __m512 dtv = _mm512_set1_ps((float)Dt);
        // Two passes over the row's keys: first p and ds (the exponentials want registers for
        // their constants), then the three gradients' updates from them (the D accumulators of
        // dq want registers). In one pass the compiler kept neither set in registers.
        __m512 p[MAX_VECS], ds[MAX_VECS];
        for (int j = 0; j < nv; j++) {
            const size_t c = (size_t)j * W;
            // p = exp(score - m - log l), 0 for the keys the row does not see (their exp not
            // taken, as in the forward)
            const __mmask16 seen = first(n - j * W);
            const __m512 s = key_scores(qd, kT, j, Sp, D, seen, inv);
            p[j] = _mm512_maskz_mov_ps(
                seen, exp512(_mm512_maskz_sub_ps(seen, _mm512_sub_ps(s, shift), log_l)));
            // dp_s = dout_t . v_s, then ds = p (dp - D_t) / sqrt(D) (0 where p is)
            __m512 dp = _mm512_mul_ps(gd[0], _mm512_load_ps(vT + c));
            UNROLL_D
            for (int d = 1; d < D; d++)
                dp = _mm512_fmadd_ps(gd[d], _mm512_load_ps(vT + (size_t)d * Sp + c), dp);
            ds[j] = _mm512_mul_ps(_mm512_mul_ps(p[j], _mm512_sub_ps(dp, dtv)), inv);
        }
        for (int j = 0; j < nv; j++) {   // dv_s += p dout_t, dk_s += ds q_t, dq_t += ds k_s
            const size_t c = (size_t)j * W;
            UNROLL_D
            for (int d = 0; d < D; d++) {
                const size_t i = (size_t)d * Sp + c;
                _mm512_store_ps(dvT + i, _mm512_fmadd_ps(p[j], gd[d], _mm512_load_ps(dvT + i)));
                _mm512_store_ps(dkT + i, _mm512_fmadd_ps(ds[j], qd[d], _mm512_load_ps(dkT + i)));
                dqa[d] = _mm512_fmadd_ps(ds[j], _mm512_load_ps(kT + i), dqa[d]);
            }
        }
        if (dq)
            UNROLL_D
            for (int d = 0; d < D; d++) dq[row + d] += _mm512_reduce_add_ps(dqa[d]);
    }
    if (dk) tw_keys_transpose_add(dk, dkT, S, Sp, D, a->kv_stride);
    if (dv) tw_keys_transpose_add(dv, dvT, S, Sp, D, a->kv_stride);
    free(kT);
    return 1;
}

// The calls this file takes: D <= 16, S <= 256, no mask. 0 declines.
static int takes(const float *mask, const tw_simd_tiling *a) {
    return mask == NULL && a->D >= 1 && a->D <= MAX_D && a->S >= 1 && a->S <= MAX_KEYS;
}

int tw_sdpa_tiled_forward_narrow_avx512(float *out, float *row_max, float *row_logsum,
                                        const float *q, const float *k, const float *v,
                                        const float *mask, const tw_simd_tiling *a) {
    if (!takes(mask, a)) return 0;
    // A copy for the common head sizes, whose loops over d then unroll completely.
    if (a->D == 8) return narrow_forward(out, row_max, row_logsum, q, k, v, a, 8);
    if (a->D == 16) return narrow_forward(out, row_max, row_logsum, q, k, v, a, 16);
    return narrow_forward(out, row_max, row_logsum, q, k, v, a, a->D);
}

int tw_sdpa_tiled_backward_narrow_avx512(float *dq, float *dk, float *dv, const float *dout,
                                         const float *out, const float *row_max,
                                         const float *row_logsum, const float *q, const float *k,
                                         const float *v, const float *mask,
                                         const tw_simd_tiling *a) {
    if (!takes(mask, a)) return 0;
#define BACKWARD(d) narrow_backward(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v, a, (d))
    if (a->D == 8) return BACKWARD(8);
    if (a->D == 16) return BACKWARD(16);
    return BACKWARD(a->D);
#undef BACKWARD
}
