// Exercise 34, a solution: the bytes printable in Latin-1 keep their code point; the k-th other
// byte (counting from 0 in increasing byte order) gets 256 + k.
#include "concepts.h"

static int printable(int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

unsigned ex_byte_to_unicode(int b) {
    if (printable(b)) return (unsigned)b;
    unsigned k = 0;   // non-printable bytes before b
    for (int x = 0; x < b; x++) k += !printable(x);
    return 256u + k;
}
