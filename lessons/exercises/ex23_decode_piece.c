// Exercise 23: from a token back to text (lesson 1).
// Most tokens print their piece as it is: " the" prints a space and "the", which is how words get
// separated. Two exceptions: the very first piece after BOS (token 1) lost its leading space to the
// dummy prefix that encoding added, so it prints without it; and the 256 byte tokens "<0x00>" ..
// "<0xFF>" print the one byte they stand for ("<0x0A>" is a newline), not their spelling.
// Check it with:  make exercise23
#include "concepts.h"

int ex_decode_piece(char *out, int prev_token, int token, const char *const *vocab) {
    // TODO: write the bytes and a NUL to out, return how many bytes. Delete these lines.
    (void)out; (void)prev_token; (void)token; (void)vocab;
    ex_not_implemented();
    return 0;
}
