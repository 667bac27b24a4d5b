// pretokenize_gpt2.c: GPT-2's pattern (pretokenize.h), one alternative after the other, first
// match wins, as a backtracking engine would try them.
#include "tokenize/pretokenize.h"
#include "tokenize/unicode_classes.h"

static int is_l(uint32_t c) {
    if (c < 128) return (c | 32) >= 'a' && (c | 32) <= 'z';
    return tw_unicode_is_letter(c);
}
static int is_n(uint32_t c) { return c < 128 ? c >= '0' && c <= '9' : tw_unicode_is_number(c); }
static int is_s(uint32_t c) {
    return c < 128 ? c == ' ' || (c >= 9 && c <= 13) : tw_unicode_is_space(c);
}
static int is_other(uint32_t c) { return !is_s(c) && !is_l(c) && !is_n(c); }   // [^\s\p{L}\p{N}]

// Length of the run of code points in class `in` starting at i.
static size_t run(const uint32_t *cps, size_t n, size_t i, int (*in)(uint32_t)) {
    size_t j = i;
    while (j < n && in(cps[j])) j++;
    return j - i;
}

// 's 't 'm 'd (2) or 're 've 'll (3), lower case only; 0 if none.
static size_t contraction(const uint32_t *cps, size_t n, size_t i) {
    if (cps[i] != '\'' || i + 1 >= n) return 0;
    uint32_t a = cps[i + 1], b = i + 2 < n ? cps[i + 2] : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

// " ?X+" for class X: an optional leading space, then at least one X.
static size_t space_then_run(const uint32_t *cps, size_t n, size_t i, int (*in)(uint32_t)) {
    if (cps[i] == ' ' && i + 1 < n && in(cps[i + 1])) return 1 + run(cps, n, i + 1, in);
    return run(cps, n, i, in);
}

size_t tw_pretok_gpt2_next(const uint32_t *cps, size_t n, size_t i) {
    size_t len;
    if ((len = contraction(cps, n, i))) return len;
    if ((len = space_then_run(cps, n, i, is_l))) return len;
    if ((len = space_then_run(cps, n, i, is_n))) return len;
    if ((len = space_then_run(cps, n, i, is_other))) return len;
    // \s+(?!\S): the whole run if it ends the text, else all but its last code point (which
    // then leads the next piece); a single space before a non-space falls to \s+ (itself).
    len = run(cps, n, i, is_s);
    if (i + len < n && len >= 2) len--;
    return len ? len : 1;
}
