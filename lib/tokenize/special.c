// special.c: special tokens: recognising them, cutting text at them, adding them to a tokenizer
// file (see special.h).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/atomic_file.h"
#include "formats/same_file.h"
#include "tokenize/special.h"

int tw_special_name_ok(const char *s) {
    size_t n = strlen(s);
    if (n < 5 || n > TW_SPECIAL_MAX_NAME) return 0;
    if (memcmp(s, "<|", 2) != 0 || memcmp(s + n - 2, "|>", 2) != 0) return 0;
    for (size_t i = 2; i + 2 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '|' || c == '<' || c == '>' || c <= ' ' || c == 127) return 0;
    }
    return 1;
}

int tw_special_list(int *ids, char *const *vocab, int V) {
    int n = 0;
    for (int i = 0; i < V; i++) {
        if (!tw_special_name_ok(vocab[i])) continue;
        // Insertion sort by (length descending, id ascending): a handful of names.
        size_t len = strlen(vocab[i]);
        int k = n++;
        while (k > 0 && strlen(vocab[ids[k - 1]]) < len) { ids[k] = ids[k - 1]; k--; }
        ids[k] = i;
    }
    return n;
}

// The special id whose string starts text, the longest one (t->special is ordered so), or -1.
static int special_at(const tw_tokenizer *t, const char *text) {
    if (text[0] != '<' || text[1] != '|') return -1;
    for (int k = 0; k < t->n_special; k++) {
        const char *s = t->vocab[t->special[k]];
        if (strncmp(text, s, strlen(s)) == 0) return t->special[k];
    }
    return -1;
}

tw_status tw_special_encode(const tw_tokenizer *t, tw_plain_encode_fn plain, int *tokens, int *n_tokens,
                            int max_tokens, const char *text, int bos, int eos) {
    *n_tokens = 0;
    const size_t len = strlen(text);
    if (max_tokens < 0 || (size_t)max_tokens < tw_tokenizer_max_tokens(text)) return TW_ERR_ARG;
    char *piece = malloc(len + 1);                                   // the text between two specials
    int *ids = malloc(tw_tokenizer_max_tokens(text) * sizeof *ids);  // its ids
    if (piece == NULL || ids == NULL) { free(piece); free(ids); return TW_ERR_NOMEM; }
    int n = 0;
    if (bos) tokens[n++] = TW_TOK_BOS;
    size_t a = 0;   // start of the current piece
    for (size_t i = 0; i <= len; ) {
        const int sp = i < len ? special_at(t, text + i) : -1;
        if (sp < 0 && i < len) { i++; continue; }
        if (i > a) {   // the piece [a, i) as a text of its own
            memcpy(piece, text + a, i - a);
            piece[i - a] = '\0';
            int k = 0;
            tw_status st = plain(t, ids, &k, (int)tw_tokenizer_max_tokens(piece), piece, 0, 0);
            if (st != TW_OK) { free(piece); free(ids); return st; }
            memcpy(tokens + n, ids, (size_t)k * sizeof *ids);
            n += k;
        }
        if (i == len) break;
        tokens[n++] = sp;
        i += strlen(t->vocab[sp]);
        a = i;
    }
    if (eos) tokens[n++] = TW_TOK_EOS;
    free(piece);
    free(ids);
    *n_tokens = n;
    return TW_OK;
}

// ---- adding special tokens to a tokenizer file ----

static int put_i32(FILE *f, int32_t x) {
    uint32_t u = (uint32_t)x;
    unsigned char b[4] = { (unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16), (unsigned char)(u >> 24) };
    return fwrite(b, 1, 4, f) == 4;
}

// Reads the whole file (*bytes its size) into a malloc'd buffer; NULL on failure.
static unsigned char *read_all(const char *path, long *bytes) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    unsigned char *b = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    *bytes = n;
    return b;
}

tw_status tw_special_add_to_file(const char *out_path, const char *in_path, int vocab_size,
                                 const char *const *names, int n_names, char *err, size_t err_len) {
    if (tw_same_file(out_path, in_path)) {
        tw_set_err(err, err_len, "%s: is the input tokenizer; give another output file", out_path);
        return TW_ERR_ARG;
    }
    tw_tokenizer t;   // loading validates every record and gives the strings to compare against
    tw_status st = tw_tokenizer_load(&t, in_path, vocab_size, err, err_len);
    if (st != TW_OK) return st;
    int max_len = t.max_token_length;
    st = TW_ERR_ARG;
    for (int k = 0; k < n_names; k++) {
        const char *s = names[k];
        if (s[0] == '\0') { tw_set_err(err, err_len, "special token %d is empty: give names such as <|user|>", k + 1); goto done; }
        if (!tw_special_name_ok(s)) {
            tw_set_err(err, err_len, "special token '%.80s' is not of the form <|NAME|> (NAME: 1 to %d bytes, "
                       "no '|', '<', '>', space or control byte)", s, TW_SPECIAL_MAX_NAME - 4);
            goto done;
        }
        if (tw_tokenizer_lookup(&t, s) >= 0) {
            tw_set_err(err, err_len, "special token '%s' is already token %d of %s: give a new name", s,
                       tw_tokenizer_lookup(&t, s), in_path);
            goto done;
        }
        for (int j = 0; j < k; j++)
            if (strcmp(names[j], s) == 0) { tw_set_err(err, err_len, "special token '%s' is given twice", s); goto done; }
        if ((int)strlen(s) > max_len) max_len = (int)strlen(s);
    }
    long bytes = 0;
    unsigned char *buf = read_all(in_path, &bytes);
    if (buf == NULL) { st = TW_ERR_IO; tw_set_err(err, err_len, "%s: cannot read it again", in_path); goto done; }
    tw_atomic_file af;
    st = tw_atomic_open(&af, out_path, "wb");
    if (st != TW_OK) { free(buf); tw_set_err(err, err_len, "%s: cannot create it", out_path); goto done; }
    int ok = put_i32(af.f, max_len) && fwrite(buf + 4, 1, (size_t)bytes - 4, af.f) == (size_t)bytes - 4;
    for (int k = 0; ok && k < n_names; k++) {
        const float score = TW_SPECIAL_SCORE;
        int32_t bits;
        memcpy(&bits, &score, sizeof bits);
        const size_t len = strlen(names[k]);
        ok = put_i32(af.f, bits) && put_i32(af.f, (int32_t)len) && fwrite(names[k], 1, len, af.f) == len;
    }
    free(buf);
    st = tw_atomic_commit(&af, ok);
    if (st != TW_OK) tw_set_err(err, err_len, "%s: write failed (disk full?); nothing was written", out_path);
done:
    tw_tokenizer_free(&t);
    return st;
}
