// llama2c_write.h: writing a tw_model as a llama2.c legacy (version 0) checkpoint, the format
// formats/llama2c.h reads and llama2.c's run.c loads: the 7-int32 header (vocab_size positive when
// the classifier shares the token embedding table, negative when it is stored at the end), then
// the float32 arrays in the order llama2c.h lists, the freq_cis tables included.
#ifndef TW_LLAMA2C_WRITE_H
#define TW_LLAMA2C_WRITE_H
#include <stddef.h>
#include "core/status.h"
#include "nn/model.h"

// 1 if llama2.c can represent m: a "llama"-arranged model (pre-norm RMSNorm with eps 1e-5, RoPE
// on adjacent pairs with base 10000, head_dim = C / H, SwiGLU, no biases, no QK-norm, no learned
// or sinusoidal positions, a final norm). Else 0, with the first difference in why.
int tw_llama2c_can_write(const tw_model *m, char *why, size_t why_len);

// The RoPE tables of the file: cos and sin of p * theta_i for p < seq_len, i < D/2, with
// theta_i = 1 / 10000^(2i / D) and the angle p * theta_i both rounded to float32 as PyTorch's
// exporter computes them, then cos/sin in double rounded once. (The exporter's own float32
// cos/sin may differ from these in the last bit; no runner reads the tables.)
//   re, im: (seq_len, D/2)
void tw_llama2c_freq_cis(float *re, float *im, int seq_len, int D);

// Writes m to path atomically (formats/atomic_file.h): on any failure path is left as it was.
// TW_ERR_ARG if !tw_llama2c_can_write (err says why), TW_ERR_IO, TW_ERR_NOMEM.
tw_status tw_llama2c_write(const char *path, const tw_model *m, char *err, size_t err_len);

#endif
