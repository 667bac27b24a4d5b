// fuzz_tokens.c: libFuzzer target for the token-file reader (tw_tokens_read, lib/train/tokens.c),
// what ./train --tokens and --val read. The input is a file: the reader must accept it or fail
// with one line. An accepted file holds exactly size / 2 ids, each the little-endian uint16 at
// its place; tw_tokens_fit_vocab must agree with a plain scan; and when the file is long enough
// for one batch, the batcher (train/batches.h) fills a few steps in file order and shuffled, so a
// window past the end shows up under ASan.
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include <string.h>
#include "fuzz_file.h"
#include "train/batches.h"
#include "train/tokens.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void batches(const int *tokens, long n, int shuffle) {
    const int B = 2, T = 3;
    if (n < B * (T + 1)) return;
    tw_batcher b;
    if (tw_batcher_init(&b, tokens, n, B, T, shuffle, 7) != TW_OK) abort();
    int in[6], tg[6];
    for (long s = 0; s < 5; s++) {
        tw_batcher_fill(in, tg, &b, s);
        for (int i = 0; i < B * T; i++)
            if (in[i] < 0 || in[i] > 65535 || tg[i] < 0 || tg[i] > 65535) abort();
    }
    tw_batcher_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write_file(data, size);
    int *tokens = NULL;
    long n = -1;
    char err[512] = "";
    const tw_status st = tw_tokens_read(&tokens, &n, path, err, sizeof err);
    if (st != TW_OK) {
        if (err[0] == '\0' || strchr(err, '\n') || tokens != NULL || (size % 2 == 0 && size > 0)) abort();
        return 0;
    }
    if (size == 0 || size % 2 != 0 || n != (long)(size / 2)) abort();
    int max = 0;
    for (long i = 0; i < n; i++) {
        if (tokens[i] != (data[2 * i] | data[2 * i + 1] << 8)) abort();
        if (tokens[i] > max) max = tokens[i];
    }
    long at = -1;
    if (!tw_tokens_fit_vocab(tokens, n, max + 1, &at)) abort();
    if (max > 0 && (tw_tokens_fit_vocab(tokens, n, max, &at) || tokens[at] != max)) abort();
    batches(tokens, n, 0);
    batches(tokens, n, 1);
    free(tokens);
    return 0;
}
