// q8_0.h: symmetric group quantization ("Q8_0" as llama2.c's runq.c and export.py define it) and
// the int8 matrix-vector product that uses it, written as plain loops: the reference that the
// SIMD kernels of lib/simd/q8_*.c are checked against, the calls that pick a kernel level, and
// the Linear layer with int8 weights that the model's forward pass runs for a quantized model.
//
// The scheme. A row of `cols` floats is cut into groups of gs consecutive values (gs must divide
// cols: a tail is never skipped silently). Each group g keeps one float32 scale and gs small
// integers:
//     s_g = max_i |x_i| / qmax          q_i = round(x_i / s_g)  in [-qmax, qmax]
//     x_i ~ q_i * s_g                   (the rounding error is at most s_g / 2 per value)
// qmax = 127 gives int8 (Q8_0; -128 is never produced, so the range is symmetric), qmax = 7 gives
// int4 (stored here one value per int8_t, for teaching; a file format would pack two per byte).
// Rounding is to the nearest integer, ties to even (rintf in the default rounding mode): the same
// rule as torch.round in export.py and as the SIMD conversion instructions, so every level
// quantizes bit for bit alike. (runq.c's C quantizer uses round(), ties away from zero; the two
// differ only when x / s is exactly k + 1/2.) A group of zeros gets s = 0 and q = 0.
//
// Non-finite input. tw_q8_quantize / tw_q4_quantize (weights) refuse it with TW_ERR_ARG. The
// activation quantizer tw_quant_groups never fails: a group holding NaN gets s = NaN, one holding
// Inf gets s = Inf, and q = 0 in both, so a matvec that uses the group yields NaN, as fp32 would.
//
// The int8 matvec (llama2.c's runq.c matmul, without its silent tail skip):
//     y[i] = sum_g  (float) dot_int32(Wq row i group g, xq group g) * Ws[i, g] * xs[g]
// with the integer dot product exact (|dot| <= gs * 127 * 128 fits int32 for any gs below 131072)
// and the float sum taken over g in increasing order.
#ifndef TW_QUANT_H
#define TW_QUANT_H
#include <stdint.h>
#include "core/status.h"
#include "simd/q8.h"

#define TW_Q8_MAX 127   // int8: q in [-127, 127]
#define TW_Q4_MAX 7     // int4: q in [-7, 7]
// Largest group size accepted: keeps gs * 127 * 128 (an int32 dot product) far from overflow.
#define TW_QUANT_MAX_GROUP 65536

// TW_OK if gs can quantize rows of `cols` values; TW_ERR_ARG if gs <= 0 or gs > TW_QUANT_MAX_GROUP,
// TW_ERR_SHAPE if gs does not divide cols (pick a divisor of cols; see tw_quant_largest_group).
tw_status tw_quant_check_group(int cols, int gs);

// gs_max halved until it divides every one of the n widths (at least 1): export.py's backoff,
// applied to every row width (export.py checks only dim). Halving keeps powers of two, the sizes
// the SIMD kernels are fast for.   widths: (n)
int tw_quant_fit_group(const int *widths, int n, int gs_max);

// Quantizes n_groups consecutive groups of gs values (the rule above; never fails).
//   q: (n_groups * gs)   s: (n_groups)   x: (n_groups * gs)
void tw_quant_groups(int8_t *q, float *s, const float *x, long n_groups, int gs, int qmax);

// x_i = q_i * s_g.   x: (n_groups * gs)   q: (n_groups * gs)   s: (n_groups)
void tw_dequant_groups(float *x, const int8_t *q, const float *s, long n_groups, int gs);

// A weight matrix w (rows, cols) into q (rows, cols) and s (rows, cols / gs). Checks gs with
// tw_quant_check_group and every value for finiteness first (TW_ERR_ARG if one is NaN or Inf;
// nothing is written then).
tw_status tw_q8_quantize(int8_t *q, float *s, const float *w, long rows, int cols, int gs);
tw_status tw_q4_quantize(int8_t *q, float *s, const float *w, long rows, int cols, int gs);

// The reference int8 matvec (see the header comment). K % gs == 0 is the caller's promise.
//   y: (N)   Wq: (N, K)   Ws: (N, K / gs)   xq: (K)   xs: (K / gs)
void tw_q8_matvec_naive(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                        const float *xs, int N, int K, int gs);

// The activation side of the naive level: tw_quant_groups with qmax = 127 (the signature of the
// quantize kernels in lib/simd/q8.h).   q: (n_groups * gs)   s: (n_groups)   x: (n_groups * gs)
void tw_q8_quantize_x_naive(int8_t *q, float *s, const float *x, int n_groups, int gs);

// ---- the kernel levels (lib/simd/q8.h) with the naive one on top ----

// The table of any int8 level: "naive" gives the loops above (quantize_x = tw_q8_quantize_x_naive,
// matvec = tw_q8_matvec_naive), "auto" the best SIMD level here (naive if there is none), the
// others a variant's table (tw_simd_variant, lib/simd/simd.h). NULL for an unknown level or one this CPU cannot run.
const tw_q8_ops *tw_q8_ops_for(const char *level);
// The int8 kernels of the table tw_simd_kernels(simd_level) gives (lib/simd/simd.h): "avx512" ->
// avx512vnni if the CPU has VNNI, else avx512bw; "avx2" -> avx2; "neon" -> neon_dot if present,
// else neon; a variant's name -> that variant; "naive" -> naive; "auto" -> the best. NULL for an
// unknown name.
const tw_q8_ops *tw_q8_ops_for_simd_level(const char *simd_level);
// The int8 levels usable here, best last, separated by spaces, e.g. "naive avx2 avx512bw avx512vnni"
// (tw_simd_variants: each table's variant name).
const char *tw_q8_available(void);

// A level's kernels where they take gs (gs % x_multiple == 0, gs % w_multiple == 0, or gs == 4
// with the level's group-size-4 kernels), the naive loops otherwise. Same arguments as tw_q8_quantize_x_naive and tw_q8_matvec_naive.
void tw_q8_quantize_x(const tw_q8_ops *o, int8_t *q, float *s, const float *x, int n_groups, int gs);
void tw_q8_matvec(const tw_q8_ops *o, float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                  const float *xs, int N, int K, int gs);
// 1 if tw_q8_matvec(o, ..., gs) runs one of o's own kernels, 0 if it runs the naive loop above
// (always 0 for the naive level itself).
int tw_q8_matvec_is_simd(const tw_q8_ops *o, int gs);
// Quantize x into the caller's scratch, then the matvec: y = W x in int8.
//   y: (N)   xq_scratch: (K)   xs_scratch: (K / gs)   Wq: (N, K)   Ws: (N, K / gs)   x: (K)
void tw_q8_linear(const tw_q8_ops *o, float *y, int8_t *xq_scratch, float *xs_scratch,
                  const int8_t *Wq, const float *Ws, const float *x, int N, int K, int gs);

// ---- the Linear layer with int8 weights (what a quantized model runs) ----

// One weight matrix in Q8_0, stored (C_out, C_in) as torch.nn.Linear stores it.
//   q: (rows, cols)   s: (rows, cols / gs)
typedef struct {
    const int8_t *q;
    const float  *s;
    int           rows, cols, gs;
} tw_q8_matrix;

// Working memory of the int8 Linear layer: one activation row quantized (the caller owns it; a
// model's copies hold one, tw_q8_copies below), and the kernels it runs.
// When the level has a packed layout (ops->pack, lib/simd/q8.h) it also holds a packed copy of
// each of the model's matrices, made once per level, and the layer multiplies by that copy.
typedef struct {
    int8_t          *xq;     // (K_max) the row's int8 values
    float           *xs;     // (K_max) its group scales (K_max / gs used)
    int              K_max;  // the widest input row it can hold
    const tw_q8_ops *ops;    // the level's kernels
    int32_t            *scratch;   // (scratch_parts, K_max) working memory of the packed kernel,
                                   // a row per thread (q8_threads.c), or NULL
    int                 scratch_parts;
    const tw_q8_ops    *packed_ops;   // the level the copies were made for (if ops is changed
                                      // afterwards, the row-major matrices are used instead)
    const tw_q8_matrix *mats;      // (n_mats) the matrices that have packed copies, or NULL
    const void        **packed;    // (n_mats) packed[i] is the copy of mats[i]
    void               *packed_memory;   // all the copies, one allocation
    int                 n_mats;
} tw_q8_work;

// 1 if the level has a packed layout that takes group size gs.
int tw_q8_packs(const tw_q8_ops *o, int gs);
// Packed copies of mats[0 .. n - 1] (all of group size gs) in w's level's layout, and the
// packed kernel's scratch, added to w (which tw_q8_work_free_packed releases). TW_OK, or
// TW_ERR_NOMEM with nothing added. Does nothing if !tw_q8_packs(w->ops, gs).
tw_status tw_q8_work_pack(tw_q8_work *w, const tw_q8_matrix *mats, int n, int gs);
void tw_q8_work_free_packed(tw_q8_work *w);

// The Q8_0 copies of a set of matrices (a model's Linear weights, quant/model_q8.h), in one
// allocation, with the one working memory they all run with (one Linear runs at a time).
typedef struct tw_q8_copies {
    tw_q8_matrix *mats;     // (n) the copies
    int           n;
    int           gs;       // the group size of every copy
    void         *memory;   // their values and scales
    tw_q8_work    work;     // xq, xs: (work.K_max), the widest input row of any copy
} tw_q8_copies;

// Makes ops the copies' kernels, with ops' packed copy of every matrix if the level has a packed
// layout for gs (kept when it was already made for ops; made again otherwise). TW_OK, or
// TW_ERR_NOMEM (the row-major matrices are then used).
tw_status tw_q8_copies_select(tw_q8_copies *c, const tw_q8_ops *ops);
// Releases everything c holds and c itself (made with malloc); NULL is fine.
void tw_q8_copies_free(tw_q8_copies *c);

// One matrix of a threaded int8 matvec: y = W x from the packed copy P of W (the work's level's
// layout) or, with P == NULL, from W's row-major arrays.   y: (W->rows)
typedef struct {
    float              *y;
    const tw_q8_matrix *W;
    const void         *P;
} tw_q8_job;
// Every job of the list (all with W->cols <= w->K_max) times the x already quantized into w->xq,
// w->xs (tw_q8_quantize_x), the list's rows shared among OpenMP threads in one parallel region
// (q8_threads.c; one thread without OpenMP, inside a parallel region, or when the list has at most
// TW_MATVEC_SMALL_FLOATS weights). Bit-identical for any thread count.
void tw_q8_matvec_threaded(tw_q8_work *w, const tw_q8_job *jobs, int n);
// Part `part` (0 .. parts - 1) of that split, computed by the calling thread; scratch: (K_max)
// int32 of its own when a job has a packed copy.
void tw_q8_matvec_part(const tw_q8_work *w, const tw_q8_job *jobs, int n, int32_t *scratch,
                       int part, int parts);

// y = x W^T + b with W in Q8_0: each row of x is quantized in groups of W->gs (on one thread),
// then multiplied by W (tw_q8_matvec_threaded), then the bias is added in float.   y: (T, C_out)   x: (T, C_in)   b: (C_out) or NULL
// With W == NULL or work == NULL this is tw_linear_forward(y, x, W_f32, b, T, C_in, C_out)
// itself, so a model without int8 copies computes exactly what it computed before.
void tw_linear_forward_q8(float *y, tw_q8_work *work, const float *x, const float *W_f32,
                          const tw_q8_matrix *W, const float *b, int T, int C_in, int C_out);
// n such layers on the same x (q, k and v; SwiGLU's gate and up), with the same work and group
// size: x quantized once a row and the n matvecs as one threaded list (tw_q8_matvec_threaded).
// Each y[i] gets the bits tw_linear_forward_q8 gives it.   y[i]: (T, C_out[i])   x: (T, C_in)
// Returns 0 (touching nothing) unless 1 <= n <= 8, every W[i] has gs W[0]->gs, and C_in <= K_max.
int tw_linear_forward_q8_many(int n, float *const y[], tw_q8_work *work, const float *x,
                              const tw_q8_matrix *const W[], const float *const b[], int T, int C_in);

#endif
