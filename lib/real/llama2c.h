// llama2c.h: real pretrained Llama models in llama2.c's "legacy" checkpoint format (version 0),
// e.g. stories260K.bin, run on the library's own functions:
//   tw_embedding_forward -> for each layer tw_block_forward (pre-norm, RMSNorm eps 1e-5, GQA,
//   RoPE on adjacent pairs with base 10000, SwiGLU, no biases) -> tw_rmsnorm_forward ->
//   tw_linear_forward (the classifier) -> logits.
// There is no second, monolithic forward pass here: this file only loads weights, points the
// library's config and weight structs at them, and calls the functions above in order.
//
// The file (little-endian): 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
// seq_len; a negative vocab_size means the classifier is stored separately at the end, a positive
// one that it shares the token embedding table), then float32 arrays, weights (out, in):
//   token_embedding (V, C), rms_att (L, C), wq (L, C, C), wk (L, KV, C), wv (L, KV, C),
//   wo (L, C, C), rms_ffn (L, C), w1 (L, F, C), w2 (L, C, F), w3 (L, F, C), rms_final (C),
//   freq_cis_real (seq_len, D/2), freq_cis_imag (seq_len, D/2), [classifier (V, C)]
// with D = C / H and KV = G * D. The freq_cis tables are skipped: RoPE is recomputed.
#ifndef TW_LLAMA2C_H
#define TW_LLAMA2C_H
#include "nn/status.h"
#include "nn/block.h"

typedef struct {
    int dim;          // C
    int hidden_dim;   // F
    int n_layers;     // L
    int n_heads;      // H
    int n_kv_heads;   // G
    int vocab_size;   // V (always positive here)
    int seq_len;      // longest sequence the model was trained for
    int shared_classifier;   // 1: logits use the token embedding table
} tw_llama2c_config;

// Limits the loader accepts, far above any llama2.c model, so sizes cannot overflow.
#define TW_LLAMA2C_MAX_DIM    65536
#define TW_LLAMA2C_MAX_LAYERS 1024
#define TW_LLAMA2C_MAX_VOCAB  (1 << 22)
#define TW_LLAMA2C_MAX_SEQ    (1 << 20)

typedef struct {
    tw_llama2c_config cfg;
    tw_block_config   block;      // the same for every layer
    float            *memory;     // (n_floats) every float of the file after the header
    long long         n_floats;
    const float      *tok_emb;    // (V, C)
    tw_block_weights *layers;     // (L) pointers into memory
    const float      *final_norm; // (C)
    const float      *classifier; // (V, C): tok_emb when shared
} tw_llama2c;

// Checks a header (the file's first 7 int32) against the file's size in bytes, and fills cfg.
// Every size is validated before anything is allocated: dims > 0 (vocab may be negative), within
// the limits above, dim % n_heads == 0, n_heads % n_kv_heads == 0, an even head size (RoPE), and
// a file length exactly equal to what the header implies. err receives one line naming the problem.
tw_status tw_llama2c_check_header(tw_llama2c_config *cfg, const int32_t header[7],
                                  long long file_bytes, char *err, size_t err_len);

// Loads a checkpoint. On failure *m is zeroed and err (if not NULL) receives one line starting
// with the path and naming the problem. Returns TW_ERR_IO, TW_ERR_FORMAT or TW_ERR_NOMEM.
tw_status tw_llama2c_load(tw_llama2c *m, const char *path, char *err, size_t err_len);
void      tw_llama2c_free(tw_llama2c *m);   // safe on a zeroed struct; zeroes it again

// Activations of a forward pass.
typedef struct {
    int               T_max, S_max;
    int               n_layers;   // L, copied from the model (for _free)
    int               keep_all;   // 1: one block scratch per layer (every layer inspectable)
    float            *embed;      // (T_max, C) token embeddings entering layer 0
    float            *resid;      // (T_max, C) the residual stream after the last block so far
    tw_block_scratch *layers;     // (L) if keep_all, else (1) shared by all layers
    float            *final;      // (T_max, C) after the final RMSNorm
    float            *rms;        // (T_max) the final norm's row rms
    float            *logits;     // (T_max, V) row t = next-token logits after position t
    tw_kv_cache      *cache;      // (L) or NULL
} tw_llama2c_state;

// T_max: most tokens per forward call. with_cache: 1 allocates a KV cache of S_max positions per
// layer (S_max <= seq_len; 0 means seq_len); without a cache S_max is T_max. keep_all: see above.
tw_status tw_llama2c_state_init(tw_llama2c_state *s, const tw_llama2c *m, int T_max, int S_max,
                                int with_cache, int keep_all);
void      tw_llama2c_state_free(tw_llama2c_state *s);   // safe on a zeroed struct
// Bytes of the KV cache such a state holds: L * 2 * S_max * G * D * sizeof(float).
size_t    tw_llama2c_cache_bytes(const tw_llama2c *m, int S_max);

// Runs tokens (T) at positions pos0 .. pos0+T-1. With a cache, their keys/values are appended and
// they attend to every earlier position; without one, pos0 must be 0 and the T tokens are the
// whole sequence (recomputing the prefix). all_logits: 1 computes logits for every row, 0 only for
// the last row (s->logits + (T-1)*V), which is all that generation needs.
// Returns TW_ERR_SHAPE for a token outside [0, V) and TW_ERR_ARG for T or positions out of range.
tw_status tw_llama2c_forward(tw_llama2c_state *s, const tw_llama2c *m, const int *tokens, int T,
                             int pos0, int all_logits);

// Writes every intermediate of a forward pass over tokens (T) into the folder dir (see
// docs/real-model.md for names and shapes): tokens.npy, embed.npy, L{l}.*.npy, final_norm.npy,
// logits.npy, manifest.tsv and tokens.txt (token_strings (T), one per line, escaped as gnuplot
// labels). use_cache 1: the tokens go through the KV cache one at a time, as in generation, and
// each step's rows are assembled into the (T, ...) tensors; 0: one pass over all T tokens.
// Everything is written into a temporary folder beside dir that is renamed to dir at the end, so
// a failure leaves no partial dump. dir must not exist or be an empty folder.
tw_status tw_llama2c_dump(const char *dir, const tw_llama2c *m, const int *tokens, int T,
                          const char *const *token_strings, int use_cache, char *err, size_t err_len);

#endif
