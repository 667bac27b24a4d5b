#!/usr/bin/python3
"""gen_train_moe.py: the PyTorch reference for training models whose FFNs are mixtures of experts
(block.moe_experts, lib/nn/block.h) and the goldens of their ten-step comparison
(data/golden/train_moe/<case>/, used by tests/test_moe_model.c).

Run from the top of the checkout with Debian's Python (it has PyTorch):

    /usr/bin/python3 tests/golden/gen_train_moe.py

For each case: a seeded initial model (init.bin, the TWMX format of lib/train/moe_file.h, written
here and read back), a token file (tokens.bin), then ten steps of ./train's deterministic rule
(gen_train.py: --no-shuffle rows, AdamW with decay on 2+-dim parameters, clipping, warm-up +
cosine) on the objective

    mean cross-entropy over the B*T targets + aux_coef * (1/B) sum_b sum_layers aux(b, layer)

where aux(b, layer) = E sum_i f_i P_i over sequence b's T tokens (Switch Transformer's form,
lib/nn/router.h): f_i the fraction of the T*k choices that went to expert i (a constant: it
comes from the discrete choice), P_i the mean router probability of expert i. The router's
gradient flows through the gate weights (and P), never through the choice. Written: the
cross-entropy of every step (losses.npy: what ./train prints), lrs.npy, gnorms.npy (the norm of
the whole objective's gradient, before clipping), hparams.npy (HPARAM_FIELDS order, then
aux_coef), and every parameter after the last step (final/<name>.npy).

Ties: the C router takes the lower expert index among equal scores (router.h). Here no choice is
left to a tie or a near-tie: at every step, layer and token the k-th and (k+1)-th router logits
differ by at least MIN_GAP (asserted), far above the float32-against-float64 drift of ten steps
(weights within 1e-4, logits within ~1e-4), so both sides choose the same experts.

Precision: float64 throughout, as gen_train.py.
"""
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_io import save_npy  # noqa: E402
from gen_train import (CONFIG_FIELDS, HPARAM_FIELDS, attention, get_lr, markov_tokens, norm,  # noqa: E402
                       param_table, read_tokens, tiny_config, write_tokens)

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "train_moe")
MOE_FIELDS = ["n_experts", "top_k", "n_shared", "norm_topk"]
MIN_GAP = 1e-3


def moe_param_table(c):
    """tw_model_init's table with experts: layers.L.moe.* where the dense model has layers.L.ffn.*."""
    C, Fh, E = c["d_model"], c["ffn_hidden"], c["n_experts"]
    Fs = c["n_shared"] * Fh
    t = []
    for name, shape in param_table(c):
        if ".ffn.gate" in name:
            p = name[:name.index("ffn.gate")]
            t += [(p + "moe.router", (E, C)), (p + "moe.gate", (E * Fh, C)), (p + "moe.up", (E * Fh, C)),
                  (p + "moe.down", (E * C, Fh))]
            if Fs:
                t += [(p + "moe.shared_gate", (Fs, C)), (p + "moe.shared_up", (Fs, C)),
                      (p + "moe.shared_down", (C, Fs))]
        elif ".ffn." not in name:
            t.append((name, shape))
    return t


def write_twmx(path, c, w):
    with open(path, "wb") as f:
        f.write(b"TWMX" + struct.pack("<i", 1))
        f.write(struct.pack("<20i", *[int(c[k]) for k in CONFIG_FIELDS]))
        f.write(struct.pack("<3f", c["rope_theta"], c["qk_eps"], c["norm_eps"]))
        f.write(c["style"].encode().ljust(16, b"\0"))
        f.write(struct.pack("<4i", *[int(c[k]) for k in MOE_FIELDS]))
        table = moe_param_table(c)
        f.write(struct.pack("<i", len(table)))
        for name, shape in table:
            f.write(name.encode().ljust(48, b"\0"))
            f.write(struct.pack("<3i", len(shape), shape[0], shape[1] if len(shape) > 1 else 0))
            f.write(np.ascontiguousarray(w[name], np.float32).tobytes())


def read_twmx(path):
    b = open(path, "rb").read()
    assert b[:4] == b"TWMX", f"{path}: not a TWMX file"
    off = 4
    (version,) = struct.unpack_from("<i", b, off); off += 4
    assert version == 1
    ints = struct.unpack_from("<20i", b, off); off += 80
    theta, qk_eps, norm_eps = struct.unpack_from("<3f", b, off); off += 12
    style = b[off:off + 16].split(b"\0")[0].decode(); off += 16
    moe = struct.unpack_from("<4i", b, off); off += 16
    c = dict(zip(CONFIG_FIELDS, ints), rope_theta=float(np.float32(theta)),
             qk_eps=float(np.float32(qk_eps)), norm_eps=float(np.float32(norm_eps)), style=style)
    c.update(zip(MOE_FIELDS, moe))
    (n_params,) = struct.unpack_from("<i", b, off); off += 4
    w = {}
    for name, shape in moe_param_table(c):
        got = b[off:off + 48].split(b"\0")[0].decode(); off += 48
        ndim, s0, s1 = struct.unpack_from("<3i", b, off); off += 12
        assert got == name and (s0, s1)[:ndim] == shape, (got, name, shape)
        n = int(np.prod(shape))
        w[name] = np.frombuffer(b, np.float32, n, off).reshape(shape).copy(); off += 4 * n
    assert n_params == len(w) and off == len(b)
    return c, w


def swiglu(x, g, u, d):
    return F.linear(F.silu(F.linear(x, g)) * F.linear(x, u), d)


def moe(x, w, p, c, gaps):
    """x: (T, C) -> (T, C) and the layer's aux loss, as tw_moe_forward with a softmax router."""
    T, C = x.shape
    E, k, Fh = c["n_experts"], c["top_k"], c["ffn_hidden"]
    logits = F.linear(x, w[p + "moe.router"])                       # (T, E)
    probs = torch.softmax(logits, dim=-1)
    srt = torch.sort(logits.detach(), dim=-1, descending=True).values
    if k < E:
        gaps.append(float((srt[:, k - 1] - srt[:, k]).min()))
    sel = torch.topk(logits.detach(), k, dim=-1).indices             # (T, k) best first
    gate = probs.gather(1, sel)
    if c["norm_topk"]:
        gate = gate / gate.sum(dim=-1, keepdim=True)
    G, U, D = w[p + "moe.gate"], w[p + "moe.up"], w[p + "moe.down"]
    y = torch.zeros(T, C)
    for e in range(E):
        rows, slot = (sel == e).nonzero(as_tuple=True)
        if rows.numel() == 0:
            continue
        out = swiglu(x[rows], G[e * Fh:(e + 1) * Fh], U[e * Fh:(e + 1) * Fh], D[e * C:(e + 1) * C])
        y = y.index_add(0, rows, gate[rows, slot].unsqueeze(1) * out)
    if c["n_shared"]:
        y = y + swiglu(x, w[p + "moe.shared_gate"], w[p + "moe.shared_up"], w[p + "moe.shared_down"])
    f = torch.bincount(sel.reshape(-1), minlength=E).to(torch.float64) / (T * k)   # constant
    aux = E * (f * probs.mean(dim=0)).sum()
    return y, aux


def forward(tokens, w, c, gaps):
    """tokens: (T) -> logits (T, V) and the sum over the layers of their aux losses."""
    x = w["tok_emb"][tokens]
    aux = 0.0
    for l in range(c["n_layer"]):
        p = f"layers.{l}."
        x = x + attention(norm(x, w, p + "norm1", c), w, p, c)
        y, a = moe(norm(x, w, p + "norm2", c), w, p, c, gaps)
        x = x + y
        aux = aux + a
    x = norm(x, w, "final_norm", c)
    return F.linear(x, w["tok_emb"] if c["tied"] else w["head"]), aux


def train(c, w32, tokens, hp, gaps):
    names = [n for n, _ in moe_param_table(c)]
    w = {n: torch.tensor(w32[n].astype(np.float64), requires_grad=True) for n in names}
    decay = [w[n] for n in names if w[n].dim() >= 2]
    no_decay = [w[n] for n in names if w[n].dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": hp["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=hp["lr"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"])
    B, T, N = hp["B"], hp["T"], hp["steps"]
    n = len(tokens)
    toks = torch.from_numpy(tokens.astype(np.int64))
    losses, lrs, gnorms = [], [], []
    for s in range(N):
        lr = get_lr(s, hp["lr"], hp["min_lr"], hp["warmup"], N)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=True)
        ce, aux = 0.0, 0.0
        for r in range(B):
            a = ((s * B + r) * T) % (n - T)
            row = toks[a:a + T + 1]
            logits, ax = forward(row[:T], w, c, gaps)
            ce = ce + F.cross_entropy(logits, row[1:], reduction="sum")
            aux = aux + ax
        ce = ce / (B * T)
        (ce + hp["aux_coef"] * aux / B).backward()
        params = [w[n_] for n_ in names]
        if hp["clip"] > 0:
            gn = torch.nn.utils.clip_grad_norm_(params, hp["clip"])
        else:
            gn = torch.sqrt(sum((p.grad ** 2).sum() for p in params))
        opt.step()
        losses.append(ce.item())
        lrs.append(lr)
        gnorms.append(float(gn))
    return losses, lrs, gnorms, {k: v.detach().numpy() for k, v in w.items()}


CASES = {
    # llama-shaped (untied head, RoPE on pairs): 4 experts, 2 chosen, renormalised, one shared
    # expert, a small load-balancing weight, clipping and cosine decay.
    "llama_e4k2s1": dict(style="llama", moe=dict(n_experts=4, top_k=2, n_shared=1, norm_topk=1),
                         hp=dict(B=3, T=12, steps=10, lr=5e-3, warmup=0, min_lr=5e-4,
                                 weight_decay=0.1, beta1=0.9, beta2=0.99, eps=1e-8, clip=1.0,
                                 aux_coef=0.01)),
    # qwen3-shaped (QK-norm, tied head): 5 experts, 2 chosen, probabilities as they are
    # (norm_topk_prob false, as Qwen2-MoE), no shared expert, a large load-balancing weight so
    # its gradient is a visible part of the router's; warm-up, no clipping.
    "qwen3_e5k2": dict(style="qwen3", moe=dict(n_experts=5, top_k=2, n_shared=0, norm_topk=0),
                       hp=dict(B=3, T=10, steps=10, lr=1e-2, warmup=1, min_lr=1e-3,
                               weight_decay=0.05, beta1=0.9, beta2=0.95, eps=1e-8, clip=0.0,
                               aux_coef=0.5)),
}
ROUTER_STD = 0.5   # router weights: logits of order 1, so no choice is a near-tie (see Ties)


def gen_all():
    rng = np.random.default_rng(31)
    for case, spec in CASES.items():
        d = os.path.join(OUT, case)
        os.makedirs(os.path.join(d, "final"), exist_ok=True)
        c = tiny_config(spec["style"])
        c.update(spec["moe"], ffn_hidden=16)
        w = {}
        for name, shape in moe_param_table(c):
            leaf = name.split(".")[-1]
            if leaf == "w" or leaf.endswith("_norm"):
                w[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
            elif leaf == "router":
                w[name] = (ROUTER_STD * rng.standard_normal(shape)).astype(np.float32)
            else:
                std = 0.02 if name == "tok_emb" else 0.1
                w[name] = (std * rng.standard_normal(shape)).astype(np.float32)
        path = os.path.join(d, "init.bin")
        write_twmx(path, c, w)
        c2, w2 = read_twmx(path)   # the reader agrees with the writer
        assert all(np.array_equal(w[k], w2[k]) for k in w) and c2 == c
        tokens = markov_tokens(rng, c["vocab"], 300)
        write_tokens(os.path.join(d, "tokens.bin"), tokens)
        hp = spec["hp"]
        gaps = []
        losses, lrs, gnorms, final = train(c, w, read_tokens(os.path.join(d, "tokens.bin")), hp, gaps)
        assert min(gaps) >= MIN_GAP, f"{case}: a near-tie in the router ({min(gaps):.3g}): change the seed"
        save_npy(os.path.join(d, "hparams.npy"),
                 np.array([hp[k] for k in HPARAM_FIELDS] + [hp["aux_coef"]], np.float64))
        save_npy(os.path.join(d, "losses.npy"), np.array(losses))
        save_npy(os.path.join(d, "lrs.npy"), np.array(lrs))
        save_npy(os.path.join(d, "gnorms.npy"), np.array(gnorms))
        for name, x in final.items():
            save_npy(os.path.join(d, "final", name + ".npy"), x)
        print(f"{case}: loss {losses[0]:.4f} -> {losses[-1]:.4f} (ln V = {math.log(c['vocab']):.4f}), "
              f"gnorm {gnorms[0]:.3f} -> {gnorms[-1]:.3f}, smallest router gap {min(gaps):.3g}")


if __name__ == "__main__":
    gen_all()
