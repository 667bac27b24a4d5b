// tokenizer.h: the byte-pair tokenizer of llama2.c's tokenizer files (SentencePiece vocabularies
// exported by llama2.c, e.g. tok512.bin for stories260K), with encode and decode behaving as
// llama2.c's `run` does, so token ids and printed text can be diffed with it.
//
// File format (little-endian): int32 max_token_length, then for each of the V tokens: float32
// score, int32 length, that many bytes (no terminator). V is not stored: it comes from the model.
// Token 0 is <unk>, 1 is BOS, 2 is EOS; tokens spelled "<0xHH>" stand for the raw byte 0xHH, and
// ids 3 .. 258 are those 256 byte tokens in order (the byte fallback relies on it).
//
// Encoding (what llama2.c does; written here from its observed behaviour):
//   1. BOS (id 1) if asked; then, for a non-empty text, the token for " " (the dummy prefix).
//   2. One token per UTF-8 code point, looked up as a whole string. A code point that is not in
//      the vocabulary becomes one token per byte, id = byte + 3.
//   3. Repeatedly merge the adjacent pair whose concatenation is a vocabulary string with the
//      highest score (the leftmost pair on ties) until no adjacent pair forms a known string.
//   4. EOS (id 2) if asked.
// Decoding one token: a piece that follows BOS loses one leading space; "<0xHH>" means byte 0xHH.
// A vocabulary with special tokens (<|user|> and the like, tokenize/special.h) is first cut at
// them; each becomes its one id, and the text between them is encoded as above.
#ifndef TW_TOKENIZER_H
#define TW_TOKENIZER_H
#include "core/status.h"

#define TW_TOK_BOS 1
#define TW_TOK_EOS 2

typedef struct {
    int    vocab_size;        // V
    int    max_token_length;  // as stored in the file: the longest token, in bytes
    char **vocab;             // (V) NUL-terminated token strings, pointing into pool
    float *scores;            // (V) merge priority: higher merges first
    int   *sorted;            // (V) token ids ordered by strcmp of their strings (ties: lower id)
    char  *pool;              // every token's bytes, each followed by a NUL
    char   byte_pieces[512];  // byte b as the 1-byte string byte_pieces + 2*b
    int   *special;           // (n_special) ids of the special tokens, longest string first
    int    n_special;         // (tokenize/special.h: <|NAME|> strings; 0 for tok512)
} tw_tokenizer;

// Loads a tokenizer file holding vocab_size tokens. Every length is checked against the file size
// before it is used; on failure *t is zeroed and err (if not NULL) receives one line naming the
// file and the problem. Returns TW_ERR_IO (cannot open/read), TW_ERR_FORMAT or TW_ERR_NOMEM.
tw_status tw_tokenizer_load(tw_tokenizer *t, const char *path, int vocab_size,
                            char *err, size_t err_len);
void      tw_tokenizer_free(tw_tokenizer *t);   // safe on a zeroed struct; zeroes it again

// The id whose string is exactly s, or -1. Binary search over t->sorted.
int tw_tokenizer_lookup(const tw_tokenizer *t, const char *s);

// Most tokens encode(text) can produce: one per byte, plus BOS, dummy prefix and EOS.
size_t tw_tokenizer_max_tokens(const char *text);

// Encodes text as described at the top of this file.
//   tokens: (max_tokens) receives the ids; *n_tokens receives their count.
// Returns TW_ERR_ARG if max_tokens is smaller than tw_tokenizer_max_tokens(text) (nothing is
// written), TW_ERR_NOMEM if the merge buffer cannot be allocated.
// O(n log n) in the text's length: the merges sit in a heap over a linked list of symbols.
tw_status tw_tokenizer_encode(const tw_tokenizer *t, int *tokens, int *n_tokens, int max_tokens,
                              const char *text, int bos, int eos);
// The reference, same contract and same ids: rescans every pair after each merge, so quadratic
// (fine for a prompt; a 200 KB line takes seconds). The tests hold the two equal.
tw_status tw_tokenizer_encode_naive(const tw_tokenizer *t, int *tokens, int *n_tokens, int max_tokens,
                                    const char *text, int bos, int eos);

// The bytes token `token` stands for when it follows prev_token: its string, minus one leading
// space if prev_token is BOS, or the single raw byte for a "<0xHH>" token. Never NULL for an id
// in [0, V); NULL for an id outside the vocabulary.
const char *tw_tokenizer_decode(const tw_tokenizer *t, int prev_token, int token);

// The bytes of text that ids[from .. to) stand for, each after the id before it (ids[i - 1]; BOS
// for i == 0), as tw_tokenizer_decode gives them: a "<0xHH>" token is one byte, the special ids
// 0..2 (unk, BOS, EOS) none (they separate texts). With a model's summed loss in nats over
// the same tokens it gives bits per byte, loss / (bytes x ln 2): a figure that, unlike
// perplexity per token, compares models whose tokenizers cut the text differently.
// Ids outside the vocabulary count 0. from >= 0, to <= the length of ids.
long tw_tokenizer_decoded_bytes(const tw_tokenizer *t, const int *ids, long from, long to);

// 1 if llama2.c would print this piece: it is non-empty, and if it is a single byte that byte is
// printable or whitespace (isprint/isspace in the C locale). Pieces of several bytes always print.
int tw_tokenizer_piece_printable(const char *piece);

#endif
