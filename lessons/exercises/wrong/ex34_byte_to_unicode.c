// Exercise 34, the classic wrong attempt (kept so a test can show the checker rejects it):
// "256 + b" for the non-printable bytes. It agrees for bytes 0..32 (all of them are moved, so
// the count and the byte are equal) and goes wrong at 0x7F, the first moved byte after a
// printable one: GPT-2 gives it 256 + 33 = U+0121, this gives U+017F.
// The checker says: byte 0x7F maps to U+017F, expected U+0121
#include "concepts.h"

static int printable(int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

unsigned ex_byte_to_unicode(int b) {
    return printable(b) ? (unsigned)b : 256u + (unsigned)b;
}
