// pretokenize_qwen.c: Qwen3's pattern (pretokenize.h), one alternative after the other, first
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
static int is_crlf(uint32_t c) { return c == '\r' || c == '\n'; }
static int is_other(uint32_t c) { return !is_s(c) && !is_l(c) && !is_n(c); }   // [^\s\p{L}\p{N}]

static size_t run(const uint32_t *cps, size_t n, size_t i, int (*in)(uint32_t)) {
    size_t j = i;
    while (j < n && in(cps[j])) j++;
    return j - i;
}

static uint32_t lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// (?i:'s|'t|'re|'ve|'m|'ll|'d): 2 or 3, or 0 if none. Only ASCII letters fold here (the
// reference spells the pattern with [sS], [tT], ...).
static size_t contraction(const uint32_t *cps, size_t n, size_t i) {
    if (cps[i] != '\'' || i + 1 >= n) return 0;
    uint32_t a = lower(cps[i + 1]), b = i + 2 < n ? lower(cps[i + 2]) : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

// [^\r\n\p{L}\p{N}]?\p{L}+: one optional code point that is not CR, LF, a letter or a digit,
// then letters.
static size_t word(const uint32_t *cps, size_t n, size_t i) {
    uint32_t c = cps[i];
    if (!is_crlf(c) && !is_l(c) && !is_n(c) && i + 1 < n && is_l(cps[i + 1]))
        return 1 + run(cps, n, i + 1, is_l);
    return run(cps, n, i, is_l);
}

// " ?[^\s\p{L}\p{N}]+[\r\n]*": punctuation, with a space before it and the newlines after it.
static size_t punctuation(const uint32_t *cps, size_t n, size_t i) {
    size_t len = 0;
    if (cps[i] == ' ' && i + 1 < n && is_other(cps[i + 1])) len = 1 + run(cps, n, i + 1, is_other);
    else len = run(cps, n, i, is_other);
    if (len == 0) return 0;
    return len + run(cps, n, i + len, is_crlf);
}

// \s*[\r\n]+: whitespace up to and including the last CR or LF of the run of whitespace at i.
static size_t space_to_newline(const uint32_t *cps, size_t n, size_t i) {
    size_t ws = run(cps, n, i, is_s), last = 0;
    for (size_t k = 0; k < ws; k++)
        if (is_crlf(cps[i + k])) last = k + 1;
    return last;
}

size_t tw_pretok_qwen_next(const uint32_t *cps, size_t n, size_t i) {
    size_t len;
    if ((len = contraction(cps, n, i))) return len;
    if ((len = word(cps, n, i))) return len;
    if (is_n(cps[i])) return 1;
    if ((len = punctuation(cps, n, i))) return len;
    if ((len = space_to_newline(cps, n, i))) return len;
    // \s+(?!\S), then \s+: as in GPT-2's pattern.
    len = run(cps, n, i, is_s);
    if (i + len < n && len >= 2) len--;
    return len ? len : 1;
}
