// matvec_mt.c: the decode matvec with its rows shared among OpenMP threads (simd.h).
//   y: (N)   W: (N, K)   x: (K)
// Each thread gets a contiguous run of rows, in blocks of 16, the same run at every call (a
// static split): thread t reads the same part of every weight matrix at every token, so on a
// machine whose caches hold part of the model, each core keeps its own part (llama2.c's
// `#pragma omp parallel for` over rows does the same). The kernels compute each row's sum from
// that row alone (matvec_avx512.c, matvec_avx2.c; NEON and the naive kernel too, as long as the
// split falls on multiples of 4 rows), so the result is bit-identical for any number of threads.
// Compiled with OpenMP only when the build asks for it (make OMP=1, and the benchmarks).
#include "simd.h"

#ifdef _OPENMP
#include <omp.h>
#endif

enum { ROW_BLOCK = 16 };

void tw_matvec_part(tw_matvec_fn fn, float *y, const float *W, const float *x, int N, int K,
                    int part, int parts) {
    long blocks = (N + ROW_BLOCK - 1) / ROW_BLOCK;
    long r0 = blocks * part / parts * ROW_BLOCK, r1 = blocks * (part + 1) / parts * ROW_BLOCK;
    if (r1 > N) r1 = N;
    if (r1 > r0) fn(y + r0, W + r0 * K, x, (int)(r1 - r0), K);
}

void tw_matvec_threaded(tw_matvec_fn fn, float *y, const float *W, const float *x, int N, int K) {
#ifdef _OPENMP
    if ((long)N * K > TW_MATVEC_SMALL_FLOATS && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
        tw_matvec_part(fn, y, W, x, N, K, omp_get_thread_num(), omp_get_num_threads());
        return;
    }
#endif
    fn(y, W, x, N, K);
}

void tw_matvec_jobs_part(tw_matvec_fn fn, const tw_matvec_job *jobs, int n, const float *x, int K,
                      int part, int parts) {
    long rows = 0;
    for (int j = 0; j < n; j++) rows += jobs[j].N;
    const long blocks = (rows + ROW_BLOCK - 1) / ROW_BLOCK;
    long r0 = blocks * part / parts * ROW_BLOCK, r1 = blocks * (part + 1) / parts * ROW_BLOCK;
    long first = 0;   // the list's index of job j's row 0
    for (int j = 0; j < n && r0 < r1; first += jobs[j].N, j++) {
        const long a = r0 > first ? r0 : first, e = r1 < first + jobs[j].N ? r1 : first + jobs[j].N;
        if (e > a) fn(jobs[j].y + (a - first), jobs[j].W + (a - first) * K, x, (int)(e - a), K);
    }
}

void tw_matvec_threaded_jobs(tw_matvec_fn fn, const tw_matvec_job *jobs, int n, const float *x, int K) {
#ifdef _OPENMP
    long floats = 0;
    for (int j = 0; j < n; j++) floats += (long)jobs[j].N * K;
    if (floats > TW_MATVEC_SMALL_FLOATS && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
        tw_matvec_jobs_part(fn, jobs, n, x, K, omp_get_thread_num(), omp_get_num_threads());
        return;
    }
#endif
    for (int j = 0; j < n; j++) fn(jobs[j].y, jobs[j].W, x, jobs[j].N, K);
}

// The heads of one decode step's attention (simd.h). Worth threads from about 16K multiply-adds
// (a parallel region costs a few microseconds): the 15M model's 6 heads of 48 at 56 keys.
enum { HEADS_MIN_WORK = 16384 };

static void attend_head(float *z, float *scores, float *pattern, const float *q, const float *k,
                        const float *v, int H, int G, int S, int D, long sc_stride, int h) {
    const long g = h / (H / G);
    tw_simd.attend(z + (long)h * D, scores + h * sc_stride, pattern + h * sc_stride, q + (long)h * D,
                   k + g * D, v + g * D, S, D, G * D);
}

int tw_simd_attend_heads(float *z, float *scores, float *pattern, const float *q, const float *k,
                         const float *v, int H, int G, int S, int D, long sc_stride) {
    if (!tw_simd.attend) return 0;
#ifdef _OPENMP
    if ((long)H * S * D >= HEADS_MIN_WORK && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
        for (int h = 0; h < H; h++) attend_head(z, scores, pattern, q, k, v, H, G, S, D, sc_stride, h);
        return 1;
    }
#endif
    for (int h = 0; h < H; h++) attend_head(z, scores, pattern, q, k, v, H, G, S, D, sc_stride, h);
    return 1;
}

int tw_threads_built_in(void) {
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}

int tw_threads_set(int n) {
#ifdef _OPENMP
    if (n >= 1) omp_set_num_threads(n);
    return omp_get_max_threads();
#else
    (void)n;
    return 1;
#endif
}
