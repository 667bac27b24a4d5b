// bbpe.h: byte-level BPE, the tokenizer of GPT-2 and of Qwen3 (and of most models since GPT-2).
// Text is cut into pieces by a pre-tokenizer pattern (pretokenize.h); each piece's UTF-8 bytes
// start as one token per byte, and the pair of adjacent tokens whose merge has the lowest rank
// (the earliest line of the merges list; the leftmost pair on a tie) is merged, again and again,
// until no adjacent pair has a merge. Every byte is a token, so nothing is ever unknown.
//
// Before that, for Qwen3: the added tokens ("<|im_start|>", "<|endoftext|>", "<think>", ...) are
// found in the raw text first, longest match at each position, and become their own ids: never
// split, never normalised. The rest is put in Unicode NFC (nfc.h). GPT-2's original encoder (the
// reference we follow) has neither: "<|endoftext|>" in the text is encoded as ordinary text
// ("<", "|", "end", "of", "text", "|", ">"), and its id 50256 only comes from a program that
// appends it.
//
// Text that is not valid UTF-8 is read as a browser reads it: each bad sequence is U+FFFD
// (utf8.h), since the reference encoders only ever see JavaScript strings. Decoding is byte
// exact: the pieces' bytes are concatenated, so a token sequence that ends inside a character
// decodes to that partial character's bytes.
//
// Readers: bbpe_read_hf.c (Hugging Face tokenizer.json) and bbpe_read_gpt2.c (encoder.json and
// vocab.bpe), both into this one struct.
#ifndef TW_BBPE_H
#define TW_BBPE_H
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"

typedef enum { TW_PRETOK_GPT2 = 0, TW_PRETOK_QWEN = 1 } tw_pretok_kind;

typedef struct {
    int        n_ids;        // ids run 0 .. n_ids-1 (some may be unused: piece NULL)
    char     **piece;        // (n_ids) the raw bytes each id stands for, NUL-terminated, or NULL
    uint32_t  *piece_len;    // (n_ids) their lengths
    uint8_t   *is_added;     // (n_ids) 1 for added (special) tokens, matched before splitting
    int        byte_id[256]; // the id of each single byte
    int       *vocab_slot;   // (vocab_mask + 1) open-addressing table: piece bytes -> id, or -1
    size_t     vocab_mask;
    uint64_t  *merge_key;    // (merge_mask + 1) (left id << 32 | right id), or UINT64_MAX if empty
    int32_t   *merge_rank;   // (merge_mask + 1) the merge's line in the merges list
    int32_t   *merge_to;     // (merge_mask + 1) the id of the merged piece
    size_t     merge_mask;
    int        n_merges;
    int        n_added;
    int       *added;        // (n_added) ids of the added tokens
    uint32_t  *added_first;  // (n_added) the first code point of each (set by tw_bbpe_finish)
    uint64_t   added_mask;   // bit (cp % 64) set for each added token's first code point
    int        nfc;          // 1: normalise to NFC before splitting (Qwen3)
    tw_pretok_kind pretok;
} tw_bbpe;

// The ids of one encode call. The caller owns it: zero it before the first use, free with
// tw_ids_free; tw_bbpe_encode appends.
typedef struct { int *ids; size_t n, cap; } tw_ids;
void tw_ids_free(tw_ids *v);

// Loaders: one line in err naming the file and the problem on failure (TW_ERR_IO, TW_ERR_FORMAT,
// TW_ERR_NOMEM); *t is zeroed then.
tw_status tw_bbpe_load_hf(tw_bbpe *t, const char *path, char *err, size_t err_len);
tw_status tw_bbpe_load_gpt2(tw_bbpe *t, const char *encoder_json, const char *vocab_bpe,
                            char *err, size_t err_len);
void tw_bbpe_free(tw_bbpe *t);   // safe on a zeroed struct

// Encodes text[0..len) (any bytes), appending the ids to out. TW_ERR_NOMEM on allocation failure.
// O(n log n) in the longest piece: merges come from a heap over a linked list of tokens.
tw_status tw_bbpe_encode(const tw_bbpe *t, tw_ids *out, const char *text, size_t len);

// The id of exactly these bytes (a vocabulary piece or an added token), or -1.
int tw_bbpe_lookup(const tw_bbpe *t, const char *bytes, size_t len);

// The bytes of id (its length in *len), or NULL for an id outside [0, n_ids) or unused.
const char *tw_bbpe_piece(const tw_bbpe *t, int id, size_t *len);

// ---- building (used by the two readers) ----
// Allocates n_ids empty slots; then add every piece, then every merge, then tw_bbpe_finish.
tw_status tw_bbpe_init(tw_bbpe *t, int n_ids, int n_merges_max);
// Gives id the piece bytes[0..len). TW_ERR_FORMAT (and why in *why) if the id is taken or the
// bytes already have an id.
tw_status tw_bbpe_add_piece(tw_bbpe *t, int id, const char *bytes, size_t len, int added,
                            const char **why);
// Adds the next merge (rank = how many came before; a merge listed again takes the new rank). TW_ERR_FORMAT with *why if a side or the
// merged piece is not in the vocabulary.
tw_status tw_bbpe_add_merge(tw_bbpe *t, const char *left, size_t left_len,
                            const char *right, size_t right_len, const char **why);
// Checks every byte has a token. TW_ERR_FORMAT with *why if not.
tw_status tw_bbpe_finish(tw_bbpe *t, const char **why);

#endif
