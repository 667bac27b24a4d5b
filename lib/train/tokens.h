// tokens.h: token files for training. A token file is what llama2.c's pretokenised shards are:
// every token id as a little-endian uint16, nothing else (no header), so a file of n tokens is
// exactly 2n bytes and ids are < 65536. Text becomes tokens through a llama2.c tokenizer
// (tokenize/tokenizer.h), one document per line: each non-empty line is encoded as BOS + the line
// (the tokenizer's dummy-prefix space included, the newline itself dropped), the way llama2.c's
// pretokenisation prepends BOS to every story.
#ifndef TW_TOKENS_H
#define TW_TOKENS_H
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "tokenize/tokenizer.h"

// Reads a uint16 token file. *tokens (n, malloc'd, the caller frees) receives the ids.
// TW_ERR_IO (cannot open/read, a directory), TW_ERR_FORMAT (an odd number of bytes, or empty),
// TW_ERR_NOMEM; err receives one line starting with the path.
tw_status tw_tokens_read(int **tokens, long *n, const char *path, char *err, size_t err_len);

// Writes tokens (n) as a uint16 token file, atomically (formats/atomic_file.h). Every id must
// be in [0, 65535]: TW_ERR_ARG otherwise, and nothing is written.
tw_status tw_tokens_write(const char *path, const int *tokens, long n, char *err, size_t err_len);

// 1 if every id of tokens (n) is below vocab; else 0, with the first offending index in *at.
int tw_tokens_fit_vocab(const int *tokens, long n, int vocab, long *at);

// Reads a UTF-8 text file and encodes it line by line as described above. *tokens (malloc'd,
// the caller frees) receives n ids. TW_ERR_IO, TW_ERR_FORMAT (no text at all), TW_ERR_NOMEM.
tw_status tw_tokens_encode_file(int **tokens, long *n, const char *path, const tw_tokenizer *tok,
                                char *err, size_t err_len);

#endif
