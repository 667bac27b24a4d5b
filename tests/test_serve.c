// test_serve.c: serving a stream of requests (decode/serve.h) on a tiny random Llama-style model.
//   - The stream is reproducible: the same seed gives the same requests; lengths stay in range.
//   - Every request, static or continuous, gets exactly the tokens greedy decoding of its prompt
//     alone gives (tolerance 0: tokens; the batch is bit-identical to decoding alone,
//     tests/test_batch.c), and every cache block is back on the free list at the end; the same
//     tokens on packed panels (decode/batch_panels.h: logits within rounding of decoding alone).
//   - Continuous batching, counted in engine steps (deterministic, no timing): a request's tokens
//     come one per step after its first; it finishes the same stream in fewer steps and with a
//     lower 99th-percentile time to first token than static batching, and holds no more blocks
//     (on this stream: 66 steps against 100, p99 23 steps against 55, 20 blocks against 23).
//   - The nearest-rank percentile on a hand example; bad streams are refused.
//   - The request stream file: written and read back equal; every malformed line, an empty
//     stream, a directory and a missing file give one line naming the file and the line.
//   - ./serve on stories260K: both policies' rows; bad flags and files: one line, exit 1 or 2.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "decode/serve.h"
#include "decode/sampler.h"

enum { NREQ = 14, SLOTS = 4, S_MAX = 48 };

static void tiny(tw_model *m) {
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "llama"), TW_OK);
    c.max_seq = S_MAX;
    ck_assert_int_eq(tw_model_init(m, &c), TW_OK);
    tw_model_randomize(m, 777);
}

START_TEST(the_stream_is_reproducible_and_in_range)
{
    tw_request a[50], b[50];
    tw_requests_generate(a, 50, 9, 2.0, 3, 12, 1, 20);
    tw_requests_generate(b, 50, 9, 2.0, 3, 12, 1, 20);
    ck_assert_mem_eq(a, b, sizeof a);
    tw_requests_generate(b, 50, 10, 2.0, 3, 12, 1, 20);
    ck_assert(memcmp(a, b, sizeof a) != 0);
    for (int i = 0; i < 50; i++) {
        ck_assert(a[i].prompt_len >= 3 && a[i].prompt_len <= 12);
        ck_assert(a[i].output_len >= 1 && a[i].output_len <= 20);
        if (i) ck_assert_int_ge(a[i].arrival, a[i - 1].arrival);
    }
    ck_assert_int_gt(a[49].arrival, 40);   // mean gap 2: about 98 steps for 49 gaps
}
END_TEST

START_TEST(percentile_is_the_nearest_rank)
{
    double x[5] = { 5, 1, 4, 2, 3 };
    ck_assert(tw_percentile(x, 5, 50) == 3.0);
    ck_assert(tw_percentile(x, 5, 99) == 5.0);
    ck_assert(tw_percentile(x, 5, 20) == 1.0);
    ck_assert(tw_percentile(x, 5, 21) == 2.0);
}
END_TEST

// Greedy decoding of one prompt alone, one position at a time: out receives n_out tokens.
static void alone(const tw_model *m, const int *prompt, int n_prompt, int *out, int n_out) {
    tw_model_state s;
    ck_assert_int_eq(tw_model_state_init(&s, m, 1, S_MAX), TW_OK);
    int tok = prompt[0];
    for (int p = 0; p < n_prompt + n_out - 1; p++) {
        ck_assert_int_eq(tw_model_forward_next(&s, m, &tok, 1, p), TW_OK);
        const int next = tw_argmax(s.logits, m->cfg.vocab);
        if (p + 1 < n_prompt) tok = prompt[p + 1];
        else { out[p + 1 - n_prompt] = next; tok = next; }
    }
    tw_model_state_free(&s);
}

typedef struct { tw_serve_stats stats; double ttft_p99; int *tokens[NREQ]; tw_request_timing t[NREQ]; } run_out;

static void run(run_out *o, tw_batch *b, const tw_request *req, tw_batching kind) {
    for (int i = 0; i < NREQ; i++) o->tokens[i] = malloc((size_t)req[i].output_len * sizeof(int));
    ck_assert_int_eq(tw_serve_run(b, req, NREQ, SLOTS, kind, o->t, &o->stats, o->tokens), TW_OK);
    ck_assert_int_eq(b->pool.n_free, b->pool.n_blocks);   // every block given back
    double ttft[NREQ];
    long tokens = 0;
    for (int i = 0; i < NREQ; i++) {
        ck_assert_int_ge(o->t[i].admit_step, req[i].arrival);
        ck_assert_int_ge(o->t[i].first_step, o->t[i].admit_step);
        ttft[i] = o->t[i].first_step - req[i].arrival;
        tokens += req[i].output_len;
        if (kind == TW_BATCH_CONTINUOUS)   // one token a step after the first
            ck_assert_int_eq(o->t[i].last_step - o->t[i].first_step, req[i].output_len - 1);
    }
    ck_assert_int_eq(o->stats.tokens, tokens);
    o->ttft_p99 = tw_percentile(ttft, NREQ, 99);
}

START_TEST(static_and_continuous_give_each_request_its_own_greedy_tokens)
{
    tw_model m;
    tiny(&m);
    tw_batch b;
    ck_assert_int_eq(tw_batch_init(&b, &m, 24, S_MAX, 4, SLOTS * (S_MAX / 4)), TW_OK);
    tw_batch_panels panels;
    ck_assert_int_eq(tw_batch_panels_init(&panels, &m), TW_OK);
    tw_request req[NREQ];
    tw_requests_generate(req, NREQ, 3, 1.5, 2, 10, 1, 24);
    // The decode's own sums (bit for bit), then the packed panels (the same greedy tokens here:
    // their logits are within rounding, tests/test_batch.c).
    for (int packed = 0; packed < 2; packed++) {
        b.panels = packed ? &panels : NULL;
        run_out st, co;
        run(&st, &b, req, TW_BATCH_STATIC);
        run(&co, &b, req, TW_BATCH_CONTINUOUS);
        for (int i = 0; i < NREQ; i++) {
            int prompt[S_MAX], want[S_MAX];
            tw_request_prompt(prompt, req[i].prompt_len, i, m.cfg.vocab);
            alone(&m, prompt, req[i].prompt_len, want, req[i].output_len);
            const size_t bytes = (size_t)req[i].output_len * sizeof(int);
            ck_assert_msg(memcmp(st.tokens[i], want, bytes) == 0, "static (packed %d): request %d differs from alone", packed, i);
            ck_assert_msg(memcmp(co.tokens[i], want, bytes) == 0, "continuous (packed %d): request %d differs from alone", packed, i);
        }
        for (int i = 0; i < NREQ; i++) { free(st.tokens[i]); free(co.tokens[i]); }
    }
    tw_batch_panels_free(&panels);
    tw_batch_free(&b);
    tw_model_free(&m);
}
END_TEST

START_TEST(continuous_batching_beats_static_batching_on_the_same_stream)
{
    tw_model m;
    tiny(&m);
    tw_batch b;
    ck_assert_int_eq(tw_batch_init(&b, &m, 24, S_MAX, 4, SLOTS * (S_MAX / 4)), TW_OK);
    tw_request req[NREQ];
    // Arrivals faster than the slots can serve, outputs from 1 to 30 tokens: a static batch
    // waits for its longest member while the others sit idle.
    tw_requests_generate(req, NREQ, 5, 1.0, 2, 8, 1, 30);
    run_out st, co;
    run(&st, &b, req, TW_BATCH_STATIC);
    run(&co, &b, req, TW_BATCH_CONTINUOUS);
    ck_assert_msg(co.stats.steps < st.stats.steps, "steps: continuous %ld, static %ld", co.stats.steps, st.stats.steps);
    ck_assert_msg(co.ttft_p99 < st.ttft_p99, "p99 time to first token (steps): continuous %.0f, static %.0f",
                  co.ttft_p99, st.ttft_p99);
    ck_assert_int_eq(co.stats.tokens, st.stats.tokens);
    ck_assert_int_le(co.stats.peak_blocks, st.stats.peak_blocks);
    for (int i = 0; i < NREQ; i++) { free(st.tokens[i]); free(co.tokens[i]); }
    // Bad streams: more slots than rows, a request longer than the context, arrivals out of order.
    tw_request_timing t[NREQ];
    tw_serve_stats stats;
    ck_assert_int_eq(tw_serve_run(&b, req, NREQ, 24, TW_BATCH_CONTINUOUS, t, &stats, NULL), TW_ERR_ARG);
    tw_request bad = req[0];
    bad.output_len = S_MAX;
    ck_assert_int_eq(tw_serve_run(&b, &bad, 1, SLOTS, TW_BATCH_CONTINUOUS, t, &stats, NULL), TW_ERR_ARG);
    tw_request two[2] = { req[1], req[0] };
    two[0].arrival = 5;
    two[1].arrival = 1;
    ck_assert_int_eq(tw_serve_run(&b, two, 2, SLOTS, TW_BATCH_CONTINUOUS, t, &stats, NULL), TW_ERR_ARG);
    tw_batch_free(&b);
    tw_model_free(&m);
}
END_TEST

static void scratch(char *out, size_t len, const char *tag) {
    mkdir("out", 0777);
    snprintf(out, len, "out/test_serve_%ld_%s", (long)getpid(), tag);
}

static void write_text(const char *path, const char *text) {
    ck_assert_int_eq(tt_write_text(path, text), 0);
}

START_TEST(the_stream_file_round_trips_and_bad_lines_are_named)
{
    char path[128], err[512];
    scratch(path, sizeof path, "stream.txt");
    tw_request a[20], *b = NULL;
    int n = 0;
    tw_requests_generate(a, 20, 4, 3.0, 1, 30, 1, 50);
    ck_assert_int_eq(tw_requests_write(path, a, 20, err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_requests_read(&b, &n, path, err, sizeof err), TW_OK);
    ck_assert_int_eq(n, 20);
    ck_assert_mem_eq(a, b, sizeof a);
    free(b);
    static const struct { const char *text; const char *needle; } bad[] = {
        { "0 5 5\n3 x 4\n", "line 2: '3 x 4' is not three whole numbers" },
        { "0 5\n", "line 1: '0 5' is not three whole numbers" },
        { "0 5 5 5\n", "line 1: '0 5 5 5' is not three whole numbers" },
        { "-1 5 5\n", "line 1: '-1 5 5' is not three whole numbers" },
        { "0 1234567890 5\n", "is not three whole numbers" },
        { "0 0 5\n", "line 1: a request needs a prompt and an output of 1 token or more (got 0 and 5)" },
        { "# only a comment\n\n", "no requests" },
        { "", "no requests" },
        { "5 2 2\n# late\n4 2 2\n", "line 3: arrival 4 comes before the previous request's 5" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i].text);
        ck_assert_int_ne(tw_requests_read(&b, &n, path, err, sizeof err), TW_OK);
        ck_assert_msg(strstr(err, bad[i].needle) != NULL, "'%s': '%s' should say '%s'", bad[i].text, err, bad[i].needle);
        ck_assert_msg(strstr(err, path) != NULL && strchr(err, '\n') == NULL, "%s", err);
        ck_assert_ptr_null(b);
    }
    write_text(path, " 0 3 4 \r\n\t2\t1\t1\n");   // spaces, tabs and CRLF are fine
    ck_assert_int_eq(tw_requests_read(&b, &n, path, err, sizeof err), TW_OK);
    ck_assert(n == 2 && b[1].arrival == 2 && b[1].prompt_len == 1 && b[0].output_len == 4);
    free(b);
    ck_assert_int_eq(tw_requests_read(&b, &n, "out", err, sizeof err), TW_ERR_IO);
    ck_assert_msg(strstr(err, "is a directory") != NULL, "%s", err);
    ck_assert_int_eq(tw_requests_read(&b, &n, "out/no-such-stream.txt", err, sizeof err), TW_ERR_IO);
    remove(path);
}
END_TEST

#define SERVE "./serve data/models/stories260K.bin "

START_TEST(serve_prints_both_policies_and_refuses_bad_input)
{
    char path[128], cmd[512];
    scratch(path, sizeof path, "cli.txt");
    write_text(path, "0 4 10\n0 6 3\n1 2 20\n2 5 5\n9 3 8\n");
    snprintf(cmd, sizeof cmd, SERVE "--requests %s --slots 2", path);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s: %s", cmd, r.err);
    ck_assert_msg(strstr(r.out, "\nstatic ") && strstr(r.out, "\ncontinuous ") && strstr(r.out, "5 requests, at most 2"), "%s", r.out);
    tt_run_free(&r);
    snprintf(cmd, sizeof cmd, SERVE "--requests %s --slots 2 --packed", path);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s: %s", cmd, r.err);
    ck_assert_msg(strstr(r.out, "kernels on packed panels") && strstr(r.out, "\ncontinuous "), "%s", r.out);
    tt_run_free(&r);
    write_text(path, "0 4 10\n0 600 3\n");
    struct { char args[200]; int rc; const char *needle; } bad[6];
    int n = 0;
    snprintf(bad[n].args, 200, SERVE "--requests %s", path); bad[n].rc = 1; bad[n++].needle = "longer than the model's context of 512";
    snprintf(bad[n].args, 200, SERVE "--slots 0"); bad[n].rc = 2; bad[n++].needle = "--slots: '0' is not a whole number in 1..256";
    snprintf(bad[n].args, 200, SERVE "--requests out/no-such.txt"); bad[n].rc = 1; bad[n++].needle = "no-such.txt";
    snprintf(bad[n].args, 200, SERVE "--frobnicate 1"); bad[n].rc = 2; bad[n++].needle = "unknown flag '--frobnicate'";
    snprintf(bad[n].args, 200, "./serve"); bad[n].rc = 2; bad[n++].needle = "no model given";
    snprintf(bad[n].args, 200, SERVE "--requests"); bad[n].rc = 2; bad[n++].needle = "needs a value";
    for (int i = 0; i < n; i++) {
        r = tt_run(bad[i].args);
        ck_assert_msg(r.rc == bad[i].rc, "%s: exit %d, want %d (%s)", bad[i].args, r.rc, bad[i].rc, r.err);
        ck_assert_msg(tt_count_lines(r.err) == 1 && strstr(r.err, bad[i].needle), "%s: '%s' should say '%s'",
                      bad[i].args, r.err, bad[i].needle);
        ck_assert_str_eq(r.out, "");
        tt_run_free(&r);
    }
    remove(path);
}
END_TEST

Suite *suite_serve(void) {
    Suite *s = suite_create("serve");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_stream_is_reproducible_and_in_range);
    tcase_add_test(tc, percentile_is_the_nearest_rank);
    tcase_add_test(tc, static_and_continuous_give_each_request_its_own_greedy_tokens);
    tcase_add_test(tc, continuous_batching_beats_static_batching_on_the_same_stream);
    tcase_add_test(tc, the_stream_file_round_trips_and_bad_lines_are_named);
    tcase_add_test(tc, serve_prints_both_policies_and_refuses_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
