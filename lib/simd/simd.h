// simd.h: optional fast kernels beside the components' own loops, the catalogue of every kernel
// of a level (for the benchmark, lesson 12, the exercises and the tests), and the one dispatch
// table that holds what the model calls.
//
// One reference per operation, its naive twin: the loop in the component's own file (lib/nn/) is
// what runs at the naive level and what every kernel here is tested against (tests/test_simd.c)
// before it is ever timed (bench/bench.c). Each kernel is named after its twin plus the ISA
// suffix (tw_softmax_row, lib/nn/softmax.c; tw_softmax_row_avx2 here: the list of pairs is above
// the declarations below). Only the kernels no component has (dot, exp, the matmul ladder) have
// their naive twin here.
// The naive level is written down twice, on purpose, for two different uses:
//   - the catalogue, lib/nn/reference.c's tw_kernels_naive (and lib/quant/q8_0.c's naive int8
//     table): the twins under the kernel signatures, for the tests, the benchmark and the
//     lessons (tw_kernels_for("naive")). It lives in nn/ because simd/ sits below nn/ and may not
//     name the components' functions (tools/check_layers.sh);
//   - the dispatch's naive row (dispatch.c): every slot NULL, so that each hook declines and the
//     component runs its twin itself, with its own bias, threads and training path, bit for bit.
// Filling the dispatch's naive row with the twins would need simd/ to call up into nn/ (or a
// pointer that nn/ sets at start-up: more global state) and would route the naive model through
// the hooks; two short tables with one meaning each are the simpler honest structure.
// Variants by suffix:
//   _avx2    x86-64 AVX2 + FMA   (built when the compiler targets x86-64; used if the CPU has it)
//   _avx512  x86-64 AVX-512F     (idem)
//   _neon    AArch64 Advanced SIMD (baseline on every 64-bit Arm, Apple silicon included)
// and, for int8 kernels that need more than their level's baseline (lib/simd/q8.h; their twins,
// tw_q8_quantize_x_naive and tw_q8_matvec_naive, are in lib/quant/q8_0.c): _avx512bw,
// _avx512vnni (vpdpbusd), _neon_dot (sdot), the names of the variants (dispatch.c).
// `make SIMD=0` builds none of the SIMD files; only the naive level exists then.
//
// The dispatch table tw_simd is the one piece of global state in lib/:
//   - it starts as the naive table, whose slots are all NULL: every component runs its own loop,
//     so a program that never calls tw_simd_init computes exactly what the naive loops compute;
//   - it changes only in tw_simd_init(level), which a program calls once at start-up, before any
//     forward pass and before starting threads; afterwards it is read-only (exceptions, in two
//     benchmarks: tools/bench_generate.c swaps in its compiler-vectorised matvec as a yardstick,
//     tools/bench_serve.c switches matvec_rows off to time what the batch ran before it);
//   - it is read by five hooks, one per component that can use a kernel: tw_linear_forward
//     (matvec at T = 1, matmul_nt_mt otherwise), tw_softmax_rows, tw_rmsnorm_forward,
//     tw_swiglu_forward and tw_mha_forward (attend, one query). A NULL slot means the level has
//     no kernel for that operation: the hook declines and the component's loop runs.
// tw_simd_init picks, in order: the level named by the argument; else the environment variable
// TW_SIMD=naive|avx2|avx512|neon|auto (or a variant's name, e.g. avx512bw); else the best level
// this CPU supports. It returns the chosen level's name (the variant's, if one was asked for by
// name), or NULL (table unchanged) if the requested level is unknown or not available here; the
// program then reports the problem (lib/ never prints). Levels, their tables and the CPU probe
// are in one place, dispatch.c.
//
// Matrix layout: row-major. "C = A B" means C(M, N) = A(M, K) B(K, N); "_nt" means the second
// operand is stored transposed, B(N, K), as torch.nn.Linear stores weights.
#ifndef TW_SIMD_H
#define TW_SIMD_H
#include <stddef.h>

// ---- the kernels of one level, behind one set of names ----

typedef float (*tw_dot_fn)(const float *a, const float *b, int n);
typedef void  (*tw_matvec_fn)(float *y, const float *W, const float *x, int N, int K);
typedef void  (*tw_matmul_fn)(float *C, const float *A, const float *B, int M, int N, int K);
typedef void  (*tw_softmax_fn)(float *y, const float *x, int n);
typedef float (*tw_rmsnorm_fn)(float *out, const float *x, const float *w, int n, float eps);
typedef void  (*tw_layernorm_fn)(float *out, const float *x, const float *gamma,
                                 const float *beta, int n, float eps);
typedef void  (*tw_linear_packed_fn)(float *Y, const float *X, const float *Wp, int T, int N,
                                     int K);
typedef void  (*tw_linear_packed_argmax_fn)(int *arg, float *best, float *part, const float *X,
                                            const float *Wp, int T, int N, int K);
typedef void  (*tw_rope_fn)(float *x, const float *cos_t, const float *sin_t, int n_head, int D);
typedef void  (*tw_map_fn)(float *y, const float *x, long n);
typedef void  (*tw_swiglu_fn)(float *y, const float *gate, const float *up, long n);
typedef void  (*tw_attend_fn)(float *out, float *scores, float *att, const float *q,
                              const float *k, const float *v, int S, int D, int kv_stride);
typedef int   (*tw_argmax_fn)(const float *x, int n);
typedef void  (*tw_attend_rows_fn)(float *out, float *scores, float *att, const float *q,
                                   const float *const *k_rows, const float *const *v_rows,
                                   long off, int S, int D);
// AdamW's constants for one step (lib/train/optim.c computes them): decay = 1 - lr weight_decay,
// lr_bc1 = lr / (1 - beta1^step), bc2_sqrt = sqrt(1 - beta2^step).
typedef struct { double beta1, beta2, decay, lr_bc1, bc2_sqrt, eps; } tw_adamw_consts;
typedef void  (*tw_adamw_fn)(float *param, float *m, float *v, const float *grad, long n,
                             const tw_adamw_consts *k);

// One level's table: its fp32 kernels (the catalogue: the benchmark, lesson 12, the exercises and
// the tests call every slot; the model calls the ones the hooks below name), its training
// micro-kernel and its int8 kernels. A NULL slot: the level has no kernel for it, and the
// component's own loop runs (every slot of the naive level is NULL).
typedef struct {
    const char     *level;      // "naive", "avx2", "avx512" or "neon": what --simd and TW_SIMD take
    const char     *variant;    // the table's own name: the level's, or for a level whose CPUs may
                                // lack the int8 dot-product instructions, "avx512bw" / "avx512vnni",
                                // "neon" / "neon_dot" (the level's name picks the best one here)
    tw_dot_fn       dot;        // sum_i a[i] b[i]                         a, b: (n)
    tw_matvec_fn    matvec;     // y = W x                 y: (N)  W: (N, K)  x: (K)
                                // tw_linear_forward at T = 1 (decode: every weight read once), rows
                                // split among threads by tw_matvec_threaded (below)
    tw_matmul_fn    matmul;     // C = A B, one thread     C: (M, N)  A: (M, K)  B: (K, N)
    tw_matmul_fn    matmul_nt;  // C = A B^T, one thread   C: (M, N)  A: (M, K)  B: (N, K)
    tw_matmul_fn    matmul_mt;  // C = A B with OpenMP threads (== matmul when built without OpenMP)
    tw_matmul_fn    matmul_nt_mt;   // tw_linear_forward at T > 1
    tw_matmul_fn    matvec_rows;    // C = A B^T, each row of C bit for bit matvec(B, that row of A)
                                    // (tw_linear_forward_rows: batched decoding); NULL: matvec
                                    // on blocks of B's rows
    tw_linear_packed_fn linear_packed;  // Y = X W^T on W packed in panels (tw_linear_packed);
                                        // NULL: tw_linear_packed_naive, the same bits
    tw_linear_packed_argmax_fn linear_packed_argmax;   // the greedy head: each row's argmax of
                                        // linear_packed's Y, Y never written
                                        // (tw_linear_packed_argmax); NULL: panel by panel
    tw_softmax_fn   softmax;    // one row: y = exp(x - max) / sum            y, x: (n), may alias
                                // tw_softmax_rows, one row at temperature 1
    tw_rmsnorm_fn   rmsnorm;    // one row: out = x / rms * w, returns rms = sqrt(mean(x^2) + eps)
    tw_layernorm_fn layernorm;  // one row: out = (x - mean) / sqrt(var + eps) * gamma + beta
    tw_rope_fn      rope;       // one position, adjacent pairs, angles given (tw_rope_angles)
    tw_map_fn       exp;        // y = exp(x) elementwise; also the training path's exponentials
    tw_map_fn       silu;       // y = x / (1 + exp(-x))
    tw_swiglu_fn    swiglu;     // y = silu(gate) * up
    tw_attend_fn    attend;     // one query over a KV cache (as tw_sdpa_one, lib/nn/sdpa.h)
    tw_attend_rows_fn attend_rows;  // attend's twin over rows anywhere (key s at k_rows[s] + off):
                                    // a paged cache read in place, attend's bits for the same rows
    tw_argmax_fn    argmax;     // index of the largest x[i], the first on ties, a NaN never
                                // wins (tw_argmax_naive, decode/sampler.c: the same index always)
    const struct tw_ukernel_s *gemm;   // the training path: tw_linear_backward, tw_sdpa_mix and
                                       // tw_sdpa_backward (lib/simd/train_ops.c)
    const struct tw_q8_ops_s  *q8;     // the int8 kernels (lib/simd/q8.h); NULL: the naive loops
                                       // of lib/quant/q8_0.c
    tw_adamw_fn     adamw;      // tw_adamw_step's loop (lib/train/optim.c) on several elements at
                                // once: the same double operations in the same order, so the same
                                // bits (tests/test_optim.c)   param, m, v, grad: (n)
} tw_kernels;

// The table for a name, among the levels this build has and this CPU can run: a level's name
// ("naive", "avx2", "avx512", "neon") gives its best table here, "auto" the best table of all,
// a variant's name ("avx512bw", "avx512vnni", "neon_dot") that table. NULL for an unknown name or a
// table this CPU cannot run. Programs use tw_kernels_for (lib/nn/reference.h), which gives the
// naive level the components' loops as its catalogue.
const tw_kernels *tw_simd_kernels(const char *name);
// The table of one variant by its exact name ("neon" is the one without sdot), or NULL.
const tw_kernels *tw_simd_variant(const char *variant);

// The dispatch table the library calls: a copy of the chosen table; only tw_simd_init writes it.
extern tw_kernels tw_simd;

// Chooses the level (see the header comment); returns its name, or NULL if `level` (or TW_SIMD
// when level is NULL) is unknown or unavailable on this machine.
const char *tw_simd_init(const char *level);

// The levels usable here, best last, separated by spaces, e.g. "naive avx2 avx512".
const char *tw_simd_available(void);
// The variants usable here, best last, e.g. "naive avx2 avx512bw avx512vnni".
const char *tw_simd_variants(void);

// The Linear layer's hook (lib/nn/linear.c calls it first): if the table has a kernel, computes
// y = x W^T + b with the selected matvec (T = 1) or matmul_nt, and returns 1; otherwise returns 0
// and the caller runs its own loop.
//   y: (T, C_out)   x: (T, C_in)   W: (C_out, C_in)   b: (C_out) or NULL.  y must not alias x.
int tw_simd_linear(float *y, const float *x, const float *W, const float *b,
                   int T, int C_in, int C_out);
// The Linear layer for T rows that belong to T different sequences (batched decoding,
// decode/batch.h): each row of y gets exactly the bits tw_simd_linear gives that row alone (the
// decode's matvec), but W is read from memory once for all T rows instead of T times: its rows are
// taken in blocks of a multiple of 4 rows that fit in L1 (about 16 KiB), and every row of x is
// multiplied by a block before the next block is read. The matvec computes each output from its
// own weight row alone (simd.h, tw_matvec_part), so cutting W into blocks changes no bit.
// Returns 0 (touching nothing) when the table has no matvec.
//   y: (T, C_out)   x: (T, C_in)   W: (C_out, C_in)   b: (C_out) or NULL.  y must not alias x.
int tw_simd_linear_rows(float *y, const float *x, const float *W, const float *b,
                        int T, int C_in, int C_out);
// The same for n Linear layers that read the same one row x (T = 1: the q, k, v projections of a
// decode step, or SwiGLU's gate and up), as one job: the threads start once for all n matrices
// and share their rows (tw_matvec_threaded_jobs). Each y[i] gets the bits tw_simd_linear gives.
// Returns 0 (touching nothing) when the table has no matvec.
//   y[i]: (C_out[i])   x: (C_in)   W[i]: (C_out[i], C_in)   b[i]: (C_out[i]) or NULL
int tw_simd_linear_one_row_many(int n, float *const y[], const float *x, const float *const W[],
                                const float *const b[], const int C_out[], int C_in);

// The other hooks, one per component, with the same contract: without a kernel in the table each
// returns 0 without touching anything and the caller runs its own (reference) loop; with one,
// each computes the result with it and returns 1.
//   tw_softmax_rows (softmax.c), one row whose maximum the caller found finite, temperature 1:
//     y, x: (n), may alias
int tw_simd_softmax_row(float *y, const float *x, int n);
//   tw_rmsnorm_forward (norm.c): out, x: (T, C), may alias; rms: (T) or NULL; w: (C) or NULL
int tw_simd_rmsnorm_rows(float *out, float *rms, const float *x, const float *w, int T, int C,
                         float eps);
//   tw_swiglu_forward (ffn.c): y = silu(gate) * up        y, gate, up: (n)
int tw_simd_swiglu(float *y, const float *gate, const float *up, long n);
//   tw_mha_forward (mha.c), one query (decode) over S keys that are all visible:
//   scores[s] = q . k_s / sqrt(D), pattern = softmax(scores), out = sum_s pattern[s] v_s
//   out: (D)   scores, pattern: (S)   q: (D)   k, v: S rows of D floats, row s at s * kv_stride
int tw_simd_attend_one(float *out, float *scores, float *pattern, const float *q, const float *k,
                       const float *v, int S, int D, int kv_stride);
// The same with each row where a pointer says (a paged cache through its block table, without
// copying it: decode/batch.c): key s at k_rows[s] + off, value s at v_rows[s] + off. The bits of
// tw_simd_attend_one over the same rows laid out contiguously. Returns 0 (touching nothing) when
// the level has no such kernel (the caller gathers the rows and calls tw_simd_attend_one).
//   k_rows, v_rows: (S) pointers, each to a row holding at least off + D floats
//   tw_argmax (decode/sampler.c): *best = the index tw_argmax_naive(x, n) gives    x: (n)
int tw_simd_argmax(int *best, const float *x, int n);
int tw_simd_attend_one_rows(float *out, float *scores, float *pattern, const float *q,
                            const float *const *k_rows, const float *const *v_rows, long off,
                            int S, int D);
// The same for all H heads of one query, head h reading kv head h / (H / G) of a cache whose
// rows hold G heads of D (row stride G*D), head h's scores and pattern at h * sc_stride: the heads
// shared among OpenMP threads (matvec_mt.c; one thread without OpenMP, inside a parallel region,
// or for a small job). Each head is the same call of the kernel whoever runs it, so the result is
// the same bits for any number of threads. Returns 0 (touching nothing) without a kernel.
//   z: (H, D)   q: (H, D)   k, v: (S, G*D)   scores, pattern: H rows, sc_stride apart, of S
int tw_simd_attend_heads(float *z, float *scores, float *pattern, const float *q, const float *k,
                         const float *v, int H, int G, int S, int D, long sc_stride);

// The training path's hooks (lib/simd/train_ops.c), same contract: they decline (return 0) when
// the table has no gemm micro-kernel, which is always so at the naive level, so the components'
// loops run bit for bit; with one, every product below is one tw_matmul_packed_strided call
// (threaded when built with OpenMP; the split never changes a sum's order, so the result does
// not depend on the thread count). Sums run in the kernel's order, not the loops': the results
// differ from the naive level by rounding (tests/test_train_simd.c bounds it).
//   tw_linear_backward (linear.c): dx (T, C_in) += dy W; dW (C_out, C_in) += dy^T x; db += sum_t dy
//   (dx, dW and db may each be NULL: not formed)
int tw_simd_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                            const float *W, int T, int C_in, int C_out);
// The attention hooks take the forward's causal rule (causal, causal_offset, as tw_sdpa_scores):
// with causal = 1, row t's keys past t + causal_offset are hidden (weight 0) and never read;
// with 0, each row's visible keys are found by scanning its zeros.
// The keys [0, n) that row t of a pattern with S keys may see: n = S, or under the causal rule
// (causal = 1) t + causal_offset + 1, clamped to [0, S]. The one place this count is computed, for
// the components in lib/nn/sdpa.c and for the kernels alike.
static inline int tw_causal_keys(long t, int S, int causal, int causal_offset) {
    const long n = causal ? t + causal_offset + 1 : S;
    return n < 0 ? 0 : n > S ? S : (int)n;
}
//   tw_sdpa_mix (sdpa.c): out (T, D) = weights (T, S) v (S, D)
int tw_simd_sdpa_mix(float *out, const float *weights, const float *v, int T, int S, int D,
                     int causal, int causal_offset);
//   tw_sdpa_backward_causal (sdpa.c): as its contract in lib/nn/sdpa.h
int tw_simd_sdpa_backward(float *dq, float *dk, float *dv, float *dscores, const float *dout,
                          const float *q, const float *k, const float *v, const float *weights,
                          int T, int S, int D, int causal, int causal_offset);

// ---- the naive kernels that no component has (lib/simd/ref.c) ----

float tw_dot_naive(const float *a, const float *b, int n);   // lesson 12, exercise 1; also the
                                                             // in-order redo of overflowed sums
void  tw_exp_naive(float *y, const float *x, long n);        // the exp kernels' reference

// ---- the matmul ladder, C = A B (one file per rung; each comment says what it changes) ----

void tw_matmul_naive(float *C, const float *A, const float *B, int M, int N, int K);     // i-j-k
void tw_matmul_reordered(float *C, const float *A, const float *B, int M, int N, int K); // i-k-j
void tw_matmul_blocked(float *C, const float *A, const float *B, int M, int N, int K);   // tiles
void tw_matmul_nt_naive(float *C, const float *A, const float *B, int M, int N, int K);  // A B^T

// The packed-panel scheme (GotoBLAS/BLIS), lib/simd/matmul_4_packed.c. A micro-kernel computes an
// mr x nr tile of C from kc columns of packed A and kc rows of packed B; the driver packs and
// loops around it. Block sizes: mr x kc of A stays in L1, kc x nc of packed B in L2.
typedef void (*tw_ukernel_fn)(int kc, const float *Ap, const float *Bp, float *C, long ldc,
                              int accumulate);
typedef struct tw_ukernel_s {
    const char   *name;
    int           mr, nr, kc, mc, nc;
    tw_ukernel_fn fn;   // C[i*ldc + j] (=, or += if accumulate) sum_k Ap[k*mr + i] Bp[k*nr + j]
} tw_ukernel;

// C = A op(B), with op(B)(k, j) = B[k * rs_b + j * cs_b] (NN: rs_b = N, cs_b = 1; NT: rs_b = 1,
// cs_b = K). threads > 1 splits the work over OpenMP threads when built with OpenMP (make OMP=1);
// the summation order, hence the result, does not depend on the thread count.
// Allocates its packing buffers (freed before it returns): the one kernel in lib/ that does,
// because their size is the kernel's private business; if malloc fails it falls back to
// tw_matmul_blocked-style loops and still computes C.
void tw_matmul_packed(const tw_ukernel *uk, float *C, const float *A, const float *B,
                      long rs_b, long cs_b, int M, int N, int K, int threads);
// The general form behind it: C (=, or += when accumulate) A op(B) with A(i, k) = A[i*rs_a + k*cs_a]
// (row-major: rs_a = K, cs_a = 1; stored transposed: rs_a = 1, cs_a = M) and C's rows ldc apart,
// so that a transposed operand or a block of columns (one head of a (T, H*D) tensor) needs no
// copy. The training path's backward matmuls run through it (lib/simd/train_ops.c).
void tw_matmul_packed_strided(const tw_ukernel *uk, float *C, long ldc, const float *A, long rs_a,
                              long cs_a, const float *B, long rs_b, long cs_b, int M, int N, int K,
                              int accumulate, int threads);
int  tw_matmul_threads(void);   // OpenMP's default thread count, or 1 without OpenMP
// Sets the thread count the _mt kernels and the training path use (omp_set_num_threads; nothing
// without OpenMP). A program calls it at start-up or between passes, never during one.
void tw_matmul_set_threads(int n);

extern const tw_ukernel tw_ukernel_scalar;   // portable C, 4 x 8: the packing rung without SIMD
void tw_matmul_packed_scalar(float *C, const float *A, const float *B, int M, int N, int K);

// ---- the SIMD twins (declared unconditionally; defined only where built) ----
// Each kernel is named after its naive twin, the loop it must agree with, plus its ISA suffix:
// tw_softmax_row (lib/nn/softmax.c) has tw_softmax_row_avx2, _avx512 and _neon. The twins:
//   naive twin        where                   slot        _avx2  _avx512  _neon
//   tw_dot_naive      simd/ref.c              dot           x      x        x
//   tw_exp_naive      simd/ref.c              exp           x      x        x
//   tw_matvec_naive   nn/reference.c          matvec        x      x        x
//   tw_matmul_naive   simd/matmul_1_naive.c   matmul        x      x        x
//   tw_matmul_nt_naive  (idem)                matmul_nt     x      x        x
//   tw_softmax_row    nn/softmax.c            softmax       x      x        x
//   tw_rmsnorm_row    nn/norm.c               rmsnorm       x      -        x
//   tw_layernorm_row  nn/norm.c               layernorm     x      -        -
//   tw_rope_pairs     nn/rope.c               rope          x      -        -
//   tw_silu           nn/activation.c         silu          x      -        x
//   tw_swiglu         nn/ffn.c                swiglu        x      -        x
//   tw_sdpa_one       nn/sdpa.c               attend        x      -        -
//   tw_sdpa_one_avx2  simd/kernels_avx2.c     attend_rows   x      -        -
//     (its twin is the attend kernel itself, over the same rows made contiguous)
//   tw_argmax_naive   decode/sampler.c        argmax        x      -        -
// "-": the level has none; the AVX-512 level's table takes the _avx2 kernel (dispatch.c). The
// _mt kernels are the same product with OpenMP threads (twin: the one-thread naive rung).
// Files: kernels_avx2.c, kernels_avx512.c, kernels_neon.c; the x86 matvecs in matvec_avx2.c and
// matvec_avx512.c (NEON's in kernels_neon.c); the matmuls in matmul_5_avx2.c, matmul_5_avx512.c
// and matmul_5_neon.c.

float tw_dot_avx2(const float *a, const float *b, int n);
float tw_dot_avx512(const float *a, const float *b, int n);
float tw_dot_neon(const float *a, const float *b, int n);
void  tw_adamw_avx2(float *param, float *m, float *v, const float *grad, long n,
                    const tw_adamw_consts *k);
void  tw_adamw_avx512(float *param, float *m, float *v, const float *grad, long n,
                      const tw_adamw_consts *k);
void  tw_exp_avx2(float *y, const float *x, long n);
void  tw_exp_avx512(float *y, const float *x, long n);
void  tw_exp_neon(float *y, const float *x, long n);
void  tw_softmax_row_avx2(float *y, const float *x, int n);
void  tw_softmax_row_avx512(float *y, const float *x, int n);
void  tw_softmax_row_neon(float *y, const float *x, int n);
float tw_rmsnorm_row_avx2(float *out, const float *x, const float *w, int n, float eps);
float tw_rmsnorm_row_neon(float *out, const float *x, const float *w, int n, float eps);
void  tw_layernorm_row_avx2(float *out, const float *x, const float *gamma, const float *beta,
                            int n, float eps);
void  tw_rope_pairs_avx2(float *x, const float *cos_t, const float *sin_t, int n_head, int D);
void  tw_silu_avx2(float *y, const float *x, long n);
void  tw_silu_neon(float *y, const float *x, long n);
void  tw_swiglu_avx2(float *y, const float *gate, const float *up, long n);
void  tw_swiglu_neon(float *y, const float *gate, const float *up, long n);
void  tw_sdpa_one_avx2(float *out, float *scores, float *att, const float *q, const float *k,
                       const float *v, int S, int D, int kv_stride);
int   tw_argmax_avx2(const float *x, int n);
void  tw_sdpa_one_rows_avx2(float *out, float *scores, float *att, const float *q,
                            const float *const *k_rows, const float *const *v_rows, long off,
                            int S, int D);
void  tw_matvec_neon(float *y, const float *W, const float *x, int N, int K);   // x86: see below

// The matmul ladder's last rung, one per ISA: the packed driver around the level's micro-kernel.
extern const tw_ukernel tw_ukernel_avx2;     // 6 x 16
extern const tw_ukernel tw_ukernel_avx512;   // 14 x 32
extern const tw_ukernel tw_ukernel_neon;     // 8 x 8
void  tw_matmul_avx2(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_nt_avx2(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_mt_avx2(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_nt_mt_avx2(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_avx512(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_nt_avx512(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_mt_avx512(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_nt_mt_avx512(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_neon(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_nt_neon(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_mt_neon(float *C, const float *A, const float *B, int M, int N, int K);
void  tw_matmul_nt_mt_neon(float *C, const float *A, const float *B, int M, int N, int K);

// ---- batched decoding's fast Linear: W packed once in panels (linear_packed.c) ----
// Each output is one chain of fused multiply-adds over k in order, in blocks of
// tw_linear_packed_kc(K) (K cut into equal blocks of at most TW_PANEL_KC) whose sums are added in
// order: not the matvec's bits, but the same bits at every level and for any T
// (row t's outputs depend on row t alone). Panel p holds W's rows p*TW_PANEL .. + TW_PANEL - 1,
// k-major (row n, column k at Wp[p*TW_PANEL*K + k*TW_PANEL + n % TW_PANEL]), zeros past N.
enum { TW_PANEL = 32, TW_PANEL_KC = 256 };
// The block of k: K in equal parts of at most TW_PANEL_KC (K = 288: two of 144, not 256 and a
// short 32 whose tile would cost its loads and stores for a few multiply-adds).
static inline int tw_linear_packed_kc(int K) {
    const int parts = (K + TW_PANEL_KC - 1) / TW_PANEL_KC;
    return (K + parts - 1) / parts;
}
size_t tw_linear_packed_floats(int N, int K);                  // the packed copy's size
void   tw_linear_pack(float *Wp, const float *W, int N, int K);   // W: (N, K)
//   Y: (T, N) = X (T, K) Wp^T, + b (N) if b is not NULL; the table's kernel, else the naive loop.
//   Returns 0 (nothing done) for an empty shape.
int  tw_linear_packed(float *Y, const float *X, const float *Wp, const float *b, int T, int N,
                      int K);
void tw_linear_packed_naive(float *Y, const float *X, const float *Wp, int T, int N, int K);
void tw_linear_packed_avx2(float *Y, const float *X, const float *Wp, int T, int N, int K);
void tw_linear_packed_avx512(float *Y, const float *X, const float *Wp, int T, int N, int K);

// The greedy head: arg[t] = tw_argmax_naive(row t of tw_linear_packed's Y, N), the same index
// always, with Y never written. A greedy decode step wants one index per row, not the logits:
// at the 15M model's 32000 words and 64 rows, Y is 8 MiB that the plain kernel writes to memory
// and the argmax reads back (docs/serving.md measures the difference). The table's kernel sums
// each panel in registers and keeps only each row's running maximum; without one, each panel
// goes through tw_linear_packed into the scratch and on into the running argmax (NEON, naive).
//   arg: (T)   scratch: tw_linear_packed_argmax_floats(T) floats   X: (T, K)   Wp: as above
//   Returns 0 (nothing done) for an empty shape.
size_t tw_linear_packed_argmax_floats(int T);
int  tw_linear_packed_argmax(int *arg, float *scratch, const float *X, const float *Wp, int T,
                             int N, int K);
void tw_linear_packed_argmax_avx2(int *arg, float *best, float *part, const float *X,
                                  const float *Wp, int T, int N, int K);
void tw_linear_packed_argmax_avx512(int *arg, float *best, float *part, const float *X,
                                    const float *Wp, int T, int N, int K);
// The argmax loop (tw_argmax_naive is this from n0 = 0) continued over outputs n0 .. n0 + n - 1 of
// one row, y[0 .. n), from (*best, *arg), the running maximum over outputs 0 .. n0 - 1 (at n0 = 0
// it starts from y[0]). The running maximum is kept in a local, so in a register: through the
// pointer, every comparison would wait on a reload after each update.
static inline void tw_argmax_continue(float *best, int *arg, const float *y, int n, int n0) {
    int j = 1, a = 0;   // from y[0] at n0 = 0 (*best and *arg are then not read)
    float b = y[0];
    if (n0 > 0) {
        j = 0;
        a = *arg;
        b = *best;
    }
    for (; j < n; j++)
        if (y[j] > b) {   // '>' keeps the first index on ties; a NaN never wins
            b = y[j];
            a = n0 + j;
        }
    *best = b;
    *arg = a;
}

// ---- the decode matvec: rows in memory order, and rows shared among threads ----
// matvec_avx512.c / matvec_avx2.c: y = W x reading W as one ascending stream (what every
// hardware prefetcher follows); each row's sum depends only on that row, never on where the row
// falls in a call, so any split of the rows gives the same bits. Below TW_MATVEC_SMALL_FLOATS
// weights (256 KiB) the AVX-512 kernel walks four rows side by side instead, with the same sums.
#define TW_MATVEC_SMALL_FLOATS 65536L
// Above that size the row loop also asks for the cache lines TW_PREFETCH_AHEAD_FLOATS ahead of
// the one it reads (8 KiB: about seven rows of the 15M model), with a software prefetch. Running
// past the end of one matrix, it also starts the next one (a model's weights are one block),
// where the hardware prefetchers would start cold; that start of each matrix is where it pays
// (the measurements, and the distances tried: docs/kernels.md, "Software prefetch").
#define TW_PREFETCH_AHEAD_FLOATS 2048
void tw_matvec_avx2(float *y, const float *W, const float *x, int N, int K);
void tw_matvec_avx512(float *y, const float *W, const float *x, int N, int K);
// The same sums for T rows of X at once, register-blocked (a tile of rows of X by 4 rows of W):
// Y (T, N) = X (T, K) W^T, row t bit for bit the matvec of X's row t (matvec_avx2.c, matvec_avx512.c).
void tw_matvec_rows_avx2(float *Y, const float *X, const float *W, int T, int N, int K);
void tw_matvec_rows_avx512(float *Y, const float *X, const float *W, int T, int N, int K);
// matvec_mt.c: fn over rows split among OpenMP threads in blocks of 16 rows (one call of fn per
// thread; static split, so a thread reads the same rows every token and keeps them in its own
// core's cache). One thread without OpenMP (make OMP=1), inside a parallel region, or when W is
// smaller than TW_MATVEC_SMALL_FLOATS (then starting the threads costs more than the work).
void tw_matvec_threaded(tw_matvec_fn fn, float *y, const float *W, const float *x, int N, int K);
// The same for n matrices that multiply the same x (K columns each): their rows, taken as one
// list (job 0's rows, then job 1's, ...), split among the threads in one parallel region, so
// the threads start and meet once for all n. Rows split as above; same bits as n separate calls.
typedef struct {
    float       *y;   // (N)
    const float *W;   // (N, K)
    int          N;
} tw_matvec_job;
void tw_matvec_threaded_jobs(tw_matvec_fn fn, const tw_matvec_job *jobs, int n, const float *x, int K);
// Part `part` (0 .. parts-1) of that split, computed by the calling thread.
void tw_matvec_jobs_part(tw_matvec_fn fn, const tw_matvec_job *jobs, int n, const float *x, int K,
                         int part, int parts);
// Part `part` (0 .. parts-1) of that split, computed by the calling thread: the rows
// [r0, r1) with r0, r1 multiples of 16 (r1 = N for the last part).
void tw_matvec_part(tw_matvec_fn fn, float *y, const float *W, const float *x, int N, int K,
                    int part, int parts);
// Sets the number of OpenMP threads for the threaded kernels (matvec and matmul) when n >= 1
// (n <= 0 changes nothing); returns the number now in effect (always 1 without OpenMP).
int  tw_threads_set(int n);
// 1 if this build has OpenMP (make OMP=1, and the benchmarks' builds): without it every kernel runs
// on one thread whatever OMP_NUM_THREADS says.
int  tw_threads_built_in(void);

// attn_avx512.c: one attention head's backward (as tw_sdpa_backward) and its mix (out = weights
// v) for head sizes D <= 16, vectors along the keys; return 0 (nothing done) for other D or when
// their scratch cannot be allocated. train_ops.c's hooks call them at the AVX-512 level.
int tw_sdpa_backward_narrow_avx512(float *dq, float *dk, float *dv, float *dscores,
                                   const float *dout, const float *q, const float *k,
                                   const float *v, const float *weights, int T, int S, int D,
                                   int causal, int causal_offset);
int tw_sdpa_mix_narrow_avx512(float *out, const float *weights, const float *v, int T, int S, int D,
                              int causal, int causal_offset);
int tw_sdpa_scores_narrow_avx512(float *scores, const float *q, const float *k, int T, int S,
                                 int D, int causal, int causal_offset);
// The hook of tw_sdpa_scores (sdpa.c) without a mask: scores[t][s] = (q[t] . k[s]) / sqrt(D)
// (the product rounded, then scaled, as sdpa.c does) for the keys row t may see (s <= t +
// causal_offset when causal, else all), -inf for the others; returns 0 (nothing done) when the
// level has no such kernel, and the caller then runs the Linear layer and its own loop.
//   scores: (T, S)   q: (T, D)   k: (S, D)
int tw_simd_sdpa_scores(float *scores, const float *q, const float *k, int T, int S, int D,
                        int causal, int causal_offset);

// train_elementwise.c: the training path's exponentials on the level's vector exp (the table's
// `exp` slot), same contract as the hooks above (0: declined, nothing touched; always so at the
// naive level, where the components' double-precision loops run bit for bit).
//   tw_cross_entropy_forward (loss.c), one row: p = softmax(z) and *lse = log sum_v exp(z[v]),
//   the exponentials in float, their sum in double. Declines when max z is not finite (the
//   caller's loop then gives its NaN). p, z: (V), may alias.
int tw_simd_cross_entropy_row(double *lse, float *p, const float *z, int V);
//   tw_swiglu_backward (ffn.c): on entry dgate holds d act (act = silu(gate) * up); on return
//   dup = d act silu(gate), dgate = d act up silu'(gate).   dgate, dup, gate, up: (n)
int tw_simd_swiglu_backward_gating(float *dgate, float *dup, const float *gate, const float *up,
                                   long n);

// ---- the tiled attention's kernels (nn/sdpa_tiled.h): sdpa_tiled_body.h on each ISA ----
// One head's call, as tw_sdpa_tiling describes it (simd/ sits below nn/, so the fields are
// repeated here; nn/sdpa_tiled.c copies them across).
#define TW_SIMD_TILE_MAX 1024
typedef struct {
    int T, S, D, q_stride, kv_stride, mask_stride, causal, causal_offset, block;
} tw_simd_tiling;
// The hooks tw_sdpa_tiled_forward and tw_sdpa_tiled_backward call first (sdpa_tiled_hook.c): the
// level's kernel, with tw_sdpa_tiled_forward_naive's / _backward_naive's contract, to within
// rounding (tests/test_sdpa_tiled_simd.c). 0: declined (naive level, no kernel in this build,
// or D x block too large for the kernel's stack scratch), nothing touched.
int tw_simd_sdpa_tiled_forward(float *out, float *row_max, float *row_logsum, const float *q,
                               const float *k, const float *v, const float *mask,
                               const tw_simd_tiling *a);
int tw_simd_sdpa_tiled_backward(float *dq, float *dk, float *dv, const float *dout,
                                const float *out, const float *row_max, const float *row_logsum,
                                const float *q, const float *k, const float *v, const float *mask,
                                const tw_simd_tiling *a);
#define TW_SDPA_TILED_DECL(sfx)                                                                  \
    int tw_sdpa_tiled_forward_##sfx(float *out, float *row_max, float *row_logsum,              \
                                    const float *q, const float *k, const float *v,             \
                                    const float *mask, const tw_simd_tiling *a);                \
    int tw_sdpa_tiled_backward_##sfx(float *dq, float *dk, float *dv, const float *dout,        \
                                     const float *out, const float *row_max,                    \
                                     const float *row_logsum, const float *q, const float *k,   \
                                     const float *v, const float *mask, const tw_simd_tiling *a);
TW_SDPA_TILED_DECL(avx2)
TW_SDPA_TILED_DECL(avx512)
TW_SDPA_TILED_DECL(neon)
// AVX-512's kernel for narrow heads (D <= 16, S <= 256, no mask; sdpa_tiled_narrow_avx512.c), which
// the avx512 entries above try first: 0 declines.
TW_SDPA_TILED_DECL(narrow_avx512)

#endif
