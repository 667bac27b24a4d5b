// fuzz_tokenizer.c: libFuzzer target for the tokenizer file loader, and for encode/decode with
// whatever vocabulary a hostile file holds.
// Input layout: uint16 vocab_size (little-endian; the model normally supplies it), uint16 n, n
// bytes of text to encode, then the tokenizer file itself.
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include <string.h>
#include "fuzz_file.h"
#include "tokenize/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void encode_and_decode(const tw_tokenizer *t, const char *text) {
    size_t max = tw_tokenizer_max_tokens(text);
    int *ids = malloc(max * sizeof *ids);
    if (!ids) return;
    int n = -1;
    if (tw_tokenizer_encode(t, ids, &n, (int)max, text, 1, 1) == TW_OK) {
        if (n < 0 || (size_t)n > max) abort();
        int prev = TW_TOK_BOS;
        for (int i = 0; i < n; i++) {
            if (ids[i] < 0 || ids[i] >= t->vocab_size) abort();
            const char *piece = tw_tokenizer_decode(t, prev, ids[i]);
            if (piece == NULL) abort();
            (void)tw_tokenizer_piece_printable(piece);
            (void)strlen(piece);
            prev = ids[i];
        }
    }
    free(ids);
    if (tw_tokenizer_decode(t, 0, t->vocab_size) != NULL || tw_tokenizer_decode(t, 0, -1) != NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    int vocab = data[0] | data[1] << 8;
    size_t n = (size_t)(data[2] | data[3] << 8);
    data += 4; size -= 4;
    if (n > size) n = size;
    char *text = malloc(n + 1);
    if (!text) return 0;
    memcpy(text, data, n);
    text[n] = '\0';
    const char *path = fuzz_write_file(data + n, size - n);
    tw_tokenizer t;
    char err[512] = "";
    tw_status st = tw_tokenizer_load(&t, path, vocab, err, sizeof err);
    if (st == TW_OK) {
        encode_and_decode(&t, text);
        encode_and_decode(&t, "Once upon a time \xe2\x82\xac \xff");
        tw_tokenizer_free(&t);
    } else if (err[0] == '\0') {
        abort();
    }
    free(text);
    return 0;
}
