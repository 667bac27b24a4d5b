// text_tokenizer.h: one interface over the toolkit's three kinds of tokenizer, so a program can
// take any of them and print or compare their tokens:
//   TW_TOKKIND_LLAMA2C  llama2.c's tokenizer file (tok512.bin, SentencePiece BPE; tokenizer.h)
//   TW_TOKKIND_HF       a Hugging Face tokenizer.json with byte-level BPE (Qwen3; bbpe.h)
//   TW_TOKKIND_GPT2     GPT-2's encoder.json, with its merges file vocab.bpe beside it (bbpe.h)
// The kind comes from the file: a name ending in "encoder.json" is GPT-2's, another ".json" is a
// tokenizer.json, anything else a llama2.c file.
#ifndef TW_TEXT_TOKENIZER_H
#define TW_TEXT_TOKENIZER_H
#include <stddef.h>
#include "core/status.h"
#include "tokenize/bbpe.h"
#include "tokenize/tokenizer.h"

typedef enum { TW_TOKKIND_LLAMA2C = 0, TW_TOKKIND_HF, TW_TOKKIND_GPT2 } tw_tok_kind;

typedef struct {
    tw_tok_kind  kind;
    tw_tokenizer sp;    // TW_TOKKIND_LLAMA2C
    tw_bbpe      bpe;   // TW_TOKKIND_HF and TW_TOKKIND_GPT2
} tw_text_tokenizer;

// Loads path. For a llama2.c file the vocabulary size is not stored: it is counted from the
// file's records. One line in err on failure (naming the file); *t is zeroed then.
tw_status tw_text_tokenizer_load(tw_text_tokenizer *t, const char *path, char *err, size_t err_len);
void      tw_text_tokenizer_free(tw_text_tokenizer *t);

// "llama2.c", "tokenizer.json", "GPT-2"
const char *tw_tok_kind_name(tw_tok_kind k);

// Ids run over [0, vocab size).
int tw_text_tokenizer_vocab_size(const tw_text_tokenizer *t);

// Appends the ids of text[0..len) to out (no BOS/EOS; llama2.c's dummy-prefix space is added
// as its encoder always does).
tw_status tw_text_tokenizer_encode(const tw_text_tokenizer *t, tw_ids *out, const char *text, size_t len);

// The bytes id stands for (its length in *len) after token prev (llama2.c drops the leading
// space after BOS; pass -1 for "none"); NULL for an id not in the vocabulary.
const char *tw_text_tokenizer_piece(const tw_text_tokenizer *t, int prev, int id, size_t *len);

// Finds an added token by its text, e.g. "<|im_start|>": its id, or -1 (always -1 for llama2.c
// and GPT-2, which have none).
int tw_text_tokenizer_added(const tw_text_tokenizer *t, const char *text);

#endif
