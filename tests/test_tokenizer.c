// test_tokenizer.c: the llama2.c tokenizer (lib/tokenize/tokenizer.c) on the real tok512.bin: fixed token
// ids (from the issue, and from the independent Python BPE in tests/golden/gen_stories.py), byte
// fallback, encode/decode round trips, decoding rules, and rejection of malformed files.
// Needs data/models/tok512.bin (`make model`; `make test` fetches it).
#define _POSIX_C_SOURCE 200809L   // getpid, mkdir
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include "tokenize/tokenizer.h"

#define TOK_PATH "data/models/tok512.bin"

static tw_tokenizer load_tok512(void) {
    tw_tokenizer t;
    char err[256] = "";
    tw_status st = tw_tokenizer_load(&t, TOK_PATH, 512, err, sizeof err);
    ck_assert_msg(st == TW_OK, "%s (run `make model`)", err);
    return t;
}

static int encode(const tw_tokenizer *t, const char *text, int *ids, int cap) {
    int n = -1;
    ck_assert_int_eq(tw_tokenizer_encode(t, ids, &n, cap, text, 1, 0), TW_OK);
    return n;
}

START_TEST(once_upon_a_time_encodes_as_llama2c_does)
{
    tw_tokenizer t = load_tok512();
    int ids[64];
    const int want[] = { 1, 403, 407, 261, 378 };   // from the issue (llama2.c's output)
    int n = encode(&t, "Once upon a time", ids, 64);
    ck_assert_int_eq(n, 5);
    for (int i = 0; i < 5; i++) ck_assert_int_eq(ids[i], want[i]);
    tw_tokenizer_free(&t);
}
END_TEST

// Bits per byte divide a loss by the bytes of text its tokens stand for: those bytes must be the
// text's own (the dummy space after BOS not counted, a byte token one byte, BOS between two
// texts none), and a split range must add up. Exact counts: no tolerance.
START_TEST(decoded_bytes_count_the_texts_own_bytes)
{
    tw_tokenizer t = load_tok512();
    static const char *const TEXTS[2] = { "Once upon a time, Zoe had a caf\xc3\xa9.\nThe end.",
                                          "Tim saw \xe2\x98\x95 and laughed." };
    int ids[256], n = 0, m = 0;
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(tw_tokenizer_encode(&t, ids + n, &m, 256 - n, TEXTS[k], 1, 0), TW_OK);
        n += m;
    }
    const long want = (long)(strlen(TEXTS[0]) + strlen(TEXTS[1]));
    ck_assert_int_eq(tw_tokenizer_decoded_bytes(&t, ids, 0, n), want);
    ck_assert_int_eq(tw_tokenizer_decoded_bytes(&t, ids, 1, n), want);   // ids[0] is BOS: no bytes
    for (int k = 0; k <= n; k++)
        ck_assert_int_eq(tw_tokenizer_decoded_bytes(&t, ids, 0, k) + tw_tokenizer_decoded_bytes(&t, ids, k, n), want);
    tw_tokenizer_free(&t);
}
END_TEST

START_TEST(empty_prompt_is_just_bos)
{
    tw_tokenizer t = load_tok512();
    int ids[8];
    ck_assert_int_eq(encode(&t, "", ids, 8), 1);
    ck_assert_int_eq(ids[0], TW_TOK_BOS);
    tw_tokenizer_free(&t);
}
END_TEST

START_TEST(two_leading_spaces_stay_two_tokens_after_the_prefix)
{
    tw_tokenizer t = load_tok512();
    int ids[64];
    int n = encode(&t, "  two leading spaces", ids, 64);
    ck_assert_int_ge(n, 4);
    ck_assert_int_eq(ids[1], 410);   // the dummy prefix " "
    ck_assert_int_eq(ids[2], 410);   // first leading space
    ck_assert_str_eq(t.vocab[ids[3]], " t");   // the second space merged into the next word
    tw_tokenizer_free(&t);
}
END_TEST

START_TEST(code_point_missing_from_vocab_falls_back_to_bytes)
{
    tw_tokenizer t = load_tok512();
    int ids[32];
    ck_assert_int_eq(tw_tokenizer_lookup(&t, "\xe4\xb8\xad"), -1);   // U+4E2D is not in tok512
    int n = encode(&t, "\xe4\xb8\xad", ids, 32);
    // BOS, dummy prefix, then one token per UTF-8 byte: id = byte + 3.
    ck_assert_int_eq(n, 5);
    ck_assert_int_eq(ids[2], 0xE4 + 3);
    ck_assert_int_eq(ids[3], 0xB8 + 3);
    ck_assert_int_eq(ids[4], 0xAD + 3);
    ck_assert_str_eq(tw_tokenizer_decode(&t, ids[1], ids[2]), "\xe4");
    tw_tokenizer_free(&t);
}
END_TEST

// Keep in step with TOKEN_CASES in tests/golden/gen_stories.py.
static const char *const TOKEN_CASES[] = { "Once upon a time", "", "  two leading spaces",
                                           "caf\xc3\xa9 \xe4\xb8\xad", "Lily's ball\nwas red.",
                                           "The end!" };

START_TEST(token_ids_match_the_python_reference)
{
    tw_tokenizer t = load_tok512();
    char name[64];
    snprintf(name, sizeof name, "stories/tok_case%d", _i);
    tw_npy want = tt_load(name, -1);
    int ids[128];
    int n = encode(&t, TOKEN_CASES[_i], ids, 128);
    ck_assert_int_eq(n, (int)want.count);
    for (int i = 0; i < n; i++)
        ck_assert_msg(ids[i] == ((int32_t *)want.data)[i], "case %d token %d: got %d want %d",
                      _i, i, ids[i], ((int32_t *)want.data)[i]);
    tw_npy_free(&want);
    tw_tokenizer_free(&t);
}
END_TEST

// decode(tokens after BOS) concatenated gives the text back: the dummy prefix is the space the
// leading-space rule removes after BOS.
START_TEST(decode_of_encode_round_trips)
{
    static const char *const texts[] = { "Once upon a time", "  two leading spaces",
                                         "caf\xc3\xa9 \xe4\xb8\xad!", "a\nb\tc", "x", "Lily's ball." };
    tw_tokenizer t = load_tok512();
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        int ids[128];
        int n = encode(&t, texts[k], ids, 128);
        char out[256] = "";
        for (int i = 1; i < n; i++) {
            const char *piece = tw_tokenizer_decode(&t, ids[i - 1], ids[i]);
            ck_assert_ptr_nonnull(piece);
            strcat(out, piece);
        }
        ck_assert_str_eq(out, texts[k]);
    }
    tw_tokenizer_free(&t);
}
END_TEST

START_TEST(decode_rules)
{
    tw_tokenizer t = load_tok512();
    ck_assert_str_eq(tw_tokenizer_decode(&t, TW_TOK_BOS, 403), "Once");   // space dropped after BOS
    ck_assert_str_eq(tw_tokenizer_decode(&t, 5, 403), " Once");           // kept elsewhere
    ck_assert_str_eq(tw_tokenizer_decode(&t, 5, '\n' + 3), "\n");         // <0x0A> is a newline
    ck_assert_ptr_null(tw_tokenizer_decode(&t, 5, 512));
    ck_assert_int_eq(tw_tokenizer_piece_printable("\n"), 1);
    ck_assert_int_eq(tw_tokenizer_piece_printable("a"), 1);
    ck_assert_int_eq(tw_tokenizer_piece_printable("\x01"), 0);   // lone control byte: skipped
    ck_assert_int_eq(tw_tokenizer_piece_printable(""), 0);
    ck_assert_int_eq(tw_tokenizer_piece_printable("\xe4\xb8"), 1);
    ck_assert_int_eq(tw_tokenizer_encode(&t, (int[4]){ 0 }, &(int){ 0 }, 4, "abcd", 1, 0), TW_ERR_ARG);
    tw_tokenizer_free(&t);
}
END_TEST

// ---- the heap encoder against the naive one ----

// Encodes text with tw_tokenizer_encode and tw_tokenizer_encode_naive and fails at the first
// differing id, naming what the text was.
static void expect_same_as_naive(const tw_tokenizer *t, const char *text, int bos, int eos,
                                 const char *what) {
    int cap = (int)tw_tokenizer_max_tokens(text);
    int *fast = malloc((size_t)cap * sizeof *fast), *naive = malloc((size_t)cap * sizeof *naive);
    ck_assert(fast != NULL && naive != NULL);
    int nf = -1, nn = -1;
    ck_assert_int_eq(tw_tokenizer_encode(t, fast, &nf, cap, text, bos, eos), TW_OK);
    ck_assert_int_eq(tw_tokenizer_encode_naive(t, naive, &nn, cap, text, bos, eos), TW_OK);
    ck_assert_msg(nf == nn, "%s (%zu bytes): %d tokens, the naive encoder %d", what, strlen(text), nf, nn);
    for (int i = 0; i < nf; i++)
        ck_assert_msg(fast[i] == naive[i], "%s (%zu bytes): token %d is %d, the naive encoder's %d",
                      what, strlen(text), i, fast[i], naive[i]);
    free(fast);
    free(naive);
}

// The words (with their trailing punctuation) of data/stories260K_greedy.txt, in a malloc'd
// array of pointers into *text (freed by the caller, with the array).
static char **story_words(char **text, int *n_words) {
    *text = (char *)tt_read_file("data/stories260K_greedy.txt", NULL);
    int cap = 1024, n = 0;
    char **w = malloc((size_t)cap * sizeof *w);
    for (char *tok = strtok(*text, " \n"); tok && n < cap; tok = strtok(NULL, " \n")) w[n++] = tok;
    ck_assert_int_gt(n, 50);
    *n_words = n;
    return w;
}

// A line of about len bytes: the story's words drawn at random, joined by single spaces.
static char *story_line(size_t len, uint64_t seed) {
    char *text;
    int n_words;
    char **w = story_words(&text, &n_words);
    tw_rng r;
    tw_rng_init(&r, seed);
    char *line = malloc(len + 64);
    size_t at = 0;
    while (at < len) {
        const char *word = w[tw_rng_next(&r) % (uint64_t)n_words];
        size_t wl = strlen(word);
        if (at + wl + 1 > len + 63) break;
        if (at > 0) line[at++] = ' ';
        memcpy(line + at, word, wl);
        at += wl;
    }
    line[at] = '\0';
    free(w);
    free(text);
    return line;
}

// Code points of 1 to 4 bytes, some in tok512 and some not (byte fallback).
static const char *const CODE_POINTS[] = { "a", "e", " ", "\xc3\xa9", "\xc3\xb1", "\xe4\xb8\xad",
                                           "\xe2\x80\x94", "\xf0\x9f\x98\x80", "\n", "'" };

// Case _i of a family chosen by _i % 5, each text from its own seed:
//   0 random bytes 1..255 (invalid UTF-8, stray continuation bytes, control characters);
//   1 a small alphabet ("ab e"), so merges pile up; 2 runs of one repeated character;
//   3 real story text (the story's words reshuffled); 4 random UTF-8 code points.
// BOS and EOS vary with the case number too.
START_TEST(heap_encoder_equals_naive_on_many_texts)
{
    tw_tokenizer t = load_tok512();
    tw_rng r;
    tw_rng_init(&r, 1000u + (uint64_t)_i);
    const size_t len = 1 + tw_rng_next(&r) % 600;
    char *text = NULL;
    char what[64];
    switch (_i % 5) {
    case 0:
        text = malloc(len + 1);
        for (size_t k = 0; k < len; k++) text[k] = (char)(1 + tw_rng_next(&r) % 255);
        text[len] = '\0';
        snprintf(what, sizeof what, "random bytes, case %d", _i);
        break;
    case 1:
        text = malloc(len + 1);
        for (size_t k = 0; k < len; k++) text[k] = "ab e"[tw_rng_next(&r) % 4];
        text[len] = '\0';
        snprintf(what, sizeof what, "alphabet 'ab e', case %d", _i);
        break;
    case 2: {
        static const char runs[] = "a e.\n";
        text = malloc(len + 1);
        for (size_t k = 0; k < len; k++) text[k] = runs[(_i / 5) % 5];
        text[len] = '\0';
        snprintf(what, sizeof what, "a run of '%c', case %d", runs[(_i / 5) % 5], _i);
        break;
    }
    case 3:
        text = story_line(len, 2000u + (uint64_t)_i);
        snprintf(what, sizeof what, "story words, case %d", _i);
        break;
    default:
        text = malloc(4 * len + 1);
        text[0] = '\0';
        for (size_t k = 0, at = 0; k < len; k++) {
            const char *cp = CODE_POINTS[tw_rng_next(&r) % (sizeof CODE_POINTS / sizeof CODE_POINTS[0])];
            strcpy(text + at, cp);
            at += strlen(cp);
        }
        snprintf(what, sizeof what, "UTF-8 code points, case %d", _i);
        break;
    }
    expect_same_as_naive(&t, text, _i % 2, (_i / 2) % 2, what);
    free(text);
    tw_tokenizer_free(&t);
}
END_TEST

// A medium line (16 KB of story words, thousands of merges) gives the naive encoder's ids; a
// 300 KB line, too long for the naive one in a test, encodes and decodes back to itself. (The
// speed is shown by `make bench-encode`, not timed here.)
START_TEST(long_lines_encode_as_the_naive_encoder_does)
{
    tw_tokenizer t = load_tok512();
    char *medium = story_line(16 * 1024, 7);
    expect_same_as_naive(&t, medium, 1, 0, "16 KB of story words");
    free(medium);

    char *line = story_line(300 * 1024, 8);
    const size_t len = strlen(line);
    int cap = (int)tw_tokenizer_max_tokens(line), n = -1;
    int *ids = malloc((size_t)cap * sizeof *ids);
    ck_assert_int_eq(tw_tokenizer_encode(&t, ids, &n, cap, line, 1, 0), TW_OK);
    ck_assert_int_lt(n, (int)(len / 2));   // tok512 on English: about 3.5 bytes per token
    char *back = malloc(len + 1);
    size_t at = 0;
    for (int i = 1; i < n; i++) {
        const char *piece = tw_tokenizer_decode(&t, ids[i - 1], ids[i]);
        size_t pl = strlen(piece);
        ck_assert_uint_le(at + pl, len);
        memcpy(back + at, piece, pl);
        at += pl;
    }
    ck_assert_uint_eq(at, len);
    ck_assert(memcmp(back, line, len) == 0);
    free(back);
    free(ids);
    free(line);
    tw_tokenizer_free(&t);
}
END_TEST

// ---- malformed files ----

// Writes bytes to a per-process temporary file under out/ and returns its path.
static const char *write_temp(const void *bytes, size_t n, char *path, size_t len) {
    snprintf(path, len, "out/test_tokenizer_%ld.bin", (long)getpid());
    mkdir("out", 0777);   // may exist already
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
    return path;
}

static unsigned char *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n + 16);
    ck_assert_uint_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void expect_rejected(const void *bytes, size_t n, int vocab, const char *needle) {
    char path[128], err[512] = "";
    write_temp(bytes, n, path, sizeof path);
    tw_tokenizer t;
    tw_status st = tw_tokenizer_load(&t, path, vocab, err, sizeof err);
    remove(path);
    ck_assert_int_eq(st, TW_ERR_FORMAT);
    ck_assert_msg(strstr(err, path) != NULL && strstr(err, needle) != NULL,
                  "message '%s' should name the file and say '%s'", err, needle);
    ck_assert_ptr_null(t.vocab);
}

START_TEST(malformed_tokenizer_files_are_rejected_with_a_reason)
{
    size_t n;
    unsigned char *b = read_all(TOK_PATH, &n);
    expect_rejected(b, n - 3, 512, "past the end");           // truncated inside a token
    expect_rejected(b, 2, 512, "too short");                  // not even the header
    expect_rejected(b, n, 600, "ends inside");                // fewer tokens than the model needs
    expect_rejected(b, n, 500, "follow the last token");      // more tokens than the model has
    unsigned char *c = malloc(n);
    memcpy(c, b, n);
    int32_t big = 1000;                                       // token 0's length past the end
    memcpy(c + 8, &big, 4);
    expect_rejected(c, n, 512, "length 1000");
    int32_t neg = -5;
    memcpy(c + 8, &neg, 4);
    expect_rejected(c, n, 512, "length -5");
    int32_t zero = 0;                                         // max_token_length 0
    memcpy(c, b, n);
    memcpy(c, &zero, 4);
    expect_rejected(c, n, 512, "max_token_length");
    free(c);
    free(b);

    tw_tokenizer t;
    char err[256] = "";
    ck_assert_int_eq(tw_tokenizer_load(&t, "data/models/no-such-file.bin", 512, err, sizeof err), TW_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "no-such-file.bin"));
}
END_TEST

// A vocabulary built for ties: byte tokens, " ", "a", "b", "c", and merges whose scores take only
// three values (so different pairs tie and the leftmost must win), plus two pairs whose scores
// (-1e10 and -inf) say "never merge". The heap encoder must equal the naive one on random texts
// over "abc " with every tie.
START_TEST(heap_encoder_equals_naive_when_scores_tie)
{
    static const struct { const char *s; float score; } PIECES[] = {
        { " ", 0 }, { "a", 0 }, { "b", 0 }, { "c", 0 },
        { "aa", 1 }, { "ab", 2 }, { "ba", 2 }, { "bc", 1 }, { "cb", 2 }, { "ac", 0 }, { " a", 1 },
        { "a ", 2 }, { "aaa", 2 }, { "aba", 1 }, { "bab", 2 }, { "abc", 0 }, { "cab", 2 },
        { "aab", 1 }, { "abab", 2 }, { "  ", 1 }, { "aaaa", 0 }, { " ab", 2 },
        { "ca", -1e10f }, { "cc", -INFINITY },
    };
    const int n_pieces = (int)(sizeof PIECES / sizeof PIECES[0]), V = 3 + 256 + n_pieces;
    unsigned char *file = malloc(4 + (size_t)V * (8 + 8)), *p = file;
    int32_t max_len = 6;
    memcpy(p, &max_len, 4); p += 4;
    for (int id = 0; id < V; id++) {
        char name[8];
        float score = -100.0f;
        const char *s = name;
        if (id < 3) s = (const char *[]){ "<unk>", "<s>", "</s>" }[id];
        else if (id < 259) snprintf(name, sizeof name, "<0x%02X>", id - 3);
        else { s = PIECES[id - 259].s; score = PIECES[id - 259].score; }
        int32_t len = (int32_t)strlen(s);
        memcpy(p, &score, 4);
        memcpy(p + 4, &len, 4);
        memcpy(p + 8, s, (size_t)len);
        p += 8 + len;
    }
    char path[128], err[256] = "";
    write_temp(file, (size_t)(p - file), path, sizeof path);
    free(file);
    tw_tokenizer t;
    tw_status st = tw_tokenizer_load(&t, path, V, err, sizeof err);
    remove(path);
    ck_assert_msg(st == TW_OK, "%s", err);

    tw_rng r;
    tw_rng_init(&r, 31);
    char text[257], what[64];
    for (int k = 0; k < 2000; k++) {
        size_t len = tw_rng_next(&r) % 256;
        for (size_t i = 0; i < len; i++) text[i] = "abc "[tw_rng_next(&r) % (k % 2 ? 4 : 2)];
        text[len] = '\0';
        snprintf(what, sizeof what, "tied scores, text %d", k);
        expect_same_as_naive(&t, text, k % 3 == 0, 0, what);
    }
    // "ca" (-1e10) and "cc" (-inf) never merge: llama2.c's search starts at -1e10.
    int ids[8], n = -1;
    ck_assert_int_eq(tw_tokenizer_encode(&t, ids, &n, 8, "cc", 0, 0), TW_OK);
    ck_assert_int_eq(n, 3);   // " ", "c", "c"
    ck_assert_int_eq(tw_tokenizer_encode(&t, ids, &n, 8, "ca", 0, 0), TW_OK);
    ck_assert_int_eq(n, 3);
    tw_tokenizer_free(&t);
}
END_TEST

Suite *suite_tokenizer(void) {
    Suite *s = suite_create("tokenizer");
    TCase *tc = tcase_create("tok512");
    tcase_add_test(tc, once_upon_a_time_encodes_as_llama2c_does);
    tcase_add_test(tc, empty_prompt_is_just_bos);
    tcase_add_test(tc, two_leading_spaces_stay_two_tokens_after_the_prefix);
    tcase_add_test(tc, code_point_missing_from_vocab_falls_back_to_bytes);
    tcase_add_loop_test(tc, token_ids_match_the_python_reference, 0,
                        (int)(sizeof TOKEN_CASES / sizeof TOKEN_CASES[0]));
    tcase_add_test(tc, decode_of_encode_round_trips);
    tcase_add_test(tc, decode_rules);
    tcase_add_test(tc, malformed_tokenizer_files_are_rejected_with_a_reason);
    tcase_add_loop_test(tc, heap_encoder_equals_naive_on_many_texts, 0, 200);
    tcase_add_test(tc, long_lines_encode_as_the_naive_encoder_does);
    tcase_add_test(tc, decoded_bytes_count_the_texts_own_bytes);
    tcase_add_test(tc, heap_encoder_equals_naive_when_scores_tie);
    suite_add_tcase(s, tc);
    return s;
}
