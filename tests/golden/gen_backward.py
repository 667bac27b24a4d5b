#!/usr/bin/python3
"""gen_backward.py: autograd goldens for every _backward of lib/ and for the optimizer
(tests/test_grad_golden.c, tests/test_optim.c).

Run from the top of the checkout with Debian's Python, which has PyTorch:
    /usr/bin/python3 tests/golden/gen_backward.py
It rewrites data/golden/backward/**. For each component the cases are those of the forward
goldens (gen_core.py's tables of sizes 1, 3, 7, 64, 65, epsilons, temperatures, RoPE offsets and
bases; gen_model.py's attention, MHA/GQA/MQA and FFN cases, imported from it). Inputs and weights
are drawn here, rounded to float32 (what the C code receives) and stored; the upstream gradient
dy is stored too. Every gradient is d L / d (input or weight) for L = sum(dy * f(inputs)),
computed by torch.autograd in float64 from those float32 values, and rounded to float32 once.

File names: an input or weight keeps its name; its gradient is "d_" + that name.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

import gen_core as gc
import gen_model as gm
from golden_io import save_npy

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)   # reductions in one fixed order: the goldens regenerate byte-identical
OUT = os.path.join("data", "golden", "backward")
RNG = np.random.default_rng(20240612)
written = []

# gen_model's reference functions call its own linear(), which runs under no_grad: route them to
# F.linear so autograd sees through every projection.
gm.linear = lambda x, w, b=None: F.linear(x, w, b)


def save(rel, arr):
    written.append(save_npy(os.path.join(OUT, rel + ".npy"), arr))


def rand(*shape, lo=-1.0, hi=1.0):
    """Uniform draws rounded to float32, returned as float64 leaves that require grad."""
    a = (RNG.uniform(lo, hi, size=shape)).astype(np.float32)
    return torch.from_numpy(a.astype(np.float64)).requires_grad_(True)


def randn(*shape, std=1.0):
    a = (RNG.standard_normal(shape) * std).astype(np.float32)
    return torch.from_numpy(a.astype(np.float64)).requires_grad_(True)


def backward(out, **leaves):
    """Draws dy like out, runs autograd of sum(dy * out); returns dy and {name: gradient}."""
    dy = rand(*out.shape).detach()
    grads = torch.autograd.grad((dy * out).sum(), list(leaves.values()), allow_unused=True)
    return dy, {k: (g if g is not None else torch.zeros_like(v)) for (k, v), g in
                zip(leaves.items(), grads)}


def save_case(case, inputs, dy, grads):
    for k, v in inputs.items():
        save(f"{case}/{k}", v.detach() if torch.is_tensor(v) else v)
    save(f"{case}/dy", dy)
    for k, g in grads.items():
        save(f"{case}/d_{k}", g)


# ---- core components: the cases of gen_core.py ----

def gen_linear():
    for i in range(5):
        T, C_in, C_out = gc.linear_shape(i)
        x, W, b = rand(T, C_in), rand(C_out, C_in), rand(C_out)
        dy, g = backward(F.linear(x, W, b), x=x, W=W, b=b)
        save_case(f"linear/{i}", dict(x=x, W=W, b=b), dy, g)


def gen_embedding():
    V, C, T = 11, 7, 9
    table = rand(V, C)
    ids = torch.tensor([0, 10, 3, 3, 7, 1, 10, 0, 5])      # repeated ids: the scatter must add
    dy, g = backward(F.embedding(ids, table), table=table)
    save_case("embedding", dict(table=table, ids=ids.to(torch.int32)), dy, g)


def gen_norm():
    for i in range(5):
        T, C = gc.norm_shape(i)
        eps = gc.NORM_EPS[i]
        x, gamma, beta = rand(T, C, lo=-3.0, hi=5.0), rand(C, lo=0.5, hi=1.5), rand(C)
        dy, g = backward(F.layer_norm(x, (C,), gamma, beta, eps), x=x, gamma=gamma, beta=beta)
        save_case(f"layernorm/{i}", dict(x=x, gamma=gamma, beta=beta,
                                         eps=torch.tensor([eps])), dy, g)
        ms = x.pow(2).mean(dim=-1, keepdim=True)
        dy, g = backward(x * torch.rsqrt(ms + eps) * gamma, x=x, gamma=gamma)
        save_case(f"rmsnorm/{i}", dict(x=x, gamma=gamma, eps=torch.tensor([eps])), dy, g)


def gen_activation():
    core = torch.linspace(-20.0, 20.0, 801)
    extra = torch.tensor([-1e4, -1e3, -100.0, -50.0, -1e-3, -1e-6, 0.0, 1e-6, 1e-3, 50.0, 100.0,
                          1e3, 1e4])
    x = torch.cat([core, extra]).float().double().requires_grad_(True)
    fns = {"relu": F.relu, "gelu_erf": lambda t: F.gelu(t, approximate="none"),
           "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu}
    for name, f in fns.items():
        dy, g = backward(f(x), x=x)
        save_case(f"act/{name}", dict(x=x), dy, g)


def gen_softmax():
    for i in range(5):
        rows, cols = gc.softmax_shape(i)
        x = rand(rows, cols, lo=-8.0, hi=8.0)
        temp = gc.SOFTMAX_TEMPS[i]
        dy, g = backward(torch.softmax(x / temp, dim=-1), x=x)
        save_case(f"softmax/{i}", dict(x=x, temp=torch.tensor([temp])), dy, g)
    # Partly masked rows (-inf logits get probability 0 and no gradient) and extreme logits.
    inf = float("inf")
    x = torch.tensor([[1e4, -1e4, 0.0, 1e4 - 1.0, 9990.0],
                      [-1e4, -1e4, -1e4, -1e4, -1e4],
                      [-inf, 2.0, -inf, 1.0, -inf],
                      [-inf, -inf, -inf, -inf, -1e4],
                      [1e4, -inf, -1e4, -inf, 1e4]]).float().double().requires_grad_(True)
    dy, g = backward(torch.softmax(x, dim=-1), x=x)
    save_case("softmax/extreme", dict(x=x, temp=torch.tensor([1.0])), dy, g)


# Cross-entropy: (T, V, logit std, ignored positions, upstream dloss). Sizes from SIZES; the
# vocabulary sizes include 1 (a degenerate one-word vocabulary: loss 0, gradient 0) and 65.
CE_CASES = [(1, 3, 1.0, [], 1.0), (3, 7, 3.0, [1], 0.5), (7, 65, 2.0, [0, 6], 1.0),
            (64, 1, 1.0, [5], 1.0), (65, 64, 8.0, [3, 4, 64], 2.0)]


def gen_cross_entropy():
    for i, (T, V, std, ignored, dloss) in enumerate(CE_CASES):
        logits = randn(T, V, std=std)
        targets = torch.from_numpy(RNG.integers(0, V, size=T))
        for t in ignored:
            targets[t] = -100
        loss = F.cross_entropy(logits, targets, ignore_index=-100, reduction="mean")
        (d_logits,) = torch.autograd.grad(loss * dloss, [logits])
        case = f"cross_entropy/{i}"
        save(f"{case}/logits", logits.detach())
        save(f"{case}/targets", targets.to(torch.int32))
        save(f"{case}/dloss", torch.tensor([dloss]))
        save(f"{case}/loss", loss.detach().reshape(1))
        save(f"{case}/probs", torch.softmax(logits.detach(), dim=-1))
        save(f"{case}/d_logits", d_logits)


def gen_posenc():
    T, C, P, pos0 = 5, 7, 16, 9
    x, table = rand(T, C), rand(P, C)
    dy, g = backward(x + table[pos0:pos0 + T], x=x, table=table)
    save_case("learned", dict(x=x, table=table), dy, g)


def gen_rope():
    for i in range(5):
        T, H, D = gc.SIZES[i], gc.ROPE_H[i], gc.ROPE_D[i]
        pos0, theta = gc.ROPE_POS0[i], gc.ROPE_THETA[i]
        x = rand(T, H, D, lo=-2.0, hi=2.0)
        pos = torch.arange(pos0, pos0 + T)
        dy, g = backward(gm.rope_adjacent(x, pos, theta), x=x)
        save_case(f"rope_adjacent/{i}", dict(x=x), dy, g)
        dy, g = backward(gm.rope_halves(x, pos, theta), x=x)
        save_case(f"rope_halves/{i}", dict(x=x), dy, g)


# ---- attention, MHA, FFN: the cases of gen_model.py ----

def gen_sdpa():
    for name, T, S, D, causal, offset, has_mask in gm.SDPA_CASES:
        q, k, v = randn(T, D), randn(S, D), randn(S, D)
        mask = None
        if has_mask:
            if causal:
                mask = torch.zeros(T, S)
                mask[:, S - 2:] = float("-inf")
            else:
                mask = randn(T, S).detach()
                mask[:, 0] = float("-inf")
        out, _, weights = gm.attend(q[None], k[None], v[None], causal, offset, mask)
        dy, g = backward(out[0], q=q, k=k, v=v)
        inputs = dict(q=q, k=k, v=v, weights=weights[0],
                      cfg=np.array([T, S, D, causal, offset, has_mask], np.int32))
        if mask is not None:
            inputs["mask"] = mask
        save_case(f"sdpa/{name}", inputs, dy, g)


def gen_mha():
    for (name, C, H, G, D, T, S, causal, rope_kind, theta, qk, bias, pos0, cross,
         has_mask) in gm.MHA_CASES:
        c = dict(H=H, G=G, D=D, causal=causal, rope=rope_kind, theta=theta, qk_norm=qk,
                 eps=1e-6, pos0=pos0)
        w = {k: v.detach().clone().requires_grad_(True)
             for k, v in gm.attn_weights(C, H, G, D, bias, qk).items()}
        x = randn(T, C)
        x_kv = randn(S, C) if cross else None
        mask = None
        if has_mask:
            mask = torch.zeros(T, S)
            mask[:, S - 1] = float("-inf")
        r = gm.mha(x, w, c, x_kv, mask)
        leaves = dict(x=x, **w)
        if cross:
            leaves["x_kv"] = x_kv
        dy, g = backward(r["out"], **leaves)
        inputs = dict(leaves, cfg=np.array([C, H, G, D, T, S, causal, gm.ROPE[rope_kind], qk,
                                            bias, pos0, cross, has_mask], np.int32),
                      fcfg=np.array([theta, c["eps"]], np.float32), out=r["out"])
        if mask is not None:
            inputs["mask"] = mask
        save_case(f"mha/{name}", inputs, dy, g)


def gen_ffn():
    for name, T, C, Fh, act, bias, swiglu in gm.FFN_CASES:
        w = {k: v.detach().clone().requires_grad_(True)
             for k, v in gm.ffn_weights(C, Fh, bias, swiglu).items()}
        x = randn(T, C, std=2.0)
        out, _ = gm.ffn(x, w, act, swiglu)
        dy, g = backward(out, x=x, **w)
        inputs = dict(x=x, **w, cfg=np.array([T, C, Fh, gm.ACT[act], bias, swiglu], np.int32))
        save_case(f"ffn/{name}", inputs, dy, g)


# ---- optimizer: torch.optim.AdamW with two parameter groups, clipping, the schedule ----

OPT_STEPS = 8
OPT = dict(lr=3e-2, min_lr=3e-3, warmup=2, decay_steps=6, beta1=0.9, beta2=0.95, eps=1e-8,
           weight_decay=0.1, clip=1.0)


def get_lr(it, lr, min_lr, warmup, decay_steps):
    """llama2.c train.py's get_lr (linear warm-up from 0, cosine decay to min_lr)."""
    if it < warmup:
        return lr * it / warmup
    if it > decay_steps:
        return min_lr
    ratio = (it - warmup) / (decay_steps - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def gen_optim():
    o = OPT
    # Three tensors: two matrices (decayed) and a vector (a norm gain: not decayed).
    shapes = [(5, 7), (7,), (3, 4)]
    params = [randn(*s).detach().requires_grad_(True) for s in shapes]
    for j, p in enumerate(params):
        save(f"optim/p{j}_init", p.detach())
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": o["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    lrs, norms = [], []
    for step in range(OPT_STEPS):
        # Gradients of varied size, so some steps are clipped and some are not.
        scale = [0.05, 3.0, 0.2, 0.5, 4.0, 0.1, 1.0, 0.02][step]
        for j, p in enumerate(params):
            gr = randn(*shapes[j], std=scale).detach()
            save(f"optim/g{j}_step{step}", gr)
            p.grad = gr.clone()
        norms.append(torch.nn.utils.clip_grad_norm_(params, o["clip"]).item())
        lr = get_lr(step, o["lr"], o["min_lr"], o["warmup"], o["decay_steps"])
        for group in opt.param_groups:
            group["lr"] = lr
        lrs.append(lr)
        opt.step()
        for j, p in enumerate(params):
            save(f"optim/p{j}_step{step}", p.detach())
    save("optim/lrs", torch.tensor(lrs))
    save("optim/norms", torch.tensor(norms))
    save("optim/hparams", torch.tensor([o["lr"], o["min_lr"], o["warmup"], o["decay_steps"],
                                        o["beta1"], o["beta2"], o["eps"], o["weight_decay"],
                                        o["clip"], OPT_STEPS]))


def main():
    gen_linear()
    gen_embedding()
    gen_norm()
    gen_activation()
    gen_softmax()
    gen_cross_entropy()
    gen_posenc()
    gen_rope()
    gen_sdpa()
    gen_mha()
    gen_ffn()
    gen_optim()
    total = sum(os.path.getsize(p) for p in written)
    print(f"wrote {len(written)} files, {total} bytes, under {OUT}")


if __name__ == "__main__":
    main()
