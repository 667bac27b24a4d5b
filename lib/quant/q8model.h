// q8model.h: llama2.c's version-2 (Q8_0) checkpoints and tw_model, both ways, and a loader that
// takes either version. A version-2 file becomes a tw_model whose fp32 parameters hold the
// dequantized values (q * s: what the embedding lookup reads) and whose Q8_0 copies
// (tw_model_q8_init) hold the file's own int8 values and scales, so a model state made from it
// runs every Linear layer in int8, and writing it back gives the same bytes.
//
// Tensor names: the file's (quant/q8file.h: "tok_embeddings", "layers.3.attention.wq", ...,
// "output") map onto the model's ("tok_emb", "layers.3.attn.wq", ..., "head"); w1, w2, w3 are
// the SwiGLU gate, down and up.
#ifndef TW_Q8MODEL_H
#define TW_Q8MODEL_H
#include <stddef.h>
#include "core/status.h"
#include "nn/model.h"
#include "quant/q8file.h"

// The model parameter that tensor i of a version-2 file of this configuration holds (its name
// in m->params: "tok_emb", "layers.0.attn.wq", "head"), written into name (len bytes).
void tw_q8file_model_name(char *name, size_t len, const tw_q8file_config *c, int i);

// A version-2 file of an fp32 llama model: allocates q (tw_q8file_alloc), copies the norms and
// quantizes every tensor in groups of gs. err gets one line (gs not dividing a row width, a
// model that is not llama-shaped, a NaN/Inf weight, out of memory).
tw_status tw_q8file_from_model(tw_q8file *q, const tw_model *m, int gs, char *err, size_t err_len);

// A read version-2 file into m (see the header comment). m is zeroed on failure.
tw_status tw_q8file_to_model(tw_model *m, const tw_q8file *q, char *err, size_t err_len);

// Loads a llama2.c checkpoint of either version into m: a file starting with the version-2 magic
// "ak42" through tw_q8file_read and tw_q8file_to_model, any other through tw_llama2c_load.
// *version receives 0 or 2. err gets one line starting with the path on failure.
tw_status tw_llama2c_load_any(tw_model *m, int *version, const char *path, char *err, size_t err_len);

#endif
