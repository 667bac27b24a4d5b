// bpe_train.h: learning a byte-pair-encoding vocabulary from text, for tw_tokenizer's encoder
// (tokenizer.h) used unchanged. What the trainer learns is exactly what the encoder produces.
//
// The vocabulary it returns has the layout of llama2.c's tokenizer files (tok512.bin):
//   ids 0..2       <unk>, "\n<s>\n" (BOS), "\n</s>\n" (EOS)
//   ids 3..258     the byte tokens "<0x00>".."<0xFF>" (byte fallback)
//   ids 259..      the learned pieces, in the order they were learned
//   then           the base characters: " " first, then every valid UTF-8 character (not NUL) that
//                  occurs at least min_char_count times, most frequent first (ties: by bytes)
// Scores: learned piece k (k = 0, 1, ...) scores -k, so the encoder's "merge the best-scoring pair
// first" replays the merges in learning order; characters continue below (-n_merges - j) as in
// tok512. Special and byte tokens score -1e10, which the encoder never merges into (it only takes
// a pair whose score is above -1e10), so text that spells "<0x41>" or "<unk>" stays itself.
//
// What one training step is (the definition both trainers implement):
//   The text is seen as the encoder sees it: the dummy-prefix " " and then one piece per UTF-8
//   character (the encoder's grouping: a lead byte plus up to three continuation bytes). A group
//   that is not a valid character of the base becomes byte tokens, which never merge.
//   1. Count every adjacent pair of pieces (a, b) by the string a+b, over the current segmentation.
//      Pairs grouped by string, not by (a, b): the encoder merges any pair whose concatenation is
//      in the vocabulary, so "ab"+"c" and "a"+"bc" both become "abc". A pair counts when
//        - neither is a byte token,
//        - b does not start with a space (pieces hold a space only as their first byte: " the"),
//        - a+b is not already in the vocabulary (e.g. a special token's or a byte token's string).
//   2. Take the most frequent string; ties go to the string that sorts first bytewise (memcmp
//      order, a prefix before its extensions). Stop with an error when it occurs fewer than
//      min_pair_count times before the vocabulary is full.
//   3. Add it as the next piece and continue the encoder's greedy loop from the current
//      segmentation: merge the best-scoring adjacent pair anywhere (leftmost on ties) until none is
//      left. That merges every occurrence of the new string, leftmost first, and any follow-on
//      merge an occurrence makes possible with an older piece (a "cascade").
//   So after every step the trainer's segmentation is exactly tw_tokenizer_encode's output for the
//   training text with the vocabulary so far, and its counts are what the next step sees.
// Since no piece has a space after its first byte, no piece spans a word boundary (the position
// before a space): encoding a text equals encoding each word (" " + characters) separately. The
// fast trainer counts unique words once with their frequency; the naive one walks the whole text.
//
// Text: any bytes. NUL bytes and invalid UTF-8 become byte tokens. (The encoder reads a C string,
// so it can only ever see text without NUL.)
#ifndef TW_BPE_TRAIN_H
#define TW_BPE_TRAIN_H
#include "core/status.h"
#include "tokenize/tokenizer.h"

#define TW_BPE_N_RESERVED 259   // <unk>, BOS, EOS and the 256 byte tokens
#define TW_BPE_NO_MERGE_SCORE (-1e10f)

typedef struct {
    int vocab_size;       // V wanted: reserved tokens + base characters + learned pieces
    int min_char_count;   // a character joins the base if it occurs at least this often (>= 1)
    int min_pair_count;   // the least count a pair needs to be learned (>= 1; 2 is usual)
} tw_bpe_options;

typedef struct {
    int        vocab_size;        // V
    int        n_merges;          // learned pieces: ids 259 .. 259 + n_merges - 1
    int        n_chars;           // base characters: the ids after the learned pieces
    int        max_token_length;  // the longest piece, in bytes
    char     **pieces;            // (V) NUL-terminated strings, pointing into pool
    int       *lengths;           // (V) their lengths in bytes
    float     *scores;            // (V) see the top of this file
    char      *pool;              // every piece's bytes, each followed by a NUL
    long long *merge_count;       // (n_merges) occurrences of the pair when it was learned
    int       *merge_left;        // (n_merges) one spelling of the piece as two pieces (ids):
    int       *merge_right;       //            left + right (the first split the trainer saw)
    long long *tokens_after;      // (n_merges) tokens of the training text after merge k
    long long  tokens_before;     // tokens of the training text before any merge (dummy prefix
                                  // included, no BOS/EOS)
} tw_bpe_vocab;

// Learns a vocabulary of opt->vocab_size pieces from text (n bytes), with the fast trainer:
// incremental pair counts, an indexed max-heap of pair strings, and for every pair string the
// positions where it occurs, so a merge touches only its occurrences.
// On failure *v is zeroed and err (if not NULL) gets one line:
//   TW_ERR_ARG    empty text; options out of range; vocab_size smaller than the base (the
//                 message gives the base size); the text runs out of pairs before vocab_size
//                 (the message gives the most pieces it supports)
//   TW_ERR_NOMEM  out of memory
tw_status tw_bpe_train(tw_bpe_vocab *v, const char *text, size_t n, const tw_bpe_options *opt,
                       char *err, size_t err_len);

// The reference: the same definition, recounting every pair of the whole text at every step and
// continuing the encoder's own greedy loop (O(n) per merge). Same results as tw_bpe_train, only
// slower; kept to prove the fast one.
tw_status tw_bpe_train_naive(tw_bpe_vocab *v, const char *text, size_t n,
                             const tw_bpe_options *opt, char *err, size_t err_len);

// The size of text's base vocabulary (259 reserved tokens, " " and the characters that occur at
// least min_char_count times): the smallest vocab_size training accepts. -1 if out of memory.
int tw_bpe_base_size(const char *text, size_t n, int min_char_count);

void tw_bpe_vocab_free(tw_bpe_vocab *v);   // safe on a zeroed struct; zeroes it again

// Writes v as a llama2.c tokenizer file (int32 max_token_length, then per token float32 score,
// int32 length, bytes; little-endian), through a temporary file renamed into place: on failure
// path is untouched. TW_ERR_IO with errno set.
tw_status tw_bpe_vocab_write(const tw_bpe_vocab *v, const char *path);

// Fills t with a copy of v, as tw_tokenizer_load would from the written file (free it with
// tw_tokenizer_free). TW_ERR_NOMEM.
tw_status tw_bpe_vocab_to_tokenizer(tw_tokenizer *t, const tw_bpe_vocab *v);

#endif
