// pretokenize.h: the pre-tokenizers of GPT-2 and Qwen3, the regular expressions that cut text into
// pieces before any merge (a merge never crosses a piece boundary), written as hand scanners over
// code points. Each returns the length of the piece that starts at cps[i], i.e. what the
// pattern's leftmost-first match at i is, in JavaScript's semantics (the references run it with
// the /gu flags; \s is JavaScript's, see unicode_classes.h).
//
// GPT-2 (the encoder of OpenAI's GPT-2 repository):
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// Qwen3 (tokenizer.json; "(?i:...)" is how it spells the case-insensitive contractions):
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
// The differences that show: Qwen3 puts numbers in one-digit pieces, lets any one non-letter
// (not only a space) lead a word ("(word", "_name"), keeps newlines after punctuation with it, and
// matches "'S" and "'LL" as contractions. Both leave one space of a run of spaces for the word
// after it: "a   b" is "a", "  ", " b" (that is \s+(?!\S)).
#ifndef TW_PRETOKENIZE_H
#define TW_PRETOKENIZE_H
#include <stddef.h>
#include <stdint.h>

// Length (>= 1) of the piece starting at cps[i], for i < n.   cps: (n) code points
size_t tw_pretok_gpt2_next(const uint32_t *cps, size_t n, size_t i);
size_t tw_pretok_qwen_next(const uint32_t *cps, size_t n, size_t i);

#endif
