// test_bpe.c: the BPE trainers (lib/tokenize/bpe_train.c, lib/tokenize/bpe_train_naive.c). All comparisons are
// exact (integers and byte strings; scores are small integers stored exactly in float), so no
// tolerance is needed anywhere in this file.
//   - fast == naive: the same pieces, in the same order, with the same counts and the same token
//     totals after every merge, on random bytes, tie-heavy repetitions, mixed scripts (Chinese,
//     Cyrillic, Greek, emoji), a C snippet, spellings of byte tokens, and story text
//     (data/stories260K_greedy.txt, and out/bpe/stories.txt when `make bpe-corpus` made it);
//   - the trainer's segmentation is the encoder's: tw_tokenizer_encode of the training text with
//     the learned vocabulary gives exactly the trainer's final token count;
//   - every NUL-free byte string round-trips through encode and decode with a learned vocabulary;
//   - the written file loads with tw_tokenizer_load and encodes identically;
//   - scores, layout and errors are as bpe_train.h documents.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "tokenize/bpe_train.h"
#include "tokenize/tokenizer.h"
#include "core/rng.h"

// ---- texts ----

typedef struct { char *s; size_t n; } text_buf;

static text_buf random_bytes(size_t n, uint64_t seed, int no_nul) {
    tw_rng r;
    tw_rng_init(&r, seed);
    text_buf t = { malloc(n + 1), n };
    ck_assert_ptr_nonnull(t.s);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)(tw_rng_next(&r) >> 56);
        // Half the bytes from a small ASCII alphabet, so pairs repeat and merges happen.
        if (tw_rng_next(&r) & 1) c = (unsigned char)("ab c\n"[tw_rng_next(&r) % 5]);
        if (no_nul && c == 0) c = 'z';
        t.s[i] = (char)c;
    }
    t.s[n] = '\0';
    return t;
}

// Concatenates `reps` copies of pieces chosen from words[] by a seeded generator.
static text_buf from_words(const char *const *words, int n_words, int reps, uint64_t seed) {
    tw_rng r;
    tw_rng_init(&r, seed);
    size_t cap = 64, n = 0;
    char *s = malloc(cap);
    for (int k = 0; k < reps; k++) {
        const char *w = words[tw_rng_next(&r) % (uint64_t)n_words];
        size_t len = strlen(w);
        while (n + len + 1 > cap) { cap *= 2; s = realloc(s, cap); ck_assert_ptr_nonnull(s); }
        memcpy(s + n, w, len);
        n += len;
    }
    s[n] = '\0';
    return (text_buf){ s, n };
}

static text_buf repeat(const char *unit, int times) {
    size_t len = strlen(unit), n = len * (size_t)times;
    char *s = malloc(n + 1);
    for (int i = 0; i < times; i++) memcpy(s + (size_t)i * len, unit, len);
    s[n] = '\0';
    return (text_buf){ s, n };
}

static text_buf read_file(const char *path, size_t max) {
    FILE *f = fopen(path, "rb");
    if (!f) return (text_buf){ NULL, 0 };
    char *s = malloc(max + 1);
    size_t n = fread(s, 1, max, f);
    fclose(f);
    s[n] = '\0';
    return (text_buf){ s, n };
}

static const char *const MIXED[] = {
    " the", " cat", " sat", " on", " the", " mat.", "\n", " 小猫", "坐在", "垫子上。", " 我们", "学习",
    " кошка", " сидит", " γάτα", " 🐱", "🐈", " the", " théâtre", " naïve", ",", " «да»", " 的", "了",
};
static const char *const TIES[] = { "ab", "ba", " ab", "abab", " ", "aab", "bb", "xy", "yx", " xyx" };
static const char *const CODE[] = {
    "int", " main(void)", " {\n", "    return", " 0;", "\n}", "\n", " for", " (int", " i", " =",
    " 0;", " i", " <", " n;", " i++)", " x[i]", " +=", " y[i];", "  ", "\t", "->", "/*", "*/",
};
// Text that spells byte tokens, with 'A' rare enough to fall back to <0x41>.
static const char *const SPELL[] = { " <0x41>a", " <0x4", "1>a", " Aa", " <unk>", " <s>", " x<0x0B>", " aa" };

// ---- comparing two trained vocabularies ----

static void assert_same_vocab(const tw_bpe_vocab *a, const tw_bpe_vocab *b, const char *what) {
    ck_assert_msg(a->vocab_size == b->vocab_size, "%s: V %d vs %d", what, a->vocab_size, b->vocab_size);
    ck_assert_int_eq(a->n_merges, b->n_merges);
    ck_assert_int_eq(a->n_chars, b->n_chars);
    ck_assert(a->tokens_before == b->tokens_before);
    for (int i = 0; i < a->vocab_size; i++) {
        ck_assert_msg(a->lengths[i] == b->lengths[i] && memcmp(a->pieces[i], b->pieces[i], (size_t)a->lengths[i]) == 0,
                      "%s: piece %d differs: '%s' vs '%s'", what, i, a->pieces[i], b->pieces[i]);
        ck_assert_msg(a->scores[i] == b->scores[i], "%s: score %d", what, i);
    }
    for (int k = 0; k < a->n_merges; k++) {
        ck_assert_msg(a->merge_count[k] == b->merge_count[k], "%s: merge %d ('%s') count %lld vs %lld",
                      what, k, a->pieces[259 + k], a->merge_count[k], b->merge_count[k]);
        ck_assert_msg(a->tokens_after[k] == b->tokens_after[k], "%s: tokens after merge %d: %lld vs %lld",
                      what, k, a->tokens_after[k], b->tokens_after[k]);
    }
}

// Trains with both trainers; both must succeed (or fail with the same status and message).
// Returns 1 and leaves the fast result in *out when they succeeded.
static int train_both(tw_bpe_vocab *out, const text_buf *t, int V, int min_char, int min_pair,
                      const char *what) {
    tw_bpe_options o = { V, min_char, min_pair };
    tw_bpe_vocab fast, naive;
    char e1[256] = "", e2[256] = "";
    tw_status s1 = tw_bpe_train(&fast, t->s, t->n, &o, e1, sizeof e1);
    tw_status s2 = tw_bpe_train_naive(&naive, t->s, t->n, &o, e2, sizeof e2);
    ck_assert_msg(s1 == s2, "%s: fast says %d (%s), naive %d (%s)", what, s1, e1, s2, e2);
    ck_assert_msg(strcmp(e1, e2) == 0, "%s: messages differ: '%s' vs '%s'", what, e1, e2);
    if (s1 != TW_OK) { fprintf(stderr, "%s: %s\n", what, e1); return 0; }
    assert_same_vocab(&fast, &naive, what);
    tw_bpe_vocab_free(&naive);
    *out = fast;
    return 1;
}

// Encodes text (no BOS/EOS); returns the count. ids is malloc'd into *ids_out if not NULL.
static int encode_count(const tw_tokenizer *tok, const char *text, int **ids_out) {
    int max = (int)tw_tokenizer_max_tokens(text), n = -1;
    int *ids = malloc((size_t)max * sizeof *ids);
    ck_assert_int_eq(tw_tokenizer_encode(tok, ids, &n, max, text, 0, 0), TW_OK);
    if (ids_out) *ids_out = ids;
    else free(ids);
    return n;
}

// The encoder's output on the training text has exactly the trainer's final token count.
static void assert_encoder_agrees(const tw_bpe_vocab *v, const text_buf *t) {
    tw_tokenizer tok;
    ck_assert_int_eq(tw_bpe_vocab_to_tokenizer(&tok, v), TW_OK);
    long long want = v->n_merges ? v->tokens_after[v->n_merges - 1] : v->tokens_before;
    int got = encode_count(&tok, t->s, NULL);
    ck_assert_msg(got == want, "encoder gives %d tokens, the trainer ended with %lld", got, want);
    tw_tokenizer_free(&tok);
}

// ---- fast == naive ----

START_TEST(fast_equals_naive_on_random_bytes)
{
    // NUL bytes included: they become byte tokens like invalid UTF-8.
    for (int seed = 1; seed <= 4; seed++) {
        text_buf t = random_bytes(3000, (uint64_t)seed, 0);
        tw_bpe_vocab v;
        char what[32];
        snprintf(what, sizeof what, "random seed %d", seed);
        ck_assert(train_both(&v, &t, 300, 20, 2, what));
        tw_bpe_vocab_free(&v);
        free(t.s);
    }
}
END_TEST

START_TEST(fast_equals_naive_on_ties)
{
    // Repetitions make many pairs equally frequent: only the tie rule decides the order.
    text_buf reps[] = { repeat("ab", 300), repeat("a", 257), repeat(" ab ba", 101), repeat("abcabcab ", 77),
                        from_words(TIES, 10, 900, 7) };
    const int V[] = { 267, 266, 266, 268, 300 };
    for (int k = 0; k < 5; k++) {
        tw_bpe_vocab v;
        char what[32];
        snprintf(what, sizeof what, "ties %d", k);
        ck_assert(train_both(&v, &reps[k], V[k], 1, 2, what));
        assert_encoder_agrees(&v, &reps[k]);
        tw_bpe_vocab_free(&v);
        free(reps[k].s);
    }
}
END_TEST

START_TEST(fast_equals_naive_on_mixed_scripts_and_code)
{
    text_buf mixed = from_words(MIXED, 24, 1500, 3), code = from_words(CODE, 24, 1500, 5),
             spell = from_words(SPELL, 8, 800, 9);
    tw_bpe_vocab v;
    ck_assert(train_both(&v, &mixed, 420, 1, 2, "mixed scripts"));
    assert_encoder_agrees(&v, &mixed);
    tw_bpe_vocab_free(&v);
    ck_assert(train_both(&v, &code, 400, 1, 2, "C code"));
    assert_encoder_agrees(&v, &code);
    tw_bpe_vocab_free(&v);
    // 'A' (about 100 times) is too rare to be a character (min_char_count 150), so it falls back
    // to <0x41>, while '<', '0', 'x', '4', '1', '>' (about 200 times or more) are characters.
    ck_assert(train_both(&v, &spell, 280, 150, 2, "byte token spellings"));
    for (int i = 259; i < 259 + v.n_merges; i++)
        ck_assert_msg(strstr(v.pieces[i], "<0x41>") == NULL && strstr(v.pieces[i], "<0x0B>") == NULL,
                      "learned '%s', which spells a byte token", v.pieces[i]);
    assert_encoder_agrees(&v, &spell);
    tw_bpe_vocab_free(&v);
    free(mixed.s); free(code.s); free(spell.s);
}
END_TEST

START_TEST(fast_equals_naive_on_stories)
{
    text_buf t = read_file("data/stories260K_greedy.txt", 1 << 20);
    ck_assert_ptr_nonnull(t.s);
    tw_bpe_vocab v;
    ck_assert(train_both(&v, &t, 330, 1, 2, "stories260K_greedy.txt"));
    assert_encoder_agrees(&v, &t);
    tw_bpe_vocab_free(&v);
    free(t.s);
    // The larger sampled corpus, when `make bpe-corpus` has written it (the first 24 KB: the naive
    // trainer is quadratic).
    text_buf big = read_file("out/bpe/stories.txt", 24 << 10);
    if (big.s && big.n > 0) {
        ck_assert(train_both(&v, &big, 512, 1, 2, "out/bpe/stories.txt"));
        assert_encoder_agrees(&v, &big);
        tw_bpe_vocab_free(&v);
    }
    free(big.s);
}
END_TEST

START_TEST(every_prefix_of_the_merges_is_what_the_encoder_does)
{
    // Training to a smaller size learns the first merges of a larger run (the steps do not depend
    // on the target), and at every size the encoder's token count on the training text is the
    // trainer's count after that many merges: the learned scores replay the merges in order.
    text_buf t = from_words(MIXED, 24, 700, 31);
    tw_bpe_options o = { 400, 1, 2 };   // the most this text supports
    tw_bpe_vocab big;
    char err[256];
    ck_assert_msg(tw_bpe_train(&big, t.s, t.n, &o, err, sizeof err) == TW_OK, "%s", err);
    const int base = tw_bpe_base_size(t.s, t.n, 1);
    ck_assert_int_eq(base, 259 + big.n_chars);
    for (int k = 1; k <= big.n_merges; k += 13) {
        tw_bpe_options ok = { base + k, 1, 2 };
        tw_bpe_vocab v;
        ck_assert_msg(tw_bpe_train(&v, t.s, t.n, &ok, err, sizeof err) == TW_OK, "%s", err);
        for (int j = 0; j < k; j++) ck_assert_str_eq(v.pieces[259 + j], big.pieces[259 + j]);
        tw_tokenizer tok;
        ck_assert_int_eq(tw_bpe_vocab_to_tokenizer(&tok, &v), TW_OK);
        int got = encode_count(&tok, t.s, NULL);
        ck_assert_msg(got == big.tokens_after[k - 1], "after %d merges: encoder %d tokens, trainer %lld",
                      k, got, big.tokens_after[k - 1]);
        tw_tokenizer_free(&tok);
        tw_bpe_vocab_free(&v);
    }
    tw_bpe_vocab_free(&big);
    free(t.s);
}
END_TEST

// ---- round trips ----

static void assert_round_trip(const tw_tokenizer *tok, const char *text) {
    int *ids;
    int n = encode_count(tok, text, &ids);
    size_t len = strlen(text);
    char *back = malloc(len + 8);
    size_t m = 0;
    for (int i = 0; i < n; i++) {
        const char *p = tw_tokenizer_decode(tok, i ? ids[i - 1] : TW_TOK_BOS, ids[i]);
        ck_assert_ptr_nonnull(p);
        size_t pl = strlen(p);
        if (pl == 0 && ids[i] >= 3 && ids[i] < 259) pl = 1;   // the byte token for NUL (never here)
        ck_assert_msg(m + pl <= len, "decoded text is longer than the input");
        memcpy(back + m, p, pl);
        m += pl;
    }
    ck_assert_msg(m == len && memcmp(back, text, len) == 0, "round trip failed for a %zu-byte text", len);
    free(back);
    free(ids);
}

START_TEST(every_byte_string_round_trips)
{
    // A vocabulary learned on mixed scripts and on byte-token spellings, then random byte strings
    // (no NUL: the encoder reads C strings), the training texts and edge cases.
    text_buf train = from_words(SPELL, 8, 600, 11), mixed = from_words(MIXED, 24, 600, 12);
    size_t n = train.n + mixed.n;
    char *both = malloc(n + 1);
    memcpy(both, train.s, train.n);
    memcpy(both + train.n, mixed.s, mixed.n + 1);
    tw_bpe_options o = { 400, 3, 2 };
    tw_bpe_vocab v;
    char err[256];
    ck_assert_msg(tw_bpe_train(&v, both, n, &o, err, sizeof err) == TW_OK, "%s", err);
    tw_tokenizer tok;
    ck_assert_int_eq(tw_bpe_vocab_to_tokenizer(&tok, &v), TW_OK);
    assert_round_trip(&tok, both);
    const char *edge[] = { "", " ", "  ", "a", " a ", "\xe5\xb0", "\x80\x80 \xff", "<0x41>", " <0x41>a",
                           "\n<s>\n", "A", "Aa<0x41>a", "\xf0\x9f\x90\xb1\xf0\x9f", "\xc3\xa9\xcc\x81" };
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) assert_round_trip(&tok, edge[i]);
    for (int seed = 1; seed <= 200; seed++) {
        text_buf r = random_bytes(1 + (size_t)seed * 3, (uint64_t)seed + 1000, 1);
        assert_round_trip(&tok, r.s);
        free(r.s);
    }
    tw_tokenizer_free(&tok);
    tw_bpe_vocab_free(&v);
    free(both); free(train.s); free(mixed.s);
}
END_TEST

// ---- layout, scores, file ----

START_TEST(layout_and_scores_follow_tok512)
{
    text_buf t = from_words(MIXED, 24, 800, 21);
    tw_bpe_options o = { 380, 1, 2 };
    tw_bpe_vocab v;
    char err[256];
    ck_assert_msg(tw_bpe_train(&v, t.s, t.n, &o, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(v.vocab_size, 380);
    ck_assert_int_eq(259 + v.n_merges + v.n_chars, 380);
    ck_assert_str_eq(v.pieces[0], "<unk>");
    ck_assert_str_eq(v.pieces[1], "\n<s>\n");
    ck_assert_str_eq(v.pieces[2], "\n</s>\n");
    ck_assert_str_eq(v.pieces[3 + 0x41], "<0x41>");
    for (int i = 0; i < 259; i++) ck_assert(v.scores[i] == TW_BPE_NO_MERGE_SCORE);
    ck_assert_str_eq(v.pieces[259 + v.n_merges], " ");   // the first character
    for (int i = 259; i < 380; i++) ck_assert(v.scores[i] == -(float)(i - 259));   // -k, then below
    for (int k = 0; k < v.n_merges; k++) {
        // A learned piece is the concatenation of its recorded split, and has no inner space.
        char buf[256];
        snprintf(buf, sizeof buf, "%s%s", v.pieces[v.merge_left[k]], v.pieces[v.merge_right[k]]);
        ck_assert_str_eq(buf, v.pieces[259 + k]);
        ck_assert_ptr_null(strchr(v.pieces[259 + k] + 1, ' '));
        // Counts never increase from one merge to the next.
        if (k) ck_assert(v.merge_count[k] <= v.merge_count[k - 1]);
    }

    // The written file loads as a llama2.c tokenizer and encodes the same way.
    char path[64];
    snprintf(path, sizeof path, "/tmp/tw_bpe_%d.bin", (int)getpid());
    ck_assert_int_eq(tw_bpe_vocab_write(&v, path), TW_OK);
    tw_tokenizer from_file, in_mem;
    ck_assert_msg(tw_tokenizer_load(&from_file, path, 380, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(tw_bpe_vocab_to_tokenizer(&in_mem, &v), TW_OK);
    ck_assert_int_eq(from_file.max_token_length, v.max_token_length);
    int *a, *b;
    int na = encode_count(&from_file, t.s, &a), nb = encode_count(&in_mem, t.s, &b);
    ck_assert_int_eq(na, nb);
    ck_assert(memcmp(a, b, (size_t)na * sizeof *a) == 0);
    free(a); free(b);
    tw_tokenizer_free(&from_file);
    tw_tokenizer_free(&in_mem);
    remove(path);
    tw_bpe_vocab_free(&v);
    free(t.s);
}
END_TEST

// ---- errors ----

START_TEST(bad_requests_fail_with_a_message)
{
    tw_bpe_vocab v;
    char err[256] = "";
    tw_bpe_options o = { 300, 1, 2 };
    ck_assert_int_eq(tw_bpe_train(&v, "", 0, &o, err, sizeof err), TW_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err, "empty"));
    ck_assert_ptr_null(v.pieces);
    // Base: 259 + " " + 26 letters = 286 > 280.
    const char *abc = "abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz";
    o.vocab_size = 280;
    ck_assert_int_eq(tw_bpe_train(&v, abc, strlen(abc), &o, err, sizeof err), TW_ERR_ARG);
    ck_assert_msg(strstr(err, "smaller than") && strstr(err, "286"), "%s", err);
    // " abab" (dummy prefix): pairs " a", "ab", "ba"; only "ab" occurs twice; after it, nothing
    // repeats, so the base (262) plus one piece is all this text supports.
    o.vocab_size = 300;
    ck_assert_int_eq(tw_bpe_train(&v, "abab", 4, &o, err, sizeof err), TW_ERR_ARG);
    ck_assert_msg(strstr(err, "at most 263"), "%s", err);
    ck_assert_int_eq(tw_bpe_train_naive(&v, "abab", 4, &o, err, sizeof err), TW_ERR_ARG);
    ck_assert_msg(strstr(err, "at most 263"), "%s", err);
    o.vocab_size = 263;
    ck_assert_int_eq(tw_bpe_train(&v, "abab", 4, &o, err, sizeof err), TW_OK);
    ck_assert_str_eq(v.pieces[259], "ab");
    tw_bpe_vocab_free(&v);
}
END_TEST

Suite *suite_bpe(void) {
    Suite *s = suite_create("bpe");
    TCase *tc = tcase_create("train");
    tcase_set_timeout(tc, 120);   // the naive trainer under the sanitizers; not a timing test
    tcase_add_test(tc, fast_equals_naive_on_random_bytes);
    tcase_add_test(tc, fast_equals_naive_on_ties);
    tcase_add_test(tc, fast_equals_naive_on_mixed_scripts_and_code);
    tcase_add_test(tc, fast_equals_naive_on_stories);
    tcase_add_test(tc, every_prefix_of_the_merges_is_what_the_encoder_does);
    tcase_add_test(tc, every_byte_string_round_trips);
    tcase_add_test(tc, layout_and_scores_follow_tok512);
    tcase_add_test(tc, bad_requests_fail_with_a_message);
    suite_add_tcase(s, tc);
    return s;
}
