// kernels_avx2.c: the vector kernels of simd.h for x86-64 with AVX2 and FMA (8 floats per
// register). Compiled with -mavx2 -mfma on this object only (mk/simd.mk), and called only after
// tw_simd_init has seen the CPU report both features, so the rest of the binary runs anywhere.
// Each function has the contract of its naive twin, whose name it bears without the _avx2
// (tw_softmax_row_avx2: tw_softmax_row, lib/nn/softmax.c; simd.h lists the pairs); the sums are
// taken in a different order (several accumulators, then a tree), which is why tests compare
// within a rounding bound.
//
// Range (docs/kernels.md, "Over the whole float range"): every kernel agrees with the reference
// the naive model runs for every finite input whose reference result is finite, denormals to
// +-3.4e38. Two rules make that hold cheaply: the norms accumulate in double, as lib/nn/norm.c does
// (a float sum of squares overflows once |x| > 1.8e19), and a float reduction whose fast result
// is not finite is redone in the reference's own index order (tw_dot_naive, lib/simd/ref.c), so an overflow in
// a partial sum that the reference never forms cannot turn a finite answer into inf or NaN.
#include <immintrin.h>
#include <math.h>
#include "simd.h"

// ---- helpers ----

static float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// A mask of the lanes whose |value| < inf (false for NaN): one compare for a whole register.
static int finite_mask256(__m256 v) {
    __m256 abs = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
    return _mm256_movemask_ps(_mm256_cmp_ps(abs, _mm256_set1_ps(INFINITY), _CMP_LT_OQ));
}

static float hmax256(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// exp(x) for 8 floats. Range reduction x = n ln2 + r with n = round(x / ln2), |r| <= ln2/2;
// ln2 is split in a high part (exact in float, so n*ln2_hi is exact) and a low part so r keeps
// full precision. e^r by its Taylor series to r^7 (truncation error < 6e-9 relative for
// |r| <= 0.347), Horner form with FMA. Then 2^n is built in the exponent field, in two halves
// so that n = 128 (x near 88.72) and n = -150 both stay in range: for x in [-104, -87.34] the
// result is subnormal, and p * 2^n1 (exact, still normal) * 2^n2 rounds once, as expf does.
// Limits: x > 88.7228 gives +inf, x < -104 (where expf rounds to 0) gives 0, NaN stays NaN.
// Lanes below the lower limit (softmax's masked -inf, its padded tail) get 2^n2 = 0, so they
// become 0 without forming a subnormal.
// Measured error: see tests/test_simd.c (exp_vector_matches_expf).
//
// The lower limit is a parameter: on Intel cores every operation with a subnormal result takes
// a microcode assist of about a hundred cycles, and softmax over attention scores meets
// exponents below -87.3 often enough that computing those weights as subnormals was a measurable
// share of decoding stories260K (docs/performance.md, "Kernels"). So the softmax and SiLU use
// exp256_normal (limit -87.3365: results below 2^-126 become 0, an absolute difference under
// 1.2e-38 that their tests state), and the exp kernel itself exp256 (limit -104, subnormals).
static inline __m256 exp256_above(__m256 x, float lower_limit) {
    const __m256 hi = _mm256_set1_ps(88.72283935546875f), lo = _mm256_set1_ps(lower_limit);
    // min(hi, x) returns x when x is NaN (the second operand), so NaN survives the clamp.
    __m256 xc = _mm256_max_ps(lo, _mm256_min_ps(hi, x));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
    s2 = _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), s2);   // below the limit: times 0
    __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
    return _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
}

static __m256 exp256(__m256 x)        { return exp256_above(x, -104.0f); }
static __m256 exp256_normal(__m256 x) { return exp256_above(x, -87.33654022216797f); }

// The same function for the last n % 8 elements, through a zero-padded buffer.
static void exp_tail(float *y, const float *x, int n) {
    float buf[8] = {0};
    for (int i = 0; i < n; i++) buf[i] = x[i];
    _mm256_storeu_ps(buf, exp256(_mm256_loadu_ps(buf)));
    for (int i = 0; i < n; i++) y[i] = buf[i];
}

// ---- reductions ----
// A kernel whose own float sum is not finite falls back to tw_dot_naive (lib/simd/ref.c): the sum
// in index order, each product rounded, exactly as the Linear layer's reference loop forms it.

// Four accumulators: an FMA has a latency of 4-5 cycles and two can start per cycle, so one
// accumulator would leave the units idle most of the time.
float tw_dot_avx2(const float *a, const float *b, int n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i),      _mm256_loadu_ps(b + i),      s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8),  _mm256_loadu_ps(b + i + 8),  s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float sum = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) sum += a[i] * b[i];
    // Four accumulators can overflow where the in-order sum does not (alternating signs near
    // 3e38): then the reference's order decides. One compare per call when nothing overflowed.
    return isfinite(sum) ? sum : tw_dot_naive(a, b, n);
}

// ---- element-wise maps ----

void tw_exp_avx2(float *y, const float *x, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp256(_mm256_loadu_ps(x + i)));
    exp_tail(y + i, x + i, (int)(n - i));
}

// silu(x) = x / (1 + e^-x); for x < -88.7, e^-x is +inf and the quotient is -0, as in libm.
static __m256 silu256(__m256 x) {
    // e^-x below 2^-126 adds nothing to 1, so the flushing exp gives the same quotient.
    __m256 e = exp256_normal(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

void tw_silu_avx2(float *y, const float *x, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, silu256(_mm256_loadu_ps(x + i)));
    if (i < n) {
        float buf[8] = {0};
        for (long j = i; j < n; j++) buf[j - i] = x[j];
        _mm256_storeu_ps(buf, silu256(_mm256_loadu_ps(buf)));
        for (long j = i; j < n; j++) y[j] = buf[j - i];
    }
}

void tw_swiglu_avx2(float *y, const float *gate, const float *up, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(silu256(_mm256_loadu_ps(gate + i)),
                                              _mm256_loadu_ps(up + i)));
    if (i < n) {
        float g[8] = {0}, u[8] = {0};
        for (long j = i; j < n; j++) { g[j - i] = gate[j]; u[j - i] = up[j]; }
        _mm256_storeu_ps(g, _mm256_mul_ps(silu256(_mm256_loadu_ps(g)), _mm256_loadu_ps(u)));
        for (long j = i; j < n; j++) y[j] = g[j - i];
    }
}

// ---- softmax and norms (one row) ----

void tw_softmax_row_avx2(float *y, const float *x, int n) {
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 8 <= n; i += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + i));
    float max = hmax256(vmax);
    for (; i < n; i++) if (x[i] > max) max = x[i];
    if (max == -INFINITY) {
        for (i = 0; i < n; i++) y[i] = 0.0f;
        return;
    }
    __m256 m = _mm256_set1_ps(max), vsum = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 e = exp256_normal(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
        _mm256_storeu_ps(y + i, e);
        vsum = _mm256_add_ps(vsum, e);
    }
    float sum = hsum256(vsum);
    if (i < n) {
        float buf[8];
        for (int j = 0; j < 8; j++) buf[j] = i + j < n ? x[i + j] - max : -INFINITY;
        _mm256_storeu_ps(buf, exp256_normal(_mm256_loadu_ps(buf)));
        for (int j = i; j < n; j++) { y[j] = buf[j - i]; sum += buf[j - i]; }
    }
    __m256 inv = _mm256_set1_ps(1.0f / sum);
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), inv));
    for (; i < n; i++) y[i] *= 1.0f / sum;
}

// ---- double-precision helpers of the norms ----
// Eight floats widened to two registers of four doubles, and back.
static void widen8(__m256d *lo, __m256d *hi, const float *x) {
    __m256 v = _mm256_loadu_ps(x);
    *lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
    *hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
}

static void store_narrow8(float *y, __m256d lo, __m256d hi) {
    _mm256_storeu_ps(y, _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)),
                                             _mm256_cvtpd_ps(hi), 1));
}

static double hsum256d(__m256d v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// RMSNorm with the statistics and each output in double, as norm.c computes them: a float sum of
// squares overflows to +inf once |x| exceeds about 1.8e19 (rms = inf, output all zeros), and a
// float 1/rms is subnormal for rms > 8.5e37; in double neither happens for any finite float
// (n * 3.4e38^2 < 1.8e308). Only the summation order differs from norm.c (eight lanes, then a
// tree), and x * (1/rms) replaces x / rms: both are far below float rounding. The cost is that
// of the conversions; rows are short next to the matrix products around them (docs/kernels.md).
float tw_rmsnorm_row_avx2(float *out, const float *x, const float *w, int n, float eps) {
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256d lo, hi;
        widen8(&lo, &hi, x + i);
        s0 = _mm256_fmadd_pd(lo, lo, s0);
        s1 = _mm256_fmadd_pd(hi, hi, s1);
    }
    double ss = hsum256d(_mm256_add_pd(s0, s1));
    for (; i < n; i++) ss += (double)x[i] * x[i];
    double r = sqrt(ss / n + (double)eps);
    const __m256d inv = _mm256_set1_pd(1.0 / r);
    for (i = 0; i + 8 <= n; i += 8) {
        __m256d lo, hi;
        widen8(&lo, &hi, x + i);
        lo = _mm256_mul_pd(lo, inv);
        hi = _mm256_mul_pd(hi, inv);
        if (w) {
            __m256d wl, wh;
            widen8(&wl, &wh, w + i);
            lo = _mm256_mul_pd(lo, wl);
            hi = _mm256_mul_pd(hi, wh);
        }
        store_narrow8(out + i, lo, hi);
    }
    for (; i < n; i++) out[i] = (float)(x[i] * (1.0 / r) * (w ? w[i] : 1.0));
    return (float)r;
}

// LayerNorm in double throughout, like norm.c: a float sum of x overflows for rows near 3e38,
// and (x - mean)^2 in float for |x - mean| > 1.8e19. Mean, then the mean of squared deviations
// (two passes), then (x - mean) * rstd * gamma + beta rounded to float once.
void tw_layernorm_row_avx2(float *out, const float *x, const float *gamma, const float *beta,
                           int n, float eps) {
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256d lo, hi;
        widen8(&lo, &hi, x + i);
        s0 = _mm256_add_pd(s0, lo);
        s1 = _mm256_add_pd(s1, hi);
    }
    double sum = hsum256d(_mm256_add_pd(s0, s1));
    for (; i < n; i++) sum += x[i];
    const double mean = sum / n;
    const __m256d m = _mm256_set1_pd(mean);
    s0 = _mm256_setzero_pd();
    s1 = _mm256_setzero_pd();
    for (i = 0; i + 8 <= n; i += 8) {
        __m256d lo, hi;
        widen8(&lo, &hi, x + i);
        lo = _mm256_sub_pd(lo, m);
        hi = _mm256_sub_pd(hi, m);
        s0 = _mm256_fmadd_pd(lo, lo, s0);
        s1 = _mm256_fmadd_pd(hi, hi, s1);
    }
    double var = hsum256d(_mm256_add_pd(s0, s1));
    for (; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
    const double rstd = 1.0 / sqrt(var / n + (double)eps);
    const __m256d r = _mm256_set1_pd(rstd);
    for (i = 0; i + 8 <= n; i += 8) {
        __m256d lo, hi, gl, gh;
        widen8(&lo, &hi, x + i);
        widen8(&gl, &gh, gamma + i);
        lo = _mm256_mul_pd(_mm256_mul_pd(_mm256_sub_pd(lo, m), r), gl);
        hi = _mm256_mul_pd(_mm256_mul_pd(_mm256_sub_pd(hi, m), r), gh);
        if (beta) {
            __m256d bl, bh;
            widen8(&bl, &bh, beta + i);
            lo = _mm256_add_pd(lo, bl);
            hi = _mm256_add_pd(hi, bh);
        }
        store_narrow8(out + i, lo, hi);
    }
    for (; i < n; i++) out[i] = (float)((x[i] - mean) * rstd * gamma[i] + (beta ? beta[i] : 0.0));
}

// ---- RoPE and attention ----

// Four pairs (a, b) per register: out = x * (c, c) + swap(x) * (-s, s), where swap exchanges
// the two members of each pair.
void tw_rope_pairs_avx2(float *x, const float *cos_t, const float *sin_t, int n_head, int D) {
    const __m256 flip = _mm256_setr_ps(-0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f);
    for (int h = 0; h < n_head; h++) {
        float *xh = x + (long)h * D;
        int i = 0;
        for (; 2 * i + 8 <= D; i += 4) {
            __m128 c = _mm_loadu_ps(cos_t + i), s = _mm_loadu_ps(sin_t + i);
            __m256 cc = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_unpacklo_ps(c, c)),
                                             _mm_unpackhi_ps(c, c), 1);
            __m256 ss = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_unpacklo_ps(s, s)),
                                             _mm_unpackhi_ps(s, s), 1);
            ss = _mm256_xor_ps(ss, flip);
            __m256 v = _mm256_loadu_ps(xh + 2 * i);
            __m256 sw = _mm256_permute_ps(v, 0xB1);   // (b0, a0, b1, a1, ...)
            _mm256_storeu_ps(xh + 2 * i, _mm256_fmadd_ps(v, cc, _mm256_mul_ps(sw, ss)));
        }
        for (; i < D / 2; i++) {
            float a = xh[2 * i], b = xh[2 * i + 1];
            xh[2 * i]     = a * cos_t[i] - b * sin_t[i];
            xh[2 * i + 1] = a * sin_t[i] + b * cos_t[i];
        }
    }
}

// Eight sums at once: lane j of the result is the sum of the 8 lanes of a[j]. Three rounds of
// pairwise horizontal adds, so each key's dot product costs a fraction of a full reduction.
static __m256 hsum8x8(const __m256 a[8]) {
    __m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
    __m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
    __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    // u0 = (a0..a3 over lanes 0-3 | a0..a3 over lanes 4-7), u1 likewise for a4..a7.
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

// The rows that softmax.c decides before its vector hook, for scores that overflowed (the
// reference's scores overflowed too: each non-finite score was recomputed in its order): a NaN
// spreads to every weight, and +inf scores share the mass equally. Returns 1 if the row was one.
static int softmax_special_row(float *att, const float *sc, int S) {
    int n_inf = 0, has_nan = 0;
    for (int s = 0; s < S; s++) {
        if (isnan(sc[s])) has_nan = 1;
        else if (sc[s] == INFINITY) n_inf++;
    }
    if (!has_nan && n_inf == 0) return 0;
    for (int s = 0; s < S; s++)
        att[s] = has_nan ? NAN : sc[s] == INFINITY ? 1.0f / (float)n_inf : 0.0f;
    return 1;
}

// Row s of a KV cache: contiguous rows kv_stride apart from base, or (rows != NULL) the row
// rows[s] points to, at offset off (a paged cache read through its block table: decode/batch.c).
// Inlined into each kernel below with rows a constant, so each compiles to its own addressing.
static inline const float *kv_row(const float *base, const float *const *rows, long off, int s,
                                  int kv_stride) {
    return rows ? rows[s] + off : base + (long)s * kv_stride;
}

// Asks for the cache lines of p[0 .. n-1]: into L1 (l1 = 1) or L2. A prefetch never faults and
// changes no result, only when the data arrives. A volatile asm, as prefetch.h explains: gcc 12
// deleted these loops written with _mm_prefetch (the object held no prefetch).
static inline void prefetch_line(const char *a, int l1) {
    if (l1) __asm__ volatile("prefetcht0 %0" : : "m"(*a));
    else    __asm__ volatile("prefetcht1 %0" : : "m"(*a));
}

static inline void prefetch_span(const float *p, int n, int l1) {
    const char *a = (const char *)p, *last = (const char *)(p + n - 1);
    for (; a < last; a += 64) prefetch_line(a, l1);
    prefetch_line(last, l1);
}

// Output d of the weighted sum of values in the order of tw_sdpa_mix (lib/nn/sdpa.c), which
// skips zero weights (so an infinite value behind a zero weight adds nothing, not NaN).
static float mix_in_order(const float *att, const float *v, const float *const *v_rows, long off,
                          int S, int kv_stride, int d) {
    float acc = 0.0f;
    for (int t = 0; t < S; t++)
        if (att[t] != 0.0f) acc += att[t] * kv_row(v, v_rows, off, t, kv_stride)[d];
    return acc;
}

// Outputs d .. d + 7 of the weighted sum, o, stored; one that came out non-finite is recomputed
// in the reference's order (mix_in_order).   out: (D)
static inline void store_mixed(float *out, __m256 o, const float *att, const float *v,
                               const float *const *v_rows, long off, int S, int kv_stride, int d) {
    _mm256_storeu_ps(out + d, o);
    if (finite_mask256(o) != 0xFF)
        for (int j = 0; j < 8; j++)
            if (!isfinite(out[d + j]))
                out[d + j] = mix_in_order(att, v, v_rows, off, S, kv_stride, d + j);
}

// Outputs d .. d + 8 * blocks - 1 of the weighted sum of values (blocks is 1 or 2, a constant once
// inlined): per block of 8 outputs, four accumulators take keys t, t+1, t+2, t+3 in turn, and with
// two blocks their eight chains run side by side, each key's row found once for both. Unrolled, so
// that the accumulators live in registers, not on the stack.   out: (D)   att: (S)
static inline __attribute__((always_inline)) void
mix_blocks(float *out, const float *att, const float *v, const float *const *v_rows, long off,
           int S, int kv_stride, int d, const int blocks) {
    __m256 a[2][4];
#pragma GCC unroll 2
    for (int bl = 0; bl < blocks; bl++)
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) a[bl][i] = _mm256_setzero_ps();
    int t = 0;
    for (; t + 4 <= S; t += 4)
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            const float *row = kv_row(v, v_rows, off, t + i, kv_stride) + d;
            const __m256 w = _mm256_set1_ps(att[t + i]);
#pragma GCC unroll 2
            for (int bl = 0; bl < blocks; bl++)
                a[bl][i] = _mm256_fmadd_ps(w, _mm256_loadu_ps(row + 8 * bl), a[bl][i]);
        }
    for (; t < S; t++) {
        const float *row = kv_row(v, v_rows, off, t, kv_stride) + d;
        const __m256 w = _mm256_set1_ps(att[t]);
#pragma GCC unroll 2
        for (int bl = 0; bl < blocks; bl++)
            a[bl][0] = _mm256_fmadd_ps(w, _mm256_loadu_ps(row + 8 * bl), a[bl][0]);
    }
#pragma GCC unroll 2
    for (int bl = 0; bl < blocks; bl++)
        store_mixed(out, _mm256_add_ps(_mm256_add_ps(a[bl][0], a[bl][1]),
                                       _mm256_add_ps(a[bl][2], a[bl][3])),
                    att, v, v_rows, off, S, kv_stride, d + 8 * bl);
}

// Small heads (stories260K has D = 8) make one dot product per key mostly reduction overhead,
// so when D is a multiple of 8 the scores are computed eight keys at a time (their eight chains
// side by side), and the weighted sum of values runs four independent accumulators per block of 8
// outputs, two blocks at once where D allows (mix_blocks): one chain would wait on the FMA latency at
// every key. A score or an output that comes out non-finite is recomputed in the order of
// the reference (lib/nn/sdpa.c), so extreme inputs give the reference's answer (docs/kernels.md).
// Every operation depends on a key's index s, never on where its row lives: the contiguous and the
// row-pointer kernels below give the same bits for the same rows.
static inline __attribute__((always_inline)) void
sdpa_one_body(float *out, float *scores, float *att, const float *q, const float *k,
              const float *v, const float *const *k_rows, const float *const *v_rows, long off,
              int S, int D, int kv_stride) {
    float scale = 1.0f / sqrtf((float)D);
    float *sc = scores ? scores : att;   // without a scores buffer, softmax in place
    int s = 0, overflowed = 0;
    if (D % 8 == 0) {
        const __m256 vscale = _mm256_set1_ps(scale);
        if (k_rows)   // the first keys; the loop asks for each key 16 ahead of its use
            for (int j = 0; j < 16 && j < S; j++) prefetch_span(k_rows[j] + off, D, 1);
        for (; s + 8 <= S; s += 8) {
            __m256 acc[8];
            const float *kj[8];
            for (int j = 0; j < 8; j++) {
                if (k_rows) {   // rows anywhere: the hardware cannot guess the next one
                    if (s + 16 + j < S) prefetch_span(k_rows[s + 16 + j] + off, D, 1);
                    prefetch_span(v_rows[s + j] + off, D, 0);   // for the weighted sum
                }
                kj[j] = kv_row(k, k_rows, off, s + j, kv_stride);
                acc[j] = _mm256_mul_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(kj[j]));
            }
            // The eight keys' chains side by side, d outside: each multiply-add waits only on its
            // own key's last one (key by key, each waited on the one before it, 4 cycles, and
            // scoring ran at a quarter of the FMA units' pace). Each key's sum, in order of d.
            for (int d = 8; d < D; d += 8) {
                const __m256 qd = _mm256_loadu_ps(q + d);
#pragma GCC unroll 8
                for (int j = 0; j < 8; j++)
                    acc[j] = _mm256_fmadd_ps(qd, _mm256_loadu_ps(kj[j] + d), acc[j]);
            }
            __m256 sv = _mm256_mul_ps(hsum8x8(acc), vscale);
            _mm256_storeu_ps(sc + s, sv);
            if (finite_mask256(sv) != 0xFF)   // one compare per eight keys
                for (int j = 0; j < 8; j++)
                    if (!isfinite(sc[s + j])) {
                        sc[s + j] = tw_dot_naive(q, kv_row(k, k_rows, off, s + j, kv_stride), D) * scale;
                        overflowed |= !isfinite(sc[s + j]);
                    }
        }
    }
    for (; s < S; s++) {
        sc[s] = tw_dot_avx2(q, kv_row(k, k_rows, off, s, kv_stride), D) * scale;
        overflowed |= !isfinite(sc[s]);
    }
    if (!overflowed || !softmax_special_row(att, sc, S)) tw_softmax_row_avx2(att, sc, S);
    int d = 0;
    for (; d + 16 <= D; d += 16)   // two blocks of 8 outputs: eight chains side by side
        mix_blocks(out, att, v, v_rows, off, S, kv_stride, d, 2);
    for (; d + 8 <= D; d += 8) mix_blocks(out, att, v, v_rows, off, S, kv_stride, d, 1);
    for (; d < D; d++) out[d] = mix_in_order(att, v, v_rows, off, S, kv_stride, d);
}

void tw_sdpa_one_avx2(float *out, float *scores, float *att, const float *q, const float *k,
                      const float *v, int S, int D, int kv_stride) {
    sdpa_one_body(out, scores, att, q, k, v, NULL, NULL, 0, S, D, kv_stride);
}

void tw_sdpa_one_rows_avx2(float *out, float *scores, float *att, const float *q,
                           const float *const *k_rows, const float *const *v_rows, long off, int S,
                           int D) {
    sdpa_one_body(out, scores, att, q, NULL, NULL, k_rows, v_rows, off, S, D, 0);
}

// Eight running maxima, lane j over the indices j, j + 8, j + 16 ..., each with the first index
// that reached it ('>' as the loop: a later equal value or a NaN never replaces it). Every lane
// starts from x[0] at index 0, which comes before all of them, so no lane starts on a NaN. The
// answer is then the smallest index among the lanes whose maximum equals the largest (the first
// index holding the maximum, which is what the loop's strict '>' ends on), and the tail after the
// last full register continues the loop from there. x[0] NaN: the loop alone, which keeps index 0.
// (Four registers side by side measured no faster at 32000 logits: the logits come from memory.)
int tw_argmax_avx2(const float *x, int n) {
    float m = x[0];
    int arg = 0, i = 1;
    if (n >= 16 && !isnan(m)) {
        __m256 best = _mm256_set1_ps(m);
        __m256i best_i = _mm256_setzero_si256(), idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i step = _mm256_set1_epi32(8);
        for (i = 0; i + 8 <= n; i += 8) {
            const __m256 v = _mm256_loadu_ps(x + i);
            const __m256 gt = _mm256_cmp_ps(v, best, _CMP_GT_OQ);   // false for a NaN
            best = _mm256_blendv_ps(best, v, gt);
            best_i = _mm256_blendv_epi8(best_i, idx, _mm256_castps_si256(gt));
            idx = _mm256_add_epi32(idx, step);
        }
        float lane[8];
        int lane_i[8];
        _mm256_storeu_ps(lane, best);
        _mm256_storeu_si256((__m256i *)lane_i, best_i);
        m = lane[0];
        arg = lane_i[0];
        for (int j = 1; j < 8; j++)
            if (lane[j] > m || (lane[j] == m && lane_i[j] < arg)) {
                m = lane[j];
                arg = lane_i[j];
            }
    }
    for (; i < n; i++)   // the tail (or all of a short x): the loop, continued
        if (x[i] > m) {
            m = x[i];
            arg = i;
        }
    return arg;
}

// AdamW on 4 elements a register, in double: optim.c's loop, operation for operation (plain
// IEEE operations; FPFLAGS' -ffp-contract=off keeps the compiler from fusing a multiply into an
// add), so every element gets the naive loop's bits. The tail goes through a 4-float buffer.
static void adamw4(float *param, float *m, float *v, const float *grad, const tw_adamw_consts *k) {
    const __m256d b1 = _mm256_set1_pd(k->beta1), b2 = _mm256_set1_pd(k->beta2);
    const __m256d g = _mm256_cvtps_pd(_mm_loadu_ps(grad));
    const __m256d mi = _mm256_add_pd(_mm256_mul_pd(b1, _mm256_cvtps_pd(_mm_loadu_ps(m))),
                                     _mm256_mul_pd(_mm256_set1_pd(1.0 - k->beta1), g));
    const __m256d vi = _mm256_add_pd(_mm256_mul_pd(b2, _mm256_cvtps_pd(_mm_loadu_ps(v))),
                                     _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(1.0 - k->beta2), g), g));
    _mm_storeu_ps(m, _mm256_cvtpd_ps(mi));
    _mm_storeu_ps(v, _mm256_cvtpd_ps(vi));
    const __m256d p = _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(param)), _mm256_set1_pd(k->decay));
    const __m256d den = _mm256_add_pd(_mm256_div_pd(_mm256_sqrt_pd(vi), _mm256_set1_pd(k->bc2_sqrt)),
                                      _mm256_set1_pd(k->eps));
    const __m256d step = _mm256_div_pd(_mm256_mul_pd(_mm256_set1_pd(k->lr_bc1), mi), den);
    _mm_storeu_ps(param, _mm256_cvtpd_ps(_mm256_sub_pd(p, step)));
}

void tw_adamw_avx2(float *param, float *m, float *v, const float *grad, long n,
                   const tw_adamw_consts *k) {
    long i = 0;
    for (; i + 4 <= n; i += 4) adamw4(param + i, m + i, v + i, grad + i, k);
    if (i < n) {
        float bp[4] = { 0 }, bm[4] = { 0 }, bv[4] = { 0 }, bg[4] = { 0 };
        const long r = n - i;
        for (long j = 0; j < r; j++) { bp[j] = param[i + j]; bm[j] = m[i + j]; bv[j] = v[i + j]; bg[j] = grad[i + j]; }
        adamw4(bp, bm, bv, bg, k);
        for (long j = 0; j < r; j++) { param[i + j] = bp[j]; m[i + j] = bm[j]; v[i + j] = bv[j]; }
    }
}
