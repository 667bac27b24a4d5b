// fuzz_special.c: libFuzzer target for encoding with special tokens (lib/tokenize/special.c):
// arbitrary bytes encoded with tok512 grown by <|user|>, <|assistant|>, <|end|> (written once, at
// start-up, to a temporary file by tw_special_add_to_file). Checks: the heap encoder equals the
// naive one; the ids fit tw_tokenizer_max_tokens; the number of special ids equals the names found
// by a left-to-right scan; decoding gives the text back when the text has no '<' other than in a
// special name and no byte outside the vocabulary (as fuzz_encode.c checks without specials).
// fuzz/special.dict gives libFuzzer the names and their pieces.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tokenize/special.h"
#include "tokenize/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static tw_tokenizer tok;
static const char *const NAMES[3] = { "<|assistant|>", "<|user|>", "<|end|>" };   // longest first

static void free_tokenizer(void) { tw_tokenizer_free(&tok); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    char err[512], path[64];
    snprintf(path, sizeof path, "/tmp/tw_fuzz_special_%d.bin", (int)getpid());
    if (tw_special_add_to_file(path, "data/models/tok512.bin", 512, NAMES, 3, err, sizeof err) != TW_OK ||
        tw_tokenizer_load(&tok, path, 515, err, sizeof err) != TW_OK) {
        fprintf(stderr, "fuzz_special: %s (run `make model` first)\n", err);
        exit(1);
    }
    remove(path);
    atexit(free_tokenizer);
    return 0;
}

// The names in text, counted left to right, a match skipped past.
static int count_names(const char *text) {
    int n = 0;
    for (const char *p = text; *p; ) {
        int hit = 0;
        for (int k = 0; k < 3 && !hit; k++)
            if (strncmp(p, NAMES[k], strlen(NAMES[k])) == 0) { n++; p += strlen(NAMES[k]); hit = 1; }
        if (!hit) p++;
    }
    return n;
}

// 1 if every '<' of text starts one of the names.
static int only_names_have_lt(const char *text) {
    for (const char *p = strchr(text, '<'); p; p = strchr(p + 1, '<')) {
        int ok = 0;
        for (int k = 0; k < 3; k++) ok |= strncmp(p, NAMES[k], strlen(NAMES[k])) == 0;
        if (!ok) return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const size_t max = tw_tokenizer_max_tokens(text);
    int *ids = malloc(max * sizeof *ids), *naive = malloc(max * sizeof *naive);
    int n = -1, nn = -2;
    if (ids && naive && tw_tokenizer_encode(&tok, ids, &n, (int)max, text, 1, 0) == TW_OK &&
        tw_tokenizer_encode_naive(&tok, naive, &nn, (int)max, text, 1, 0) == TW_OK) {
        if (n != nn || n < 1 || (size_t)n > max || memcmp(ids, naive, (size_t)n * sizeof *ids) != 0) abort();
        int specials = 0, has_unk = 0;
        for (int i = 0; i < n; i++) {
            if (ids[i] < 0 || ids[i] >= tok.vocab_size) abort();
            specials += ids[i] >= 512;
            has_unk |= ids[i] == 0;
        }
        if (specials != count_names(text)) abort();
        if (!has_unk && only_names_have_lt(text)) {
            size_t len = 0;
            char *back = malloc(size + 1);
            for (int i = 1; back && i < n; i++) {
                const char *piece = tw_tokenizer_decode(&tok, ids[i - 1], ids[i]);
                size_t pl = strlen(piece);
                if (len + pl > size) abort();
                memcpy(back + len, piece, pl);
                len += pl;
            }
            if (back && (len != strlen(text) || memcmp(back, text, len) != 0)) abort();
            free(back);
        }
    }
    free(ids);
    free(naive);
    free(text);
    return 0;
}
