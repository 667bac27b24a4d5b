// text_tokenizer.c: dispatch over the three kinds (text_tokenizer.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/regular_file.h"
#include "tokenize/text_tokenizer.h"

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

// Counts the records of a llama2.c tokenizer file (int32 max length, then per token float32
// score, int32 length, bytes), or -1 if the file is not that shape.
static int count_llama2c_tokens(const char *path, char *err, size_t err_len) {
    long long size;
    FILE *f = tw_regular_file_open_measured(&size, err, err_len, path,
                                            "a tokenizer (tok512.bin, tokenizer.json or encoder.json)", "cannot open");
    if (!f) return -1;
    unsigned char h[8];
    long long at = 4;
    int n = 0;
    if (fread(h, 1, 4, f) != 4) at = -1;
    while (at >= 0 && at < size) {
        if (fread(h, 1, 8, f) != 8) { at = -1; break; }
        int32_t len;
        memcpy(&len, h + 4, 4);
        if (len < 0 || len > size - at - 8 || n == (1 << 24)) { at = -1; break; }
        if (fseek(f, len, SEEK_CUR) != 0) { at = -1; break; }
        at += 8 + len;
        n++;
    }
    fclose(f);
    if (at != size || n == 0) {
        tw_set_err(err, err_len, "%s: not a llama2.c tokenizer file (its token records do not fill it); "
                   "a tokenizer.json or encoder.json must end in .json", path);
        return -1;
    }
    return n;
}

tw_status tw_text_tokenizer_load(tw_text_tokenizer *t, const char *path, char *err, size_t err_len) {
    memset(t, 0, sizeof *t);
    if (ends_with(path, "encoder.json")) {
        // vocab.bpe sits beside encoder.json
        size_t n = strlen(path), dir = n - strlen("encoder.json");
        char *bpe = malloc(dir + sizeof "vocab.bpe");
        if (!bpe) return TW_ERR_NOMEM;
        memcpy(bpe, path, dir);
        memcpy(bpe + dir, "vocab.bpe", sizeof "vocab.bpe");
        tw_status st = tw_bbpe_load_gpt2(&t->bpe, path, bpe, err, err_len);
        free(bpe);
        t->kind = TW_TOKKIND_GPT2;
        return st;
    }
    if (ends_with(path, ".json")) {
        t->kind = TW_TOKKIND_HF;
        return tw_bbpe_load_hf(&t->bpe, path, err, err_len);
    }
    int v = count_llama2c_tokens(path, err, err_len);
    if (v < 0) return TW_ERR_FORMAT;
    t->kind = TW_TOKKIND_LLAMA2C;
    return tw_tokenizer_load(&t->sp, path, v, err, err_len);
}

void tw_text_tokenizer_free(tw_text_tokenizer *t) {
    if (t->kind == TW_TOKKIND_LLAMA2C) tw_tokenizer_free(&t->sp);
    else tw_bbpe_free(&t->bpe);
    memset(t, 0, sizeof *t);
}

const char *tw_tok_kind_name(tw_tok_kind k) {
    return k == TW_TOKKIND_LLAMA2C ? "llama2.c" : k == TW_TOKKIND_HF ? "tokenizer.json" : "GPT-2";
}

int tw_text_tokenizer_vocab_size(const tw_text_tokenizer *t) {
    return t->kind == TW_TOKKIND_LLAMA2C ? t->sp.vocab_size : t->bpe.n_ids;
}

tw_status tw_text_tokenizer_encode(const tw_text_tokenizer *t, tw_ids *out, const char *text, size_t len) {
    if (t->kind != TW_TOKKIND_LLAMA2C) return tw_bbpe_encode(&t->bpe, out, text, len);
    // llama2.c's encoder reads a C string: the text up to its first NUL.
    char *s = malloc(len + 1);
    if (!s) return TW_ERR_NOMEM;
    memcpy(s, text, len);
    s[len] = '\0';
    size_t max = tw_tokenizer_max_tokens(s);
    int *ids = malloc(max * sizeof *ids), n = 0;
    tw_status st = ids ? tw_tokenizer_encode(&t->sp, ids, &n, (int)max, s, 0, 0) : TW_ERR_NOMEM;
    for (int i = 0; st == TW_OK && i < n; i++) {
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 64;
            int *g = realloc(out->ids, cap * sizeof *g);
            if (!g) { st = TW_ERR_NOMEM; break; }
            out->ids = g;
            out->cap = cap;
        }
        out->ids[out->n++] = ids[i];
    }
    free(ids);
    free(s);
    return st;
}

const char *tw_text_tokenizer_piece(const tw_text_tokenizer *t, int prev, int id, size_t *len) {
    if (t->kind != TW_TOKKIND_LLAMA2C) return tw_bbpe_piece(&t->bpe, id, len);
    if (id < 0 || id >= t->sp.vocab_size) return NULL;
    const char *p = tw_tokenizer_decode(&t->sp, prev, id);
    // a "<0x00>" byte token decodes to the byte 0, which strlen cannot measure
    if (len) *len = p && p[0] == '\0' ? 1 : strlen(p);
    return p;
}

int tw_text_tokenizer_added(const tw_text_tokenizer *t, const char *text) {
    if (t->kind == TW_TOKKIND_LLAMA2C) return -1;
    int id = tw_bbpe_lookup(&t->bpe, text, strlen(text));
    return id >= 0 && t->bpe.is_added[id] ? id : -1;
}
