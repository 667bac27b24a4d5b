// q8_threads.c: the int8 matvec with W's rows shared among OpenMP threads (q8_0.h), as
// tw_matvec_threaded (lib/simd/matvec_mt.c) shares the fp32 decode's.
//   y: (N)   W: (N, K) in Q8_0, or its packed copy P   xq: (K), xs: (K / gs) in the work
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

void tw_q8_matvec_part(const tw_q8_work *w, float *y, const tw_q8_matrix *W, const void *P,
                       int32_t *scratch, int part, int parts) {
    const int N = W->rows, K = W->cols, gs = W->gs;
    long unit = ROW_BLOCK;   // the rows of one block of the split
    if (P) unit = w->ops->pack_split_rows > 0 ? w->ops->pack_split_rows : (N > 0 ? N : 1);
    const long blocks = (N + unit - 1) / unit;
    long r0 = blocks * part / parts * unit, r1 = blocks * (part + 1) / parts * unit;
    if (r1 > N) r1 = N;
    if (r1 <= r0) return;
    if (P) {
        const unsigned char *run = (const unsigned char *)P + w->ops->packed_bytes((int)r0, K, gs);
        w->ops->matvec_packed(y + r0, run, scratch, w->xq, w->xs, (int)(r1 - r0), K, gs);
    } else {
        tw_q8_matvec(w->ops, y + r0, W->q + r0 * K, W->s + r0 * (K / gs), w->xq, w->xs,
                     (int)(r1 - r0), K, gs);
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

void tw_q8_matvec_threaded(tw_q8_work *w, float *y, const tw_q8_matrix *W, const void *P) {
#ifdef _OPENMP
    int parts = omp_get_max_threads();
    if ((long)W->rows * W->cols > TW_MATVEC_SMALL_FLOATS && parts > 1 && !omp_in_parallel()) {
        if (P) parts = scratch_rows(w, parts);
#pragma omp parallel num_threads(parts)
        {
            const int t = omp_get_thread_num();
            int32_t *mine = P ? w->scratch + (long)t * w->K_max : NULL;   // (K_max)
            tw_q8_matvec_part(w, y, W, P, mine, t, omp_get_num_threads());
        }
        return;
    }
#endif
    tw_q8_matvec_part(w, y, W, P, w->scratch, 0, 1);
}
