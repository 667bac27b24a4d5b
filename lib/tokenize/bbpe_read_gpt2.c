// bbpe_read_gpt2.c: reads GPT-2's original files into a tw_bbpe: encoder.json (an object of
// byte-level piece -> id, 50,257 of them, "<|endoftext|>" included as an ordinary piece) and
// vocab.bpe (a "#version" line, then one "left right" merge per line, 50,000 of them, best
// first). No normaliser, no added tokens, GPT-2's own pattern: as the encoder of OpenAI's GPT-2
// repository.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/json.h"
#include "formats/regular_file.h"
#include "tokenize/bbpe_read.h"

#define MAX_MERGES_FILE ((long long)1 << 28)

// Reads the whole file; NULL with one line in err on failure.
static char *read_all(const char *path, size_t *len, char *err, size_t err_len) {
    long long size;
    FILE *f = tw_regular_file_open_measured(&size, err, err_len, path,
                                            "GPT-2's merges file (vocab.bpe)", "cannot open");
    if (!f) return NULL;
    if (size > MAX_MERGES_FILE) {
        fclose(f);
        tw_set_err(err, err_len, "%s: larger than 256 MiB: not a merges file", path);
        return NULL;
    }
    char *buf = malloc((size_t)size + 1);
    if (!buf) { fclose(f); tw_set_err(err, err_len, "%s: out of memory", path); return NULL; }
    size_t got = fread(buf, 1, (size_t)size, f);
    int bad = ferror(f) || got != (size_t)size;
    fclose(f);
    if (bad) { free(buf); tw_set_err(err, err_len, "%s: read error: %s", path, strerror(errno)); return NULL; }
    buf[got] = '\0';
    *len = got;
    return buf;
}

tw_status tw_bbpe_load_gpt2(tw_bbpe *t, const char *encoder_json, const char *vocab_bpe,
                            char *err, size_t err_len) {
    memset(t, 0, sizeof *t);
    tw_json *enc = NULL;
    tw_status st = tw_json_read_file(&enc, encoder_json, err, err_len);
    if (st != TW_OK) return st;
    if (enc->type != TW_JSON_OBJECT) {
        tw_json_free(enc);
        tw_set_err(err, err_len, "%s: not a JSON object of piece: id (GPT-2's encoder.json is one)", encoder_json);
        return TW_ERR_FORMAT;
    }
    size_t len = 0;
    char io[512];
    char *merges = read_all(vocab_bpe, &len, io, sizeof io);
    if (!merges) {
        tw_json_free(enc);
        tw_set_err(err, err_len, "%s: its merges file: %s (vocab.bpe belongs beside encoder.json)",
                   encoder_json, io);
        return TW_ERR_IO;
    }
    tw_bbpe_source src = { enc, NULL, NULL, merges, len };
    const char *why = NULL;
    st = tw_bbpe_build(t, &src, &why);
    tw_json_free(enc);
    free(merges);
    if (st != TW_OK) {
        tw_set_err(err, err_len, "%s + %s: %s", encoder_json, vocab_bpe, why ? why : tw_status_str(st));
        return st;
    }
    t->nfc = 0;
    t->pretok = TW_PRETOK_GPT2;
    return TW_OK;
}
