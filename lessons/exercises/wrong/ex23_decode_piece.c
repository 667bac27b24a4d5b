// Wrong attempt at exercise 23 (make test builds it and requires the checker to reject it).
// The mistake: every piece loses its leading space, not only the first one after BOS, so the
// decoded words run together ("Oncetherewas").
// The checker says: the space stays
#include <string.h>
#include "concepts.h"

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int ex_decode_piece(char *out, int prev_token, int token, const char *const *vocab) {
    (void)prev_token;
    const char *piece = vocab[token];
    if (piece[0] == ' ') piece++;
    size_t n = strlen(piece);
    if (n == 6 && memcmp(piece, "<0x", 3) == 0 && piece[5] == '>') {
        int hi = hex_digit(piece[3]), lo = hex_digit(piece[4]);
        if (hi >= 0 && lo >= 0) { out[0] = (char)(hi * 16 + lo); out[1] = '\0'; return 1; }
    }
    memcpy(out, piece, n + 1);
    return (int)n;
}
