#!/usr/bin/python3
"""gen_sdpa_tiled.py: float64 autograd goldens for the tiled attention (lib/nn/sdpa_tiled.c,
tests/test_sdpa_tiled.c).

Run from the top of the checkout with Debian's Python, which has PyTorch:
    /usr/bin/python3 tests/golden/gen_sdpa_tiled.py
It rewrites data/golden/backward/sdpa_tiled/<case>/. Each case holds q (T, H*D), k and v
(T, G*D), an optional additive mask (T, T) of 0 and -inf, the upstream gradient dout (T, H*D),
out = attention(q, k, v) and d_q, d_k, d_v = d sum(dout * out) / d (q, k, v), computed by
torch.autograd in float64 from the float32 inputs and rounded to float32 once; cfg holds
(T, H, G, D, causal, has_mask, block), block being the key block the C test tiles with.

The reference is the materialised formula, softmax(q k^T / sqrt(D) + mask) v per head, query
head h reading key/value head h // (H // G). A row whose keys are all hidden has no softmax
(0 / 0): its output is defined as 0, as the C code defines it, by dividing by 1 where l = 0
(the row's exponentials are all 0, so its output and gradients are 0, not NaN).
"""
import math
import os

import numpy as np
import torch

from golden_io import save_npy

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "backward", "sdpa_tiled")
RNG = np.random.default_rng(20261128)

# name: (T, H, G, D, causal, has_mask, block)
CASES = {
    "gqa_T7": (7, 4, 2, 8, 1, 0, 3),
    "mqa_T64_mask": (64, 4, 1, 8, 1, 1, 16),
    "mha_T257_full": (257, 2, 2, 8, 0, 1, 64),
}


def leaf(*shape, lo=-1.0, hi=1.0):
    a = RNG.uniform(lo, hi, size=shape).astype(np.float32)
    return torch.from_numpy(a.astype(np.float64)).requires_grad_(True)


def attention(q, k, v, mask, T, H, G, D, causal):
    """q: (T, H*D), k, v: (T, G*D), mask: (T, T) or None -> (T, H*D)."""
    outs = []
    hidden = torch.zeros(T, T, dtype=torch.bool)
    if causal:
        hidden = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    for h in range(H):
        g = h // (H // G)
        qh, kh, vh = q[:, h * D:(h + 1) * D], k[:, g * D:(g + 1) * D], v[:, g * D:(g + 1) * D]
        s = qh @ kh.T / math.sqrt(D)
        if mask is not None:
            s = s + mask
        s = s.masked_fill(hidden, -math.inf)
        m = s.max(dim=1, keepdim=True).values.detach()
        m = torch.where(torch.isinf(m), torch.zeros_like(m), m)   # all-hidden rows: exp(-inf) = 0
        e = torch.exp(s - m)
        l = e.sum(dim=1, keepdim=True)
        l = torch.where(l > 0, l, torch.ones_like(l))              # 0 / 1 = 0 for those rows
        outs.append((e / l) @ vh)
    return torch.cat(outs, dim=1)


def main():
    for name, (T, H, G, D, causal, has_mask, block) in CASES.items():
        q = leaf(T, H * D, lo=-2, hi=2)
        k = leaf(T, G * D, lo=-2, hi=2)
        v = leaf(T, G * D)
        mask = None
        if has_mask:
            m = np.where(RNG.uniform(size=(T, T)) < 0.25, -np.inf, 0.0).astype(np.float32)
            m[T // 3, :] = -np.inf          # one row sees no key at all
            mask = torch.from_numpy(m.astype(np.float64))
        out = attention(q, k, v, mask, T, H, G, D, causal)
        dout = leaf(T, H * D).detach()
        dq, dk, dv = torch.autograd.grad((dout * out).sum(), [q, k, v])
        d = os.path.join(OUT, name)
        save_npy(os.path.join(d, "cfg.npy"), np.array([T, H, G, D, causal, has_mask, block],
                                                      dtype=np.int32))
        for key, arr in (("q", q), ("k", k), ("v", v), ("dout", dout), ("out", out),
                         ("d_q", dq), ("d_k", dk), ("d_v", dv)):
            save_npy(os.path.join(d, key + ".npy"), arr)
        if mask is not None:
            save_npy(os.path.join(d, "mask.npy"), mask)
        print("wrote", d)


if __name__ == "__main__":
    main()
