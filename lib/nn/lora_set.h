// lora_set.h: the LoRA adapters of a whole model: one adapter (nn/lora.h) on each chosen Linear
// ("target") of every layer, all with the same rank r and alpha. The targets are named as in
// llama2.c and Meta's Llama code:
//   wq, wk, wv, wo   attention's query, key, value and output projections
//   w1, w2, w3       the FFN: SwiGLU's gate, down and up (ffn.gate, ffn.down, ffn.up);
//                    the classic FFN's w1 and w2 (it has no w3)
// The adapters' floats are in one allocation, in the order of the adapters file
// (formats/lora_file.h): for each layer l, for each target in the order given, A (r, in) then
// B (out, r).
#ifndef TW_LORA_SET_H
#define TW_LORA_SET_H
#include "core/status.h"
#include "nn/lora.h"
#include "nn/model.h"

enum { TW_LORA_WQ = 0, TW_LORA_WK, TW_LORA_WV, TW_LORA_WO, TW_LORA_W1, TW_LORA_W2, TW_LORA_W3,
       TW_LORA_N_KINDS };

// "wq" .. "w3" for a target kind; its index for a name, or -1 for an unknown name.
const char *tw_lora_target_name(int kind);
int         tw_lora_target_parse(const char *name);
// The (out, in) shape of a target in a model of configuration c; TW_ERR_SHAPE if the model has no
// such Linear (w3 without SwiGLU).
tw_status   tw_lora_target_shape(int *out, int *in, const tw_model_config *c, int kind);
// Parses a comma-separated list such as "wq,wv" into kinds (in the order given). TW_ERR_ARG with
// one line in err for an empty list, an unknown name or a name given twice.
tw_status   tw_lora_targets_parse(int *targets, int *n_targets, const char *list, char *err,
                                  size_t err_len);

typedef struct {
    int      r;                          // rank, 1 .. TW_LORA_MAX_R
    float    alpha;                      // the scale is alpha / r
    int      n_targets;                  // 1 .. TW_LORA_N_KINDS, no kind twice
    int      targets[TW_LORA_N_KINDS];   // (n_targets) kinds, in the order given
    int      in[TW_LORA_N_KINDS], out[TW_LORA_N_KINDS];   // (n_targets) each target's shape
    int      n_layer;
    float   *memory;                     // (n_floats) every A and B
    long     n_floats;
    tw_lora *lin;                        // (n_layer, n_targets) pointers into memory
} tw_lora_set;

// Allocates zeroed adapters for a model of configuration c (B = 0 and A = 0: call
// tw_lora_set_randomize for A). TW_ERR_ARG for r outside 1 .. TW_LORA_MAX_R, a non-finite or
// non-positive alpha, no target, too many or a repeated one; TW_ERR_SHAPE for a target the model
// lacks; TW_ERR_NOMEM. tw_lora_set_free is safe on a zeroed struct.
tw_status tw_lora_set_init(tw_lora_set *s, const tw_model_config *c, int r, float alpha,
                           const int *targets, int n_targets);
void      tw_lora_set_free(tw_lora_set *s);
// Floats of the adapters for these sizes: n_layer * sum over targets of r (in + out).
long      tw_lora_set_floats(const tw_model_config *c, int r, const int *targets, int n_targets);
// A fresh adapter: every A uniform in [-1/sqrt(in), 1/sqrt(in)) (the bound of PyTorch's default
// Linear init, which the LoRA paper's code uses for A), every B zero. Seeded.
void      tw_lora_set_randomize(tw_lora_set *s, uint64_t seed);
// A and B of layer l, target index i (0 .. n_targets-1), as writable pointers into s->memory.
float    *tw_lora_A(const tw_lora_set *s, int l, int i);   // (r, in)
float    *tw_lora_B(const tw_lora_set *s, int l, int i);   // (out, r)

// The frozen weight a target adapts, in m's memory: (out, in).
float    *tw_lora_base_weight(const tw_model *m, int l, int kind);
// Points each target's tw_weight at its adapter, so the model's forward adds the adapters' terms
// unmerged (nn/linear.h); tw_lora_detach removes every adapter again. The set must outlive the
// attachment. TW_ERR_SHAPE if the set was made for another shape of model.
tw_status tw_lora_attach(tw_model *m, const tw_lora_set *s);
void      tw_lora_detach(tw_model *m);
// W += sign * (alpha / r) B A on every target (sign +1 merges, -1 unmerges; nn/lora.h).
// TW_ERR_SHAPE if the set was made for another shape of model.
tw_status tw_lora_merge_model(tw_model *m, const tw_lora_set *s, int sign);
// 1 if the set fits a model of configuration c: the same number of layers and every target's
// shape; 0 otherwise.
int       tw_lora_set_fits(const tw_lora_set *s, const tw_model_config *c);

#endif
