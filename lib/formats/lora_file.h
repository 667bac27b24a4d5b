// lora_file.h: the LoRA adapters file (./train --lora ... --out, ./generate --lora). Little-endian:
//   4 bytes   "lora"
//   int32     version, 1
//   int32     r (1 .. TW_LORA_MAX_R)
//   float32   alpha (finite, > 0); the adapters' scale is alpha / r
//   int32     n_targets (1 .. 7)
//   n_targets names, 8 bytes each: ASCII "wq" "wk" "wv" "wo" "w1" "w2" "w3" padded with zero
//             bytes, in the order given, none twice
//   then for each layer l = 0 .. L-1 and each target in that order: A as float32 (r, in),
//   followed by B as float32 (out, r)
// The header is 20 + 8 n_targets bytes; the file is that plus 4 bytes per adapter float, exactly.
// L, in and out are not in the file: they come from the base model the adapters are loaded for.
#ifndef TW_LORA_FILE_H
#define TW_LORA_FILE_H
#include <stddef.h>
#include "core/status.h"
#include "nn/lora_set.h"

#define TW_LORA_FILE_VERSION 1

// Bytes of the header for n_targets targets.
long tw_lora_file_header_bytes(int n_targets);

// Parses an adapters file held in memory (bytes, n) for a base model of configuration c into s
// (made here; tw_lora_set_free releases it). Every field is checked before anything is
// allocated; on failure s is zeroed and err holds one line without the file name (the caller
// prefixes it). TW_ERR_FORMAT for a bad magic, version, r, alpha, name or size; TW_ERR_SHAPE for
// targets the model lacks; TW_ERR_NOMEM.
tw_status tw_lora_file_parse(tw_lora_set *s, const unsigned char *bytes, size_t n,
                             const tw_model_config *c, char *err, size_t err_len);
// Reads path (a regular file) and parses it; err names the path.
tw_status tw_lora_file_load(tw_lora_set *s, const char *path, const tw_model_config *c,
                            char *err, size_t err_len);
// Writes s to path atomically (formats/atomic_file.h). TW_ERR_IO with err on failure.
tw_status tw_lora_file_write(const char *path, const tw_lora_set *s, char *err, size_t err_len);

#endif
