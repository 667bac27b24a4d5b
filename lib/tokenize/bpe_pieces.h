// bpe_pieces.h: what the two BPE trainers (bpe_train.c, bpe_train_naive.c) share, so they differ
// only in how they count and merge: the base alphabet, the text cut into base pieces as the encoder
// cuts it, the growing table of pieces, and the assembly of the final tw_bpe_vocab.
// Internal to the library (bpe_train.h is the public interface).
//
// Internal ids while training: 0..258 reserved (as in the final file), 259 .. 259+n_chars-1 the
// base characters (" " is 259), then the learned pieces in order. bpe_pieces_finish moves the
// learned pieces before the characters, as tok512.bin has them.
#ifndef TW_BPE_PIECES_H
#define TW_BPE_PIECES_H
#include <stddef.h>
#include "tokenize/bpe_train.h"

#define BPE_SPACE_ID TW_BPE_N_RESERVED   // internal id of the " " character

// One code point of the text: how often it occurs and its character piece (-1: none).
typedef struct { int32_t cp; int32_t id; long long count; } bpe_char_slot;

typedef struct {
    int        n, cap;        // pieces so far and room
    int        n_chars;       // base characters
    size_t    *off;           // (cap) where each piece's bytes start in pool
    int       *len;           // (cap) its length
    char      *pool;          // the bytes of every piece (not NUL-terminated)
    size_t     pool_len, pool_cap;
    bpe_char_slot *cp;        // (cp_mask + 1) open-addressing table of the text's code points
    size_t     cp_mask, cp_used;   //   (cp -1: an empty slot)
    long long *m_count;       // (cap) per learned piece: the pair's count when learned
    int       *m_left, *m_right;   // (cap) its spelling as two internal ids
    long long *m_after;       // (cap) tokens of the training text after that merge
} bpe_pieces;

// Builds the reserved pieces and the base characters of text (n bytes). TW_ERR_ARG (with err) if
// vocab_size is smaller than the base, TW_ERR_NOMEM.
tw_status bpe_pieces_init(bpe_pieces *p, const char *text, size_t n, int min_char_count,
                          int vocab_size, char *err, size_t err_len);
void      bpe_pieces_free(bpe_pieces *p);

static inline const char *bpe_piece(const bpe_pieces *p, int id) { return p->pool + p->off[id]; }
static inline int bpe_mergeable(int id) { return id >= TW_BPE_N_RESERVED; }

// The length of the encoder's group at s (a lead byte and up to three continuation bytes, within
// n bytes), and in *id the character piece it is, or -1 if it becomes byte tokens.
size_t bpe_group(const bpe_pieces *p, int *id, const unsigned char *s, size_t n);

// Writes the pieces of text (n bytes) to out (room for n ids): characters, or byte tokens
// (id = byte + 3). Returns how many. No dummy prefix: the caller adds BPE_SPACE_ID.
size_t bpe_text_pieces(const bpe_pieces *p, int *out, const char *text, size_t n);

// Appends the piece a+b as a learned piece. Returns its id, or -1 if out of memory.
int bpe_pieces_add_merge(bpe_pieces *p, int a, int b, long long count, long long tokens_after);

// Three-way bytewise comparison of the strings a1+b1 and a2+b2 (b = -1: nothing), memcmp order
// with a prefix first.
int bpe_cmp_concat(const bpe_pieces *p, int a1, int b1, int a2, int b2);

// 1 if the string a+b contains a byte token's spelling "<0xHH>" (H: 0-9 A-F). Such a string is
// never learned: the encoder looks pairs up by their strings, byte tokens included, so it would
// merge the byte token for 'A' and a piece "a" into a learned "<0x41>a" and lose the 'A'.
int bpe_spells_byte_token(const bpe_pieces *p, int a, int b);

// Moves everything into v (final ids, scores) and frees p. TW_ERR_NOMEM.
tw_status bpe_pieces_finish(tw_bpe_vocab *v, bpe_pieces *p, long long tokens_before);

// Formats the "text runs out of pairs" error.
void bpe_err_exhausted(char *err, size_t err_len, const bpe_pieces *p, int min_pair_count,
                       int vocab_size);

#endif
