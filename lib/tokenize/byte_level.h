// byte_level.h: GPT-2's byte-to-unicode map, which Qwen3 reuses ("ByteLevel" in tokenizer.json).
// A byte-level vocabulary is stored as text, so each of the 256 byte values is given a printable
// character: the 188 bytes that are printable in Latin-1 ('!'..'~', U+00A1..U+00AC,
// U+00AE..U+00FF) stand for themselves, and the other 68 (controls, space, U+00A0, U+00AD) get
// U+0100, U+0101, ... in byte order. So a space is 'Ġ' (U+0120) and a newline 'Ċ' (U+010A): the
// piece " dog" is written "Ġdog" in vocab files.
#ifndef TW_BYTE_LEVEL_H
#define TW_BYTE_LEVEL_H
#include <stdint.h>

// The character byte b stands for in vocabulary files. (256) entries.
void tw_byte_level_map(uint32_t map[256]);

// The inverse: the byte that character cp stands for, or -1 if cp is not one of the 256.
int tw_byte_level_byte(uint32_t cp);

#endif
