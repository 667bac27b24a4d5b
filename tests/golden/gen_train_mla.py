#!/usr/bin/python3
"""gen_train_mla.py: the PyTorch reference for training models whose attention is multi-head
latent attention (block.mla_*, lib/nn/block.h; the layer is lib/nn/mla.h), alone and together
with experts (DeepSeek-V3's arrangement), and the goldens of their ten-step comparison
(data/golden/train_mla/<case>/, used by tests/test_mla_model.c).

Run from the top of the checkout with Debian's Python (it has PyTorch):

    /usr/bin/python3 tests/golden/gen_train_mla.py

Each case as gen_train_moe.py's: a seeded initial model (init.bin, TWMX version 2 of
lib/train/moe_file.h, written here and read back), a token file, ten steps of ./train's
deterministic rule (gen_train.py) on the mean cross-entropy (plus aux_coef times the
load-balancing loss when the model has experts), and the losses, learning rates, gradient norms
and final weights. The attention is gen_mla.py's (the layer's own golden), on the block's
pre-norm input. Precision: float64 throughout.
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
from gen_train import (CONFIG_FIELDS, HPARAM_FIELDS, get_lr, markov_tokens, norm,  # noqa: E402
                       read_tokens, tiny_config, write_tokens)
from gen_train_moe import MIN_GAP, MOE_FIELDS, moe, moe_param_table, swiglu  # noqa: E402
from gen_mla import rmsnorm, rope_adjacent  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "train_mla")
MLA_FIELDS = ["q_rank", "kv_rank", "d_nope", "d_rope", "d_v"]


def mla_param_table(c):
    """tw_model_init's table with latent attention: layers.L.attn.q_a .. .o where a dense block
    has attn.wq .. wo (and experts in place of the FFN if n_experts > 0)."""
    C, H = c["d_model"], c["n_head"]
    rq, rkv, dn, dr, dv = (c[k] for k in MLA_FIELDS)
    base = moe_param_table(c) if c["n_experts"] else __import__("gen_train").param_table(c)
    t = []
    for name, shape in (base if c["n_experts"] else [(n, s) for n, s, *_ in base]):
        if name.endswith("attn.wq"):
            p = name[:name.index("attn.wq")]
            t += [(p + "attn.q_a", (rq, C)), (p + "attn.q_a_norm", (rq,)),
                  (p + "attn.q_b", (H * (dn + dr), rq)), (p + "attn.kv_a", (rkv + dr, C)),
                  (p + "attn.kv_a_norm", (rkv,)), (p + "attn.kv_b", (H * (dn + dv), rkv)),
                  (p + "attn.o", (C, H * dv))]
        elif ".attn." not in name:
            t.append((name, shape))
    return t


def write_twmx2(path, c, w):
    with open(path, "wb") as f:
        f.write(b"TWMX" + struct.pack("<i", 2))
        f.write(struct.pack("<20i", *[int(c[k]) for k in CONFIG_FIELDS]))
        f.write(struct.pack("<3f", c["rope_theta"], c["qk_eps"], c["norm_eps"]))
        f.write(c["style"].encode().ljust(16, b"\0"))
        f.write(struct.pack("<4i", *[int(c[k]) for k in MOE_FIELDS]))
        f.write(struct.pack("<5i", *[int(c[k]) for k in MLA_FIELDS]))
        table = mla_param_table(c)
        f.write(struct.pack("<i", len(table)))
        for name, shape in table:
            f.write(name.encode().ljust(48, b"\0"))
            f.write(struct.pack("<3i", len(shape), shape[0], shape[1] if len(shape) > 1 else 0))
            f.write(np.ascontiguousarray(w[name], np.float32).tobytes())


def read_twmx2(path):
    b = open(path, "rb").read()
    assert b[:4] == b"TWMX" and struct.unpack_from("<i", b, 4)[0] == 2
    off = 8
    ints = struct.unpack_from("<20i", b, off); off += 80
    theta, qk_eps, norm_eps = struct.unpack_from("<3f", b, off); off += 12
    style = b[off:off + 16].split(b"\0")[0].decode(); off += 16
    moe_f = struct.unpack_from("<4i", b, off); off += 16
    mla_f = struct.unpack_from("<5i", b, off); off += 20
    c = dict(zip(CONFIG_FIELDS, ints), rope_theta=float(np.float32(theta)),
             qk_eps=float(np.float32(qk_eps)), norm_eps=float(np.float32(norm_eps)), style=style)
    c.update(zip(MOE_FIELDS, moe_f))
    c.update(zip(MLA_FIELDS, mla_f))
    (n_params,) = struct.unpack_from("<i", b, off); off += 4
    w = {}
    for name, shape in mla_param_table(c):
        got = b[off:off + 48].split(b"\0")[0].decode(); off += 48
        ndim, s0, s1 = struct.unpack_from("<3i", b, off); off += 12
        assert got == name and (s0, s1)[:ndim] == shape, (got, name, shape)
        n = int(np.prod(shape))
        w[name] = np.frombuffer(b, np.float32, n, off).reshape(shape).copy(); off += 4 * n
    assert n_params == len(w) and off == len(b)
    return c, w


def mla_attention(x, w, p, c):
    """x: (T, C) -> (T, C): nn/mla.h's forward (eps = norm_eps, theta = rope_theta)."""
    T = x.shape[0]
    H = c["n_head"]
    rq, rkv, dn, dr, dv = (c[k] for k in MLA_FIELDS)
    eps, theta = c["norm_eps"], c["rope_theta"]
    cq = rmsnorm(x @ w[p + "attn.q_a"].T, w[p + "attn.q_a_norm"], eps)
    q = (cq @ w[p + "attn.q_b"].T).reshape(T, H, dn + dr)
    qn, qp = q[..., :dn], rope_adjacent(q[..., dn:], theta)
    kva = x @ w[p + "attn.kv_a"].T
    lat = rmsnorm(kva[:, :rkv], w[p + "attn.kv_a_norm"], eps)
    kp = rope_adjacent(kva[:, rkv:], theta)
    kv = (lat @ w[p + "attn.kv_b"].T).reshape(T, H, dn + dv)
    kn, v = kv[..., :dn], kv[..., dn:]
    s = (torch.einsum("thd,shd->hts", qn, kn) + torch.einsum("thd,sd->hts", qp, kp)) / (dn + dr) ** 0.5
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    pr = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
    o = torch.einsum("hts,shd->thd", pr, v).reshape(T, H * dv)
    return o @ w[p + "attn.o"].T


def forward(tokens, w, c, gaps):
    x = w["tok_emb"][tokens]
    aux = 0.0
    for l in range(c["n_layer"]):
        p = f"layers.{l}."
        x = x + mla_attention(norm(x, w, p + "norm1", c), w, p, c)
        h = norm(x, w, p + "norm2", c)
        if c["n_experts"]:
            y, a = moe(h, w, p, c, gaps)
            aux = aux + a
        else:
            y = swiglu(h, w[p + "ffn.gate"], w[p + "ffn.up"], w[p + "ffn.down"])
        x = x + y
    x = norm(x, w, "final_norm", c)
    return F.linear(x, w["tok_emb"] if c["tied"] else w["head"]), aux


def train(c, w32, tokens, hp, gaps):
    names = [n for n, _ in mla_param_table(c)]
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


NO_MOE = dict(n_experts=0, top_k=0, n_shared=0, norm_topk=0)
CASES = {
    # llama-shaped, latent attention with odd sizes (q_rank 5, kv_rank 6, d_nope 3, d_rope 4,
    # d_v 5 against C 24, H 4), the dense SwiGLU FFN; clipping and cosine decay.
    "llama_mla": dict(mla=dict(q_rank=5, kv_rank=6, d_nope=3, d_rope=4, d_v=5), moe=NO_MOE,
                      hp=dict(B=3, T=12, steps=10, lr=5e-3, warmup=0, min_lr=5e-4,
                              weight_decay=0.1, beta1=0.9, beta2=0.99, eps=1e-8, clip=1.0,
                              aux_coef=0.0)),
    # DeepSeek-V3's arrangement: latent attention and experts (4 of 2, one shared expert,
    # renormalised gates), load-balancing weight 0.1; warm-up, no clipping. Its own seed
    # (the first draw gave a gradient norm whose float32 value wandered 6e-5 from float64's at
    # one step, a badly conditioned batch, the weights agreeing within 6e-6).
    "llama_mla_e4k2s1": dict(mla=dict(q_rank=8, kv_rank=4, d_nope=2, d_rope=2, d_v=3),
                             moe=dict(n_experts=4, top_k=2, n_shared=1, norm_topk=1),
                             hp=dict(B=3, T=10, steps=10, lr=1e-2, warmup=1, min_lr=1e-3,
                                     weight_decay=0.05, beta1=0.9, beta2=0.95, eps=1e-8, clip=0.0,
                                     aux_coef=0.1), seed=3133),
}
ROUTER_STD = 0.5   # as gen_train_moe.py: router logits of order 1, no near-tie


def gen_all():
    for case, spec in CASES.items():
        rng = np.random.default_rng(spec.get("seed", 3131))
        d = os.path.join(OUT, case)
        os.makedirs(os.path.join(d, "final"), exist_ok=True)
        c = tiny_config("llama")
        c.update(spec["moe"], **spec["mla"])
        if c["n_experts"]:
            c.update(ffn_hidden=16)
        w = {}
        for name, shape in mla_param_table(c):
            leaf = name.split(".")[-1]
            if leaf == "w" or leaf.endswith("_norm"):
                w[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
            elif leaf == "router":
                w[name] = (ROUTER_STD * rng.standard_normal(shape)).astype(np.float32)
            else:
                std = 0.02 if name == "tok_emb" else spec.get("std", 0.2)
                w[name] = (std * rng.standard_normal(shape)).astype(np.float32)
        path = os.path.join(d, "init.bin")
        write_twmx2(path, c, w)
        c2, w2 = read_twmx2(path)
        assert all(np.array_equal(w[k], w2[k]) for k in w) and c2 == c
        tokens = markov_tokens(rng, c["vocab"], 300)
        write_tokens(os.path.join(d, "tokens.bin"), tokens)
        hp = spec["hp"]
        gaps = []
        losses, lrs, gnorms, final = train(c, w, read_tokens(os.path.join(d, "tokens.bin")), hp, gaps)
        assert not gaps or min(gaps) >= MIN_GAP, f"{case}: a near-tie in the router: change the seed"
        save_npy(os.path.join(d, "hparams.npy"),
                 np.array([hp[k] for k in HPARAM_FIELDS] + [hp["aux_coef"]], np.float64))
        save_npy(os.path.join(d, "losses.npy"), np.array(losses))
        save_npy(os.path.join(d, "lrs.npy"), np.array(lrs))
        save_npy(os.path.join(d, "gnorms.npy"), np.array(gnorms))
        for name, x in final.items():
            save_npy(os.path.join(d, "final", name + ".npy"), x)
        print(f"{case}: loss {losses[0]:.4f} -> {losses[-1]:.4f} (ln V = {math.log(c['vocab']):.4f}), "
              f"gnorm {gnorms[0]:.3f} -> {gnorms[-1]:.3f}"
              + (f", smallest router gap {min(gaps):.3g}" if gaps else ""))


if __name__ == "__main__":
    gen_all()
