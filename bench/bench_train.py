#!/usr/bin/python3
"""bench_train.py MODEL.bin B T STEPS: PyTorch's training speed for a llama2.c checkpoint's shape,
for `make bench-train` (tools/bench_train.c runs it and prints the ratio). float32, one thread,
batched (B, T), AdamW (decay on 2+-dim parameters) and clip_grad_norm_ 1.0, as our step does;
random tokens; median of STEPS steps after one warm-up. Prints `torch_tok_per_s X`."""
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)


def main():
    path, B, T, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    b = open(path, "rb").read()
    C, Fh, L, H, G, V, S = struct.unpack_from("<7i", b, 0)
    tied = V > 0
    V = abs(V)
    D = C // H
    rng = np.random.default_rng(0)

    def p(*shape):   # the speed does not depend on the values: seeded N(0, 0.02)
        return torch.tensor(rng.standard_normal(shape).astype(np.float32) * 0.02, requires_grad=True)

    def g(n):
        return torch.ones(n, requires_grad=True)
    W = dict(emb=p(V, C), fin=g(C))
    for l in range(L):
        W.update({f"n1{l}": g(C), f"q{l}": p(C, C), f"k{l}": p(G * D, C), f"v{l}": p(G * D, C),
                  f"o{l}": p(C, C), f"n2{l}": g(C), f"w1{l}": p(Fh, C), f"w2{l}": p(C, Fh), f"w3{l}": p(Fh, C)})
    if not tied:
        W["head"] = p(V, C)
    freqs = 1.0 / 10000.0 ** (torch.arange(0, D, 2).float() / D)
    ang = torch.outer(torch.arange(T).float(), freqs)
    cos, sin = ang.cos(), ang.sin()                       # (T, D/2)

    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w

    def rope(x):                                          # (B, T, n, D), adjacent pairs
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = cos[None, :, None, :], sin[None, :, None, :]
        return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)

    mask = torch.full((T, T), float("-inf")).triu(1)

    def forward(tok):
        x = W["emb"][tok]
        for l in range(L):
            h = rms(x, W[f"n1{l}"])
            q = rope((h @ W[f"q{l}"].t()).view(B, T, H, D))
            k = rope((h @ W[f"k{l}"].t()).view(B, T, G, D))
            v = (h @ W[f"v{l}"].t()).view(B, T, G, D)
            k = k.repeat_interleave(H // G, dim=2)
            v = v.repeat_interleave(H // G, dim=2)
            a = (q.transpose(1, 2) @ k.transpose(1, 2).transpose(-1, -2)) / math.sqrt(D) + mask
            z = (torch.softmax(a, -1) @ v.transpose(1, 2)).transpose(1, 2).reshape(B, T, C)
            x = x + z @ W[f"o{l}"].t()
            h = rms(x, W[f"n2{l}"])
            x = x + (F.silu(h @ W[f"w1{l}"].t()) * (h @ W[f"w3{l}"].t())) @ W[f"w2{l}"].t()
        x = rms(x, W["fin"])
        return x @ (W["emb"] if tied else W["head"]).t()

    params = list(W.values())
    opt = torch.optim.AdamW([{"params": [t for t in params if t.dim() >= 2], "weight_decay": 0.1},
                             {"params": [t for t in params if t.dim() < 2], "weight_decay": 0.0}],
                            lr=1e-4, betas=(0.9, 0.95), eps=1e-8)
    tok = torch.from_numpy(rng.integers(0, V, size=(B, T)))
    tgt = torch.from_numpy(rng.integers(0, V, size=(B, T)))
    times = []
    for s in range(steps + 1):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(forward(tok).view(-1, V), tgt.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if s > 0:
            times.append(time.perf_counter() - t0)
    times.sort()
    print(f"torch_tok_per_s {B * T / times[len(times) // 2]:.1f}")
    print(f"torch {torch.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
