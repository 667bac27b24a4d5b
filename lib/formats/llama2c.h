// llama2c.h: real pretrained Llama models in llama2.c's "legacy" checkpoint format (version 0),
// e.g. stories260K.bin, loaded into the same tw_model as the course's tiny models (style "llama":
// pre-norm, RMSNorm eps 1e-5, GQA, RoPE on adjacent pairs with base 10000, SwiGLU, no biases,
// a shared or separate classifier), so they run on tw_model_forward like the tiny ones. This file
// only loads.
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
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "nn/model.h"

// The header, with the file's own field names (model.h's names: C, F, n_layer, H, G, V, max_seq).
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

// Checks a header (the file's first 7 int32) against the file's size in bytes, and fills cfg.
// Every size is validated before anything is allocated: dims > 0 (vocab may be negative), within
// the limits above, dim % n_heads == 0, n_heads % n_kv_heads == 0, an even head size (RoPE), and
// a file length exactly equal to what the header implies. err receives one line naming the problem.
tw_status tw_llama2c_check_header(tw_llama2c_config *cfg, const int32_t header[7],
                                  long long file_bytes, char *err, size_t err_len);

// The model configuration a header describes: style "llama" with the header's sizes (D = C / H),
// RMSNorm eps 1e-5, RoPE base 10000, no biases, tied = shared_classifier, max_seq = seq_len.
void tw_llama2c_model_config(tw_model_config *mc, const tw_llama2c_config *c);

// Loads a checkpoint into m (tw_model_init with the configuration above, then every array of the
// file into the parameter of the same meaning; the freq_cis tables are checked and dropped). On
// failure *m is zeroed and err (if not NULL) receives one line starting with the path and naming
// the problem. Returns TW_ERR_IO, TW_ERR_FORMAT or TW_ERR_NOMEM. Free with tw_model_free.
tw_status tw_llama2c_load(tw_model *m, const char *path, char *err, size_t err_len);

#endif
