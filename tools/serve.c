// serve.c: one stream of requests served with static and with continuous batching
// (lib/decode/serve.h), on the library's batched decoding and paged KV cache.
//
//   ./serve MODEL.bin [--requests FILE] [--slots N] [--write-requests FILE] [--simd LEVEL] [--packed]
//
// Without --requests the stream is made here, seeded (96 requests, one every 2 steps on average,
// prompts of 4..48 tokens, outputs of 8..96, shortened to fit the model's context); --write-requests
// saves it, so another run or another tool can replay it. For each policy it prints the steps,
// the measured seconds, the throughput, the time to first token and the time per output token
// (median and 99th percentile, in seconds and in engine steps), and the KV cache held.
// docs/serving.md explains the stream file and the two policies.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tw.h"
#include "formats/llama2c.h"
#include "decode/serve.h"
#include "simd/simd.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: ./serve MODEL.bin [--requests FILE] [--slots N] [--write-requests FILE] [--simd LEVEL] [--packed]\n"
        "  serves one stream of requests with static and with continuous batching and compares them\n"
        "  --requests FILE        the stream: ARRIVAL PROMPT_LEN OUTPUT_LEN a line (docs/serving.md);\n"
        "                         default: 96 seeded requests made here\n"
        "  --slots N              sequences served at once, 1..256 (default 16)\n"
        "  --write-requests FILE  save the stream that was served\n"
        "  --simd LEVEL           kernels: naive, avx2, avx512, neon or auto (default)\n"
        "  --packed               the Linear layers on the weights packed once into panels: faster,\n"
        "                         another order of the same sums (decode/batch_panels.h)\n");
}

static void die_usage(const char *fmt, const char *a) {
    fprintf(stderr, "serve: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (./serve --help for usage)\n");
    exit(2);
}

// Prints one policy's row of the table. Returns 0, or 1 after printing why.
static int run_policy(tw_batch *b, const tw_request *req, int n, int slots, tw_batching kind) {
    static const char *names[2] = { "static", "continuous" };
    tw_request_timing *t = malloc((size_t)n * sizeof *t);
    double *ttft = malloc((size_t)n * sizeof *ttft), *ttft_steps = malloc((size_t)n * sizeof *ttft_steps);
    double *tpot = malloc((size_t)n * sizeof *tpot);
    if (!t || !ttft || !ttft_steps || !tpot) { fprintf(stderr, "serve: out of memory\n"); exit(1); }
    tw_serve_stats st;
    tw_status s = tw_serve_run(b, req, n, slots, kind, t, &st, NULL);
    if (s != TW_OK) {
        fprintf(stderr, "serve: the %s run failed: %s\n", names[kind], tw_status_str(s));
        free(t); free(ttft); free(ttft_steps); free(tpot);
        return 1;
    }
    int n_tpot = 0;
    for (int i = 0; i < n; i++) {
        ttft[i] = t[i].first_s - t[i].arrival_s;
        ttft_steps[i] = t[i].first_step - req[i].arrival;
        if (req[i].output_len > 1) tpot[n_tpot++] = 1e3 * (t[i].last_s - t[i].first_s) / (req[i].output_len - 1);
    }
    char a[48], c[48] = "-", d[48];
    snprintf(a, sizeof a, "%.3f / %.3f", tw_percentile(ttft, n, 50), tw_percentile(ttft, n, 99));
    if (n_tpot) snprintf(c, sizeof c, "%.2f / %.2f", tw_percentile(tpot, n_tpot, 50), tw_percentile(tpot, n_tpot, 99));
    snprintf(d, sizeof d, "%.0f / %.0f", tw_percentile(ttft_steps, n, 50), tw_percentile(ttft_steps, n, 99));
    printf("%-11s %6ld %9.3f %10.1f %17s %17s %17s %9d\n", names[kind], st.steps, st.seconds,
           st.seconds > 0 ? st.tokens / st.seconds : 0.0, a, c, d, st.peak_blocks);
    free(t); free(ttft); free(ttft_steps); free(tpot);
    return 0;
}

int main(int argc, char **argv) {
    const char *model = NULL, *requests = NULL, *write_to = NULL, *simd = NULL;
    int slots = 16, packed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { usage(stdout); return 0; }
        if (strcmp(a, "--packed") == 0) { packed = 1; continue; }
        if (a[0] != '-') {
            if (model) die_usage("unexpected argument '%s' (one model only)", a);
            model = a;
            continue;
        }
        if (strcmp(a, "--requests") && strcmp(a, "--slots") && strcmp(a, "--write-requests") && strcmp(a, "--simd"))
            die_usage("unknown flag '%s'", a);
        if (i + 1 >= argc) die_usage("flag '%s' needs a value", a);
        const char *v = argv[++i];
        if (strcmp(a, "--requests") == 0) requests = v;
        else if (strcmp(a, "--write-requests") == 0) write_to = v;
        else if (strcmp(a, "--simd") == 0) simd = v;
        else {
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (end == v || *end || errno || n < 1 || n > 256) die_usage("--slots: '%s' is not a whole number in 1..256", v);
            slots = (int)n;
        }
    }
    if (model == NULL) die_usage("no model given: the first argument is the checkpoint, e.g. %s", "data/models/stories260K.bin");
    const char *level = tw_simd_init(simd);
    if (level == NULL) die_usage("--simd: level '%s' is not available here", simd ? simd : getenv("TW_SIMD"));

    char err[512];
    tw_model m = { 0 };
    int version;
    if (tw_llama2c_load_any(&m, &version, model, err, sizeof err) != TW_OK) {
        fprintf(stderr, "serve: %s\n", err);
        return 1;
    }
    if (!tw_batch_supports(&m)) {
        fprintf(stderr, "serve: %s: batched decoding runs pre-norm models only (the GPT-2, Llama and Qwen3 styles)\n", model);
        tw_model_free(&m);
        return 1;
    }
    tw_request *req = NULL;
    int n = 0;
    if (requests) {
        if (tw_requests_read(&req, &n, requests, err, sizeof err) != TW_OK) {
            fprintf(stderr, "serve: --requests %s\n", err);
            tw_model_free(&m);
            return 1;
        }
    } else {   // a stream that fits the context: prompts up to a third of it, outputs two thirds
        n = 96;
        req = malloc((size_t)n * sizeof *req);
        if (req == NULL) { fprintf(stderr, "serve: out of memory\n"); return 1; }
        const int ctx = m.cfg.max_seq, p_max = ctx / 3 < 48 ? ctx / 3 : 48, o_max = 2 * ctx / 3 < 96 ? 2 * ctx / 3 : 96;
        tw_requests_generate(req, n, 2024, 2.0, p_max < 4 ? 1 : 4, p_max < 1 ? 1 : p_max,
                             o_max < 8 ? 1 : 8, o_max < 1 ? 1 : o_max);
    }
    int longest = 0, longest_prompt = 0;
    for (int i = 0; i < n; i++) {
        if (req[i].prompt_len + req[i].output_len > longest) longest = req[i].prompt_len + req[i].output_len;
        if (req[i].prompt_len > longest_prompt) longest_prompt = req[i].prompt_len;
    }
    int rc = 1;
    tw_batch b = { 0 };
    tw_batch_panels panels = { 0 };
    if (longest > m.cfg.max_seq) {
        fprintf(stderr, "serve: --requests %s: a request of %d positions is longer than the model's context of %d\n",
                requests ? requests : "(made here)", longest, m.cfg.max_seq);
        goto done;
    }
    if (write_to && tw_requests_write(write_to, req, n, err, sizeof err) != TW_OK) {
        fprintf(stderr, "serve: --write-requests %s\n", err);
        goto done;
    }
    enum { BLOCK = 16 };
    const int rows = slots + (longest_prompt < 256 ? longest_prompt : 256);
    if (tw_batch_init(&b, &m, rows, longest, BLOCK, slots * ((longest + BLOCK - 1) / BLOCK)) != TW_OK) {
        fprintf(stderr, "serve: cannot allocate the batch and its KV cache for %d slots\n", slots);
        goto done;
    }
    if (packed) {
        const tw_status pst = tw_batch_panels_init(&panels, &m);
        if (pst != TW_OK) {
            fprintf(stderr, "serve: --packed: %s\n", tw_batch_panels_why(pst));
            goto done;
        }
        b.panels = &panels;
    }
    printf("serve: %s, %s kernels%s, one thread; %d requests, at most %d at once\n", model, level,
           packed ? " on packed panels" : "", n, slots);
    printf("%-11s %6s %9s %10s %17s %17s %17s %9s\n", "batching", "steps", "seconds", "tok/s",
           "TTFT p50/p99 s", "TPOT p50/p99 ms", "TTFT p50/p99 st", "KV blocks");
    if (run_policy(&b, req, n, slots, TW_BATCH_STATIC) || run_policy(&b, req, n, slots, TW_BATCH_CONTINUOUS)) goto done;
    const double block_kib = (double)tw_paged_block_bytes(&b.pool) / 1024.0;
    printf("KV cache: blocks of %d positions, %.1f KiB each; %d caches padded to the longest request "
           "(%d positions) would take %d blocks' worth, %.1f KiB, whatever the requests' lengths\n",
           BLOCK, block_kib, slots, longest, slots * ((longest + BLOCK - 1) / BLOCK),
           slots * ((longest + BLOCK - 1) / BLOCK) * block_kib);
    rc = 0;
done:
    tw_batch_free(&b);
    tw_batch_panels_free(&panels);
    free(req);
    tw_model_free(&m);
    return rc;
}
