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

#include "status.h"

#include "rng.h"
#include "atomic_file.h"
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
#include "beam.h"
#include "json.h"
#include "params.h"

#endif
