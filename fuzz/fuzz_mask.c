// fuzz_mask.c: libFuzzer target for the loss-mask reader (tw_mask_read, lib/train/mask.c), what
// ./train --mask reads. The input's first two bytes are the --tokens count it must match (uint16,
// little-endian); the rest is the mask file. The reader must accept exactly the files of that
// many bytes, each 0 or 1 (then hold those bytes), and refuse every other with one line naming
// the path and nothing allocated. Accepted masks are applied to a few batches of a token stream of
// that length (train/batches.h): a window past the end shows up under ASan.
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include <string.h>
#include "fuzz_file.h"
#include "train/loss.h"
#include "train/mask.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const long n_tokens = data[0] | data[1] << 8;
    const uint8_t *file = data + 2;
    const size_t n = size - 2;
    const char *path = fuzz_write_file(file, n);
    unsigned char *mask = NULL;
    char err[512] = "";
    const tw_status st = tw_mask_read(&mask, path, n_tokens, err, sizeof err);
    int valid = (long)n == n_tokens;
    for (size_t i = 0; valid && i < n; i++) valid = file[i] <= 1;
    if (st != TW_OK) {
        if (valid || mask || err[0] == '\0' || strchr(err, '\n') || !strstr(err, path)) abort();
        return 0;
    }
    if (!valid || memcmp(mask, file, n) != 0) abort();
    const int B = 2, T = 3;
    if (n_tokens >= B * (T + 1)) {
        int *tokens = calloc((size_t)n_tokens, sizeof *tokens), in[6], tg[6];
        tw_batcher b;
        if (!tokens || tw_batcher_init(&b, tokens, n_tokens, B, T, 1, 3) != TW_OK) abort();
        for (long s = 0; s < 4; s++) {
            tw_batcher_fill(in, tg, &b, s);
            const long counted = tw_mask_apply(tg, mask, &b, s);
            long c = 0;
            for (int i = 0; i < B * T; i++) c += tg[i] != TW_IGNORE_INDEX;
            if (counted != c || counted < 0 || counted > B * T) abort();
        }
        tw_batcher_free(&b);
        free(tokens);
    }
    free(mask);
    return 0;
}
