// tw.h: the umbrella header of the transformer-walkthrough library (prefix tw_).
//
// Every transformer component is one plain C11 function in its own file pair under lib/nn/; the
// other folders of lib/ are the course's other chapters (listed below, bottom up).
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

// The chapters, from the bottom up (tools/check_layers.sh checks that includes point down).
// lib/core/: status codes and the random generator.
#include "core/status.h"
#include "core/rng.h"
// lib/simd/: the kernels, chosen once at start-up (tw_simd_init).
#include "simd/simd.h"
#include "simd/q8.h"
// lib/nn/: the components the course teaches, in the order of the lessons, each _forward beside
// its _backward, and the model made of them.
#include "nn/linear.h"
#include "nn/embedding.h"
#include "nn/norm.h"
#include "nn/activation.h"
#include "nn/softmax.h"
#include "nn/posenc.h"
#include "nn/rope.h"
#include "nn/rope_scaling.h"
#include "nn/sdpa.h"
#include "nn/sdpa_tiled.h"
#include "nn/mha.h"
#include "nn/ffn.h"
#include "nn/router.h"
#include "nn/moe.h"
#include "nn/mla.h"
#include "nn/block.h"
#include "nn/model.h"
#include "nn/long_context.h"
#include "nn/reference.h"
// lib/formats/: files: llama2.c checkpoints, .npy, JSON and Hugging Face configs, atomic writes.
#include "formats/regular_file.h"
#include "formats/atomic_file.h"
#include "formats/same_file.h"
#include "formats/file_kind.h"
#include "formats/npy.h"
#include "formats/json.h"
#include "formats/hf_config.h"
#include "formats/hf_rope_scaling.h"
#include "formats/hf_moe.h"
#include "formats/llama2c.h"
#include "formats/llama2c_write.h"
// lib/tokenize/: text to ids and back; learning a BPE vocabulary.
#include "tokenize/tokenizer.h"
#include "tokenize/bpe_train.h"
#include "tokenize/bpe_pieces.h"
// lib/decode/: choosing the next token: sampling, beam search; serving: speculative decoding,
// batched decoding over a paged KV cache, static and continuous batching.
#include "decode/sampler.h"
#include "decode/beam.h"
#include "decode/speculative.h"
#include "decode/paged_cache.h"
#include "decode/batch.h"
#include "decode/serve.h"
// lib/quant/: int8 weights: the Q8_0 scheme, the int8 file, the error budget.
#include "quant/q8_0.h"
#include "quant/model_q8.h"
#include "quant/q8file.h"
#include "quant/q8model.h"
#include "quant/q8budget.h"
// lib/train/: the loss, AdamW, one step, threads, data and batches, checkpoints.
#include "train/loss.h"
#include "train/forward_backward.h"
#include "train/optim.h"
#include "train/step.h"
#include "train/parallel.h"
#include "train/tokens.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/lora_step.h"   // LoRA, the loss mask, distillation (docs/training.md)
#include "train/mask.h"
#include "train/distill.h"
#include "train/seq_logprob.h"   // preferences: log pi(y|x), the DPO loss, pairs, a DPO step (docs/preferences.md)
#include "train/dpo.h"
#include "train/pairs.h"
#include "train/dpo_step.h"
#include "nn/lora_set.h"
#include "formats/lora_file.h"
#include "tokenize/special.h"      // special tokens, new token rows, the chat template (docs/finetuning.md)
#include "train/grow_vocab.h"
#include "train/chat_template.h"
// lib/inspect/: looking inside: every intermediate as .npy, the first NaN, printing, pictures.
#include "inspect/dump.h"
#include "inspect/check_finite.h"
#include "inspect/print.h"
#include "inspect/gnuplot.h"

#endif
