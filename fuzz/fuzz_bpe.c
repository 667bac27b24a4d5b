// fuzz_bpe.c: libFuzzer target for the BPE trainers and the round trip through a learned
// vocabulary. The input's first byte picks the options; the rest, up to the first 0xFE byte (or
// all of it), is the training text, and whatever follows is a second text to encode.
//   - tw_bpe_train and tw_bpe_train_naive must agree: same status, same error text, same pieces,
//     counts and token totals (the naive trainer is quadratic, so inputs are short: -max_len);
//   - the encoder must end with the trainer's token count on the training text;
//   - both texts (cut at their first NUL: the encoder reads C strings) must decode back to
//     themselves. Any mismatch aborts, which libFuzzer reports as a crash.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tokenize/bpe_train.h"
#include "tokenize/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const tw_tokenizer *tok, const char *text, long long want_tokens) {
    size_t max = tw_tokenizer_max_tokens(text), len = strlen(text);
    int *ids = malloc(max * sizeof *ids);
    char *back = malloc(len + 8);
    int n = -1;
    if (!ids || !back || tw_tokenizer_encode(tok, ids, &n, (int)max, text, 0, 0) != TW_OK) abort();
    if (want_tokens >= 0 && n != want_tokens) abort();
    size_t m = 0;
    for (int i = 0; i < n; i++) {
        const char *p = tw_tokenizer_decode(tok, i ? ids[i - 1] : TW_TOK_BOS, ids[i]);
        size_t pl = p ? strlen(p) : 0;
        if (!p || m + pl > len) abort();
        memcpy(back + m, p, pl);
        m += pl;
    }
    if (m != len || memcmp(back, text, len) != 0) abort();
    free(ids);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const uint8_t opt = data[0];
    const char *body = (const char *)data + 1;
    size_t n = size - 1;
    const char *sep = memchr(body, 0xFE, n);
    size_t n_train = sep ? (size_t)(sep - body) : n;
    tw_bpe_options o = { 0, 1 + (opt & 3), 1 + ((opt >> 2) & 1) };
    int base = tw_bpe_base_size(body, n_train, o.min_char_count);
    if (base < 0) return 0;
    o.vocab_size = base + (opt >> 3) - 2;   // sometimes below the base, to exercise that error
    tw_bpe_vocab fast, naive;
    char e1[256] = "", e2[256] = "";
    tw_status s1 = tw_bpe_train(&fast, body, n_train, &o, e1, sizeof e1);
    tw_status s2 = tw_bpe_train_naive(&naive, body, n_train, &o, e2, sizeof e2);
    if (s1 != s2 || strcmp(e1, e2) != 0) abort();
    if (s1 != TW_OK) return 0;
    if (fast.vocab_size != naive.vocab_size || fast.n_merges != naive.n_merges ||
        fast.tokens_before != naive.tokens_before)
        abort();
    for (int i = 0; i < fast.vocab_size; i++)
        if (fast.lengths[i] != naive.lengths[i] || memcmp(fast.pieces[i], naive.pieces[i], (size_t)fast.lengths[i]) != 0)
            abort();
    for (int k = 0; k < fast.n_merges; k++)
        if (fast.merge_count[k] != naive.merge_count[k] || fast.tokens_after[k] != naive.tokens_after[k]) abort();

    tw_tokenizer tok;
    if (tw_bpe_vocab_to_tokenizer(&tok, &fast) != TW_OK) abort();
    char *train = malloc(n_train + 1), *other = malloc(n - n_train + 1);
    if (!train || !other) abort();
    memcpy(train, body, n_train);
    train[n_train] = '\0';
    // The trainer's count holds for the whole training text; the encoder sees it up to a NUL.
    long long want = fast.n_merges ? fast.tokens_after[fast.n_merges - 1] : fast.tokens_before;
    round_trip(&tok, train, strlen(train) == n_train ? want : -1);
    size_t n_other = sep ? n - n_train - 1 : 0;
    memcpy(other, sep ? sep + 1 : "", n_other);
    other[n_other] = '\0';
    round_trip(&tok, other, -1);
    free(train);
    free(other);
    tw_tokenizer_free(&tok);
    tw_bpe_vocab_free(&fast);
    tw_bpe_vocab_free(&naive);
    return 0;
}
