// test_q8_threads.c: the int8 matvec with its rows shared among threads (lib/quant/q8_threads.c):
// at every int8 level, on the row-major Q8_0 arrays and on the level's packed copy (where it has
// one), splitting the rows into 1, 2, 3 or 7 parts, and running on 1, 2 or 3 threads, gives the
// bits of one call of the kernel on the whole matrix. Tolerance 0 everywhere: the split only
// decides which thread computes a row, never how (q8_threads.c says why).
#include <string.h>
#include "testutil.h"
#include "sc_rand.h"
#include "quant/q8_0.h"
#include "simd/simd.h"

// (N, K, gs): 15M's classifier cut to 1000 rows (not a multiple of 128: the packed copy's last
// sets of 4, 2, 1 blocks and a partial block), its wq (288 rows: three runs of 128 or fewer),
// a w2-like long K with groups of 64, and stories260K's group size 4 (N not a multiple of 4,
// the four-row kernels' repeated last row). Every N K is above TW_MATVEC_SMALL_FLOATS, so the
// threaded call does start threads in an OpenMP build.
static const int SHAPES[][3] = { { 1000, 288, 32 }, { 288, 288, 32 }, { 300, 768, 64 }, { 1101, 64, 4 } };
enum { N_SHAPES = sizeof SHAPES / sizeof SHAPES[0] };

// One matrix in Q8_0 with x quantized, at one level, and the level's packed copy if it has one.
typedef struct {
    tw_q8_matrix W;
    tw_q8_work work;
    const void *P;   // the packed copy, or NULL
} case_q8;

static void case_make(case_q8 *c, const tw_q8_ops *o, int N, int K, int gs, uint64_t seed) {
    memset(c, 0, sizeof *c);
    float *w = sc_rand((long)N * K, -1, 1, seed), *x = sc_rand(K, -1, 1, seed + 1);
    int8_t *q = malloc((size_t)N * K);
    float *s = malloc((size_t)N * (K / gs) * sizeof *s);
    c->work.xq = malloc((size_t)K);
    c->work.xs = malloc((size_t)K * sizeof(float));
    ck_assert(w && x && q && s && c->work.xq && c->work.xs);
    ck_assert_int_eq(tw_q8_quantize(q, s, w, N, K, gs), TW_OK);
    c->W = (tw_q8_matrix){ .q = q, .s = s, .rows = N, .cols = K, .gs = gs };
    c->work.K_max = K;
    c->work.ops = o;
    tw_q8_quantize_x(o, c->work.xq, c->work.xs, x, K / gs, gs);
    ck_assert_int_eq(tw_q8_work_pack(&c->work, &c->W, 1, gs), TW_OK);
    c->P = c->work.packed ? c->work.packed[0] : NULL;
    free(w); free(x);
}

static void case_free(case_q8 *c) {
    tw_q8_work_free_packed(&c->work);
    free((void *)c->W.q); free((void *)c->W.s); free(c->work.xq); free(c->work.xs);
}

// y from one call of the kernel on the whole matrix: what tw_linear_forward_q8 computed before
// the rows were shared (packed: the level's matvec_packed; row-major: tw_q8_matvec).
static void whole(float *y, case_q8 *c, const void *P) {
    const tw_q8_matrix *W = &c->W;
    int32_t *scratch = malloc((size_t)W->cols * sizeof *scratch);
    ck_assert(scratch);
    if (P) c->work.ops->matvec_packed(y, P, scratch, c->work.xq, c->work.xs, W->rows, W->cols, W->gs);
    else tw_q8_matvec(c->work.ops, y, W->q, W->s, c->work.xq, c->work.xs, W->rows, W->cols, W->gs);
    free(scratch);
}

// Runs check on every int8 level, every shape, row-major and (where the level packs) packed.
typedef void (*layout_check)(case_q8 *c, const void *P, const char *what);
static void for_each_case(layout_check check, uint64_t seed) {
    char levels[128];
    snprintf(levels, sizeof levels, "%s", tw_q8_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_q8_ops *o = tw_q8_ops_for(lv);
        ck_assert(o);
        for (int i = 0; i < N_SHAPES; i++) {
            case_q8 c;
            case_make(&c, o, SHAPES[i][0], SHAPES[i][1], SHAPES[i][2], seed + 10 * (uint64_t)i);
            char what[96];
            snprintf(what, sizeof what, "%s %dx%d gs %d row-major", lv, c.W.rows, c.W.cols, c.W.gs);
            check(&c, NULL, what);
            if (c.P) {
                snprintf(what, sizeof what, "%s %dx%d gs %d packed", lv, c.W.rows, c.W.cols, c.W.gs);
                check(&c, c.P, what);
            }
            case_free(&c);
        }
    }
}

// Parts computed one after another on this thread, each with its own scratch as a thread would.
static void check_parts(case_q8 *c, const void *P, const char *what) {
    const int N = c->W.rows, parts[] = { 1, 2, 3, 7 };
    float *want = malloc((size_t)N * sizeof *want), *got = malloc((size_t)N * sizeof *got);
    int32_t *scratch = malloc((size_t)c->W.cols * sizeof *scratch);
    ck_assert(want && got && scratch);
    whole(want, c, P);
    for (int p = 0; p < 4; p++) {
        for (int i = 0; i < N; i++) got[i] = NAN;   // a row no part writes stays NaN and differs
        for (int t = 0; t < parts[p]; t++) tw_q8_matvec_part(&c->work, got, &c->W, P, scratch, t, parts[p]);
        ck_assert_msg(memcmp(want, got, (size_t)N * sizeof *got) == 0, "%s: %d parts differ from one call",
                      what, parts[p]);
    }
    free(want); free(got); free(scratch);
}

START_TEST(q8_row_split_is_bit_identical)
{
    for_each_case(check_parts, 500);
}
END_TEST

// tw_q8_matvec_threaded with 1, 2 and 3 threads. Without OpenMP (the default `make test` build)
// all three run on one thread and the split itself is covered above; `make test-q8-threads`
// (OMP=1, run by .ci/extra) runs this suite with real threads.
static void check_threads(case_q8 *c, const void *P, const char *what) {
    const int N = c->W.rows;
    float *want = malloc((size_t)N * sizeof *want), *got = malloc((size_t)N * sizeof *got);
    ck_assert(want && got);
    whole(want, c, P);
    const int before = tw_threads_set(0);   // 0: leave unchanged, just report
    for (int n = 1; n <= 3; n++) {
        tw_threads_set(n);
        for (int i = 0; i < N; i++) got[i] = NAN;
        tw_q8_matvec_threaded(&c->work, got, &c->W, P);
        ck_assert_msg(memcmp(want, got, (size_t)N * sizeof *got) == 0, "%s: %d threads differ from one call",
                      what, n);
    }
    tw_threads_set(before);
    free(want); free(got);
}

START_TEST(q8_one_two_three_threads_agree)
{
    for_each_case(check_threads, 600);
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
