// special.h: special tokens of a llama2.c tokenizer, such as <|user|>, <|assistant|> and <|end|>
// (the chat template of supervised fine-tuning, train/chat_template.h), and adding them to a
// tokenizer file.
//
// The tokenizer file has no field that marks a token special, so the name is the mark: a token
// is special when its string has the form "<|" NAME "|>", NAME one or more bytes, none of them
// '|', '<', '>', a space or a control byte. (tok512 and Llama 2's vocabulary have none.)
//
// What being special changes (tokenizer.h):
//   - Encoding: the text is first cut at every occurrence of a special token's exact string
//     (scanning left to right, the longest special string that matches at a position wins); each
//     occurrence becomes that one id, and each piece of text between them is encoded as its own
//     text, as before (its dummy-prefix space included). BOS comes once, before everything; EOS
//     once, after everything. So "<|user|>hi<|end|>" is BOS <|user|> " hi" <|end|>, and a partial
//     name such as "<|use" is ordinary text, encoded byte by byte or as pieces.
//   - Merging never produces a special id: one is added with the score TW_SPECIAL_SCORE, at
//     which the encoder never merges (tokenizer.c's NO_MERGE_SCORE).
//   - Decoding: a special id prints its string, and the piece after it loses one leading space
//     (as the piece after BOS does), so decode(encode(text)) gives text back.
#ifndef TW_SPECIAL_H
#define TW_SPECIAL_H
#include <stddef.h>
#include "core/status.h"
#include "tokenize/tokenizer.h"

#define TW_SPECIAL_SCORE (-1e10f)
#define TW_SPECIAL_MAX_NAME 64   // longest special string accepted, in bytes, "<|" and "|>" included

// 1 if s has the form of a special token's string (above), else 0.
int tw_special_name_ok(const char *s);

// The ids of the special tokens among vocab (V strings), ordered longest string first (ties:
// lower id first), written to ids (V at most); returns how many.
int tw_special_list(int *ids, char *const *vocab, int V);

// An encoder without special tokens: tokenizer.c's heap encoder or its naive reference.
typedef tw_status (*tw_plain_encode_fn)(const tw_tokenizer *t, int *tokens, int *n_tokens,
                                        int max_tokens, const char *text, int bos, int eos);

// Encodes text cut at t's special tokens as described above, each piece between them by plain.
// Same contract as tw_tokenizer_encode (max_tokens >= tw_tokenizer_max_tokens(text) suffices: a
// special string of at least 5 bytes becomes one id and adds at most one dummy prefix).
tw_status tw_special_encode(const tw_tokenizer *t, tw_plain_encode_fn plain, int *tokens, int *n_tokens,
                            int max_tokens, const char *text, int bos, int eos);

// Appends special tokens to a llama2.c tokenizer file: reads in_path (which must hold exactly
// vocab_size tokens), and writes out_path atomically (formats/atomic_file.h) as the same bytes
// (max_token_length raised if a name is longer) followed by one record per name, in the order
// given: score TW_SPECIAL_SCORE, the name's length, its bytes. The new ids are vocab_size ..
// vocab_size + n_names - 1. Refuses (TW_ERR_ARG, one line in err naming the problem) a name that
// is empty, not of the special form, longer than TW_SPECIAL_MAX_NAME, already in the vocabulary,
// or given twice; out_path the same file as in_path. TW_ERR_IO/FORMAT/NOMEM as tw_tokenizer_load.
tw_status tw_special_add_to_file(const char *out_path, const char *in_path, int vocab_size,
                                 const char *const *names, int n_names, char *err, size_t err_len);

#endif
