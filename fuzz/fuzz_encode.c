// fuzz_encode.c: libFuzzer target for tw_tokenizer_encode/decode of arbitrary bytes (invalid
// UTF-8, stray continuation bytes, control characters) with the real tok512 vocabulary.
// The tokenizer comes from $TW_FUZZ_TOKENIZER (default data/models/tok512.bin, made by
// `make model`) with $TW_FUZZ_VOCAB tokens (default 512).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tokenize/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static tw_tokenizer tok;

static void free_tokenizer(void) { tw_tokenizer_free(&tok); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    const char *path = getenv("TW_FUZZ_TOKENIZER");
    const char *vocab = getenv("TW_FUZZ_VOCAB");
    if (!path) path = "data/models/tok512.bin";
    char err[512];
    if (tw_tokenizer_load(&tok, path, vocab ? atoi(vocab) : 512, err, sizeof err) != TW_OK) {
        fprintf(stderr, "fuzz_encode: %s (run `make model` first)\n", err);
        exit(1);
    }
    atexit(free_tokenizer);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';   // encode takes a C string: it ends at the first NUL byte
    size_t max = tw_tokenizer_max_tokens(text);
    int *ids = malloc(max * sizeof *ids);
    int n = -1;
    if (ids && tw_tokenizer_encode(&tok, ids, &n, (int)max, text, 1, 0) == TW_OK) {
        if (n < 1 || (size_t)n > max || ids[0] != TW_TOK_BOS) abort();
        // Decoding the pieces must give the text back (after the dummy-prefix space), except
        // where bytes are unknown to the vocabulary and became <unk>, or where the text spells a
        // special token itself ("<s>", "<0x41>": those decode to something else, as in llama2.c).
        size_t cap = strlen(text) + 8, len = 0;
        char *back = malloc(cap);
        int has_unk = 0;
        for (int i = 1; back && i < n; i++) {
            if (ids[i] < 0 || ids[i] >= tok.vocab_size) abort();
            if (ids[i] == 0) has_unk = 1;
            const char *piece = tw_tokenizer_decode(&tok, ids[i - 1], ids[i]);
            if (!piece) abort();
            size_t pl = strlen(piece);
            if (len + pl >= cap) abort();   // more bytes than the text had
            memcpy(back + len, piece, pl);
            len += pl;
        }
        if (back && !has_unk && text[0] && !strchr(text, '<') && (len != strlen(text) || memcmp(back, text, len) != 0))
            abort();
        free(back);
    }
    free(ids);
    free(text);
    return 0;
}
