// q8_threads.c: the int8 matvec with W's rows shared among OpenMP threads (q8_0.h), as
// tw_matvec_threaded and tw_matvec_threaded_jobs (lib/simd/matvec_mt.c) share the fp32 decode's.
//   a job: y: (N)   W: (N, K) in Q8_0, or its packed copy P   xq: (K), xs: (K / gs) in the work
// A list of jobs that multiply the same x (q, k and v; SwiGLU's gate and up) is one list of rows,
// job 0's blocks, then job 1's, ..., split among the threads in one parallel region.
// x is quantized once, on one thread, before the threads start (tw_linear_forward_q8); each thread
// then multiplies a contiguous run of W's rows, the same run at every call (a static split), and
// writes only its own part of y. Runs are whole blocks of rows: 16 rows for the row-major kernels
// (each computes a row's sum from that row alone; the ones that take four rows at a time count
// them from the call's first row, and 16 is a multiple of 4), and the level's pack_split_rows
// for a packed copy (lib/simd/q8.h: 128 rows for VNNI's rows16, eight blocks of sixteen), where
// the copy of a run is a part of the whole copy. So every row is computed by the same
// instructions on the same data whatever the number of threads: the result is bit-identical for
// 1, 2, 3 ... threads (tests/test_q8_threads.c).
// The packed kernel writes its per-call corrections into scratch, so each thread has its own
// (K_max) row of w->scratch, which grows here (once, outside the parallel region) when more
// threads are asked for than it has rows.
// Compiled with OpenMP only when the build asks for it (make OMP=1, and the benchmarks); without
// it, the whole matrix is one part on the calling thread.
#include <stdlib.h>
#include "quant/q8_0.h"
#include "simd/simd.h"

#ifdef _OPENMP
#include <omp.h>
#endif

enum { ROW_BLOCK = 16 };

// Rows r0 .. r1 - 1 of job j (r0 a multiple of its block).
static void job_rows(const tw_q8_work *w, const tw_q8_job *j, int32_t *scratch, long r0, long r1) {
    const int K = j->W->cols, gs = j->W->gs, n = (int)(r1 - r0);
    if (j->P) {
        const unsigned char *run = (const unsigned char *)j->P + w->ops->packed_bytes((int)r0, K, gs);
        w->ops->matvec_packed(j->y + r0, run, scratch, w->xq, w->xs, n, K, gs);
    } else {
        tw_q8_matvec(w->ops, j->y + r0, j->W->q + r0 * K, j->W->s + r0 * (K / gs), w->xq, w->xs, n, K, gs);
    }
}

// The rows of one block of job j's split.
static long block_rows(const tw_q8_work *w, const tw_q8_job *j) {
    if (!j->P) return ROW_BLOCK;
    if (w->ops->pack_split_rows > 0) return w->ops->pack_split_rows;
    return j->W->rows > 0 ? j->W->rows : 1;   // a layout that cannot be cut: one block
}

void tw_q8_matvec_part(const tw_q8_work *w, const tw_q8_job *jobs, int n, int32_t *scratch,
                       int part, int parts) {
    long blocks = 0;   // the list's blocks: job 0's, then job 1's, ...
    for (int j = 0; j < n; j++) {
        const long unit = block_rows(w, &jobs[j]);
        blocks += (jobs[j].W->rows + unit - 1) / unit;
    }
    const long b0 = blocks * part / parts, b1 = blocks * (part + 1) / parts;   // this part's blocks
    long first = 0;   // the list's index of job j's block 0
    for (int j = 0; j < n && first < b1; j++) {
        const long unit = block_rows(w, &jobs[j]), N = jobs[j].W->rows, nb = (N + unit - 1) / unit;
        const long a = b0 > first ? b0 - first : 0, e = b1 < first + nb ? b1 - first : nb;   // of job j
        if (e > a) job_rows(w, &jobs[j], scratch, a * unit, e * unit < N ? e * unit : N);
        first += nb;
    }
}

#ifdef _OPENMP
// The number of threads, at most `want`, that have a row of w->scratch (grown to `want` rows if
// memory allows; otherwise the rows it has).
static int scratch_rows(tw_q8_work *w, int want) {
    if (w->scratch_parts < want) {
        int32_t *more = malloc((size_t)want * (size_t)w->K_max * sizeof *more);
        if (more) {
            free(w->scratch);
            w->scratch = more;
            w->scratch_parts = want;
        }
    }
    return want < w->scratch_parts ? want : w->scratch_parts;
}
#endif

void tw_q8_matvec_threaded(tw_q8_work *w, const tw_q8_job *jobs, int n) {
#ifdef _OPENMP
    long weights = 0;
    int packed = 0;
    for (int j = 0; j < n; j++) {
        weights += (long)jobs[j].W->rows * jobs[j].W->cols;
        packed = packed || jobs[j].P;
    }
    int parts = omp_get_max_threads();
    if (weights > TW_MATVEC_SMALL_FLOATS && parts > 1 && !omp_in_parallel()) {
        if (packed) parts = scratch_rows(w, parts);
#pragma omp parallel num_threads(parts)
        {
            const int t = omp_get_thread_num();
            int32_t *mine = packed ? w->scratch + (long)t * w->K_max : NULL;   // (K_max)
            tw_q8_matvec_part(w, jobs, n, mine, t, omp_get_num_threads());
        }
        return;
    }
#endif
    tw_q8_matvec_part(w, jobs, n, w->scratch, 0, 1);
}
