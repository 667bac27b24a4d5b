// rope_scaling.h: RoPE past the context a model was trained at, three ways, as Hugging Face's
// `rope_scaling` field describes them (config.json: "rope_type" or "type", "factor",
// "original_max_position_embeddings", "beta_fast", "beta_slow"). With s = factor, L = the trained
// context, b = theta, D = the head size and plain frequencies f_i = b^(-2i/D), i = 0 .. D/2-1:
//
//   linear  (position interpolation, Chen et al. 2023)   f_i' = f_i / s
//           every position is squeezed back into the trained range [0, L).
//   ntk     ("NTK-aware", bloc97 2023)                    f_i' = (b s^(D/(D-2)))^(-2i/D)
//           a larger base: the fastest pair (i = 0) is unchanged, the slowest is divided by s.
//           (Hugging Face's "dynamic" is a different rule, recomputed from the length: not this.)
//   yarn    (Peng et al. 2023)                            f_i' = f_i ((1 - g_i) / s + g_i)
//           pair i turns r_i = L f_i / (2 pi) times over the trained context. Pairs with many
//           turns (r_i > beta_fast, default 32) keep f_i (g_i = 1: extrapolate), pairs with few
//           (r_i < beta_slow, default 1) are interpolated (g_i = 0: f_i / s), and between the
//           two g_i ramps linearly in i: with d(r) = D ln(L / (2 pi r)) / (2 ln b), the pair whose
//           frequency turns r times, lo = max(floor(d(beta_fast)), 0),
//           hi = min(ceil(d(beta_slow)), D - 1), g_i = 1 - clamp((i - lo) / (hi - lo), 0, 1).
//           And a temperature: cos and sin are multiplied by m = 0.1 ln(s) + 1, so every score
//           q.k grows by m^2 (sharper attention over the longer context).
#ifndef TW_ROPE_SCALING_H
#define TW_ROPE_SCALING_H
#include "core/status.h"
#include "nn/rope.h"

typedef enum {
    TW_ROPE_SCALING_NONE = 0, TW_ROPE_SCALING_LINEAR, TW_ROPE_SCALING_NTK, TW_ROPE_SCALING_YARN
} tw_rope_scaling_kind;

typedef struct {
    tw_rope_scaling_kind kind;
    float factor;            // s >= 1: how many times the trained context to reach
    int   original_max_pos;  // L: the trained context (YaRN's ramp)
    float beta_fast;         // YaRN: turns above which a pair keeps its frequency (default 32)
    float beta_slow;         // YaRN: turns below which a pair is interpolated (default 1)
} tw_rope_scaling;

// A scaling of kind with factor s and trained context L, YaRN's betas at their defaults.
tw_rope_scaling tw_rope_scaling_make(tw_rope_scaling_kind kind, float factor, int original_max_pos);

// TW_OK, or TW_ERR_ARG: factor below 1 or not finite, L < 1 (YaRN), beta_slow >= beta_fast or
// not positive (YaRN).
tw_status tw_rope_scaling_check(const tw_rope_scaling *sc);

// "none", "linear", "ntk", "yarn"; and back (-1 for an unknown name).
const char *tw_rope_scaling_name(tw_rope_scaling_kind kind);
int tw_rope_scaling_from_name(const char *name);

// The D/2 frequencies above for base theta (kind NONE: the plain f_i), in double.
//   freq: (D/2)
void tw_rope_scaled_freqs(double *freq, int D, double theta, const tw_rope_scaling *sc);

// m: YaRN's 0.1 ln(s) + 1 (1 when s <= 1); 1 for the other kinds.
double tw_rope_scaling_attention_factor(const tw_rope_scaling *sc);

// RoPE with the scaled frequencies and factor m (tw_rope_apply_freqs), forward and backward.
// With kind NONE these are tw_rope_forward and tw_rope_backward, bit for bit.
//   x, dx: (T, H, D) in place, D/2 <= TW_ROPE_MAX_PAIRS
#define TW_ROPE_MAX_PAIRS 512
void tw_rope_scaled_forward(float *x, tw_rope_kind kind, int T, int H, int D, int pos0,
                            float theta, const tw_rope_scaling *sc);
void tw_rope_scaled_backward(float *dx, tw_rope_kind kind, int T, int H, int D, int pos0,
                             float theta, const tw_rope_scaling *sc);

#endif
