// hf_rope_scaling.h: the "rope_scaling" field of a Hugging Face config.json, read into the
// toolkit's tw_rope_scaling (nn/rope_scaling.h). The field, as transformers' modeling_rope_utils
// reads it:
//   "rope_scaling": { "rope_type": "yarn",            (older files: "type")
//                     "factor": 4.0,
//                     "original_max_position_embeddings": 32768,
//                     "beta_fast": 32, "beta_slow": 1 }       (YaRN only; these are the defaults)
// Kinds read: absent, null or "default" (plain RoPE), "linear", "yarn", and "ntk" (this toolkit's
// name for static NTK-aware scaling, which transformers has no rope_type for). "dynamic",
// "longrope" and "llama3" are refused by name. A YaRN field without
// original_max_position_embeddings takes the top-level max_position_embeddings, as transformers
// does.
#ifndef TW_HF_ROPE_SCALING_H
#define TW_HF_ROPE_SCALING_H
#include "core/status.h"
#include "formats/json.h"
#include "nn/rope_scaling.h"

// root: the parsed config.json (an object). TW_OK with *sc filled (kind NONE when there is no
// scaling); TW_ERR_FORMAT with one line in err naming the key and what it should be.
tw_status tw_hf_rope_scaling_from_json(tw_rope_scaling *sc, const tw_json *root, char *err,
                                       size_t err_len);

// The same from a config.json file at path (only its "rope_scaling" and "max_position_embeddings"
// are read). TW_ERR_IO or TW_ERR_FORMAT with one line in err that starts with the path.
tw_status tw_hf_rope_scaling_read_file(tw_rope_scaling *sc, const char *path, char *err,
                                       size_t err_len);

#endif
