// test_speculative.c: speculative decoding (lib/decode/speculative.h), in three layers.
//   - The rule on explicit distributions: the emitted token's exact distribution (enumerated in
//     double) equals the target's p for random and awkward (p, q) pairs: disjoint supports, q
//     zero where p is not, p == q, one-hot greedy pairs, each a float distribution that sums to
//     exactly 1 (multiples of 2^-12). Tolerance 1e-12: the identity min(p, q) + max(0, p - q) = p
//     is exact algebra; the only error is double rounding of sums of at most 64 terms of size
//     <= 1 (about 1e-15).
//   - The rule sampled: 200,000 draws with a seeded stream, their histogram against p by a
//     chi-square test (4 degrees of freedom, reject above 33.4: a 1e-6 chance for a correct rule,
//     so the fixed seed passing is no accident), and the same test must reject two classic wrong
//     rules (drawing the fallback from p instead of the residual; accepting with p[x] instead of p[x] / q[x]).
//   - Two models: greedy speculative decoding with a draft of the target's first layer emits
//     the same tokens as plain greedy decoding (a prefill, then one token at a time), at the
//     naive and at the best SIMD level (tolerance 0: tokens; the target's passes run the decode's
//     own arithmetic, decode/batch.h), and a draft equal to the target accepts every proposal.
// ./generate's --draft flags are tested in test_generate.c.
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "decode/speculative.h"
#include "simd/simd.h"

enum { VMAX = 64 };

// A random distribution whose floats sum to exactly 1: multiples of 2^-12 (exact in float, and so
// are their sums), a share of them zero when `zeros`.
static void random_dist(float *p, int V, tw_rng *r, int zeros) {
    int units[VMAX], left = 4096;
    for (int i = 0; i < V; i++) units[i] = 0;
    while (left > 0) {   // hand out 4096 units in random chunks to random tokens
        int i = (int)(tw_rng_uniform(r) * V) % V;
        if (zeros && i % 3 == 1) continue;   // these tokens stay at 0
        int chunk = 1 + (int)(tw_rng_uniform(r) * 300.0f);
        if (chunk > left) chunk = left;
        units[i] += chunk;
        left -= chunk;
    }
    for (int i = 0; i < V; i++) p[i] = (float)units[i] / 4096.0f;
}

static void assert_emits_p(const float *p, const float *q, int V, const char *what) {
    double out[VMAX], total = 0.0;
    tw_spec_emit_dist(out, p, q, V);
    for (int y = 0; y < V; y++) {
        ck_assert_msg(fabs(out[y] - p[y]) <= 1e-12, "%s: P(emit %d) = %.17g, p = %.17g", what, y,
                      out[y], (double)p[y]);
        total += out[y];
    }
    ck_assert_msg(fabs(total - 1.0) <= 1e-6, "%s: emitted mass %.9g", what, total);
}

START_TEST(the_emitted_token_is_distributed_as_the_target)
{
    tw_rng r;
    tw_rng_init(&r, 7);
    float p[VMAX], q[VMAX];
    for (int trial = 0; trial < 200; trial++) {
        const int V = 1 + trial % VMAX;
        random_dist(p, V, &r, trial % 2);
        random_dist(q, V, &r, trial % 3 == 0);
        assert_emits_p(p, q, V, "random p, q");
    }
    // Disjoint supports: every proposal is rejected and the residual is p itself.
    float pd[4] = { 0.5f, 0.5f, 0, 0 }, qd[4] = { 0, 0, 0.25f, 0.75f };
    assert_emits_p(pd, qd, 4, "disjoint supports");
    // p == q: every proposal is accepted.
    assert_emits_p(pd, pd, 4, "p == q");
    // Greedy: one-hot p and q, equal or not.
    float g1[3] = { 0, 1, 0 }, g2[3] = { 1, 0, 0 };
    assert_emits_p(g1, g2, 3, "one-hot, different");
    assert_emits_p(g1, g1, 3, "one-hot, equal");
}
END_TEST

START_TEST(accept_and_residual_follow_the_rule)
{
    float p[3] = { 0.2f, 0.5f, 0.3f }, q[3] = { 0.4f, 0.5f, 0.1f }, r[3];
    // x = 0: p/q = 0.5, accepted for u < 0.5 only; x = 2: p > q, always accepted; q = 0: never drawn.
    ck_assert(tw_spec_accept(p, q, 0, 0.49f) && !tw_spec_accept(p, q, 0, 0.5f));
    ck_assert(tw_spec_accept(p, q, 2, 0.999f));
    // Residual max(0, p - q) = (0, 0, 0.2) -> all on token 2.
    ck_assert_int_eq(tw_spec_residual_sample(r, p, q, 3, 0.0f), 2);
    ck_assert_int_eq(tw_spec_residual_sample(r, p, q, 3, 0.999f), 2);
    ck_assert(r[0] == 0.0f && r[1] == 0.0f && fabsf(r[2] - 1.0f) < 1e-6f);
}
END_TEST

typedef enum { RULE_RIGHT, RULE_FALLBACK_P, RULE_ACCEPT_P } rule_kind;

// Chi-square of n draws of one round of the rule (draft token from q, then accept or fall back)
// against p: the statistic sum (count - n p)^2 / (n p) over tokens with p > 0.
static double chi_square(const float *p, const float *q, int V, int n, rule_kind kind) {
    tw_sampler s;
    ck_assert_int_eq(tw_sampler_init(&s, V, 1.0f, 1.0f, 12345), TW_OK);
    long counts[VMAX] = { 0 };
    float r[VMAX];
    for (int i = 0; i < n; i++) {
        const int x = tw_sample_cumulative(q, V, tw_sampler_next_f32(&s));
        const float u = tw_sampler_next_f32(&s);
        int accept = kind == RULE_ACCEPT_P ? u < p[x] : tw_spec_accept(p, q, x, u);
        int y = x;
        if (!accept) {
            const float u2 = tw_sampler_next_f32(&s);
            y = kind == RULE_FALLBACK_P ? tw_sample_cumulative(p, V, u2)
                                        : tw_spec_residual_sample(r, p, q, V, u2);
        }
        counts[y]++;
    }
    tw_sampler_free(&s);
    double chi = 0.0;
    for (int y = 0; y < V; y++)
        if (p[y] > 0.0f) {
            const double e = (double)n * p[y];
            chi += (counts[y] - e) * (counts[y] - e) / e;
        } else {
            ck_assert_msg(counts[y] == 0 || kind != RULE_RIGHT, "token %d has p = 0 but was emitted", y);
        }
    return chi;
}

START_TEST(sampled_rounds_pass_a_chi_square_test_and_wrong_rules_fail_it)
{
    const float p[5] = { 0.10f, 0.40f, 0.05f, 0.25f, 0.20f };
    const float q[5] = { 0.30f, 0.10f, 0.30f, 0.20f, 0.10f };
    const double limit = 33.4;   // chi-square, 4 degrees of freedom: P(X > 33.4) ~ 1e-6
    const int n = 200000;
    double right = chi_square(p, q, 5, n, RULE_RIGHT);
    ck_assert_msg(right < limit, "the rule: chi-square %.1f >= %.1f", right, limit);
    double wrong1 = chi_square(p, q, 5, n, RULE_FALLBACK_P);
    ck_assert_msg(wrong1 > limit, "falling back to p: chi-square %.1f should exceed %.1f", wrong1, limit);
    // Accepting with probability p[x] instead of p[x] / q[x] (then the true residual).
    double wrong2 = chi_square(p, q, 5, n, RULE_ACCEPT_P);
    ck_assert_msg(wrong2 > limit, "accepting with p[x]: chi-square %.1f should exceed %.1f", wrong2, limit);
}
END_TEST

// A tiny random Llama-style model with `layers` layers.
static void tiny_model(tw_model *m, int layers) {
    tw_model_config c;
    ck_assert_int_eq(tw_model_config_preset(&c, "llama"), TW_OK);
    c.n_layer = layers;
    c.max_seq = 48;
    ck_assert_int_eq(tw_model_init(m, &c), TW_OK);
    tw_model_randomize(m, 99);
}

// Plain greedy decoding as ./generate runs it: the prompt seq[0 .. n_prompt) in one call, then one
// token at a time to seq[steps].
static void plain_greedy(const tw_model *m, int *seq, int n_prompt, int steps) {
    tw_model_state s;
    const int V = m->cfg.vocab;
    ck_assert_int_eq(tw_model_state_init(&s, m, n_prompt, steps), TW_OK);
    ck_assert_int_eq(tw_model_forward_next(&s, m, seq, n_prompt, 0), TW_OK);
    seq[n_prompt] = tw_argmax(s.logits + (size_t)(n_prompt - 1) * V, V);
    for (int pos = n_prompt; pos < steps; pos++) {
        ck_assert_int_eq(tw_model_forward_next(&s, m, &seq[pos], 1, pos), TW_OK);
        seq[pos + 1] = tw_argmax(s.logits, V);
    }
    tw_model_state_free(&s);
}

// Speculative greedy decoding from seq[0 .. n_prompt) to seq[steps]; returns the proposals
// accepted and made through *accepted, *proposed.
static void spec_greedy(const tw_model *m, const tw_model *draft, int k, int *seq, int n_prompt,
                        int steps, long *accepted, long *proposed) {
    tw_spec sp;
    tw_sampler s;
    ck_assert_int_eq(tw_sampler_init(&s, m->cfg.vocab, 0.0f, 1.0f, 1), TW_OK);
    ck_assert_int_eq(tw_spec_init(&sp, m, draft, k, steps, seq, n_prompt), TW_OK);
    int n = n_prompt;
    while (n <= steps) ck_assert_int_eq(tw_spec_round(&sp, &s, seq, &n), TW_OK);
    ck_assert_int_eq(n, steps + 1);
    ck_assert_int_eq(sp.emitted, steps + 1 - n_prompt);
    *accepted = sp.accepted;
    *proposed = sp.proposed;
    tw_spec_free(&sp);
    tw_sampler_free(&s);
}

// Greedy speculative decoding against plain greedy decoding on a random model, tokens compared
// exactly: drafts of the first layer and of the model itself, prompts of 1 to 3 tokens, k = 1..5.
static void greedy_equals_plain(void) {
    tw_model m, view;
    tiny_model(&m, 3);
    const int steps = 40;
    int plain[41], spec[41];
    for (int prompt = 1; prompt <= 3; prompt++) {
        for (int t = 0; t < prompt; t++) plain[t] = 3 + 5 * t;
        plain_greedy(&m, plain, prompt, steps);
        for (int k = 1; k <= 5; k += 2) {
            memcpy(spec, plain, (size_t)prompt * sizeof *spec);   // the same prompt, forced
            ck_assert_int_eq(tw_spec_layer_draft(&view, &m, 1), TW_OK);
            long acc, prop;
            spec_greedy(&m, &view, k, spec, prompt, steps, &acc, &prop);
            for (int t = 0; t <= steps; t++)
                ck_assert_msg(spec[t] == plain[t], "%s: prompt %d, k %d: token %d is %d, plain greedy %d",
                              tw_simd.level, prompt, k, t, spec[t], plain[t]);
            // The draft equal to the target accepts every proposal.
            memcpy(spec, plain, (size_t)prompt * sizeof *spec);
            spec_greedy(&m, &m, k, spec, prompt, steps, &acc, &prop);
            ck_assert_msg(acc == prop && prop > 0, "draft == target: %ld of %ld accepted", acc, prop);
            for (int t = 0; t <= steps; t++) ck_assert_int_eq(spec[t], plain[t]);
        }
    }
    ck_assert_int_eq(tw_spec_layer_draft(&view, &m, 0), TW_ERR_ARG);
    ck_assert_int_eq(tw_spec_layer_draft(&view, &m, 4), TW_ERR_ARG);
    tw_model_free(&m);
}

START_TEST(greedy_speculative_decoding_emits_the_targets_greedy_tokens)
{
    ck_assert_str_eq(tw_simd_init("naive"), "naive");
    greedy_equals_plain();
    const char *avail = tw_simd_available(), *sp = strrchr(avail, ' ');
    ck_assert_ptr_nonnull(tw_simd_init(sp ? sp + 1 : avail));   // the best level here
    greedy_equals_plain();
    ck_assert_str_eq(tw_simd_init("naive"), "naive");
}
END_TEST

Suite *suite_speculative(void) {
    Suite *s = suite_create("speculative");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_emitted_token_is_distributed_as_the_target);
    tcase_add_test(tc, accept_and_residual_follow_the_rule);
    tcase_add_test(tc, sampled_rounds_pass_a_chi_square_test_and_wrong_rules_fail_it);
    tcase_add_test(tc, greedy_speculative_decoding_emits_the_targets_greedy_tokens);
    suite_add_tcase(s, tc);
    return s;
}
