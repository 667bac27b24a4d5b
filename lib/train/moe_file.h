// moe_file.h: the model file of models whose FFNs are mixtures of experts (block.moe_experts > 0,
// nn/block.h) or whose attention is latent attention (block.mla_kv_rank > 0), which the TWMODEL format (train/checkpoint.h) has no fields for. Little-endian;
// docs/moe-models.md has the byte-level description, tests/golden/train_variants.py (the reference
// of gen_train_moe.py and gen_train_mla.py) reads and writes it too.
//
//   char    magic[4]      "TWMX"
//   int32   version       1, or 2 for a model with latent attention (written only then, so a
//                         model with experts alone is still written as version 1)
//   int32   config[20]    TWMODEL's 20 dense fields, same order and ranges (checkpoint.h)
//   float32 rope_theta, qk_norm_eps, norm_eps
//   char    style[16]     NUL-padded, as TWMODEL's
//   int32   moe[4]        n_experts E (1 .. 1024), top_k (1 .. E), n_shared (0 .. 64),
//                         norm_topk_prob (0 or 1)
//   int32   mla[5]        version 2 only: q_lora_rank (1 .. 65536), kv_lora_rank (1 .. 65536),
//                         qk_nope_head_dim (1 .. 4096), qk_rope_head_dim (2 .. 4096, even),
//                         v_head_dim (1 .. 4096): latent attention (block.mla_*, nn/mla.h); in
//                         version 2 moe[4] may be all 0 (a dense FFN)
//   int32   n_params      the parameter table's length (nn/model.h: layers.L.moe.* replace
//                         layers.L.ffn.*)
//   then each parameter as in TWMODEL: char name[48], int32 ndim, int32 shape[2], float32 data
// The load-balancing coefficient is a training choice (./train --aux-coef), not stored.
// Checked exactly on load: every header field against its range, the config as a whole
// (tw_model_config_check: FFN SwiGLU, top_k <= E, ...), the file's length against the exact
// parameter count before anything is allocated, every parameter's name and shape against the
// table, every weight finite, and no byte after the last parameter.
#ifndef TW_MOE_FILE_H
#define TW_MOE_FILE_H
#include <stddef.h>
#include "core/status.h"
#include "nn/model.h"

#define TW_MOE_FILE_MAGIC "TWMX"
#define TW_MOE_FILE_VERSION 1
#define TW_MOE_FILE_VERSION_MLA 2
#define TW_MOE_FILE_MAX_RANK 65536
#define TW_MOE_FILE_MAX_HEAD_DIM 4096
#define TW_MOE_FILE_MAX_EXPERTS 1024
#define TW_MOE_FILE_MAX_SHARED 64

// Writes m (which must have experts) atomically (formats/atomic_file.h). TW_ERR_ARG for a dense
// model, TW_ERR_IO on failure (path left as it was); err receives one line starting with path.
tw_status tw_moe_file_write(const char *path, const tw_model *m, char *err, size_t err_len);

// Loads a TWMX file into m. On failure *m is zeroed and err receives one line starting with the
// path. TW_ERR_IO, TW_ERR_FORMAT, TW_ERR_NOMEM.
tw_status tw_moe_file_load(tw_model *m, const char *path, char *err, size_t err_len);

// 1 if path is a regular file that starts with "TWMX" (a FIFO is never opened for reading).
int tw_moe_file_is_moe(const char *path);

#endif
