// rope.c: rotary position embedding in the two pairings in use (see rope.h).
// Precision: the frequency theta^(-2i/D), the angle pos * freq and its cos/sin are computed in
// double, then cos and sin are rounded to float; the rotation itself is done in float. (PyTorch
// implementations usually compute the angle in float32, which loses accuracy at large positions;
// our goldens use float64 throughout.)
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include "nn/rope.h"

static double rope_freq_d(int i, int D, double theta) { return pow(theta, -2.0 * i / D); }

float tw_rope_freq(int i, int D, float theta) { return (float)rope_freq_d(i, D, theta); }

// Rotates the pair (*a, *b) by the angle whose cosine and sine are c and s.
static void rotate_pair(float *a, float *b, float c, float s) {
    float a0 = *a, b0 = *b;
    *a = a0 * c - b0 * s;
    *b = a0 * s + b0 * c;
}

// Rotates pair i of every head of T positions by the angle (pos0 + t) * freq, its cos and sin
// multiplied by mag (1 for plain RoPE; YaRN's attention factor, nn/rope_scaling.h). halves = 0
// pairs (2i, 2i+1), 1 pairs (i, i + D/2); transpose = 1 rotates by the opposite angle (the
// backward).
static void rotate_positions(float *x, int T, int H, int D, int pos0, int i, double freq,
                             double mag, int halves, int transpose) {
    for (int t = 0; t < T; t++) {
        double angle = ((double)pos0 + t) * freq;
        float c = (float)(mag * cos(angle)), s = (float)(mag * sin(angle));  // shared by every head
        if (transpose) s = -s;
        for (int h = 0; h < H; h++) {
            float *x_th = x + ((size_t)t * H + h) * D;       // (D)
            if (halves) rotate_pair(&x_th[i], &x_th[i + D / 2], c, s);
            else        rotate_pair(&x_th[2 * i], &x_th[2 * i + 1], c, s);
        }
    }
}

// Shared loop. Pairs outside, positions inside: each frequency's pow once per call, not once per
// position (every pair is still rotated once, by the same angle: the same bits in either order).
// mag = 1 multiplies exactly, so the plain rotation's bits do not depend on it.
static void rope_apply(float *x, int T, int H, int D, int pos0, float theta, int halves,
                       int transpose) {
    assert(D % 2 == 0);
    for (int i = 0; i < D / 2; i++)
        rotate_positions(x, T, H, D, pos0, i, rope_freq_d(i, D, theta), 1.0, halves, transpose);
}

void tw_rope_apply_freqs(float *x, tw_rope_kind kind, int T, int H, int D, int pos0,
                         const double *freq, double mag, int transpose) {
    assert(D % 2 == 0);
    if (kind == TW_ROPE_NONE) return;
    for (int i = 0; i < D / 2; i++)
        rotate_positions(x, T, H, D, pos0, i, freq[i], mag, kind == TW_ROPE_HALVES, transpose);
}

void tw_rope_angles(float *cos_t, float *sin_t, int pos, int D, float theta) {
    for (int i = 0; i < D / 2; i++) {
        // In double, as rope_apply: pos * freq reaches thousands of radians, where float would
        // lose the phase.
        double angle = (double)pos * rope_freq_d(i, D, theta);
        cos_t[i] = (float)cos(angle);
        sin_t[i] = (float)sin(angle);
    }
}

void tw_rope_pairs(float *x, const float *cos_t, const float *sin_t, int n_head, int D) {
    for (int h = 0; h < n_head; h++) {
        float *xh = x + (size_t)h * D;                           // (D)
        for (int i = 0; i < D / 2; i++) rotate_pair(&xh[2 * i], &xh[2 * i + 1], cos_t[i], sin_t[i]);
    }
}

void tw_rope_freq_angles(float *cos_t, float *sin_t, int pos, int D, const double *freq,
                         double mag) {
    for (int i = 0; i < D / 2; i++) {
        double angle = (double)pos * freq[i];   // rotate_positions at t = 0 (pos + 0.0 is pos)
        cos_t[i] = (float)(mag * cos(angle));
        sin_t[i] = (float)(mag * sin(angle));
    }
}

void tw_rope_rotate(float *x, tw_rope_kind kind, const float *cos_t, const float *sin_t,
                    int n_head, int D) {
    assert(D % 2 == 0);
    if (kind == TW_ROPE_NONE) return;
    if (kind != TW_ROPE_HALVES) {   // adjacent pairs: what tw_rope_pairs does
        tw_rope_pairs(x, cos_t, sin_t, n_head, D);
        return;
    }
    for (int h = 0; h < n_head; h++) {
        float *xh = x + (size_t)h * D;                           // (D)
        for (int i = 0; i < D / 2; i++) rotate_pair(&xh[i], &xh[i + D / 2], cos_t[i], sin_t[i]);
    }
}

void tw_rope_adjacent_forward(float *x, int T, int H, int D, int pos0, float theta) {
    rope_apply(x, T, H, D, pos0, theta, 0, 0);
}

void tw_rope_halves_forward(float *x, int T, int H, int D, int pos0, float theta) {
    rope_apply(x, T, H, D, pos0, theta, 1, 0);
}

void tw_rope_forward(float *x, tw_rope_kind kind, int T, int H, int D, int pos0, float theta) {
    switch (kind) {
    case TW_ROPE_NONE:     break;
    case TW_ROPE_ADJACENT: tw_rope_adjacent_forward(x, T, H, D, pos0, theta); break;
    case TW_ROPE_HALVES:   tw_rope_halves_forward(x, T, H, D, pos0, theta); break;
    }
}

// ---- backward ----

void tw_rope_adjacent_backward(float *dx, int T, int H, int D, int pos0, float theta) {
    rope_apply(dx, T, H, D, pos0, theta, 0, 1);
}

void tw_rope_halves_backward(float *dx, int T, int H, int D, int pos0, float theta) {
    rope_apply(dx, T, H, D, pos0, theta, 1, 1);
}

void tw_rope_backward(float *dx, tw_rope_kind kind, int T, int H, int D, int pos0, float theta) {
    switch (kind) {
    case TW_ROPE_NONE:     break;
    case TW_ROPE_ADJACENT: tw_rope_adjacent_backward(dx, T, H, D, pos0, theta); break;
    case TW_ROPE_HALVES:   tw_rope_halves_backward(dx, T, H, D, pos0, theta); break;
    }
}
