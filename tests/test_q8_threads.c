// test_q8_threads.c: the int8 matvec with its rows shared among threads (lib/quant/q8_threads.c):
// at every int8 level, on the row-major Q8_0 arrays and on the level's packed copy (where it has
// one), for one matrix and for a list of matrices on the same x (q, k, v), splitting the rows into
// 1, 2, 3 or 7 parts, and running on 1, 2 or 3 threads, gives the bits of one call of the kernel
// on each whole matrix. Tolerance 0 everywhere: the split only decides which thread computes a
// row, never how (q8_threads.c says why).
#include <string.h>
#include "testutil.h"
#include "sc_rand.h"
#include "quant/q8_0.h"
#include "simd/simd.h"

// Sets of matrices (rows of each; K, gs shared). 15M's classifier cut to 1000 rows (not a
// multiple of 128: the packed copy's last sets of 4, 2, 1 blocks and a partial block); its q, k, v
// (288 rows each: runs of 128 or fewer, and a list whose parts cross from one matrix to the next);
// a w2-like long K with groups of 64; stories260K's group size 4 (N not a multiple of 4: the
// four-row kernels' repeated last row). Every set has more than TW_MATVEC_SMALL_FLOATS weights,
// so the threaded call does start threads in an OpenMP build.
typedef struct { int n, rows[3], K, gs; } set_shape;
static const set_shape SETS[] = {
    { 1, { 1000 }, 288, 32 }, { 3, { 288, 288, 288 }, 288, 32 }, { 1, { 300 }, 768, 64 },
    { 2, { 1101, 45 }, 64, 4 },
};
enum { N_SETS = sizeof SETS / sizeof SETS[0] };

// n matrices in Q8_0 on one x, quantized, at one level, with the level's packed copies if it has
// them: mats (n), one work (as a model's copies share one).
typedef struct {
    int n;
    tw_q8_matrix mats[3];
    tw_q8_work work;
    float *y[3];      // (mats[i].rows) the outputs
    float *want[3];   // (mats[i].rows) one kernel call on the whole matrix
} set_q8;

// y from one call of the kernel on the whole matrix: what tw_linear_forward_q8 computed before
// the rows were shared (packed: the level's matvec_packed; row-major: tw_q8_matvec).
static void whole(float *y, const tw_q8_work *w, const tw_q8_matrix *W, const void *P) {
    int32_t *scratch = malloc((size_t)W->cols * sizeof *scratch);
    ck_assert(scratch);
    if (P) w->ops->matvec_packed(y, P, scratch, w->xq, w->xs, W->rows, W->cols, W->gs);
    else tw_q8_matvec(w->ops, y, W->q, W->s, w->xq, w->xs, W->rows, W->cols, W->gs);
    free(scratch);
}

static void set_make(set_q8 *c, const tw_q8_ops *o, const set_shape *sh, uint64_t seed) {
    memset(c, 0, sizeof *c);
    const int K = sh->K, gs = sh->gs;
    c->n = sh->n;
    for (int i = 0; i < c->n; i++) {
        const int N = sh->rows[i];
        float *w = sc_rand((long)N * K, -1, 1, seed + (uint64_t)i);
        int8_t *q = malloc((size_t)N * K);
        float *s = malloc((size_t)N * (K / gs) * sizeof *s);
        c->y[i] = malloc((size_t)N * sizeof(float));
        c->want[i] = malloc((size_t)N * sizeof(float));
        ck_assert(w && q && s && c->y[i] && c->want[i]);
        ck_assert_int_eq(tw_q8_quantize(q, s, w, N, K, gs), TW_OK);
        c->mats[i] = (tw_q8_matrix){ .q = q, .s = s, .rows = N, .cols = K, .gs = gs };
        free(w);
    }
    float *x = sc_rand(K, -1, 1, seed + 7);
    c->work.xq = malloc((size_t)K);
    c->work.xs = malloc((size_t)K * sizeof(float));
    ck_assert(x && c->work.xq && c->work.xs);
    c->work.K_max = K;
    c->work.ops = o;
    tw_q8_quantize_x(o, c->work.xq, c->work.xs, x, K / gs, gs);
    free(x);
    ck_assert_int_eq(tw_q8_work_pack(&c->work, c->mats, c->n, gs), TW_OK);
}

static void set_free(set_q8 *c) {
    tw_q8_work_free_packed(&c->work);
    for (int i = 0; i < c->n; i++) {
        free((void *)c->mats[i].q); free((void *)c->mats[i].s); free(c->y[i]); free(c->want[i]);
    }
    free(c->work.xq); free(c->work.xs);
}

// The set's jobs on the row-major arrays (packed = 0) or on the packed copies, with the outputs
// set to NaN (a row no part writes stays NaN and differs), and the wanted outputs.
static void set_jobs(tw_q8_job *jobs, set_q8 *c, int packed) {
    for (int i = 0; i < c->n; i++) {
        const void *P = packed ? c->work.packed[i] : NULL;
        jobs[i] = (tw_q8_job){ .y = c->y[i], .W = &c->mats[i], .P = P };
        whole(c->want[i], &c->work, &c->mats[i], P);
        for (int r = 0; r < c->mats[i].rows; r++) c->y[i][r] = NAN;
    }
}

static void expect_want(const set_q8 *c, const char *what, const char *how, int k) {
    for (int i = 0; i < c->n; i++)
        ck_assert_msg(memcmp(c->want[i], c->y[i], (size_t)c->mats[i].rows * sizeof(float)) == 0,
                      "%s, matrix %d of %d: %d %s differ from one call", what, i, c->n, k, how);
}

// Runs check on every int8 level, every set, row-major and (where the level packs) packed.
typedef void (*set_check)(set_q8 *c, int packed, const char *what);
static void for_each_set(set_check check, uint64_t seed) {
    char levels[128];
    snprintf(levels, sizeof levels, "%s", tw_q8_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_q8_ops *o = tw_q8_ops_for(lv);
        ck_assert(o);
        for (int i = 0; i < N_SETS; i++) {
            set_q8 c;
            set_make(&c, o, &SETS[i], seed + 10 * (uint64_t)i);
            for (int packed = 0; packed <= (c.work.packed != NULL); packed++) {
                char what[96];
                snprintf(what, sizeof what, "%s, %d matrices of K %d, gs %d, %s", lv, c.n, SETS[i].K,
                         SETS[i].gs, packed ? "packed" : "row-major");
                check(&c, packed, what);
            }
            set_free(&c);
        }
    }
}

// Parts computed one after another on this thread, each with its own scratch as a thread would.
static void check_parts(set_q8 *c, int packed, const char *what) {
    const int parts[] = { 1, 2, 3, 7 };
    int32_t *scratch = malloc((size_t)c->work.K_max * sizeof *scratch);
    ck_assert(scratch);
    for (int p = 0; p < 4; p++) {
        tw_q8_job jobs[3];
        set_jobs(jobs, c, packed);
        for (int t = 0; t < parts[p]; t++) tw_q8_matvec_part(&c->work, jobs, c->n, scratch, t, parts[p]);
        expect_want(c, what, "parts", parts[p]);
    }
    free(scratch);
}

START_TEST(q8_row_split_is_bit_identical)
{
    for_each_set(check_parts, 500);
}
END_TEST

// tw_q8_matvec_threaded with 1, 2 and 3 threads. Without OpenMP (the default `make test` build)
// all three run on one thread and the split itself is covered above; `make test-q8-threads`
// (OMP=1, run by .ci/extra) runs this suite with real threads.
static void check_threads(set_q8 *c, int packed, const char *what) {
    const int before = tw_threads_set(0);   // 0: leave unchanged, just report
    for (int n = 1; n <= 3; n++) {
        tw_threads_set(n);
        tw_q8_job jobs[3];
        set_jobs(jobs, c, packed);
        tw_q8_matvec_threaded(&c->work, jobs, c->n);
        expect_want(c, what, "threads", n);
    }
    tw_threads_set(before);
}

START_TEST(q8_one_two_three_threads_agree)
{
    for_each_set(check_threads, 600);
}
END_TEST

Suite *suite_q8_threads(void) {
    Suite *s = suite_create("q8_threads");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, q8_row_split_is_bit_identical);
    tcase_add_test(tc, q8_one_two_three_threads_agree);
    suite_add_tcase(s, tc);
    return s;
}
