// q8file.h: llama2.c's version-2 checkpoint ("Q8_0", written by llama2.c's export.py
// --version 2 and read by its runq.c), read and written byte for byte in that layout, so files
// move both ways between this toolkit and runq.c. docs/quantization.md describes every byte.
//
// In short (all little-endian):
//   header, 256 bytes: uint32 magic 0x616b3432 ("ak42"), int32 version 2, 7 int32 (dim,
//     hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len), uint8 shared_classifier
//     at byte 36, int32 group_size at byte 37 (unaligned), zeros up to byte 256;
//   fp32: rms_att (L, C), rms_ffn (L, C), rms_final (C);
//   then each quantized tensor, in this order, as its int8 values (rows * cols) followed at once
//     by its float32 scales (rows * cols / gs): tok_embeddings (V, C); wq (C, C) for every layer;
//     then wk (KV, C), wv (KV, C), wo (C, C), w1 (F, C), w2 (C, F), w3 (F, C), each for every layer
//     in turn; and output (V, C) only when shared_classifier is 0.
// Groups run along rows (Q8_0 of lib/quant/q8_0.h), so the group size must divide both row widths
// C and F. The reader refuses one that does not: runq.c would silently skip the tail of each row.
#ifndef TW_Q8FILE_H
#define TW_Q8FILE_H
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"

#define TW_Q8FILE_MAGIC   0x616b3432u   // "ak42" read as a little-endian uint32
#define TW_Q8FILE_VERSION 2
#define TW_Q8FILE_HEADER  256
// Limits the reader accepts (those of lib/formats/llama2c.h), so no size can overflow.
#define TW_Q8FILE_MAX_DIM    65536
#define TW_Q8FILE_MAX_LAYERS 1024
#define TW_Q8FILE_MAX_VOCAB  (1 << 22)
#define TW_Q8FILE_MAX_SEQ    (1 << 20)

typedef struct {
    int dim;                 // C
    int hidden_dim;          // F
    int n_layers;            // L
    int n_heads;             // H
    int n_kv_heads;          // G
    int vocab_size;          // V (positive: version 2 keeps the sharing in its own flag)
    int seq_len;
    int shared_classifier;   // 1: the classifier is tok_embeddings (no output tensor stored)
    int group_size;          // gs
} tw_q8file_config;

// One quantized matrix (rows, cols) in groups of gs along each row.
typedef struct {
    char          name[48];  // PyTorch's name in llama2.c's model.py, e.g. "layers.3.attention.wq"
    int           rows, cols;
    int8_t       *q;         // (rows, cols)
    float        *s;         // (rows, cols / gs)
} tw_q8file_tensor;

typedef struct {
    tw_q8file_config  cfg;
    float            *rms_att;     // (L, C)
    float            *rms_ffn;     // (L, C)
    float            *rms_final;   // (C)
    int               n_tensors;   // 1 + 7 L (+ 1 if not shared)
    tw_q8file_tensor *tensors;     // (n_tensors) in file order; q and s point into memory
    unsigned char    *memory;      // one allocation: the norms, then each tensor's q (padded to a
                                   // multiple of 4 bytes, so every s is float-aligned) and s
    long long         n_bytes;     // of memory (not the file's size: see tw_q8file_size)
} tw_q8file;

// Validates a configuration: positive sizes within the limits, C % H == 0, H % G == 0, an even
// head size, shared_classifier 0 or 1, 0 < gs <= 65536 dividing both C and F. err receives one
// line naming the field (e.g. "group size 64 does not divide hidden_dim 172 ...").
tw_status tw_q8file_check_config(const tw_q8file_config *cfg, char *err, size_t err_len);

// The file's size in bytes for a valid configuration.
long long tw_q8file_size(const tw_q8file_config *cfg);

// Allocates a model of this (valid) configuration with every value zero and the tensor table
// filled in (names, shapes, pointers), ready to be filled and written. TW_ERR_NOMEM or the
// status of tw_q8file_check_config.
tw_status tw_q8file_alloc(tw_q8file *m, const tw_q8file_config *cfg, char *err, size_t err_len);

// Reads a version-2 file. Refuses, with TW_ERR_IO or TW_ERR_FORMAT and one line starting with the
// path: a short or truncated file, extra bytes, a bad magic or version, an invalid configuration
// (above), a shared flag other than 0/1, a norm weight or a scale that is NaN or Inf, a negative
// scale, a scale so large that the int8 kernel's product overflows (tw_q8file_check_values), an
// int8 value of -128 (outside Q8_0's [-127, 127]). On failure *m is zeroed.
tw_status tw_q8file_read(tw_q8file *m, const char *path, char *err, size_t err_len);

// The values' checks of tw_q8file_read: every norm weight finite; every scale finite, >= 0 and
// at most FLT_MAX / (127 * 127 * group size), so that the int8 matvec's (float)dot * scale (dot
// up to 127 * 127 * gs) is finite (about 3.3e33 for gs = 64, far above any trained weight's
// max|w| / 127); no int8 value -128. 1 if all hold, else 0 with the first failure in what
// (without the path). ./quantize's output is checked the same way before it is written.
int tw_q8file_check_values(const tw_q8file *m, char *what, size_t len);

// Writes m (through lib/atomic_file: a failure leaves no partial file). TW_ERR_IO with a line
// naming the path on failure.
tw_status tw_q8file_write(const char *path, const tw_q8file *m, char *err, size_t err_len);

void tw_q8file_free(tw_q8file *m);   // safe on a zeroed struct; zeroes it again

// The tensor of that name, or NULL.
const tw_q8file_tensor *tw_q8file_find(const tw_q8file *m, const char *name);

#endif
