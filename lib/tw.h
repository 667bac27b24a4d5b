// tw.h: the umbrella header of the transformer-walkthrough library (prefix tw_).
//
// Every transformer component is one plain C11 function in its own file pair under lib/.
// Include this header to get all of them.
//
// Shape letters (all tensors are row-major and contiguous; "(T, C)" means x[t*C + c]):
//   T   sequence length (queries)          S   sequence length of keys/values (S = T for self-attention)
//   C   model width (d_model)              H   query heads      G  key/value heads (n_kv_head)
//   D   head size (C/H unless a config sets it explicitly, as Qwen3 does)
//   F   feed-forward hidden width          V   vocabulary size
//
// Weight layout, stated once for the whole library:
//   A Linear layer stores W as (C_out, C_in), exactly as torch.nn.Linear, and computes
//   y = x W^T + b. Checkpoints exported from PyTorch or llama2.c load as they are.
//
// Conventions:
//   - Argument order: outputs, scratch/caches, inputs, parameters, sizes.
//   - The caller owns every buffer. Kernels never allocate; anything needing scratch either takes
//     it as an argument or owns it through a _init/_free pair.
//   - No hidden globals: every function's result depends only on its arguments.
//   - Functions that can fail on data (files, token ids) return tw_status; pure kernels return void.
//   - Nothing in lib/ prints (except the tw_print_* helpers, which print where told) or exits.
#ifndef TW_H
#define TW_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    TW_OK = 0,
    TW_ERR_NOMEM,   // allocation failed
    TW_ERR_IO,      // open/read/write failed; errno is left as set by libc
    TW_ERR_FORMAT,  // the file's contents are not what its format promises
    TW_ERR_SHAPE,   // inconsistent sizes, e.g. C % H != 0, or a token id outside the vocabulary
    TW_ERR_ARG,     // an argument out of its documented range
} tw_status;

// A short English phrase for a status, e.g. "file format error".
const char *tw_status_str(tw_status s);

#include "rng.h"
#include "npy.h"
#include "inspect.h"
#include "linear.h"
#include "embedding.h"
#include "norm.h"
#include "activation.h"
#include "softmax.h"
#include "posenc.h"
#include "rope.h"
#include "attention.h"
#include "mha.h"
#include "ffn.h"
#include "block.h"
#include "model.h"
// Reading real models and configs.
#include "llama2c.h"
#include "tokenizer.h"
#include "sampler.h"
#include "json.h"
#include "params.h"

#endif
