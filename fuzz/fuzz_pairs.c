// fuzz_pairs.c: libFuzzer target for the preference pairs reader (tw_pairs_read, lib/train/pairs.c),
// what ./train --dpo reads. The input's first two bytes are the model's vocabulary (uint16,
// little-endian; 0 becomes 1) and the third its context (1 .. 256); the rest is the pairs file.
// A refused file must leave nothing allocated and one line naming the path. An accepted one must
// obey every rule the reader promises (at least one pair, lengths >= 1 that fit the context,
// tokens below the vocabulary) and, laid out again from what was read, give back the file's
// exact bytes (so nothing was skipped, invented or read past the end).
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include <string.h>
#include "fuzz_file.h"
#include "train/pairs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put_i32(uint8_t *b, int v) {
    for (int k = 0; k < 4; k++) b[k] = (uint8_t)((unsigned)v >> (8 * k));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    const int vocab = (data[0] | data[1] << 8) ? (data[0] | data[1] << 8) : 1;
    const int max_seq = data[2] + 1;
    const uint8_t *file = data + 3;
    const size_t n = size - 3;
    const char *path = fuzz_write_file(file, n);
    tw_pairs p;
    char err[512] = "";
    const tw_status st = tw_pairs_read(&p, path, vocab, max_seq, err, sizeof err);
    if (st != TW_OK) {
        if (p.n || p.tok || p.len || p.off || err[0] == '\0' || strchr(err, '\n') || !strstr(err, path)) abort();
        return 0;
    }
    if (p.n < 1) abort();
    uint8_t *again = malloc(n), *w = again;
    if (!again) abort();
    memcpy(w, "pref", 4);
    put_i32(w + 4, 1);
    put_i32(w + 8, (int)p.n);
    w += 12;
    for (long i = 0; i < p.n; i++) {
        const int *len = p.len + 3 * i;
        if (len[0] < 1 || len[1] < 1 || len[2] < 1 || len[0] + len[1] - 1 > max_seq || len[0] + len[2] - 1 > max_seq)
            abort();
        if ((size_t)(w - again) + 12 > n) abort();
        for (int k = 0; k < 3; k++) put_i32(w + 4 * k, len[k]);
        w += 12;
        const int *parts[3] = { tw_pairs_prompt(&p, i), tw_pairs_chosen(&p, i), tw_pairs_rejected(&p, i) };
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < len[k]; j++) {
                const int t = parts[k][j];
                if (t < 0 || t >= vocab || (size_t)(w - again) + 2 > n) abort();
                *w++ = (uint8_t)(t & 0xFF);
                *w++ = (uint8_t)(t >> 8);
            }
    }
    if ((size_t)(w - again) != n || memcmp(again, file, n) != 0) abort();
    free(again);
    tw_pairs_free(&p);
    return 0;
}
