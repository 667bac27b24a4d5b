// q8_0.c: symmetric group quantization (int8 and int4) and the reference int8 matvec; see q8_0.h.
// Plain loops written to be read; the fast versions are in lib/simd/q8_*.c.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "quant/q8_0.h"
#include "simd/simd.h"

tw_status tw_quant_check_group(int cols, int gs) {
    if (gs <= 0 || gs > TW_QUANT_MAX_GROUP) return TW_ERR_ARG;
    if (cols <= 0 || cols % gs != 0) return TW_ERR_SHAPE;
    return TW_OK;
}

int tw_quant_fit_group(const int *widths, int n, int gs_max) {
    for (int gs = gs_max; gs > 1; gs /= 2) {
        int fits = 1;
        for (int i = 0; i < n; i++)
            if (widths[i] % gs != 0) fits = 0;
        if (fits) return gs;
    }
    return 1;
}

// ---- one group ----

// max |x_i|, NaN if any x_i is NaN (a plain `a > m` test would skip NaNs).
static float group_absmax(const float *x, int gs) {
    float m = 0.0f;
    for (int i = 0; i < gs; i++) {
        float a = fabsf(x[i]);
        if (isnan(a) || a > m) m = a;
        if (isnan(m)) break;
    }
    return m;
}

// round(x / s) to nearest, ties to even, clamped to [-qmax, qmax]. The clamp only matters when s
// is subnormal and x / s lands slightly above qmax.
static int8_t quantize_value(float x, float s, int qmax) {
    float r = rintf(x / s);
    if (r > (float)qmax) r = (float)qmax;
    if (r < (float)-qmax) r = (float)-qmax;
    return (int8_t)r;
}

void tw_quant_groups(int8_t *q, float *s, const float *x, long n_groups, int gs, int qmax) {
    for (long g = 0; g < n_groups; g++) {
        const float *xg = x + g * gs;
        int8_t *qg = q + g * gs;
        float scale = group_absmax(xg, gs) / (float)qmax;
        s[g] = scale;
        int usable = scale > 0.0f && scale < INFINITY;   // false for 0, Inf and NaN
        for (int i = 0; i < gs; i++) qg[i] = usable ? quantize_value(xg[i], scale, qmax) : 0;
    }
}

void tw_dequant_groups(float *x, const int8_t *q, const float *s, long n_groups, int gs) {
    for (long g = 0; g < n_groups; g++)
        for (int i = 0; i < gs; i++) x[g * gs + i] = (float)q[g * gs + i] * s[g];
}

// ---- whole weight matrices ----

static tw_status quantize_matrix(int8_t *q, float *s, const float *w, long rows, int cols, int gs,
                                 int qmax) {
    tw_status st = tw_quant_check_group(cols, gs);
    if (st != TW_OK) return st;
    if (rows < 0) return TW_ERR_ARG;
    for (long i = 0; i < rows * cols; i++)
        if (!isfinite(w[i])) return TW_ERR_ARG;
    tw_quant_groups(q, s, w, rows * (cols / gs), gs, qmax);
    return TW_OK;
}

tw_status tw_q8_quantize(int8_t *q, float *s, const float *w, long rows, int cols, int gs) {
    return quantize_matrix(q, s, w, rows, cols, gs, TW_Q8_MAX);
}

tw_status tw_q4_quantize(int8_t *q, float *s, const float *w, long rows, int cols, int gs) {
    return quantize_matrix(q, s, w, rows, cols, gs, TW_Q4_MAX);
}

// ---- the int8 matvec ----

void tw_q8_matvec_naive(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                        const float *xs, int N, int K, int gs) {
    const int n_groups = K / gs;
    for (int i = 0; i < N; i++) {
        const int8_t *row = Wq + (long)i * K;
        const float *row_s = Ws + (long)i * n_groups;
        float acc = 0.0f;
        for (int g = 0; g < n_groups; g++) {
            int32_t dot = 0;   // exact: at most gs * 127 * 128 in magnitude
            for (int k = g * gs; k < (g + 1) * gs; k++) dot += (int32_t)row[k] * (int32_t)xq[k];
            acc += (float)dot * row_s[g] * xs[g];
        }
        y[i] = acc;
    }
}

void tw_q8_quantize_x_naive(int8_t *q, float *s, const float *x, int n_groups, int gs) {
    tw_quant_groups(q, s, x, n_groups, gs, TW_Q8_MAX);
}

// ---- the kernel levels ----

static const tw_q8_ops q8_naive = { .level = "naive", .quantize_x = tw_q8_quantize_x_naive,
                                    .matvec = tw_q8_matvec_naive, .x_multiple = 1, .w_multiple = 1 };

// The int8 slots of a level's table (lib/simd/dispatch.c); the naive level's are NULL: these loops.
static const tw_q8_ops *q8_of(const tw_kernels *k) { return !k ? NULL : k->q8 ? k->q8 : &q8_naive; }

const tw_q8_ops *tw_q8_ops_for(const char *level) {
    if (!level) return NULL;
    return q8_of(strcmp(level, "auto") == 0 ? tw_simd_kernels("auto") : tw_simd_variant(level));
}

const tw_q8_ops *tw_q8_ops_for_simd_level(const char *simd_level) {
    return q8_of(tw_simd_kernels(simd_level));
}

const char *tw_q8_available(void) { return tw_simd_variants(); }

int tw_q8_matvec_is_simd(const tw_q8_ops *o, int gs) {
    if (strcmp(o->level, "naive") == 0) return 0;
    return gs % o->w_multiple == 0 || (gs == 4 && o->matvec_g4);
}

void tw_q8_quantize_x(const tw_q8_ops *o, int8_t *q, float *s, const float *x, int n_groups, int gs) {
    if (gs % o->x_multiple == 0) o->quantize_x(q, s, x, n_groups, gs);
    else if (gs == 4 && o->quantize_x_g4) o->quantize_x_g4(q, s, x, n_groups, gs);
    else tw_q8_quantize_x_naive(q, s, x, n_groups, gs);
}

void tw_q8_matvec(const tw_q8_ops *o, float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                  const float *xs, int N, int K, int gs) {
    if (gs % o->w_multiple == 0) o->matvec(y, Wq, Ws, xq, xs, N, K, gs);
    else if (gs == 4 && o->matvec_g4) o->matvec_g4(y, Wq, Ws, xq, xs, N, K, gs);
    else tw_q8_matvec_naive(y, Wq, Ws, xq, xs, N, K, gs);
}

void tw_q8_linear(const tw_q8_ops *o, float *y, int8_t *xq_scratch, float *xs_scratch,
                  const int8_t *Wq, const float *Ws, const float *x, int N, int K, int gs) {
    tw_q8_quantize_x(o, xq_scratch, xs_scratch, x, K / gs, gs);
    tw_q8_matvec(o, y, Wq, Ws, xq_scratch, xs_scratch, N, K, gs);
}

// ---- packed copies ----

int tw_q8_packs(const tw_q8_ops *o, int gs) {
    return o->pack && o->packed_bytes && o->matvec_packed && gs > 0 && gs % o->pack_multiple == 0;
}

static size_t round_up64(size_t n) { return (n + 63) & ~(size_t)63; }

tw_status tw_q8_work_pack(tw_q8_work *w, const tw_q8_matrix *mats, int n, int gs) {
    if (!tw_q8_packs(w->ops, gs) || n <= 0) return TW_OK;
    size_t bytes = 0;
    for (int i = 0; i < n; i++) bytes += round_up64(w->ops->packed_bytes(mats[i].rows, mats[i].cols, gs));
    // 64-byte aligned copies: a packed kernel's 64-byte loads then never straddle two lines.
    void *memory = aligned_alloc(64, bytes > 0 ? bytes : 64);
    const void **packed = malloc((size_t)n * sizeof *packed);
    int32_t *scratch = malloc((size_t)w->K_max * sizeof *scratch);
    if (!memory || !packed || !scratch) { free(memory); free(packed); free(scratch); return TW_ERR_NOMEM; }
    unsigned char *p = memory;
    for (int i = 0; i < n; i++) {
        w->ops->pack(p, mats[i].q, mats[i].s, mats[i].rows, mats[i].cols, gs);
        packed[i] = p;
        p += round_up64(w->ops->packed_bytes(mats[i].rows, mats[i].cols, gs));
    }
    w->scratch = scratch;
    w->scratch_parts = 1;   // more rows when threads ask (q8_threads.c)
    w->packed_ops = w->ops;
    w->mats = mats;
    w->packed = packed;
    w->packed_memory = memory;
    w->n_mats = n;
    return TW_OK;
}

void tw_q8_work_free_packed(tw_q8_work *w) {
    free(w->scratch);
    free((void *)w->packed);
    free(w->packed_memory);
    w->scratch = NULL;
    w->scratch_parts = 0;
    w->packed_ops = NULL;
    w->mats = NULL;
    w->packed = NULL;
    w->packed_memory = NULL;
    w->n_mats = 0;
}

// ---- a set of copies ----

tw_status tw_q8_copies_select(tw_q8_copies *c, const tw_q8_ops *ops) {
    tw_q8_work *w = &c->work;
    w->ops = ops;
    if (w->packed && w->packed_ops == ops) return TW_OK;   // this level's copies are made
    tw_q8_work_free_packed(w);
    // The level's own layout of the weights, if it has one (lib/simd/q8.h): made here, once.
    return tw_q8_work_pack(w, c->mats, c->n, c->gs);
}

void tw_q8_copies_free(tw_q8_copies *c) {
    if (!c) return;
    tw_q8_work_free_packed(&c->work);
    free(c->work.xq);
    free(c->work.xs);
    free(c->mats);
    free(c->memory);
    free(c);
}
