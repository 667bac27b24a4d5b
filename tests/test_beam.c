// test_beam.c: tw_beam_search on a tiny synthetic model (V = 3 tokens) whose next-token
// distribution depends on the whole prefix (its last token, its length and the sum of its ids),
// so that greedy, narrow beams and the exhaustive answer differ.
//   - width V^steps (and V^(steps-1)) finds exactly the most likely sequence, compared with an
//     exhaustive enumeration of all V^steps sequences;
//   - width 1 is greedy decoding (argmax at each step);
//   - on a hand-built greedy trap, width 2 finds the better sequence and width 1 does not;
//   - a failing callback stops the search with its status; bad sizes are TW_ERR_ARG.
// Tolerance: none. The enumeration adds the same float log-probabilities in the same order as
// the search (score = score + logprob, step by step), so scores must be bit-identical.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

enum { V3 = 3, STEPS = 4, CTX_ROWS = 16 };

typedef struct { float table[CTX_ROWS][V3]; int calls, fail_after; } toy_model;

// log P(next | prefix) = log_softmax(table[row]), row chosen by the prefix's last token, length
// and the sum of its ids.
static tw_status toy_next(float *logprobs, const int *prefix, int len, void *ctx) {
    toy_model *m = ctx;
    if (m->fail_after >= 0 && m->calls >= m->fail_after) return TW_ERR_FORMAT;
    m->calls++;
    int sum = 0;
    for (int i = 0; i < len; i++) sum += prefix[i];
    const float *row = m->table[(prefix[len - 1] * 5 + len * 3 + sum * 11) % CTX_ROWS];
    double mx = row[0], z = 0.0;
    for (int t = 1; t < V3; t++) if (row[t] > mx) mx = row[t];
    for (int t = 0; t < V3; t++) z += exp(row[t] - mx);
    for (int t = 0; t < V3; t++) logprobs[t] = (float)(row[t] - mx - log(z));
    return TW_OK;
}

static void toy_init(toy_model *m, uint64_t seed) {
    tw_rng r;
    tw_rng_init(&r, seed);
    tw_rng_fill_normal(&r, &m->table[0][0], CTX_ROWS * V3, 3.0f);
    m->calls = 0;
    m->fail_after = -1;
}

// Total log-probability of prompt + seq (steps tokens), summed in the search's order.
static float score_of(toy_model *m, const int *prompt, int n_prompt, const int *seq, int steps) {
    int buf[32];
    float lp[V3], s = 0.0f;
    memcpy(buf, prompt, (size_t)n_prompt * sizeof *buf);
    for (int i = 0; i < steps; i++) {
        toy_next(lp, buf, n_prompt + i, m);
        s = s + lp[seq[i]];
        buf[n_prompt + i] = seq[i];
    }
    return s;
}

// The most likely continuation by trying all V^steps of them (first in lexicographic order on ties).
static float exhaustive(int *best, toy_model *m, const int *prompt, int n_prompt, int steps) {
    int seq[16];
    float best_s = -INFINITY;
    long total = 1;
    for (int i = 0; i < steps; i++) total *= V3;
    for (long code = 0; code < total; code++) {
        long c = code;
        for (int i = steps - 1; i >= 0; i--) { seq[i] = (int)(c % V3); c /= V3; }
        float s = score_of(m, prompt, n_prompt, seq, steps);
        if (s > best_s) { best_s = s; memcpy(best, seq, (size_t)steps * sizeof *seq); }
    }
    return best_s;
}

static float run_beam(int *out, toy_model *m, int width, const int *prompt, int n_prompt, int steps) {
    tw_beam b = { 0 };
    ck_assert_int_eq(tw_beam_init(&b, width, V3, n_prompt + steps), TW_OK);
    float s = NAN;
    ck_assert_int_eq(tw_beam_search(out, &s, &b, prompt, n_prompt, steps, toy_next, m), TW_OK);
    tw_beam_free(&b);
    return s;
}

START_TEST(beam_as_wide_as_all_sequences_is_exhaustive_search)
{
    toy_model m;
    toy_init(&m, 100 + (uint64_t)_i);
    const int prompt[2] = { 1, _i % V3 };
    int want[STEPS], got[STEPS];
    float s_want = exhaustive(want, &m, prompt, 2, STEPS);
    const int widths[2] = { 81, 27 };   // V^steps, and V^(steps-1), already enough
    for (int w = 0; w < 2; w++) {
        float s = run_beam(got, &m, widths[w], prompt, 2, STEPS);
        ck_assert_msg(s == s_want, "seed %d width %d: score %.9g, exhaustive %.9g", _i, widths[w],
                      (double)s, (double)s_want);
        for (int i = 0; i < STEPS; i++)
            ck_assert_msg(got[i] == want[i], "seed %d width %d: token %d is %d, exhaustive %d",
                          _i, widths[w], i, got[i], want[i]);
    }
}
END_TEST

START_TEST(beam_of_width_1_is_greedy)
{
    toy_model m;
    toy_init(&m, 200 + (uint64_t)_i);
    const int prompt[1] = { _i % V3 };
    int got[STEPS], buf[1 + STEPS];
    float s = run_beam(got, &m, 1, prompt, 1, STEPS);
    buf[0] = prompt[0];
    float lp[V3], total = 0.0f;
    for (int i = 0; i < STEPS; i++) {
        toy_next(lp, buf, 1 + i, &m);
        int arg = tw_argmax(lp, V3);
        ck_assert_msg(got[i] == arg, "seed %d step %d: width 1 chose %d, argmax is %d", _i, i, got[i], arg);
        total = total + lp[arg];
        buf[1 + i] = arg;
    }
    ck_assert_msg(s == total, "width 1 score %.9g, greedy %.9g", (double)s, (double)total);
}
END_TEST

// A greedy trap: the first token 0 (p = 0.55) leads to a flat distribution, token 1 (p = 0.44)
// to a near-certain one. Greedy takes 0 and ends at 0.55 x 1/3; a beam of 2 finds 1 then 0,
// 0.44 x 0.98. Without this test the two above could pass with a search that ignores its width.
static tw_status trap_next(float *logprobs, const int *prefix, int len, void *ctx) {
    (void)ctx;
    static const float first[V3] = { 0.55f, 0.44f, 0.01f }, after1[V3] = { 0.98f, 0.01f, 0.01f };
    for (int t = 0; t < V3; t++)
        logprobs[t] = logf(len == 1 ? first[t] : len == 2 && prefix[1] == 1 ? after1[t] : 1.0f / 3);
    return TW_OK;
}

START_TEST(a_beam_of_2_escapes_the_greedy_trap)
{
    const int prompt[1] = { 2 };
    int out[2];
    float s1 = NAN, s2 = NAN;
    tw_beam b = { 0 };
    ck_assert_int_eq(tw_beam_init(&b, 2, V3, 3), TW_OK);
    ck_assert_int_eq(tw_beam_search(out, &s2, &b, prompt, 1, 2, trap_next, NULL), TW_OK);
    ck_assert_msg(out[0] == 1 && out[1] == 0, "width 2 chose %d %d, want 1 0", out[0], out[1]);
    tw_beam_free(&b);
    ck_assert_int_eq(tw_beam_init(&b, 1, V3, 3), TW_OK);
    ck_assert_int_eq(tw_beam_search(out, &s1, &b, prompt, 1, 2, trap_next, NULL), TW_OK);
    ck_assert_msg(out[0] == 0 && out[1] == 0, "width 1 chose %d %d, want 0 0 (greedy)", out[0], out[1]);
    tw_beam_free(&b);
    // log(0.44) + log(0.98) against log(0.55) + log(1/3), each a sum of two floats: 1e-6
    ck_assert_msg(fabsf(s2 - (logf(0.44f) + logf(0.98f))) < 1e-6f, "width 2 score %.9g", (double)s2);
    ck_assert_msg(fabsf(s1 - (logf(0.55f) + logf(1.0f / 3))) < 1e-6f, "width 1 score %.9g", (double)s1);
}
END_TEST

START_TEST(beam_passes_back_a_callback_error_and_rejects_bad_sizes)
{
    toy_model m;
    toy_init(&m, 7);
    m.fail_after = 3;
    tw_beam b = { 0 };
    ck_assert_int_eq(tw_beam_init(&b, 2, V3, 6), TW_OK);
    int prompt[1] = { 0 }, out[5];
    ck_assert_int_eq(tw_beam_search(out, NULL, &b, prompt, 1, 5, toy_next, &m), TW_ERR_FORMAT);
    ck_assert_int_eq(tw_beam_search(out, NULL, &b, prompt, 1, 6, toy_next, &m), TW_ERR_ARG);
    ck_assert_int_eq(tw_beam_search(out, NULL, &b, prompt, 0, 2, toy_next, &m), TW_ERR_ARG);
    tw_beam_free(&b);
    tw_beam_free(&b);   // safe twice
    ck_assert_int_eq(tw_beam_init(&b, 0, V3, 6), TW_ERR_ARG);
    ck_assert_int_eq(tw_beam_init(&b, 2, 0, 6), TW_ERR_ARG);
}
END_TEST

Suite *suite_beam(void) {
    Suite *s = suite_create("beam");
    TCase *tc = tcase_create("beam");
    tcase_add_loop_test(tc, beam_as_wide_as_all_sequences_is_exhaustive_search, 0, 8);
    tcase_add_loop_test(tc, beam_of_width_1_is_greedy, 0, 8);
    tcase_add_test(tc, a_beam_of_2_escapes_the_greedy_trap);
    tcase_add_test(tc, beam_passes_back_a_callback_error_and_rejects_bad_sizes);
    suite_add_tcase(s, tc);
    return s;
}
