// sdpa_tiled_cases.h: the SIMD levels of the tiled attention (lib/simd/sdpa_tiled_*.c, one
// algorithm in sdpa_tiled_body.h) against the naive tiled loops (tw_sdpa_tiled_forward_naive and
// _backward_naive, lib/nn/sdpa_tiled.c), without the Check framework, so that the same cases run
// in the Check suite (tests/test_sdpa_tiled_simd.c: x86's avx2 and avx512) and in the AArch64
// self-test under qemu (tests/arm/sdpa_tiled_selftest.c: neon; make test-arm-tiled).
// Cases: T in {1, 5, 7, 33, 40, 48, 64, 200, 257}, head sizes 4 .. 64 (below, equal to and above a
// register's width), blocks that do not divide T, additive masks, a KV-cache offset, heads read
// in place at a stride (GQA), scores near +-1e4, a row with every key masked (output 0, no
// gradient, never NaN) and one with a single key. The kernel must run (return 1) for each of them.
//
// Tolerances. Forward: the naive loop's score is a dot product in index order, the kernel's a
// chain of fused multiply-adds, its exp the level's vector exp (within 2 ulp of expf), and the
// terms of a row sum in another order. out is a convex combination of v (|v| <= 1): 2e-6 abs +
// 1e-5 rel, the attention tests' single-operation tolerance. With q and k times 100 (scale 100)
// a score near 1e4 / sqrt(D) has an ulp of ~5e-4, so the two dot products can land an ulp or two
// apart and a weight exp(score - m) moves by up to ~1e-3 relative: 2e-3 abs there. row_max:
// ten times the abs tolerance + 1e-5 rel (a maximum of such scores). Gradients: grad_check.h's
// metric, |got - want| <= rel (max(case_scale, max|want|) + |want|) with rel 1e-5 (2e-3 at scale
// 100), and for dq and dk case_scale = the size of their terms (test_sdpa_tiled.c's term_scale):
// a one-hot row has dq = dk = 0 exactly, computed from non-zero terms p (dp - D_t) k.
// Measured on x86 (TW_GRAD_REPORT=1 prints it): gradients within 4.8e-7 of that metric.
#ifndef SDPA_TILED_CASES_H
#define SDPA_TILED_CASES_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc_rand.h"
#include "simd/simd.h"
#include "nn/sdpa_tiled.h"

typedef struct { int T, S, D, causal, offset, masked, block, H, scale; } st_case;
// H: heads side by side in q (stride H*D), the call reading head 0; keys and values have
// max(H/2, 1) heads (stride G*D). scale: q and k multiplied by it.
static const st_case ST_CASES[] = {
    { 1,   1,   8,  1, 0,  0, 64,  1, 1 },     // one query, one key
    { 7,   7,   8,  1, 0,  1, 3,   1, 1 },     // blocks of 3: a short last block; masks
    { 64,  64,  8,  1, 0,  0, 64,  8, 1 },     // stories260K's heads: D 8, 8 heads, 4 kv heads
    { 64,  64,  16, 0, 0,  1, 16,  2, 1 },
    { 257, 257, 16, 1, 0,  1, 64,  1, 1 },     // 257 = 4 * 64 + 1
    { 257, 257, 4,  0, 0,  0, 50,  1, 1 },     // D below every register's width
    { 40,  40,  20, 1, 0,  0, 17,  1, 1 },     // D a multiple of no width
    { 64,  64,  64, 1, 0,  1, 64,  1, 1 },     // D x block = 4096: the largest the kernels take
    { 3,   19,  8,  1, 16, 1, 4,   1, 1 },     // three new queries over a KV cache of 19 keys
    { 33,  33,  8,  1, 0,  0, 8,   1, 100 },   // near-one-hot rows that rescale block to block
    // Unmasked, S <= 256, D <= 16: the calls AVX-512's narrow kernel takes (sdpa_tiled_narrow_avx512.c)
    { 200, 200, 8,  1, 0,  0, 64,  8, 1 },     // rows ending inside a register; GQA
    { 5,   21,  8,  1, 16, 0, 64,  1, 1 },     // five new queries over a KV cache, no mask
    { 48,  48,  12, 0, 0,  0, 64,  1, 1 },     // not causal, D of no unrolled copy
    { 64,  256, 16, 1, 192, 0, 64, 2, 1 },     // 256 keys, the most a row keeps in registers
};
enum { N_ST_CASES = sizeof ST_CASES / sizeof ST_CASES[0] };

static double st_maxabs(const float *a, long n) {
    double m = 0.0;
    for (long i = 0; i < n; i++) m = fabs((double)a[i]) > m ? fabs((double)a[i]) : m;
    return m;
}

// 0 if every |got - want| <= atol + rtol |want| (NaN never passes), else 1 with msg.
static int st_close(const char *what, const float *got, const float *want, long n, double atol,
                    double rtol, char *msg, size_t len) {
    for (long i = 0; i < n; i++) {
        const double d = fabs((double)got[i] - want[i]);
        if (!(d <= atol + rtol * fabs((double)want[i]))) {
            snprintf(msg, len, "%s[%ld] = %.9g, naive %.9g (atol %g, rtol %g)", what, i,
                     (double)got[i], (double)want[i], atol, rtol);
            return 1;
        }
    }
    return 0;
}

// grad_check.h's metric without Check.
static int st_grad(const char *what, const float *got, const float *want, long n, double rel,
                   double case_scale, char *msg, size_t len) {
    const double m = st_maxabs(want, n), scale = case_scale > m ? case_scale : m;
    if (getenv("TW_GRAD_REPORT")) {   // the worst |got - want| / (scale + |want|), as grad_check.h
        double worst = 0.0;
        for (long i = 0; i < n; i++) {
            const double den = scale + fabs((double)want[i]);
            const double r = den > 0.0 ? fabs((double)got[i] - want[i]) / den : fabs((double)got[i]);
            worst = r > worst ? r : worst;
        }
        printf("grad-report %-3s n=%6ld scale=%9.3g max|want|=%9.3g worst=%9.3g\n", what, n, scale, m, worst);
    }
    return st_close(what, got, want, n, rel * scale, rel, msg, len);
}

// The terms dq and dk are summed from: test_sdpa_tiled.c's term_scale.
static double st_term_scale(const float *q, long nq, const float *k, long nk, const float *v,
                            const float *dout, int D) {
    const double qk = fmax(st_maxabs(q, nq), st_maxabs(k, nk));
    return qk * 2.0 * D * st_maxabs(v, nk) * st_maxabs(dout, nq) / sqrt((double)D);
}

// Case ci at `level` (tw_simd_init'ed here, naive again on return) against the naive loops:
// 0, or 1 with one line in msg.
static int st_run(const char *level, int ci, char *msg, size_t len) {
    const st_case *c = &ST_CASES[ci];
    const int qs = c->H * c->D, kvs = (c->H > 1 ? c->H / 2 : 1) * c->D;
    const long nq = (long)c->T * qs, nk = (long)c->S * kvs;
    const uint64_t seed = 1000u + 10u * (uint64_t)ci;
    float *q = sc_rand(nq, -1, 1, seed), *k = sc_rand(nk, -1, 1, seed + 1);
    float *v = sc_rand(nk, -1, 1, seed + 2), *dout = sc_rand(nq, -1, 1, seed + 3);
    float *mask = c->masked ? sc_rand((long)c->T * c->S, 0, 1, seed + 4) : NULL;
    float *buf = calloc((size_t)(4 * nq + 4 * nk + 4L * c->T), sizeof(float));
    int bad = !q || !k || !v || !dout || (c->masked && !mask) || !buf;
    if (bad) { snprintf(msg, len, "out of memory"); goto done; }
    for (long i = 0; i < nq; i++) q[i] *= (float)c->scale;
    for (long i = 0; i < nk; i++) k[i] *= (float)c->scale;
    if (mask) {
        for (long i = 0; i < (long)c->T * c->S; i++) mask[i] = mask[i] < 0.25f ? -INFINITY : 0.0f;
        for (int s = 0; s < c->S; s++) mask[s] = -INFINITY;                             // row 0: no key
        if (c->T > 1) for (int s = 0; s < c->S; s++) mask[c->S + s] = s == 0 ? 0.0f : -INFINITY;   // row 1: one
    }
    float *out_n = buf, *out_s = out_n + nq, *dq_n = out_s + nq, *dq_s = dq_n + nq;
    float *dk_n = dq_s + nq, *dk_s = dk_n + nk, *dv_n = dk_s + nk, *dv_s = dv_n + nk;
    float *st_n = dv_s + nk, *st_s = st_n + 2L * c->T;   // (row_max, row_logsum) each
    const tw_sdpa_tiling tl = { .T = c->T, .S = c->S, .D = c->D, .q_stride = qs, .kv_stride = kvs,
                                .mask_stride = c->S, .causal = c->causal, .causal_offset = c->offset,
                                .block = c->block };
    const tw_simd_tiling a = { c->T, c->S, c->D, qs, kvs, c->S, c->causal, c->offset, c->block };
    tw_sdpa_tiled_forward_naive(out_n, st_n, st_n + c->T, q, k, v, mask, &tl);
    tw_sdpa_tiled_backward_naive(dq_n, dk_n, dv_n, dout, out_n, st_n, st_n + c->T, q, k, v, mask, &tl);
    if (!tw_simd_init(level)) { snprintf(msg, len, "level %s is not available", level); bad = 1; goto done; }
    const int ran = tw_simd_sdpa_tiled_forward(out_s, st_s, st_s + c->T, q, k, v, mask, &a) &&
                    tw_simd_sdpa_tiled_backward(dq_s, dk_s, dv_s, dout, out_s, st_s, st_s + c->T,
                                                q, k, v, mask, &a);
    tw_simd_init("naive");
    if (!ran) { snprintf(msg, len, "the kernel declined"); bad = 1; goto done; }
    for (long t = 0; t < c->T && !bad; t++)   // the other heads' columns are not the call's
        for (int j = c->D; j < qs; j++)
            if (out_s[t * qs + j] != 0.0f || dq_s[t * qs + j] != 0.0f) {
                snprintf(msg, len, "row %ld column %d (another head's) was written", t, j);
                bad = 1;
                break;
            }
    if (!bad && mask)
        for (int d = 0; d < c->D; d++)
            if (out_s[d] != 0.0f) { snprintf(msg, len, "row 0 sees no key but out[%d] = %g", d, out_s[d]); bad = 1; break; }
    const double atol = c->scale > 1 ? 2e-3 : 2e-6, grel = c->scale > 1 ? 2e-3 : 1e-5;
    const double vanish = st_term_scale(q, nq, k, nk, v, dout, c->D);
    if (!bad) bad = st_close("out", out_s, out_n, nq, atol, 1e-5, msg, len);
    for (int t = 0; t < c->T && !bad; t++) {
        const int same = isinf(st_n[t]) ? st_s[t] == st_n[t]
                                        : fabs(st_s[t] - st_n[t]) <= 10 * atol + 1e-5 * fabs(st_n[t]);
        if (!same) { snprintf(msg, len, "row_max[%d] = %g, naive %g", t, st_s[t], st_n[t]); bad = 1; }
    }
    if (!bad) bad = st_grad("dq", dq_s, dq_n, nq, grel, vanish, msg, len);
    if (!bad) bad = st_grad("dk", dk_s, dk_n, nk, grel, vanish, msg, len);
    if (!bad) bad = st_grad("dv", dv_s, dv_n, nk, grel, 0.0, msg, len);
done:
    free(q); free(k); free(v); free(dout); free(mask); free(buf);
    return bad;
}

#endif
