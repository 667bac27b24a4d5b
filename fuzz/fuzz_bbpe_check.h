// fuzz_bbpe_check.h: what fuzz_hfjson.c and fuzz_gpt2.c check after a hostile vocabulary loaded:
// encoding any bytes gives ids of the vocabulary, and when there is no normaliser and no added
// token, decoding them gives back exactly the text as read (invalid UTF-8 as U+FFFD, utf8.h).
#ifndef FUZZ_BBPE_CHECK_H
#define FUZZ_BBPE_CHECK_H
#include <stdlib.h>
#include <string.h>
#include "tokenize/bbpe.h"
#include "tokenize/utf8.h"

static void fuzz_bbpe_check(const tw_bbpe *t, const char *text, size_t n) {
    tw_ids ids = { 0 };
    if (tw_bbpe_encode(t, &ids, text, n) != TW_OK) { tw_ids_free(&ids); return; }   // out of memory
    char *got = malloc(4 * n + 1), *want = malloc(4 * n + 1);
    uint32_t *cps = malloc((n + 1) * sizeof *cps);
    if (!got || !want || !cps) abort();
    size_t g = 0;
    for (size_t i = 0; i < ids.n; i++) {
        size_t len;
        const char *p = tw_bbpe_piece(t, ids.ids[i], &len);
        if (!p) abort();   // an id outside the vocabulary
        if (g + len > 4 * n) abort();
        memcpy(got + g, p, len);
        g += len;
    }
    if (!t->nfc && t->n_added == 0) {
        size_t m = tw_utf8_decode(cps, text, n), w = 0;
        for (size_t i = 0; i < m; i++) w += tw_utf8_put(want + w, cps[i]);
        if (w != g || memcmp(want, got, g) != 0) abort();   // decode(encode(s)) != s
    }
    free(got); free(want); free(cps);
    tw_ids_free(&ids);
    if (tw_bbpe_piece(t, t->n_ids, NULL) != NULL || tw_bbpe_piece(t, -1, NULL) != NULL) abort();
}

#endif
