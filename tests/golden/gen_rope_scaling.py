#!/usr/bin/python3
"""gen_rope_scaling.py: float64 references for the scaled RoPEs (lib/nn/rope_scaling.c,
tests/test_rope_scaling.c), written from the published formulas, not from the C code:

  linear (position interpolation, Chen et al. 2023, "Extending Context Window of Large Language
          Models via Positional Interpolation"): positions divided by s, i.e. f_i / s.
  ntk    (bloc97, "NTK-Aware Scaled RoPE", 2023): base b' = b * s^(D / (D - 2)).
  yarn   (Peng et al. 2023, "YaRN", eq. 17-20 and the attention temperature sqrt(1/t) =
          0.1 ln(s) + 1), with the integer band edges of its reference code and of Hugging Face's
          _compute_yarn_parameters (floor of the fast edge, ceil of the slow one, clipped to
          [0, D - 1]) and the ramp over the pair index.

Run from the top of the checkout:  /usr/bin/python3 tests/golden/gen_rope_scaling.py
Writes data/golden/rope_scaling/<case>/: cfg (kind, D, pairing, pos0, T, H, L) as int32,
params (theta, factor, beta_fast, beta_slow) and freq (D/2), mscale (1), x (T, H, D) and
rot (T, H, D): x rotated by RoPE with these frequencies at positions pos0 .., cos and sin times
mscale, in float64 from the float32 x, rounded once.
"""
import math
import os

import numpy as np

from golden_io import save_npy

OUT = os.path.join("data", "golden", "rope_scaling")
RNG = np.random.default_rng(20261128)
KINDS = {"none": 0, "linear": 1, "ntk": 2, "yarn": 3}

# name: (kind, D, pairing 1 adjacent / 2 halves, theta, factor, L, beta_fast, beta_slow, pos0, T, H)
CASES = {
    "linear_D8": ("linear", 8, 1, 1e4, 4.0, 64, 32.0, 1.0, 0, 5, 2),
    "ntk_D8_halves": ("ntk", 8, 2, 1e4, 4.0, 64, 32.0, 1.0, 100, 5, 2),
    "yarn_D8_L64": ("yarn", 8, 1, 1e4, 4.0, 64, 32.0, 1.0, 200, 5, 2),
    "yarn_D64_L2048": ("yarn", 64, 2, 1e4, 8.0, 2048, 32.0, 1.0, 9000, 3, 2),
    "yarn_D128_qwen3": ("yarn", 128, 2, 1e6, 4.0, 32768, 32.0, 1.0, 100000, 2, 1),
    "ntk_D128_qwen3": ("ntk", 128, 1, 1e6, 4.0, 32768, 32.0, 1.0, 70000, 2, 1),
    "yarn_betas": ("yarn", 64, 1, 1e4, 2.0, 512, 16.0, 2.0, 700, 3, 2),
}


def plain(D, theta):
    return [theta ** (-2.0 * i / D) for i in range(D // 2)]


def frequencies(kind, D, theta, s, L, beta_fast, beta_slow):
    f = plain(D, theta)
    if kind == "none":
        return f, 1.0
    if kind == "linear":
        return [x / s for x in f], 1.0
    if kind == "ntk":
        return plain(D, theta * s ** (D / (D - 2.0))), 1.0
    # YaRN: pair i turns L f_i / (2 pi) times over the trained context. The band edges are the
    # pair indices where that count equals beta_fast and beta_slow.
    def edge(turns):
        return D * math.log(L / (turns * 2 * math.pi)) / (2 * math.log(theta))
    lo = max(math.floor(edge(beta_fast)), 0)
    hi = min(math.ceil(edge(beta_slow)), D - 1)
    if lo == hi:
        hi += 0.001
    out = []
    for i, fi in enumerate(f):
        gamma = 1.0 - min(max((i - lo) / (hi - lo), 0.0), 1.0)   # 1 extrapolate, 0 interpolate
        out.append((1 - gamma) * fi / s + gamma * fi)
    mscale = 0.1 * math.log(s) + 1.0 if s > 1 else 1.0
    return out, mscale


def rotate(x, freq, mscale, pairing, pos0):
    T, H, D = x.shape
    y = x.copy()
    for t in range(T):
        for i, fi in enumerate(freq):
            a = (pos0 + t) * fi
            c, s = mscale * math.cos(a), mscale * math.sin(a)
            j, k = (2 * i, 2 * i + 1) if pairing == 1 else (i, i + D // 2)
            for h in range(H):
                x0, x1 = x[t, h, j], x[t, h, k]
                y[t, h, j] = x0 * c - x1 * s
                y[t, h, k] = x0 * s + x1 * c
    return y


def main():
    for name, (kind, D, pairing, theta, s, L, bf, bs, pos0, T, H) in CASES.items():
        freq, mscale = frequencies(kind, D, theta, s, L, bf, bs)
        x = RNG.uniform(-1, 1, size=(T, H, D)).astype(np.float32).astype(np.float64)
        d = os.path.join(OUT, name)
        save_npy(os.path.join(d, "cfg.npy"), np.array([KINDS[kind], D, pairing, pos0, T, H, L],
                                                      dtype=np.int32))
        save_npy(os.path.join(d, "params.npy"), np.array([theta, s, bf, bs]))
        save_npy(os.path.join(d, "freq.npy"), np.array(freq))
        save_npy(os.path.join(d, "mscale.npy"), np.array([mscale]))
        save_npy(os.path.join(d, "x.npy"), x)
        save_npy(os.path.join(d, "rot.npy"), rotate(x, freq, mscale, pairing, pos0))
        print("wrote", d)


if __name__ == "__main__":
    main()
