// batch_panels.h: a model's weights packed once into panels for the batch's fast Linear layer
// (tw_linear_packed, lib/simd/linear_packed.c). Set b->panels of a batch to use them: each output
// is then one chain of fused multiply-adds over k instead of the decode matvec's four folded
// accumulators, faster, but no longer bit for bit decoding alone (docs/serving.md has the bound,
// what was measured, and the greedy text checked). Left NULL, the batch keeps the matvec's bits.
#ifndef TW_BATCH_PANELS_H
#define TW_BATCH_PANELS_H
#include "core/status.h"
#include "nn/model.h"

// One block's matrices, packed; NULL where the weight is not a plain fp32 matrix (int8, or a
// LoRA adapter attached: those run through tw_linear_forward_rows) or the block has none.
typedef struct {
    const float *wq, *wk, *wv, *wo;          // attention's projections
    const float *ffn_w1, *ffn_w2;            // classic FFN
    const float *ffn_gate, *ffn_up, *ffn_down;   // SwiGLU
} tw_layer_panels;

typedef struct {
    float           *mem;      // every packed matrix, one allocation
    tw_layer_panels *layers;   // (n_layer)
    const float     *head;     // (V, C) packed, or NULL
} tw_batch_panels;

// Packs every matrix of m's blocks and its head (about the model's size again in memory).
// TW_ERR_ARG for a model batched decoding does not run (tw_batch_supports), TW_ERR_SHAPE if no
// matrix is plain fp32 (an int8 model: nothing to pack), TW_ERR_NOMEM if the memory cannot be had.
tw_status tw_batch_panels_init(tw_batch_panels *p, const tw_model *m);
void      tw_batch_panels_free(tw_batch_panels *p);   // safe on a zeroed struct
// What a failed tw_batch_panels_init means, for a program's one line after "--packed: ".
const char *tw_batch_panels_why(tw_status st);

#endif
