// rope_scaling.c: the scaled RoPE frequencies of rope_scaling.h, in double, in the order the
// formulas there are written.
#include <assert.h>
#include <math.h>
#include <string.h>
#include "nn/rope_scaling.h"

static const double TWO_PI = 6.283185307179586;

tw_rope_scaling tw_rope_scaling_make(tw_rope_scaling_kind kind, float factor, int original_max_pos) {
    tw_rope_scaling sc = { kind, factor, original_max_pos, 32.0f, 1.0f };
    return sc;
}

tw_status tw_rope_scaling_check(const tw_rope_scaling *sc) {
    if (sc->kind == TW_ROPE_SCALING_NONE) return TW_OK;
    if (!(sc->factor >= 1.0f) || !isfinite(sc->factor)) return TW_ERR_ARG;
    if (sc->kind == TW_ROPE_SCALING_YARN &&
        (sc->original_max_pos < 1 || !(sc->beta_slow > 0.0f) || !(sc->beta_fast > sc->beta_slow)))
        return TW_ERR_ARG;
    return TW_OK;
}

static const char *const NAMES[] = { "none", "linear", "ntk", "yarn" };

const char *tw_rope_scaling_name(tw_rope_scaling_kind kind) {
    return (unsigned)kind < 4 ? NAMES[kind] : "?";
}

int tw_rope_scaling_from_name(const char *name) {
    for (int k = 0; k < 4; k++)
        if (strcmp(name, NAMES[k]) == 0) return k;
    return -1;
}

// YaRN's d(r): the (fractional) pair index whose frequency turns r times over L positions,
// solving L b^(-2d/D) / (2 pi) = r for d.
static double yarn_pair_of_turns(double r, int D, double theta, int L) {
    return D * log(L / (r * TWO_PI)) / (2.0 * log(theta));
}

void tw_rope_scaled_freqs(double *freq, int D, double theta, const tw_rope_scaling *sc) {
    const int n = D / 2;
    const double s = sc->factor;
    for (int i = 0; i < n; i++) freq[i] = pow(theta, -2.0 * i / D);   // f_i, as rope.c
    switch (sc->kind) {
    case TW_ROPE_SCALING_NONE:
        break;
    case TW_ROPE_SCALING_LINEAR:
        for (int i = 0; i < n; i++) freq[i] /= s;
        break;
    case TW_ROPE_SCALING_NTK: {
        const double base = theta * pow(s, (double)D / (D - 2));
        for (int i = 0; i < n; i++) freq[i] = pow(base, -2.0 * i / D);
        break;
    }
    case TW_ROPE_SCALING_YARN: {
        double lo = floor(yarn_pair_of_turns(sc->beta_fast, D, theta, sc->original_max_pos));
        double hi = ceil(yarn_pair_of_turns(sc->beta_slow, D, theta, sc->original_max_pos));
        lo = lo > 0.0 ? lo : 0.0;
        hi = hi < D - 1 ? hi : D - 1;
        if (hi == lo) hi += 0.001;   // a one-pair ramp would divide by zero
        for (int i = 0; i < n; i++) {
            double ramp = (i - lo) / (hi - lo);
            ramp = ramp < 0.0 ? 0.0 : ramp > 1.0 ? 1.0 : ramp;
            const double g = 1.0 - ramp;   // 1: keep f_i (extrapolate), 0: f_i / s (interpolate)
            freq[i] = freq[i] / s * (1.0 - g) + freq[i] * g;
        }
        break;
    }
    }
}

double tw_rope_scaling_attention_factor(const tw_rope_scaling *sc) {
    if (sc->kind != TW_ROPE_SCALING_YARN || sc->factor <= 1.0f) return 1.0;
    return 0.1 * log((double)sc->factor) + 1.0;
}

static void scaled(float *x, tw_rope_kind kind, int T, int H, int D, int pos0, float theta,
                   const tw_rope_scaling *sc, int transpose) {
    assert(D / 2 <= TW_ROPE_MAX_PAIRS);
    double freq[TW_ROPE_MAX_PAIRS];   // (D/2)
    tw_rope_scaled_freqs(freq, D, theta, sc);
    tw_rope_apply_freqs(x, kind, T, H, D, pos0, freq, tw_rope_scaling_attention_factor(sc),
                        transpose);
}

void tw_rope_scaled_forward(float *x, tw_rope_kind kind, int T, int H, int D, int pos0,
                            float theta, const tw_rope_scaling *sc) {
    scaled(x, kind, T, H, D, pos0, theta, sc, 0);
}

void tw_rope_scaled_backward(float *dx, tw_rope_kind kind, int T, int H, int D, int pos0,
                             float theta, const tw_rope_scaling *sc) {
    scaled(dx, kind, T, H, D, pos0, theta, sc, 1);
}
