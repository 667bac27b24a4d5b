#!/usr/bin/env python3
"""bench_train_torch.py: PyTorch's training tokens/s for the Llama shape that tools/bench_train.c
times (forward, backward and one AdamW step per step), on a given number of threads, so that
`make bench-train` can print our speed against PyTorch's measured in the same run.

A plain Llama as llama2.c's model.py: RMSNorm, RoPE on adjacent pairs (base 1e4), grouped-query
attention with the causal mask, SwiGLU, a tied classifier, no biases; seeded random init (N(0,
0.02) weights); a seeded random batch; cross-entropy over B*T positions; AdamW (betas 0.9, 0.95,
weight decay 0.1 on matrices). Prints one line: "tokens/s X cpu-tokens/s Y" (the median step
after warm-up, over wall time and over the process's CPU time).

With --serve it builds the model and takes the warm-up step once, prints "ready", and then times
one round of --steps steps for each line it reads on stdin, printing that round's line, until
stdin closes: tools/bench_train.c drives it so, alternating its own rounds with PyTorch's in one
warm process, so that each round's ratio compares two figures taken a few seconds apart and
PyTorch's start-up is never inside a timed region.

  /usr/bin/python3 tools/bench_train_torch.py --dim 64 --layers 5 --heads 8 --kv-heads 4 \
      --hidden 172 --vocab 512 --batch 8 --seq 256 --threads 1 --steps 5
"""
import argparse
import math
import os
import statistics
import sys
import time


def threads_from_argv(argv):
    """The --threads value (default 1), read before torch is imported."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return "1"


# torch.set_num_threads sets only its intra-op pool; the BLAS library under Debian's torch
# (OpenBLAS) starts its own pool of one thread per core when it loads. Setting these before the
# import keeps every pool at the asked-for count, so "one thread" is one core, as ours is.
_THREADS = threads_from_argv(sys.argv[1:])
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1" if _THREADS == "0" else _THREADS   # --threads 0 means 1, as below

import torch  # noqa: E402  (after the thread counts above)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, T, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(T).float(), freqs)          # (T, D/2)
    return torch.cos(angles), torch.sin(angles)


def rope(x, cos, sin):
    # x: (B, T, H, D); pairs (2i, 2i+1) rotate by angle t * freq_i
    xr, xi = x.float().reshape(*x.shape[:-1], -1, 2).unbind(-1)
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((xr * c - xi * s, xr * s + xi * c), dim=-1).flatten(3)


class Block(nn.Module):
    def __init__(self, dim, heads, kv_heads, hidden):
        super().__init__()
        self.h, self.g, self.d = heads, kv_heads, dim // heads
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
        self.wq = nn.Linear(dim, heads * self.d, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.d, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.d, bias=False)
        self.wo = nn.Linear(heads * self.d, dim, bias=False)
        self.w1 = nn.Linear(dim, hidden, bias=False)   # gate
        self.w3 = nn.Linear(dim, hidden, bias=False)   # up
        self.w2 = nn.Linear(hidden, dim, bias=False)   # down

    def attention(self, x, cos, sin, mask):
        B, T, _ = x.shape
        q = rope(self.wq(x).view(B, T, self.h, self.d), cos, sin)
        k = rope(self.wk(x).view(B, T, self.g, self.d), cos, sin)
        v = self.wv(x).view(B, T, self.g, self.d)
        rep = self.h // self.g
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)   # (B, H, T, D)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d) + mask
        z = F.softmax(scores, dim=-1) @ v
        return self.wo(z.transpose(1, 2).reshape(B, T, self.h * self.d))

    def forward(self, x, cos, sin, mask):
        x = x + self.attention(self.norm1(x), cos, sin, mask)
        h = self.norm2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Llama(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.dim)
        self.layers = nn.ModuleList(Block(a.dim, a.heads, a.kv_heads, a.hidden)
                                    for _ in range(a.layers))
        self.norm = RMSNorm(a.dim)
        self.head = nn.Linear(a.dim, a.vocab, bias=False)
        self.head.weight = self.emb.weight   # tied
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)
        cos, sin = rope_tables(a.dim // a.heads, a.seq)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        self.register_buffer("mask", torch.full((a.seq, a.seq), float("-inf")).triu(1))

    def forward(self, tokens, targets):
        x = self.emb(tokens)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin, self.mask)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("dim", "layers", "heads", "kv-heads", "hidden", "vocab", "batch", "seq",
                 "threads", "steps"):
        p.add_argument("--" + name, type=int, required=name not in ("threads", "steps"))
    p.add_argument("--serve", action="store_true",
                   help='time one round per line read on stdin, after printing "ready"')
    a = p.parse_args()
    a.threads = a.threads or 1
    a.steps = a.steps or 5
    torch.set_num_threads(a.threads)
    torch.manual_seed(1234)
    model = Llama(a)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-4, betas=(0.9, 0.95), eps=1e-8)
    g = torch.Generator().manual_seed(99)
    tokens = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g)
    targets = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(tokens, targets)
        loss.backward()
        opt.step()
        return loss

    def round_line():
        """Times a.steps steps: the median step's tokens/s over wall and over CPU time."""
        times, cpu = [], []
        for _ in range(a.steps):
            t0, c0 = time.perf_counter(), time.process_time()
            step()
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        tps = a.batch * a.seq / statistics.median(times)
        # Tokens per CPU-second of the process (all threads): on a shared machine the fairer figure.
        cps = a.batch * a.seq / statistics.median(cpu)
        return (f"torch {torch.__version__}, {torch.get_num_threads()} threads: tokens/s {tps:.1f} "
                f"cpu-tokens/s {cps:.1f}")

    step()   # warm-up: one step, as bench_train takes
    if not a.serve:
        print(round_line())
        return 0
    print("ready", flush=True)
    for _ in sys.stdin:
        print(round_line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
