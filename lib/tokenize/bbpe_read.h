// bbpe_read.h: what the two byte-level BPE readers (bbpe_read_hf.c, bbpe_read_gpt2.c) share: the
// vocabulary and merges as parsed JSON, turned into a tw_bbpe by tw_bbpe_build.
#ifndef TW_BBPE_READ_H
#define TW_BBPE_READ_H
#include "formats/json.h"
#include "tokenize/bbpe.h"

typedef struct {
    const tw_json *vocab;    // object: byte-level piece (e.g. "Ġdog") -> integer id
    const tw_json *merges;   // array of "left right" strings or of ["left", "right"] pairs; or
                             // NULL when merges_text is used
    const tw_json *added;    // array of {"id": N, "content": "..."}, or NULL
    const char    *merges_text;  // GPT-2's vocab.bpe: "#version" line, then "left right" lines
    size_t         merges_len;
} tw_bbpe_source;

// Builds *t from src. On failure *t is freed and *why says what is wrong (NULL: out of memory).
// Ids must be integers in [0, 2^24); no id and no piece may appear twice; every piece must be
// spelled in the byte-to-unicode alphabet (byte_level.h); every merge must join two pieces of
// the vocabulary into a third.
tw_status tw_bbpe_build(tw_bbpe *t, const tw_bbpe_source *src, const char **why);

#endif
