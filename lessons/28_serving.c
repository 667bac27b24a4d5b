// Lesson 28: serving many users: batched decoding, a paged KV cache, continuous batching and
// speculative decoding.
//
// Teaches: why decoding one sequence at a time leaves a CPU or GPU mostly idle (every token reads
// every weight once, for two FLOPs per weight); how decoding N sequences together makes each
// weight read feed N tokens, with the same numbers for every sequence as if it ran alone; how a
// paged KV cache (fixed-size blocks, a block table per sequence, a free list) holds only the
// positions that exist; what packed weight panels buy (faster sums in another order: logits that
// move in their last bits, yet a sequence's numbers still independent of its batch); why
// continuous batching (admit a request as soon as a slot frees) beats
// static batching on the same stream of requests; and why speculative decoding's acceptance rule
// leaves the output distribution exactly the target's, checked by enumeration.
// Calls: tw_simd_init, tw_model_init/_randomize, tw_model_state_init, tw_model_forward_next, tw_batch_init/
//        _forward/_forward_greedy (lib/decode/batch.h), tw_batch_panels_init (batch_panels.h), tw_paged_pool_init, tw_block_table_* (paged_cache.h),
//        tw_requests_generate, tw_serve_run, tw_percentile (serve.h), tw_spec_emit_dist,
//        tw_spec_accept (speculative.h).
// Build & run: make lesson28 && ./lesson28 [--seed N] [--out DIR]   (about 1.6 s of CPU)
// Valgrind: skip (times batched decoding for 1 to 64 sequences, about 6 minutes under valgrind;
//   the batch, paged cache and scheduler run under valgrind in tests/test_batch.c, tests/test_serve.c)
// Writes: batch_speed.dat pool.dat timeline.dat logits_batched.npy logits_alone.npy
// Extra runs: ci (make test runs it once; make test-lessons-full also checks that a second run
//   writes the same bytes and that --seed changes the output)
// Pictures: batch_speed.png pool.png timeline.png
#include <math.h>
#include <string.h>
#include "lesson.h"
#include "decode/batch.h"
#include "decode/serve.h"
#include "decode/speculative.h"
#include "simd/simd.h"

static const lesson_info INFO = {
    28, "Serving many users",
    "Decoding one sequence reads every weight for two FLOPs each, so the processor mostly waits "
    "for memory. This lesson counts the bytes and FLOPs of a token, decodes many sequences "
    "together (each weight read then feeds every sequence, and each sequence's numbers stay "
    "exactly those of decoding it alone), shows what faster sums in another order change, keeps their keys and values in a paged cache of "
    "fixed-size blocks, replays one stream of requests with static and with continuous batching, "
    "and checks speculative decoding's acceptance rule by enumeration."
};

// The tiny model the lesson times: Llama-style, 4 layers of width 128 (1.3 million parameters).
static void small_model(tw_model *m, uint64_t seed) {
    tw_model_config c;
    LESSON_TRY(tw_model_config_preset(&c, "llama"));
    c.vocab = 4096;
    c.max_seq = 256;
    c.n_layer = 4;
    c.block.attn.d_model = 128;
    c.block.attn.n_head = 4;
    c.block.attn.n_kv_head = 4;
    c.block.attn.head_dim = 32;
    c.block.ffn_hidden = 344;
    LESSON_TRY(tw_model_init(m, &c));
    tw_model_randomize(m, seed);
}

// ---- 1. bytes and FLOPs of one token ----

static void bytes_and_flops(void) {
    // llama2.c's 15M shape: 6 layers, width 288, 6 heads, hidden 768, vocabulary 32000.
    const double C = 288, F = 768, L = 6, V = 32000;
    const double weights = L * (4 * C * C + 3 * C * F) + V * C;   // the matrices a token multiplies by
    const double flops = 2 * weights, bytes = 4 * weights;
    printf("  llama2.c's 15M shape: %.2f million weights in its matrices (the head's %.2f million "
           "included)\n", weights / 1e6, V * C / 1e6);
    printf("  one token: %.1f MFLOP (2 per weight: a multiply and an add), %.1f MB of fp32 weights "
           "read: %.2f FLOP per byte\n", flops / 1e6, bytes / 1e6, flops / bytes);
    for (int N = 1; N <= 64; N *= 4)
        printf("  %2d sequences decoded together: the same %.1f MB read once for %2d tokens: %.1f FLOP per byte\n",
               N, bytes / 1e6, N, N * flops / bytes);
    lesson_expect_near("15M shape: 0.5 FLOP per byte of fp32 weights", flops / bytes, 0.5, 1e-12);
    lesson_say("A server-class core does 30 to 100 FP32 FLOPs in the time its memory delivers 4 to "
               "10 bytes, so at 0.5 FLOP per byte the arithmetic units wait most of the time: "
               "decoding one sequence is bound by memory. Decoding N sequences together multiplies "
               "the FLOPs per byte by N; past some N the arithmetic becomes the limit instead. "
               "(`make bench-serve` measures both sides on this machine with the 15M shape.)");
}

// ---- 2. batched decoding: the same numbers, fewer weight reads ----

// Decodes N sequences together for `steps` steps (after a 1-token prompt each) and returns
// tokens per second; the logits of every step land in logits (steps, N, V) when not NULL. With
// greedy (steps, N) not NULL, the greedy pass runs instead (tw_batch_forward_greedy: tokens, no
// logits) and the tokens it chose land there.
static double decode_together(tw_batch *b, int N, int steps, float *logits, int *greedy) {
    const int V = b->m->cfg.vocab;
    tw_block_table tables[64];
    tw_block_table *rows[64];
    int tok[64], pos[64];
    for (int i = 0; i < N; i++) {
        LESSON_TRY(tw_block_table_init(&tables[i], &b->pool, steps));
        LESSON_TRY(tw_block_table_reserve(&tables[i], &b->pool, steps));
        rows[i] = &tables[i];
        tok[i] = 1 + 37 * i % (V - 1);   // a different first token per sequence
        pos[i] = 0;
    }
    const double t0 = lesson_seconds();
    for (int s = 0; s < steps; s++) {
        if (greedy) {
            LESSON_TRY(tw_batch_forward_greedy(b, rows, tok, pos, NULL, N, greedy + (size_t)s * N));
            for (int i = 0; i < N; i++) { tok[i] = greedy[(size_t)s * N + i]; pos[i]++; }
            continue;
        }
        LESSON_TRY(tw_batch_forward(b, rows, tok, pos, NULL, N));
        if (logits) memcpy(logits + (size_t)s * N * V, b->logits, (size_t)N * V * sizeof(float));
        for (int i = 0; i < N; i++) { tok[i] = tw_argmax(b->logits + (size_t)i * V, V); pos[i]++; }
    }
    const double dt = lesson_seconds() - t0;
    for (int i = 0; i < N; i++) { tw_block_table_release(&tables[i], &b->pool); tw_block_table_free(&tables[i]); }
    return N * steps / dt;
}

// Tokens per second of N sequences together, 8 steps: the best of three runs (another program
// on the machine can only slow a run down).
static double best_of_three(tw_batch *b, int N) {
    double best = 0.0;
    for (int i = 0; i < 3; i++) {
        const double t = decode_together(b, N, 8, NULL, NULL);
        if (t > best) best = t;
    }
    return best;
}

// The same N sequences, each alone, one position at a time with tw_model_forward_next.
static void decode_alone(const tw_model *m, int N, int steps, float *logits) {
    const int V = m->cfg.vocab;
    for (int i = 0; i < N; i++) {
        tw_model_state s;
        LESSON_TRY(tw_model_state_init(&s, m, 1, steps));
        int tok = 1 + 37 * i % (V - 1);
        for (int p = 0; p < steps; p++) {
            LESSON_TRY(tw_model_forward_next(&s, m, &tok, 1, p));
            memcpy(logits + ((size_t)p * N + i) * V, s.logits, (size_t)V * sizeof(float));
            tok = tw_argmax(s.logits, V);
        }
        tw_model_state_free(&s);
    }
}

// The four sequences again, on the weights packed into panels (decode/batch_panels.h): each
// output one chain of fused multiply-adds over k, where the decode folds four accumulators of 16
// lanes; b->panels is set. Returns the largest difference from decoding alone.
static double panels_demo(tw_batch *b, const tw_model *m, const float *alone) {
    const int V = m->cfg.vocab, STEPS = 8, N4 = 4;
    float *packed = lesson_alloc((long)STEPS * N4 * V);
    decode_together(b, N4, STEPS, packed, NULL);
    double worst = 0.0;
    int same_argmax = 1;
    for (long r = 0; r < (long)STEPS * N4; r++) {
        for (int v = 0; v < V; v++) {
            const double d = fabs((double)packed[r * V + v] - alone[r * V + v]);
            if (d > worst) worst = d;
        }
        same_argmax &= tw_argmax(packed + r * V, V) == tw_argmax(alone + r * V, V);
    }
    printf("  on packed panels: largest difference from decoding alone %.3g\n", worst);
    lesson_say("A claim you may meet: \"batching never changes the output\". It can. Packed "
               "panels (the weights copied once into blocks of 32 rows, stored column by column) "
               "let each output be one chain of multiply-adds, faster, but a different order of "
               "the same sum than the decode's, so the logits move in their last bits. Here the "
               "greedy tokens stayed the same; a near tie between two tokens could flip.");
    // Tolerance 1e-5: the measured difference is about 6e-7 on logits whose largest is about 1
    // (two orders of float sums over 128 to 512 terms); a wrong weight or row moves them by 1e-2
    // and more.
    lesson_expect_near("packed panels: within 1e-5 of decoding alone", worst, 0.0, 1e-5);
    lesson_expect("packed panels: the same greedy token at every step", same_argmax);

    // The greedy head: the same four sequences through tw_batch_forward_greedy.
    int *greedy = lesson_alloc_bytes((size_t)STEPS * N4 * sizeof(int));
    decode_together(b, N4, STEPS, NULL, greedy);
    int same_tokens = 1;
    for (long r = 0; r < (long)STEPS * N4; r++) same_tokens &= greedy[r] == tw_argmax(packed + r * V, V);
    lesson_say("A greedy server reads one number from each row's %d logits: the index of the "
               "largest. So on packed panels the head can keep, for each row, only its best so "
               "far, and compare each block of 32 outputs with it as soon as their sums are done "
               "(in registers at AVX-512, through a buffer of 32 per row elsewhere): the logits "
               "are never written whole. At the 15M model's 32000 words and 64 rows, that is "
               "8 MiB a step not written and not read back (`make bench-serve` decodes this "
               "way).", V);
    lesson_expect("the greedy head: the same token as the argmax of the logits, every row and step",
                  same_tokens);
    return worst;
}

// Batch invariance: sequence 0's logits decoded beside three others, and alone in the batch, on
// packed panels (b->panels is set): the same bits, because every step of a row depends on that
// row alone.
static void same_bits_beside_others(tw_batch *b, const tw_model *m, double packed_worst) {
    const int V = m->cfg.vocab, STEPS = 8;
    float *four = lesson_alloc((long)STEPS * 4 * V), *one = lesson_alloc((long)STEPS * V);
    decode_together(b, 4, STEPS, four, NULL);
    decode_together(b, 1, STEPS, one, NULL);
    float *first = lesson_alloc((long)STEPS * V);   // sequence 0's rows of the batch of four
    for (int s = 0; s < STEPS; s++) memcpy(first + (size_t)s * V, four + (size_t)s * 4 * V, (size_t)V * sizeof(float));
    lesson_say("What a server can promise instead is batch invariance: a sequence's numbers do not "
               "depend on which others share its batch. Both kernels here keep it (every row is "
               "summed alone), so sequence 0 beside three others and alone agree bit for bit, "
               "whichever kernel; they differ from each other by %.1g.", packed_worst);
    lesson_expect_close("packed panels: sequence 0 beside three others equals it alone (bit for bit)",
                        first, one, (long)STEPS * V, 0.0f);
}

static void batched_decoding(const tw_model *m) {
    const int V = m->cfg.vocab, STEPS = 8, N4 = 4;
    // The fastest kernels this CPU has, as ./generate uses them (lesson 12): the batch's gain is
    // in how they reuse a weight block, which the plain loops of the naive level do not.
    const char *level = tw_simd_init(NULL);
    printf("  kernels: %s (the best this CPU has; lesson 12)\n", level);
    tw_batch b;
    LESSON_TRY(tw_batch_init(&b, m, 64, 64, 16, 64 * 4));
    float *together = lesson_alloc((long)STEPS * N4 * V), *alone = lesson_alloc((long)STEPS * N4 * V);
    decode_together(&b, N4, STEPS, together, NULL);
    decode_alone(m, N4, STEPS, alone);
    lesson_write_npy2("logits_batched.npy", together, (long)STEPS * N4, V);
    lesson_write_npy2("logits_alone.npy", alone, (long)STEPS * N4, V);
    lesson_say("Four sequences, %d steps, decoded together and then each alone: every logit is the "
               "same float. The batch's Linear layers run the decode's own matrix-vector sums "
               "with its loops turned around: a block of weight rows is read once and multiplied "
               "by several sequences' rows at once, four weight rows by four rows in registers; each "
               "output still comes from one weight row and one input row, summed in the same order "
               "and with the same partial sums as the decode's kernel.", STEPS);
    // Tolerance 0: every level's batch computes each sum as its decode does (tests/test_batch.c
    // and tests/test_matvec_rows.c at the naive, AVX2 and AVX-512 levels; this lesson under qemu
    // at NEON's, where the attention without a fused kernel once took another path and differed
    // by up to 3e-7).
    lesson_expect_close("batched logits equal decoding each sequence alone (bit for bit)", together,
                        alone, (long)STEPS * N4 * V, 0.0f);

    tw_batch_free(&b);
    tw_simd_init("naive");   // the rest of the lesson counts steps, not seconds
}

// ---- 2b. packed panels: faster sums in another order, and batch invariance ----

static void packed_panels(const tw_model *m) {
    const int V = m->cfg.vocab, STEPS = 8, N4 = 4;
    tw_simd_init(NULL);
    tw_batch b;
    LESSON_TRY(tw_batch_init(&b, m, 64, 64, 16, 64 * 4));
    tw_batch_panels panels;   // the model packed once, for every part below
    LESSON_TRY(tw_batch_panels_init(&panels, m));
    float *alone = lesson_alloc((long)STEPS * N4 * V);
    decode_alone(m, N4, STEPS, alone);
    b.panels = &panels;
    same_bits_beside_others(&b, m, panels_demo(&b, m, alone));
    b.panels = NULL;

    // Speed: aggregate tokens per second against N, with the decode's sums and on packed panels
    // (timings are this run's, best of three; they vary from run to run, and a busy machine
    // flattens them).
    float rows[7][4];
    const double one = best_of_three(&b, 1);
    printf("  %-5s %12s %14s %20s\n", "N", "tokens/s", "x one sequence", "packed: tokens/s");
    for (int j = 0, N = 1; N <= 64; N *= 2, j++) {
        const double tps = N == 1 ? one : best_of_three(&b, N);
        b.panels = &panels;
        const double packed = best_of_three(&b, N);
        b.panels = NULL;
        rows[j][0] = (float)N;
        rows[j][1] = (float)tps;
        rows[j][2] = (float)(N * one);
        rows[j][3] = (float)packed;
        printf("  %-5d %12.0f %14.2f %20.0f\n", N, tps, tps / one, packed);
    }
    tw_batch_panels_free(&panels);
    const char *cols[4] = { "N", "tokens_per_s", "N_times_one", "packed_tokens_per_s" };
    lesson_write_columns("batch_speed.dat", &rows[0][0], 7, 4, cols,
                         "aggregate decode tokens/s against batch size (timings of this run)");
    lesson_plot("28_batch_speed.gp", "batch_speed.dat", "batch_speed.png");
    lesson_say("The second column would be N times the first if reading the weights were the only "
               "cost (the dashed line of batch_speed.png). It grows fast while the weight reads "
               "dominate and bends where the arithmetic takes over. This model (5 MB) sits in the "
               "processor's caches, so its memory is fast: a model that lives in DRAM gains more. "
               "The packed panels pay once the arithmetic is the limit: each of their outputs is "
               "one chain of multiply-adds, where the decode's sums end by folding their partial "
               "sums (64 at AVX-512) into one, work that grows with every row of the batch.");
    tw_batch_free(&b);
    tw_simd_init("naive");   // the rest of the lesson counts steps, not seconds
}

// ---- 3. a paged KV cache ----

static void paged_cache(void) {
    enum { B = 8, BLOCKS = 12 };
    tw_paged_pool pool;
    LESSON_TRY(tw_paged_pool_init(&pool, 1, 1, 4, B, BLOCKS));
    tw_block_table t[4];
    const int want[3] = { 37, 5, 20 };
    for (int i = 0; i < 4; i++) LESSON_TRY(tw_block_table_init(&t[i], &pool, 64));
    for (int i = 0; i < 3; i++) LESSON_TRY(tw_block_table_reserve(&t[i], &pool, want[i]));
    printf("  a pool of %d blocks of %d positions; sequences of 37, 5 and 20 positions take\n", BLOCKS, B);
    for (int i = 0; i < 3; i++) {
        printf("    sequence %d: %d positions -> %d blocks, table [", i, want[i], t[i].n_blocks);
        for (int k = 0; k < t[i].n_blocks; k++) printf("%s%d", k ? " " : "", t[i].blocks[k]);
        printf("]\n");
    }
    // Where position 37 - 1 = 36 of sequence 0 lives: logical block 36 / 8 = 4, row 36 % 8 = 4.
    const int p = 36, logical = p / B, row = p % B, physical = t[0].blocks[logical];
    printf("  position %d of sequence 0: logical block %d, row %d, pool block %d\n", p, logical, row, physical);
    lesson_expect("block-table lookup: tw_paged_key is pool block table[p / B], row p % B",
                  tw_paged_key(&pool, &t[0], 0, p) == pool.k + ((size_t)physical * B + row) * 4);
    tw_block_table_release(&t[1], &pool);   // sequence 1 ends: its block goes back
    LESSON_TRY(tw_block_table_reserve(&t[3], &pool, 9));   // a new one reuses it
    printf("  sequence 1 ends; a new sequence of 9 positions takes blocks [%d %d]: the freed block "
           "first\n", t[3].blocks[0], t[3].blocks[1]);
    lesson_expect("a freed block is handed out again first", t[3].blocks[0] == 5);
    // The picture: which sequence owns each pool block now (-1: free).
    float owner[BLOCKS][2];
    for (int k = 0; k < BLOCKS; k++) { owner[k][0] = (float)k; owner[k][1] = -1.0f; }
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < t[i].n_blocks; k++) owner[t[i].blocks[k]][1] = (float)i;
    const char *cols[2] = { "block", "owner" };
    lesson_write_columns("pool.dat", &owner[0][0], BLOCKS, 2, cols,
                         "owner of each pool block (-1 free) after sequence 1 ended and sequence 3 arrived");
    lesson_plot("28_pool.gp", "pool.dat", "pool.png");
    const int used = BLOCKS - pool.n_free;
    printf("  held: %d blocks for %d positions (%.0f %% of their rows used); a cache padded to 64 "
           "positions per sequence would hold %d blocks' worth for the same 3 sequences\n", used,
           37 + 20 + 9, 100.0 * (37 + 20 + 9) / (used * B), 3 * 64 / B);
    for (int i = 0; i < 4; i++) { tw_block_table_release(&t[i], &pool); tw_block_table_free(&t[i]); }
    lesson_expect("every block is back on the free list", pool.n_free == BLOCKS);
    tw_paged_pool_free(&pool);
}

// ---- 4. static against continuous batching ----

static void continuous_batching(const tw_model *m, uint64_t seed) {
    enum { NREQ = 24, SLOTS = 4 };
    tw_request req[NREQ];
    tw_requests_generate(req, NREQ, seed, 2.0, 2, 12, 1, 40);
    tw_batch b;
    LESSON_TRY(tw_batch_init(&b, m, 32, 64, 16, SLOTS * 4));
    tw_request_timing t[2][NREQ];
    tw_serve_stats st[2];
    float lines[2 * NREQ][6];
    double p99[2], p50[2];
    static const char *names[2] = { "static", "continuous" };
    printf("  %d requests arriving about every 2 steps, outputs of 1..40 tokens, %d slots:\n", NREQ, SLOTS);
    for (int k = 0; k < 2; k++) {
        LESSON_TRY(tw_serve_run(&b, req, NREQ, SLOTS, (tw_batching)k, t[k], &st[k], NULL));
        double ttft[NREQ];
        for (int i = 0; i < NREQ; i++) {
            ttft[i] = t[k][i].first_step - req[i].arrival;
            float *row = lines[k * NREQ + i];
            row[0] = (float)k; row[1] = (float)i; row[2] = (float)req[i].arrival;
            row[3] = (float)t[k][i].admit_step; row[4] = (float)t[k][i].first_step; row[5] = (float)t[k][i].last_step;
        }
        p50[k] = tw_percentile(ttft, NREQ, 50);
        p99[k] = tw_percentile(ttft, NREQ, 99);
        printf("  %-10s %4ld steps, %5ld tokens; time to first token (steps): median %.0f, 99th "
               "percentile %.0f; at most %d cache blocks\n", names[k], st[k].steps, st[k].tokens,
               p50[k], p99[k], st[k].peak_blocks);
    }
    const char *cols[6] = { "continuous", "request", "arrival", "admitted", "first", "last" };
    lesson_write_columns("timeline.dat", &lines[0][0], 2 * NREQ, 6, cols,
                         "per request, in engine steps: static (continuous = 0) then continuous (1)");
    lesson_plot("28_timeline.gp", "timeline.dat", "timeline.png");
    lesson_say("A static batch runs until its longest request is done; the requests that finished "
               "earlier keep their slots, idle, and the queue waits. Continuous batching lets a "
               "finished request leave at once and puts the next one in its slot in the same step "
               "(its prompt is prefilled beside the others' decoding). The counts are in engine "
               "steps, the schedule's own clock, so they are the same on every machine.");
    lesson_expect("continuous batching finishes the stream in fewer steps", st[1].steps < st[0].steps);
    lesson_expect("continuous batching: lower 99th-percentile time to first token", p99[1] < p99[0]);
    tw_batch_free(&b);
}

// ---- 5. speculative decoding's rule, enumerated ----

static void speculative_rule(uint64_t seed) {
    enum { V = 6 };
    // p: the target's distribution, q: the draft's, each in multiples of 1/64 (exact in float).
    const float p[V] = { 20 / 64.f, 12 / 64.f, 8 / 64.f, 16 / 64.f, 0, 8 / 64.f };
    const float q[V] = { 8 / 64.f, 24 / 64.f, 8 / 64.f, 4 / 64.f, 12 / 64.f, 8 / 64.f };
    double out[V], worst = 0.0;
    tw_spec_emit_dist(out, p, q, V);
    printf("  %-6s %8s %8s %10s %14s\n", "token", "p", "q", "accept", "P(emit)");
    for (int y = 0; y < V; y++) {
        const double acc = q[y] > 0 ? fmin(1.0, p[y] / q[y]) : 0.0;
        printf("  %-6d %8.4f %8.4f %10.4f %14.12f\n", y, p[y], q[y], acc, out[y]);
        if (fabs(out[y] - p[y]) > worst) worst = fabs(out[y] - p[y]);
    }
    lesson_say("The draft proposes x from q; it is kept with probability min(1, p[x]/q[x]); on "
               "rejection a token is drawn from max(0, p - q), renormalised. Adding the two ways "
               "each token can come out gives min(p, q) + max(0, p - q) = p: the text is the "
               "target's, whatever the draft. A good draft (q close to p) is only faster: more "
               "proposals are kept per pass of the target.");
    lesson_expect_near("speculative rule: P(emit) equals p (largest difference, tolerance 1e-12)", worst, 0.0, 1e-12);
    (void)seed;
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 28 }, NULL);
    tw_model m;
    small_model(&m, a.seed);

    lesson_section("Bytes and FLOPs of one token");
    bytes_and_flops();

    lesson_section("Many sequences in one pass");
    batched_decoding(&m);

    lesson_section("Packed panels: faster sums in another order, still batch-invariant");
    packed_panels(&m);

    lesson_section("A paged KV cache: blocks, a block table, a free list");
    paged_cache();

    lesson_section("Static against continuous batching, on one stream of requests");
    continuous_batching(&m, a.seed);

    lesson_section("Speculative decoding: why the text is the target's");
    speculative_rule(a.seed);

    tw_model_free(&m);
    lesson_say("Try it: make exercise39 (a speculative proposal), make exercise40 (a paged block table)");
    return lesson_finish();
}
