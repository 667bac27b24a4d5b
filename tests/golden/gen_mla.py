#!/usr/bin/python3
"""gen_mla.py: float64 PyTorch goldens for multi-head latent attention (lib/nn/mla.c;
tests/test_mla.c).

Run from the top of the checkout with Debian's Python, which has PyTorch:
    /usr/bin/python3 tests/golden/gen_mla.py
It rewrites data/golden/mla/<case>/. The reference is written here from the DeepSeek-V2/V3
formulas, with full per-head tensors (the training form), in float64 from float32-rounded
inputs: c_q = RMSNorm(x W_qa^T); q = c_q W_qb^T split per head into nope and rope parts;
[c_raw ; k_pe] = x W_kva^T; c = RMSNorm(c_raw); [k_nope ; v] = c W_kvb^T per head; RoPE on q's
rope part (per head) and on k_pe (one, shared by the heads), adjacent pairs (2i, 2i+1), angle
pos * theta^(-2i/d_rope); causal softmax of (q . k) / sqrt(d_nope + d_rope); y = o W_o^T.
Gradients are those of L = sum(dy * y) by autograd.

Files per case: cfg (int32: T C H q_rank kv_rank d_nope d_rope d_v), fcfg (float32: eps theta),
x, q_a, q_a_norm, q_b, kv_a, kv_a_norm, kv_b, o, c (the latent), kp (the rotated shared key), y,
dy, and d_ + each of x and the weights.
"""
import os

import numpy as np
import torch

from golden_io import save_npy

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "mla")
RNG = np.random.default_rng(20261129)

# name: T C H q_rank kv_rank d_nope d_rope d_v eps theta
CASES = {
    "small":   (5, 7, 3, 5, 4, 3, 2, 5, 1e-6, 10000.0),
    "T1":      (1, 4, 2, 3, 2, 2, 2, 3, 1e-6, 10000.0),
    "one_head": (6, 5, 1, 1, 1, 1, 2, 1, 1e-5, 500.0),
    "wide":    (9, 16, 4, 8, 6, 4, 4, 4, 1e-6, 10000.0),
}


def f32(*shape, scale=1.0):
    a = (RNG.uniform(-1, 1, size=shape) * scale).astype(np.float32).astype(np.float64)
    return torch.from_numpy(a).requires_grad_(True)


def rmsnorm(x, w, eps):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w


def rope_adjacent(x, theta):
    """x: (T, ..., d) at positions 0 .. T-1; pairs (2i, 2i+1) rotated by pos * theta^(-2i/d)."""
    T, d = x.shape[0], x.shape[-1]
    freq = theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * freq[None, :]     # (T, d/2)
    shape = [T] + [1] * (x.dim() - 2) + [d // 2]
    cos, sin = torch.cos(ang).reshape(shape), torch.sin(ang).reshape(shape)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).reshape(x.shape)


def mla(t, T, C, H, rq, rkv, dn, dr, dv, eps, theta):
    cq = rmsnorm(t["x"] @ t["q_a"].T, t["q_a_norm"], eps)
    q = (cq @ t["q_b"].T).reshape(T, H, dn + dr)
    qn, qp = q[..., :dn], rope_adjacent(q[..., dn:], theta)
    kva = t["x"] @ t["kv_a"].T
    c = rmsnorm(kva[:, :rkv], t["kv_a_norm"], eps)
    kp = rope_adjacent(kva[:, rkv:], theta)                              # (T, dr) shared
    kv = (c @ t["kv_b"].T).reshape(T, H, dn + dv)
    kn, v = kv[..., :dn], kv[..., dn:]
    s = (torch.einsum("thd,shd->hts", qn, kn) + torch.einsum("thd,sd->hts", qp, kp))
    s = s / (dn + dr) ** 0.5
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    p = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
    o = torch.einsum("hts,shd->thd", p, v).reshape(T, H * dv)
    return o @ t["o"].T, c, kp


def gen_case(name, cfg):
    T, C, H, rq, rkv, dn, dr, dv, eps, theta = cfg
    t = {"x": f32(T, C, scale=2.0), "q_a": f32(rq, C), "q_a_norm": f32(rq, scale=1.5),
         "q_b": f32(H * (dn + dr), rq), "kv_a": f32(rkv + dr, C), "kv_a_norm": f32(rkv, scale=1.5),
         "kv_b": f32(H * (dn + dv), rkv), "o": f32(C, H * dv)}
    y, c, kp = mla(t, T, C, H, rq, rkv, dn, dr, dv, eps, theta)
    dy = f32(T, C).detach()
    names = list(t)
    grads = torch.autograd.grad((dy * y).sum(), [t[n] for n in names])
    d = os.path.join(OUT, name)
    save_npy(os.path.join(d, "cfg.npy"), np.array([T, C, H, rq, rkv, dn, dr, dv], np.int32))
    save_npy(os.path.join(d, "fcfg.npy"), np.array([eps, theta], np.float32))
    for n in names:
        save_npy(os.path.join(d, n + ".npy"), t[n].detach())
    for n, v in (("y", y), ("c", c), ("kp", kp), ("dy", dy)):
        save_npy(os.path.join(d, n + ".npy"), v.detach())
    for n, g in zip(names, grads):
        save_npy(os.path.join(d, "d_" + n + ".npy"), g)
    print(f"{name}: T={T} C={C} H={H} q_rank={rq} kv_rank={rkv} d=({dn},{dr},{dv}) "
          f"max|y|={y.abs().max().item():.3f}")


if __name__ == "__main__":
    for name, cfg in CASES.items():
        gen_case(name, cfg)
