// Exercise 23, a worked answer: drop the dummy prefix's space after BOS, turn <0xHH> into a byte.
#include <string.h>
#include "concepts.h"

// The value of an upper-case hex digit, or -1.
static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int ex_decode_piece(char *out, int prev_token, int token, const char *const *vocab) {
    const char *piece = vocab[token];
    if (prev_token == 1 && piece[0] == ' ') piece++;          // after BOS: the dummy prefix
    size_t n = strlen(piece);
    if (n == 6 && memcmp(piece, "<0x", 3) == 0 && piece[5] == '>') {
        int hi = hex_digit(piece[3]), lo = hex_digit(piece[4]);
        if (hi >= 0 && lo >= 0) {                             // a byte token: its one byte
            out[0] = (char)(hi * 16 + lo);
            out[1] = '\0';
            return 1;
        }
    }
    memcpy(out, piece, n + 1);
    return (int)n;
}
