// Exercise 34: GPT-2's byte-to-unicode map (lesson 23). A byte-level vocabulary is stored as text,
// so each byte needs a printable character: the bytes that are printable in Latin-1 ('!'..'~',
// 0xA1..0xAC, 0xAE..0xFF) stand for themselves, and the 68 others, taken in increasing order, get
// the code points 256, 257, 258, ... So byte 0 is U+0100, a space U+0120 ('Ġ'), a newline U+010A
// ('Ċ'): that is why " dog" is written "Ġdog" in vocab files.
// Hint: count how many non-printable bytes come before b.
// Check it with:  make exercise34
#include "concepts.h"

unsigned ex_byte_to_unicode(int b) {
    // TODO: return the code point for byte b. Delete these lines.
    (void)b;
    ex_not_implemented();
    return 0;
}
