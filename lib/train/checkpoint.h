// checkpoint.h: the toolkit's own checkpoint format, for models llama2.c's format cannot hold
// (the 2017, GPT-2 and Qwen3 styles: LayerNorm, biases, positions, QK-norm, head_dim != C/H), and
// the training state that ./train resumes from. Both little-endian; docs/training.md has the
// byte-level description and tests/golden/gen_train.py reads the model file too.
//
// Model file ("TWMODEL"):
//   char   magic[8]       "TWMODEL\0"
//   int32  version        1
//   int32  config[20]     vocab, max_seq, n_layer, d_model, n_head, n_kv_head, head_dim, causal,
//                         rope (0 none, 1 adjacent pairs, 2 halves), qk_norm, prenorm,
//                         norm (0 LayerNorm, 1 RMSNorm), ffn (0 classic, 1 SwiGLU),
//                         act (0 relu, 1 gelu erf, 2 gelu tanh, 3 silu), ffn_hidden,
//                         pos (0 none, 1 sinusoidal, 2 learned), embed_scale, final_norm, tied, bias
//   float32 rope_theta, qk_norm_eps, norm_eps
//   char   style[16]      "2017", "gpt2", "llama", "qwen3" or "custom", NUL-padded
//   int32  n_params       the parameter table's length (model.h lists the table)
//   then for each parameter, in the table's order:
//     char name[48] (NUL-padded, e.g. "layers.0.attn.wq"), int32 ndim, int32 shape[2]
//     (shape[1] = 0 for a vector), float32 data[shape[0] * max(shape[1], 1)], row-major (out, in)
//
// Training state file ("TWSTATE"):
//   char   magic[8]       "TWSTATE\0"
//   int32  version        1
//   int64  step           optimizer steps completed
//   int64  data_pos       batch windows consumed (step * B for ./train)
//   uint64 shuffle_seed   the batch order's seed (train/batches.h)
//   uint64 sampler_state  the sample printer's xorshift state
//   int32  B, T           the batch shape the state was made with
//   then a complete model record exactly as above (magic included), then
//   float32 m[n_floats], v[n_floats]   AdamW's moments, in the parameter table's order
#ifndef TW_CHECKPOINT_H
#define TW_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "core/status.h"
#include "nn/model.h"

#define TW_CHECKPOINT_MAGIC "TWMODEL"   // + NUL: 8 bytes
#define TW_TRAIN_STATE_MAGIC "TWSTATE"

// Writes m atomically (formats/atomic_file.h). TW_ERR_IO on failure (path left as it was).
tw_status tw_checkpoint_write(const char *path, const tw_model *m, char *err, size_t err_len);

// Loads a model file into m (tw_model_init with the stored configuration, then every parameter,
// each checked against the table's name and shape and for finiteness). On failure *m is zeroed
// and err receives one line starting with the path. TW_ERR_IO, TW_ERR_FORMAT, TW_ERR_NOMEM.
tw_status tw_checkpoint_load(tw_model *m, const char *path, char *err, size_t err_len);

// 1 if the file at path is a regular file starting with TWMODEL's magic (0 if not, or if it
// cannot be read; a FIFO or device is not opened for reading).
int tw_checkpoint_is_ours(const char *path);

// The pieces of the model record that the TWMX file of models with experts shares
// (train/moe_file.h): the 20 config ints, 3 floats and style of the header (config_from_ints
// checks each against its range: TW_ERR_FORMAT with a sentence in why), and the parameter
// records in the table's order (write_params returns 1 if every write worked). read_model builds
// m from the checked config c, checks the header's n_params against it, and reads the records:
// each name, shape and value checked, the bytes read counted off *left; m freed on failure.
void      tw_checkpoint_config_to_ints(int32_t v[20], const tw_model_config *c);
tw_status tw_checkpoint_config_from_ints(tw_model_config *c, char *why, size_t why_len,
                                         const int32_t v[20], const float f[3],
                                         const char style[16]);
int       tw_checkpoint_write_params(FILE *f, const tw_model *m);
// The file steps both formats share: write_with refuses a big-endian host and writes with
// write_record (1 if every write worked) into a staged file that replaces path only when whole
// (formats/atomic_file.h); open_read refuses a big-endian host and opens path for reading with its
// size in *left (NULL, *st and err set, if not; `what` names the file in the message);
// has_magic is 1 if the regular file at path starts with the n (at most 16) bytes of magic.
tw_status tw_checkpoint_write_with(const char *path, const tw_model *m,
                                   int (*write_record)(FILE *f, const tw_model *m), char *err,
                                   size_t err_len);
FILE     *tw_checkpoint_open_read(long long *left, tw_status *st, const char *path, const char *what,
                                  char *err, size_t err_len);
int       tw_file_has_magic(const char *path, const char *magic, size_t n, const char *what);
tw_status tw_checkpoint_read_model(tw_model *m, const tw_model_config *c, int32_t n_params, FILE *f,
                                   long long *left, const char *path, char *err, size_t err_len);

// Any of the three formats, chosen by the first bytes: ours (TWMODEL), a model with experts
// (TWMX, train/moe_file.h), else llama2.c's (formats/llama2c.h).
tw_status tw_model_load_file(tw_model *m, const char *path, char *err, size_t err_len);

typedef struct {
    int64_t  step;
    int64_t  data_pos;
    uint64_t shuffle_seed;
    uint64_t sampler_state;
    int32_t  B, T;
} tw_train_progress;

// Writes the training state atomically: progress, the model, and AdamW's m and v
// (each m->n_floats, in the parameter table's order).
tw_status tw_train_state_write(const char *path, const tw_train_progress *pr, const tw_model *m,
                               const float *adam_m, const float *adam_v, char *err, size_t err_len);

// The largest batch a training state may record (far above any batch ./train can hold).
#define TW_TRAIN_STATE_MAX_BATCH 65536

// Reads a training state: fills *pr, loads the model into m, and allocates *adam_m and *adam_v
// (m->n_floats each; the caller frees them). On failure everything is freed and zeroed.
// Checked before use, besides the model record's own checks (sizes, names, finite weights):
// 0 <= step <= 2^31 - 1, 1 <= B <= TW_TRAIN_STATE_MAX_BATCH, 1 <= T <= the model's max_seq,
// 0 <= data_pos <= step * B, the moments' length, every first moment finite, every second moment
// finite and >= 0. TW_ERR_IO, TW_ERR_FORMAT (err names the field or the parameter), TW_ERR_NOMEM.
tw_status tw_train_state_load(tw_train_progress *pr, tw_model *m, float **adam_m, float **adam_v,
                              const char *path, char *err, size_t err_len);

#endif
