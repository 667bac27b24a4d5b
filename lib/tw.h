// tw.h: the umbrella header of the transformer-walkthrough library (prefix tw_).
//
// Every transformer component is one plain C11 function in its own file pair under lib/nn/.
// Programs include this header to get all of lib/; no file inside lib/ includes it (each includes
// only the headers it uses).
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
//   - One global, stated: the SIMD dispatch table tw_simd (lib/simd/simd.h). It starts empty
//     (every component runs its own loop), changes only when a program calls tw_simd_init once
//     at start-up, and is read by the Linear, softmax, RMSNorm, SwiGLU and attention hooks.
//     Apart from it, every function's result depends only on its arguments.
//   - Functions that can fail on data (files, token ids) return tw_status; pure kernels return void.
//   - Nothing in lib/ prints (except the tw_print_* helpers, which print where told) or exits.
//
// Backward passes (the _backward beside each _forward), one rule for the whole library:
//   - Argument order: input gradients, parameter gradients, the upstream gradient, what the
//     forward kept (inputs, saved statistics, probabilities), the parameters, sizes.
//   - EVERY gradient is accumulated (+=), input gradients as well as parameter gradients, as in
//     llm.c: a residual connection, an input read by several layers (x feeding q, k and v; the
//     encoder output feeding every cross-attention), a tied weight and micro-batch accumulation
//     then need no extra buffers. The caller zeroes gradient buffers before the first backward.
//     An input gradient pointer may be NULL when that gradient is not wanted.
//   - The one exception follows from the forward: a forward that works in place (RoPE, the
//     positional adds) has a backward that works in place on the gradient buffer: on entry it holds
//     the gradient of the output, on return the gradient of the input.
//   - Gradient buffers never alias the forward's tensors or each other.
#ifndef TW_H
#define TW_H

#include <stddef.h>
#include <stdint.h>

// lib/nn/: the components the course teaches, in the order of the lessons (they include nothing
// from io/ or real/).
#include "nn/status.h"
#include "nn/rng.h"
#include "nn/linear.h"
#include "nn/embedding.h"
#include "nn/norm.h"
#include "nn/activation.h"
#include "nn/softmax.h"
#include "nn/posenc.h"
#include "nn/rope.h"
#include "nn/sdpa.h"
#include "nn/mha.h"
#include "nn/ffn.h"
#include "nn/loss.h"
#include "nn/optim.h"
#include "nn/block.h"
#include "nn/model.h"
#include "nn/train_parallel.h"
// lib/io/: file formats and inspection.
#include "io/atomic_file.h"
#include "io/npy.h"
#include "io/json.h"
#include "io/inspect.h"
#include "io/gnuplot.h"
#include "io/same_file.h"
// lib/real/: real pretrained models and configs.
#include "real/llama2c.h"
#include "real/dump.h"
#include "real/check_finite.h"
#include "real/tokenizer.h"
#include "real/sampler.h"
#include "real/beam.h"
#include "real/params.h"

#endif
