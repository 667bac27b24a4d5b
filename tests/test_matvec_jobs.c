// test_matvec_jobs.c: several matrices that multiply the same x as one job for the threads
// (tw_matvec_jobs_part, tw_matvec_threaded_jobs, and the Linear layer's tw_linear_forward_many
// on top of them): any split of their rows taken as one list gives the bits of separate calls.
#include <string.h>
#include "testutil.h"
#include "simd_cases.h"
#include "nn/linear.h"

// Three matrices shaped like a decode step's q, k and v (k and v narrower, as with GQA) and row
// counts that are no multiple of the 16-row block, so the parts' edges fall inside a matrix.
enum { K = 96, N_JOBS = 3 };
static const int ROWS[N_JOBS] = { 200, 37, 91 };

// Every level, the list split into 1, 2, 3 or 7 parts (as that many threads would take it),
// against one call per matrix: tolerance 0 (each row's sum depends on that row alone).
START_TEST(job_list_split_is_bit_identical)
{
    char levels[64];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        const tw_kernels *o = tw_kernels_for(lv);
        float *W[N_JOBS], *whole[N_JOBS], *split[N_JOBS];
        float *x = sc_rand(K, -1, 1, 7);
        ck_assert(x);
        tw_matvec_job jobs[N_JOBS];
        for (int j = 0; j < N_JOBS; j++) {
            W[j] = sc_rand((long)ROWS[j] * K, -1, 1, 10 + j);
            whole[j] = sc_zeros(ROWS[j]);
            split[j] = sc_zeros(ROWS[j]);
            ck_assert(W[j] && whole[j] && split[j]);
            o->matvec(whole[j], W[j], x, ROWS[j], K);
            jobs[j] = (tw_matvec_job){ .y = split[j], .W = W[j], .N = ROWS[j] };
        }
        const int parts[] = { 1, 2, 3, 7 };
        for (int p = 0; p < 4; p++) {
            for (int j = 0; j < N_JOBS; j++)
                for (int i = 0; i < ROWS[j]; i++) split[j][i] = NAN;
            for (int t = 0; t < parts[p]; t++) tw_matvec_jobs_part(o->matvec, jobs, N_JOBS, x, K, t, parts[p]);
            for (int j = 0; j < N_JOBS; j++)
                ck_assert_msg(memcmp(whole[j], split[j], (size_t)ROWS[j] * sizeof(float)) == 0,
                              "%s: matrix %d of the job list split in %d parts differs", lv, j, parts[p]);
        }
        for (int j = 0; j < N_JOBS; j++) { free(W[j]); free(whole[j]); free(split[j]); }
        free(x);
    }
}
END_TEST

// tw_linear_forward_many (with biases, one of them NULL) gives exactly what one
// tw_linear_forward per matrix gives, in decode (T = 1) and prefill (T = 5), at the naive level
// and at the best one, with one and two threads: tolerance 0.
START_TEST(linear_many_equals_separate_calls)
{
    const char *levels[2] = { "naive", "auto" };
    for (int l = 0; l < 2; l++) {
        tw_simd_init(levels[l]);
        for (int T = 1; T <= 5; T += 4) {
            float *x = sc_rand((long)T * K, -1, 1, 40 + T);
            const float *Ws[N_JOBS], *bs[N_JOBS];
            float *ys[N_JOBS], *want[N_JOBS];
            for (int j = 0; j < N_JOBS; j++) {
                Ws[j] = sc_rand((long)ROWS[j] * K, -1, 1, 50 + j);
                bs[j] = j == 1 ? NULL : sc_rand(ROWS[j], -1, 1, 60 + j);
                ys[j] = sc_zeros((long)T * ROWS[j]);
                want[j] = sc_zeros((long)T * ROWS[j]);
                tw_linear_forward(want[j], x, Ws[j], bs[j], T, K, ROWS[j]);
            }
            tw_weight Wt[N_JOBS];
            for (int j = 0; j < N_JOBS; j++) Wt[j] = tw_weight_fp32(Ws[j]);
            for (int threads = 1; threads <= 2; threads++) {
                const int before = tw_threads_set(0);   // 0: leave unchanged, just report
                tw_threads_set(threads);
                tw_linear_forward_many(N_JOBS, ys, x, Wt, bs, ROWS, T, K);
                tw_threads_set(before);
                for (int j = 0; j < N_JOBS; j++)
                    ck_assert_msg(memcmp(ys[j], want[j], (size_t)T * ROWS[j] * sizeof(float)) == 0,
                                  "level %s T %d threads %d: output %d differs from tw_linear_forward",
                                  levels[l], T, threads, j);
            }
            for (int j = 0; j < N_JOBS; j++) {
                free((void *)Ws[j]); free((void *)bs[j]); free(ys[j]); free(want[j]);
            }
            free(x);
        }
    }
    tw_simd_init("naive");
}
END_TEST

Suite *suite_matvec_jobs(void) {
    Suite *s = suite_create("matvec_jobs");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, job_list_split_is_bit_identical);
    tcase_add_test(tc, linear_many_equals_separate_calls);
    suite_add_tcase(s, tc);
    return s;
}
