// test_tokenizer.c: the llama2.c tokenizer (lib/tokenize/tokenizer.c) on the real tok512.bin: fixed token
// ids (from the issue, and from the independent Python BPE in tests/golden/gen_stories.py), byte
// fallback, encode/decode round trips, decoding rules, and rejection of malformed files.
// Needs data/models/tok512.bin (`make model`; `make test` fetches it).
#define _POSIX_C_SOURCE 200809L   // getpid, mkdir
#include <check.h>
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
    suite_add_tcase(s, tc);
    return s;
}
