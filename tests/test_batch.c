// test_batch.c: the paged KV cache (decode/paged_cache.h) and batched decoding (decode/batch.h).
//   - The pool: blocks handed out 0, 1, 2 ..., a table grows by whole blocks, a reservation the
//     pool cannot meet takes nothing, released blocks are reused, rows read back through the
//     table are the rows written, and the gather copies them in position order.
//   - Batched decoding at the naive level, for the Llama, Qwen3 (QK-norm, halves RoPE) and GPT-2
//     (LayerNorm, learned positions, biases, GELU) styles: three sequences of different lengths
//     advanced together, with prompts prefilled as several rows of one sequence in one call,
//     give logits bit-identical to decoding each sequence alone with tw_model_forward_next
//     (tolerance 0: at the naive level every Linear layer is the same in-order loop for any
//     number of rows, and every other step is the same function on the same row).
//   - The same at the best SIMD level, also bit for bit: the batch's Linear layers run the
//     decode's own matvec sums for several rows at once (tw_linear_forward_rows; its kernels
//     alone: tests/test_matvec_rows.c), and the matvec computes each output from its weight row
//     alone.
//   - Both with scaled RoPE (YaRN on the Llama style, linear on Qwen3's halves), whose
//     frequencies and YaRN's magnitude the batch computes once per call for every row.
//   - With packed panels (decode/batch_panels.h), at every level: within 1e-5 of decoding alone
//     (the tolerance is justified at the test), the same greedy tokens, and a sequence's logits
//     bit for bit the same beside other sequences or alone in the batch.
//   - The greedy pass (tw_batch_forward_greedy), in every case above: each row's token is the
//     argmax of the logits the plain pass gives it (exactly).
//   - Bad calls: a position without a block, a post-norm model, too many rows.
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "simd/simd.h"
#include "decode/batch.h"

START_TEST(the_pool_hands_out_and_takes_back_blocks)
{
    tw_paged_pool p;
    ck_assert_int_eq(tw_paged_pool_init(&p, 2, 1, 2, 4, 3), TW_OK);   // 3 blocks of 4 positions
    ck_assert_uint_eq(tw_paged_block_bytes(&p), 2u * 2 * 4 * 1 * 2 * 4);
    tw_block_table a, b;
    ck_assert_int_eq(tw_block_table_init(&a, &p, 12), TW_OK);
    ck_assert_int_eq(tw_block_table_init(&b, &p, 12), TW_OK);
    ck_assert_int_eq(tw_block_table_reserve(&a, &p, 5), TW_OK);        // 2 blocks: 0, 1
    ck_assert_int_eq(a.n_blocks, 2);
    ck_assert(a.blocks[0] == 0 && a.blocks[1] == 1 && p.n_free == 1);
    ck_assert_int_eq(tw_block_table_reserve(&a, &p, 8), TW_OK);        // still 2 blocks
    ck_assert_int_eq(a.n_blocks, 2);
    ck_assert_int_eq(tw_block_table_reserve(&b, &p, 9), TW_ERR_NOMEM); // needs 3, 1 free
    ck_assert(b.n_blocks == 0 && p.n_free == 1);                       // nothing taken
    ck_assert_int_eq(tw_block_table_reserve(&b, &p, 13), TW_ERR_ARG);  // beyond its room
    ck_assert_int_eq(tw_block_table_reserve(&b, &p, 1), TW_OK);
    ck_assert_int_eq(b.blocks[0], 2);
    // Rows written through the table read back, and gather in position order.
    for (int pos = 0; pos < 8; pos++) {
        float *k = tw_paged_key(&p, &a, 1, pos), *v = tw_paged_value(&p, &a, 1, pos);
        k[0] = (float)pos; k[1] = 100.0f + pos; v[0] = -(float)pos; v[1] = -100.0f - pos;
    }
    float kg[16], vg[16];
    tw_paged_gather(kg, vg, &p, &a, 1, 7);
    for (int pos = 0; pos < 7; pos++) {
        ck_assert(kg[2 * pos] == (float)pos && kg[2 * pos + 1] == 100.0f + pos);
        ck_assert(vg[2 * pos] == -(float)pos && vg[2 * pos + 1] == -100.0f - pos);
    }
    // Layer 0 of the same position is another row.
    ck_assert_ptr_ne(tw_paged_key(&p, &a, 0, 3), tw_paged_key(&p, &a, 1, 3));
    tw_block_table_release(&a, &p);
    ck_assert(a.n_blocks == 0 && p.n_free == 2);
    ck_assert_int_eq(tw_block_table_reserve(&b, &p, 9), TW_OK);        // reuses a's blocks
    ck_assert_int_eq(b.n_blocks, 3);
    tw_block_table_release(&b, &p);
    ck_assert_int_eq(p.n_free, 3);
    tw_block_table_free(&a);
    tw_block_table_free(&b);
    tw_paged_pool_free(&p);
}
END_TEST

// A small random model of a preset style; "STYLE+yarn" and "STYLE+linear" scale its RoPE past a
// trained context of 8 positions (4 times: YaRN, 2 times: linear), so most positions here are
// beyond it.
static void tiny(tw_model *m, const char *style) {
    tw_model_config c;
    char base[32];
    const char *plus = strchr(style, '+');
    snprintf(base, sizeof base, "%.*s", plus ? (int)(plus - style) : (int)strlen(style), style);
    ck_assert_int_eq(tw_model_config_preset(&c, base), TW_OK);
    if (plus && strcmp(plus, "+yarn") == 0)
        c.block.attn.rope_scaling = tw_rope_scaling_make(TW_ROPE_SCALING_YARN, 4.0f, 8);
    else if (plus && strcmp(plus, "+linear") == 0)
        c.block.attn.rope_scaling = tw_rope_scaling_make(TW_ROPE_SCALING_LINEAR, 2.0f, 8);
    else
        ck_assert_ptr_null(plus);
    c.max_seq = 32;
    ck_assert_int_eq(tw_model_init(m, &c), TW_OK);
    tw_model_randomize(m, 4242);
}

enum { NSEQ = 3, STEPS = 12 };

// Runs NSEQ sequences through batched decoding and alone, comparing every position's logits
// within tol: sequence i has a prompt of 1 + 2i tokens (prefilled as rows of one call, together
// with the others' decode rows), then greedy tokens, its own length.
static double compare_batched_with_alone(const char *style, float tol, int packed) {
    tw_model m;
    tiny(&m, style);
    const int V = m.cfg.vocab;
    tw_batch b;
    ck_assert_int_eq(tw_batch_init(&b, &m, 16, 32, 4, 64), TW_OK);
    tw_batch_panels panels = { 0 };
    if (packed) {
        ck_assert_int_eq(tw_batch_panels_init(&panels, &m), TW_OK);
        b.panels = &panels;
    }
    tw_block_table t[NSEQ];
    tw_model_state alone[NSEQ];
    int seq[NSEQ][STEPS + 8], len[NSEQ], done_rows[NSEQ];
    for (int i = 0; i < NSEQ; i++) {
        ck_assert_int_eq(tw_block_table_init(&t[i], &b.pool, 32), TW_OK);
        ck_assert_int_eq(tw_model_state_init(&alone[i], &m, 1, 32), TW_OK);
        len[i] = 1 + 2 * i;
        for (int j = 0; j < len[i]; j++) seq[i][j] = (7 * i + 3 * j + 1) % V;
        done_rows[i] = 0;   // positions run so far
    }
    double worst = 0.0;
    for (int step = 0; step < STEPS; step++) {
        tw_block_table *tables[16];
        int tokens[16], pos[16], owner[16], R = 0;
        unsigned char want[16];
        for (int i = 0; i < NSEQ; i++) {
            if (step == 2 && i == 1) continue;   // a sequence may sit out a step
            for (int p = done_rows[i]; p < len[i]; p++) {   // its unrun positions: prefill or one
                tables[R] = &t[i];
                tokens[R] = seq[i][p];
                pos[R] = p;
                owner[R] = i;
                want[R] = p == len[i] - 1;   // logits of its last row only
                R++;
            }
            ck_assert_int_eq(tw_block_table_reserve(&t[i], &b.pool, len[i]), TW_OK);
        }
        // The greedy pass over the same rows first (it writes the same keys and values into the
        // same places): its tokens must be the argmax of the logits pass's.
        int next[16];
        ck_assert_int_eq(tw_batch_forward_greedy(&b, tables, tokens, pos, want, R, next), TW_OK);
        ck_assert_int_eq(tw_batch_forward(&b, tables, tokens, pos, want, R), TW_OK);
        int j = 0;
        for (int r = 0; r < R; r++) {
            const int i = owner[r];
            // Alone: one position at a time.
            ck_assert_int_eq(tw_model_forward_next(&alone[i], &m, &tokens[r], 1, pos[r]), TW_OK);
            if (!want[r]) continue;
            const float *bl = b.logits + (size_t)j * V;
            ck_assert_int_eq(next[j], tw_argmax(bl, V));
            j++;
            for (int v = 0; v < V; v++) {
                const double d = fabs((double)bl[v] - alone[i].logits[v]);
                if (d > worst) worst = d;
                ck_assert_msg(d <= tol, "%s: sequence %d position %d logit %d: batched %.9g, alone %.9g",
                              style, i, pos[r], v, bl[v], alone[i].logits[v]);
            }
            seq[i][len[i]] = tw_argmax(alone[i].logits, V);
            ck_assert_int_eq(tw_argmax(bl, V), seq[i][len[i]]);   // the same greedy token
        }
        for (int i = 0; i < NSEQ; i++)
            if (!(step == 2 && i == 1)) { done_rows[i] = len[i]; len[i]++; }
    }
    if (tol == 0.0f) ck_assert(worst == 0.0);
    for (int i = 0; i < NSEQ; i++) {
        tw_block_table_release(&t[i], &b.pool);
        tw_block_table_free(&t[i]);
        tw_model_state_free(&alone[i]);
    }
    ck_assert_int_eq(b.pool.n_free, 64);
    tw_batch_free(&b);
    tw_batch_panels_free(&panels);
    tw_model_free(&m);
    return worst;
}

START_TEST(batched_decoding_equals_decoding_alone_at_the_naive_level)
{
    ck_assert_str_eq(tw_simd_init("naive"), "naive");
    compare_batched_with_alone("llama", 0.0f, 0);
    compare_batched_with_alone("qwen3", 0.0f, 0);
    compare_batched_with_alone("gpt2", 0.0f, 0);
    compare_batched_with_alone("llama+yarn", 0.0f, 0);
    compare_batched_with_alone("qwen3+linear", 0.0f, 0);
}
END_TEST

START_TEST(batched_decoding_equals_decoding_alone_at_the_best_level)
{
    const char *avail = tw_simd_available(), *sp = strrchr(avail, ' ');
    ck_assert_ptr_nonnull(tw_simd_init(sp ? sp + 1 : avail));
    compare_batched_with_alone("llama", 0.0f, 0);
    compare_batched_with_alone("qwen3", 0.0f, 0);
    compare_batched_with_alone("gpt2", 0.0f, 0);
    compare_batched_with_alone("llama+yarn", 0.0f, 0);
    compare_batched_with_alone("qwen3+linear", 0.0f, 0);
    ck_assert_str_eq(tw_simd_init("naive"), "naive");
}
END_TEST

// With packed panels the logits are another order of the same sums, not the decode's bits. The
// worst difference measured here (llama, qwen3, gpt2 styles at the naive, AVX2 and AVX-512
// levels) is 1.2e-7 on logits of order 1; the tolerance, 1e-5, is 80 times that, and far below
// what a real fault moves (a wrong or missing weight, bias or row: 1e-2 and up). The greedy token
// must be the same.
START_TEST(packed_batched_decoding_is_decoding_alone_within_rounding)
{
    char levels[64];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        ck_assert_ptr_nonnull(tw_simd_init(lv));
        compare_batched_with_alone("llama", 1e-5f, 1);
        compare_batched_with_alone("qwen3", 1e-5f, 1);
        compare_batched_with_alone("gpt2", 1e-5f, 1);
        compare_batched_with_alone("llama+yarn", 1e-5f, 1);
        compare_batched_with_alone("qwen3+linear", 1e-5f, 1);
    }
    ck_assert_str_eq(tw_simd_init("naive"), "naive");
}
END_TEST

// Runs sequence 0 for STEPS positions in batch b, with `others` more sequences beside it (fixed
// tokens); its logits at every step go to out (STEPS, V).
static void run_beside(tw_batch *b, int others, float *out) {
    const int V = b->m->cfg.vocab;
    tw_block_table t[3];
    for (int i = 0; i <= others; i++) ck_assert_int_eq(tw_block_table_init(&t[i], &b->pool, 32), TW_OK);
    int tok0 = 1;
    for (int p = 0; p < STEPS; p++) {
        tw_block_table *tables[3];
        int tokens[3], pos[3];
        for (int i = 0; i <= others; i++) {
            ck_assert_int_eq(tw_block_table_reserve(&t[i], &b->pool, p + 1), TW_OK);
            tables[i] = &t[i];
            tokens[i] = i == 0 ? tok0 : (5 * i + 3 * p) % V;
            pos[i] = p;
        }
        ck_assert_int_eq(tw_batch_forward(b, tables, tokens, pos, NULL, others + 1), TW_OK);
        memcpy(out + (size_t)p * V, b->logits, (size_t)V * sizeof(float));
        tok0 = tw_argmax(b->logits, V);
    }
    for (int i = 0; i <= others; i++) {
        tw_block_table_release(&t[i], &b->pool);
        tw_block_table_free(&t[i]);
    }
}

// Batch-invariance: with packed panels too, a sequence's logits are bit for bit the same whether
// it shares the batch with two others or runs alone in it (tolerance 0: every step is a function
// of the row alone, the packed Linear included).
START_TEST(a_sequence_gets_the_same_bits_beside_any_others)
{
    const char *avail = tw_simd_available(), *sp = strrchr(avail, ' ');
    ck_assert_ptr_nonnull(tw_simd_init(sp ? sp + 1 : avail));
    tw_model m;
    tiny(&m, "llama");
    const int V = m.cfg.vocab;
    tw_batch b;
    tw_batch_panels panels;
    ck_assert_int_eq(tw_batch_init(&b, &m, 4, 32, 4, 64), TW_OK);
    ck_assert_int_eq(tw_batch_panels_init(&panels, &m), TW_OK);
    b.panels = &panels;
    float *alone = malloc((size_t)STEPS * V * sizeof(float));
    float *beside = malloc((size_t)STEPS * V * sizeof(float));
    ck_assert(alone && beside);
    run_beside(&b, 0, alone);
    run_beside(&b, 2, beside);
    ck_assert(memcmp(alone, beside, (size_t)STEPS * V * sizeof(float)) == 0);
    free(alone);
    free(beside);
    tw_batch_panels_free(&panels);
    tw_batch_free(&b);
    tw_model_free(&m);
    ck_assert_str_eq(tw_simd_init("naive"), "naive");
}
END_TEST

START_TEST(bad_batches_are_refused)
{
    tw_model m, post;
    tiny(&m, "llama");
    tiny(&post, "2017");
    tw_batch b;
    ck_assert_int_eq(tw_batch_init(&b, &post, 4, 16, 4, 8), TW_ERR_ARG);
    ck_assert_int_eq(tw_batch_init(&b, &m, 4, 33, 4, 8), TW_ERR_ARG);   // beyond max_seq 32
    ck_assert_int_eq(tw_batch_init(&b, &m, 4, 16, 4, 8), TW_OK);
    tw_block_table t;
    ck_assert_int_eq(tw_block_table_init(&t, &b.pool, 16), TW_OK);
    tw_block_table *tables[5] = { &t, &t, &t, &t, &t };
    int tokens[5] = { 1, 2, 3, 4, 5 }, pos[5] = { 0, 1, 2, 3, 4 };
    ck_assert_int_eq(tw_batch_forward(&b, tables, tokens, pos, NULL, 1), TW_ERR_ARG);  // no block
    ck_assert_int_eq(tw_block_table_reserve(&t, &b.pool, 4), TW_OK);
    ck_assert_int_eq(tw_batch_forward(&b, tables, tokens, pos, NULL, 4), TW_OK);
    ck_assert_int_eq(tw_batch_forward(&b, tables, tokens, pos, NULL, 5), TW_ERR_ARG);  // R > R_max
    pos[0] = 4;   // position 4 is in block 1, not reserved
    ck_assert_int_eq(tw_batch_forward(&b, tables, tokens, pos, NULL, 1), TW_ERR_ARG);
    pos[0] = 0;
    tokens[0] = m.cfg.vocab;
    ck_assert_int_eq(tw_batch_forward(&b, tables, tokens, pos, NULL, 1), TW_ERR_SHAPE);
    tw_block_table_release(&t, &b.pool);
    tw_block_table_free(&t);
    tw_batch_free(&b);
    tw_model_free(&m);
    tw_model_free(&post);
}
END_TEST

Suite *suite_batch(void) {
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_pool_hands_out_and_takes_back_blocks);
    tcase_add_test(tc, batched_decoding_equals_decoding_alone_at_the_naive_level);
    tcase_add_test(tc, batched_decoding_equals_decoding_alone_at_the_best_level);
    tcase_add_test(tc, bad_batches_are_refused);
    tcase_add_test(tc, packed_batched_decoding_is_decoding_alone_within_rounding);
    tcase_add_test(tc, a_sequence_gets_the_same_bits_beside_any_others);
    suite_add_tcase(s, tc);
    return s;
}
