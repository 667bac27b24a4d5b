// byte_level.c: the map is built the way GPT-2's bytes_to_unicode() builds it: printable bytes
// first keep their own code point, then the rest, in increasing byte order, take 256, 257, ...
#include "tokenize/byte_level.h"

static int printable_latin1(int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

void tw_byte_level_map(uint32_t map[256]) {
    uint32_t next = 256;
    for (int b = 0; b < 256; b++)
        map[b] = printable_latin1(b) ? (uint32_t)b : next++;
}

int tw_byte_level_byte(uint32_t cp) {
    if (cp < 256) return printable_latin1((int)cp) ? (int)cp : -1;
    if (cp >= 256 + 68) return -1;
    uint32_t k = cp - 256;   // the k-th non-printable byte
    for (int b = 0; b < 256; b++)
        if (!printable_latin1(b) && k-- == 0) return b;
    return -1;
}
