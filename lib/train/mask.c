// mask.c: the loss mask of supervised fine-tuning (see mask.h).
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "formats/regular_file.h"
#include "train/loss.h"
#include "train/mask.h"

tw_status tw_mask_read(unsigned char **mask, const char *path, long n_tokens, char *err, size_t err_len) {
    *mask = NULL;
    long long bytes = 0;
    FILE *f = tw_regular_file_open_measured(&bytes, err, err_len, path, "a mask file (one byte per token)",
                                            "cannot open the mask file");
    if (!f) return TW_ERR_IO;
    if (bytes != n_tokens) {
        fclose(f);
        tw_set_err(err, err_len, "%s: %lld bytes, but --tokens holds %ld tokens: a mask has one byte per "
                   "token (make them together)", path, bytes, n_tokens);
        return TW_ERR_FORMAT;
    }
    unsigned char *m = malloc(n_tokens > 0 ? (size_t)n_tokens : 1);
    if (!m) {
        fclose(f);
        tw_set_err(err, err_len, "%s: out of memory for %ld bytes", path, n_tokens);
        return TW_ERR_NOMEM;
    }
    const size_t got = fread(m, 1, (size_t)n_tokens, f);
    fclose(f);
    if (got != (size_t)n_tokens) {
        free(m);
        tw_set_err(err, err_len, "%s: read error after %zu of %ld bytes", path, got, n_tokens);
        return TW_ERR_IO;
    }
    for (long i = 0; i < n_tokens; i++)
        if (m[i] > 1) {
            tw_set_err(err, err_len, "%s: byte %ld is %d; a mask byte is 0 (not a target) or 1 (a target)",
                       path, i, m[i]);
            free(m);
            return TW_ERR_FORMAT;
        }
    *mask = m;
    return TW_OK;
}

long tw_mask_apply(int *targets, const unsigned char *mask, tw_batcher *b, long step) {
    long counted = 0;
    for (int r = 0; r < b->B; r++) {
        const long a = tw_batcher_start(b, step, r);
        int *tg = targets + (size_t)r * b->T;   // (T)
        for (int t = 0; t < b->T; t++) {
            if (!mask[a + t + 1]) tg[t] = TW_IGNORE_INDEX;
            counted += tg[t] != TW_IGNORE_INDEX;
        }
    }
    return counted;
}
