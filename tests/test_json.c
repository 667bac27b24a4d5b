// test_json.c: the JSON reader (lib/formats/json.c): values and escapes decode correctly, malformed input
// is rejected at the right byte offset, nesting is bounded, and no prefix of a valid document is
// accepted (each prefix is parsed from an exactly-sized heap copy, so an over-read shows up under
// `make asan` or valgrind). Exact comparisons throughout: parsing is not approximate.
#define _POSIX_C_SOURCE 200809L   // mkstemp, fdopen
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "testutil.h"
#include "formats/json.h"

// Parses s from an exactly-sized heap copy (no NUL after it).
static tw_status parse_exact(tw_json **out, const char *s, size_t n, tw_json_error *e) {
    char *copy = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, s, n);
    tw_status st = tw_json_parse(out, copy, n, e);
    free(copy);   // the tree must not point into the text
    return st;
}

static tw_json *parse_ok(const char *s) {
    tw_json *v = NULL;
    tw_json_error e;
    tw_status st = parse_exact(&v, s, strlen(s), &e);
    ck_assert_msg(st == TW_OK, "parse of %s failed at byte %zu: %s", s, e.offset, e.msg);
    return v;
}

START_TEST(nested_values_decode_with_their_types)
{
    tw_json *v = parse_ok(" {\"a\": [1, -2.5e3, true, false, null, {\"b\": {\"c\": []}}],"
                          " \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}, \"n\": 0 } ");
    ck_assert_int_eq(v->type, TW_JSON_OBJECT);
    ck_assert_uint_eq(v->count, 3);
    const tw_json *a = tw_json_get(v, "a");
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->type, TW_JSON_ARRAY);
    ck_assert_uint_eq(a->count, 6);
    ck_assert(a->items[0].is_integer && a->items[0].integer == 1);
    ck_assert(!a->items[1].is_integer && a->items[1].number == -2500.0);
    ck_assert(a->items[2].type == TW_JSON_BOOL && a->items[2].boolean == 1);
    ck_assert(a->items[3].type == TW_JSON_BOOL && a->items[3].boolean == 0);
    ck_assert_int_eq(a->items[4].type, TW_JSON_NULL);
    const tw_json *c = tw_json_get(tw_json_get(&a->items[5], "b"), "c");
    ck_assert(c && c->type == TW_JSON_ARRAY && c->count == 0);
    const tw_json *rs = tw_json_get(v, "rope_scaling");
    ck_assert_str_eq(tw_json_get(rs, "type")->string, "linear");
    ck_assert(tw_json_get(rs, "factor")->number == 2.0);
    ck_assert(tw_json_get(v, "n")->is_integer && tw_json_get(v, "n")->integer == 0);
    ck_assert_ptr_null(tw_json_get(v, "missing"));
    ck_assert_ptr_null(tw_json_get(a, "a"));   // not an object
    tw_json_free(v);
}
END_TEST

START_TEST(string_escapes_decode_to_utf8)
{
    // \" \\ \/ \b \f \n \r \t, U+00E9 (2 bytes), U+20AC (3 bytes), U+1F600 via a surrogate pair.
    tw_json *v = parse_ok("\"q\\\"b\\\\s\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00\"");
    const char want[] = "q\"b\\s/\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    ck_assert_int_eq(v->type, TW_JSON_STRING);
    ck_assert_uint_eq(v->len, sizeof want - 1);
    ck_assert_mem_eq(v->string, want, sizeof want);
    tw_json_free(v);
    v = parse_ok("{\"k\\u0065y\": \"\"}");   // escaped keys decode too
    ck_assert_ptr_nonnull(tw_json_get(v, "key"));
    ck_assert_uint_eq(tw_json_get(v, "key")->len, 0);
    tw_json_free(v);
}
END_TEST

START_TEST(integers_are_exact_up_to_int64)
{
    tw_json *v = parse_ok("[9007199254740993, -9223372036854775808, 9223372036854775807,"
                          " 9223372036854775808, 1e3, 10.0, -0]");
    ck_assert(v->items[0].is_integer && v->items[0].integer == 9007199254740993LL);   // 2^53 + 1
    ck_assert(v->items[1].is_integer && v->items[1].integer == INT64_MIN);
    ck_assert(v->items[2].is_integer && v->items[2].integer == INT64_MAX);
    ck_assert(!v->items[3].is_integer);                  // too big for int64: double only
    ck_assert(!v->items[4].is_integer && v->items[4].number == 1000.0);
    ck_assert(!v->items[5].is_integer);                  // written as a fraction
    ck_assert(v->items[6].is_integer && v->items[6].integer == 0);
    tw_json_free(v);
}
END_TEST

START_TEST(duplicate_keys_last_one_wins)
{
    tw_json *v = parse_ok("{\"a\": 1, \"a\": 2}");
    ck_assert_int_eq(tw_json_get(v, "a")->integer, 2);
    tw_json_free(v);
}
END_TEST

// Malformed documents and the byte offset where the problem must be reported.
static const struct { const char *text; size_t offset; const char *msg_part; } BAD[] = {
    { "", 0, "end of input" },
    { "   ", 3, "end of input" },
    { "{\"a\":1,}", 7, "string key" },
    { "[1 2]", 3, "',' or ']'" },
    { "{\"a\" 1}", 5, "':'" },
    { "{\"a\":1 \"b\":2}", 7, "',' or '}'" },
    { "01", 1, "leading zeros" },
    { "1.", 2, "digit after '.'" },
    { "-", 1, "end of input" },
    { "1e", 2, "exponent" },
    { "+1", 0, "unexpected character" },
    { "NaN", 0, "unexpected character" },
    { "Infinity", 0, "unexpected character" },
    { "tru", 0, "expected a value" },
    { "{\"a\":nul}", 5, "expected a value" },
    { "\"abc", 4, "unterminated" },
    { "\"a\\x\"", 3, "invalid escape" },
    { "\"\\u12\"", 5, "hex digits" },
    { "\"\\u12", 5, "unterminated" },
    { "\"\\ud800\"", 7, "low surrogate" },
    { "\"\\ude00\"", 1, "unpaired low surrogate" },
    { "\"\\u0000\"", 1, "\\u0000" },
    { "\"a\nb\"", 2, "control character" },
    { "[1] x", 4, "after the top-level value" },
    { "{} {}", 3, "after the top-level value" },
    { "[1e999]", 1, "out of range" },
    { "{\"a\":[1,{\"b\":2}", 15, "not closed" },
    { "{\"a\"", 4, "':'" },
    { "[", 1, "end of input" },
    { "{1:2}", 1, "string key" },
    { "[1,,2]", 3, "expected a value" },
    { "[01]", 2, "leading zeros" },
};

START_TEST(malformed_input_is_rejected_at_the_right_offset)
{
    tw_json *v = (tw_json *)1;
    tw_json_error e;
    tw_status st = parse_exact(&v, BAD[_i].text, strlen(BAD[_i].text), &e);
    ck_assert_msg(st == TW_ERR_FORMAT, "'%s' was accepted", BAD[_i].text);
    ck_assert_ptr_null(v);
    ck_assert_msg(e.offset == BAD[_i].offset && strstr(e.msg, BAD[_i].msg_part),
                  "'%s': got byte %zu \"%s\", want byte %zu and \"%s\"", BAD[_i].text, e.offset,
                  e.msg, BAD[_i].offset, BAD[_i].msg_part);
}
END_TEST

// n '[' then n ']'.
static char *brackets(int n) {
    char *s = malloc((size_t)2 * n + 1);
    ck_assert_ptr_nonnull(s);
    memset(s, '[', (size_t)n);
    memset(s + n, ']', (size_t)n);
    s[2 * n] = '\0';
    return s;
}

START_TEST(nesting_is_bounded_at_64_levels)
{
    char *ok = brackets(TW_JSON_MAX_DEPTH);
    tw_json *v = parse_ok(ok);
    tw_json_free(v);
    free(ok);

    char *deep = brackets(TW_JSON_MAX_DEPTH + 1);
    tw_json_error e;
    ck_assert_int_eq(parse_exact(&v, deep, strlen(deep), &e), TW_ERR_FORMAT);
    ck_assert_uint_eq(e.offset, TW_JSON_MAX_DEPTH);   // the 65th '['
    ck_assert_ptr_nonnull(strstr(e.msg, "nesting"));
    free(deep);

    // A hostile 200,000-deep document fails the same way instead of exhausting the stack.
    char *hostile = brackets(200000);
    ck_assert_int_eq(parse_exact(&v, hostile, 400000, &e), TW_ERR_FORMAT);
    ck_assert_uint_eq(e.offset, TW_JSON_MAX_DEPTH);
    free(hostile);
}
END_TEST

START_TEST(no_proper_prefix_of_a_document_is_accepted)
{
    const char *doc = "{\"model_type\": \"qwen3\", \"head_dim\": 128, \"x\": [1.5e-6, true, null,"
                      " {\"s\": \"a\\u00e9\\ud83d\\ude00\\\"\"}], \"f\": false}";
    size_t n = strlen(doc);
    tw_json *v = parse_ok(doc);
    tw_json_free(v);
    for (size_t k = 0; k < n; k++) {
        tw_json_error e;
        tw_status st = parse_exact(&v, doc, k, &e);
        ck_assert_msg(st == TW_ERR_FORMAT, "prefix of %zu bytes was accepted", k);
        ck_assert_msg(e.offset <= k, "prefix of %zu bytes: error offset %zu is past the end",
                      k, e.offset);
    }
}
END_TEST

START_TEST(read_file_names_the_file_and_the_byte)
{
    char err[256];
    tw_json *v;
    ck_assert_int_eq(tw_json_read_file(&v, "data/configs/no-such-file.json", err, sizeof err),
                     TW_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err, "data/configs/no-such-file.json: cannot open"));

    char path[] = "/tmp/tw-json-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"a\": 1,\n \"b\" 2}", f);
    fclose(f);
    ck_assert_int_eq(tw_json_read_file(&v, path, err, sizeof err), TW_ERR_FORMAT);
    char want[128];
    snprintf(want, sizeof want, "%s: byte 14: expected ':'", path);
    ck_assert_msg(strstr(err, want), "got \"%s\", want it to contain \"%s\"", err, want);
    remove(path);

    ck_assert_int_eq(tw_json_read_file(&v, "data/configs/gpt2.json", err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_json_get(v, "n_embd")->integer, 768);
    tw_json_free(v);
}
END_TEST

Suite *suite_json(void) {
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, nested_values_decode_with_their_types);
    tcase_add_test(tc, string_escapes_decode_to_utf8);
    tcase_add_test(tc, integers_are_exact_up_to_int64);
    tcase_add_test(tc, duplicate_keys_last_one_wins);
    tcase_add_loop_test(tc, malformed_input_is_rejected_at_the_right_offset, 0,
                        (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(tc, nesting_is_bounded_at_64_levels);
    tcase_add_test(tc, no_proper_prefix_of_a_document_is_accepted);
    tcase_add_test(tc, read_file_names_the_file_and_the_byte);
    suite_add_tcase(s, tc);
    return s;
}
