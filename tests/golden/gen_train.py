#!/usr/bin/python3
"""gen_train.py: the PyTorch reference for ./train's deterministic mode, and the goldens of the
ten-step comparison (data/golden/train/<case>/, used by tests/test_train.c).

Two ways to run it, from the top of the checkout with Debian's Python (it has PyTorch):

    /usr/bin/python3 tests/golden/gen_train.py
        writes the goldens: for each tiny style (2017, gpt2, llama, qwen3) a seeded initial model
        (init.bin, the toolkit's TWMODEL format; docs/training.md) and a token file (tokens.bin),
        and for stories260K its real weights (data/models/stories260K.bin, not copied) with a token
        file; then trains each for 10 steps and writes the loss of every step (losses.npy), the
        learning rate and gradient norm of every step (lrs.npy, gnorms.npy), the hyper-parameters
        (hparams.npy, train_common.py's HPARAM_FIELDS order) and every parameter after the last
        step (final/<name>.npy).

    /usr/bin/python3 tests/golden/gen_train.py --init FILE.bin --tokens FILE.bin --batch B --seq T
        --steps N --lr LR --warmup W --min-lr LR --weight-decay WD --beta1 B1 --beta2 B2 --eps E
        --clip NORM [--out DIR]
        the same computation as ./train --no-shuffle with those flags, printing
        `step N/M loss X` lines; --out writes the final weights as .npy files.

What it computes (the rule ./train documents; the loop is train_common.py's): row r of step s is
the T + 1 tokens starting at ((s*B + r)*T) mod (n - T), n the file's token count; loss = mean cross-entropy over the B*T
targets; gradients by autograd; clip_grad_norm_ over all parameters when NORM > 0; the learning
rate of step s (from 0) is llama2.c train.py's get_lr with lr_decay_iters = N; torch.optim.AdamW
with weight decay on every parameter of two or more dimensions (embeddings included) and none on
norm gains and biases, as llama2.c's train.py and nanoGPT configure it.

Precision: float64 throughout (weights read from float32 files, then promoted). Our trainer runs in
float32; comparing it against float64 measures its rounding, where a float32 reference would mix
two roundings and hide which side drifted. The goldens are rounded to float32 once, on saving.
"""
import argparse
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_io import save_npy  # noqa: E402
from gen_model import rmsnorm, rope, sinusoidal  # noqa: E402  (pure tensor functions)
from train_common import hparams_row, save_run, train_next_token  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)   # one reduction order: the goldens regenerate byte-identical
OUT = os.path.join("data", "golden", "train")

# ---- the two checkpoint formats ----

CONFIG_FIELDS = ["vocab", "max_seq", "n_layer", "d_model", "n_head", "n_kv_head", "head_dim",
                 "causal", "rope", "qk_norm", "prenorm", "norm", "ffn", "act", "ffn_hidden", "pos",
                 "embed_scale", "final_norm", "tied", "bias"]
ROPE_NAMES = ["none", "adjacent", "halves"]
ACT_NAMES = ["relu", "gelu", "gelu_tanh", "silu"]


def param_table(c):
    """The parameter table of lib/nn/model.c (tw_model_init): [(name, shape, decays)]."""
    C, V, D = c["d_model"], c["vocab"], c["head_dim"]
    HD, GD, Fh = c["n_head"] * D, c["n_kv_head"] * D, c["ffn_hidden"]
    beta = c["bias"] and c["norm"] == 0
    t = [("tok_emb", (V, C))]
    if c["pos"] == 2:
        t.append(("pos_emb", (c["max_seq"], C)))
    for l in range(c["n_layer"]):
        p = f"layers.{l}."
        t.append((p + "norm1.w", (C,)))
        if beta:
            t.append((p + "norm1.b", (C,)))
        for n, rows in (("q", HD), ("k", GD), ("v", GD)):
            t.append((p + f"attn.w{n}", (rows, C)))
            if c["bias"]:
                t.append((p + f"attn.b{n}", (rows,)))
        t.append((p + "attn.wo", (C, HD)))
        if c["bias"]:
            t.append((p + "attn.bo", (C,)))
        if c["qk_norm"]:
            t += [(p + "attn.q_norm", (D,)), (p + "attn.k_norm", (D,))]
        t.append((p + "norm2.w", (C,)))
        if beta:
            t.append((p + "norm2.b", (C,)))
        if c["ffn"] == 1:
            t += [(p + "ffn.gate", (Fh, C)), (p + "ffn.up", (Fh, C)), (p + "ffn.down", (C, Fh))]
        else:
            t.append((p + "ffn.w1", (Fh, C)))
            if c["bias"]:
                t.append((p + "ffn.b1", (Fh,)))
            t.append((p + "ffn.w2", (C, Fh)))
            if c["bias"]:
                t.append((p + "ffn.b2", (C,)))
    if c["final_norm"]:
        t.append(("final_norm.w", (C,)))
        if beta:
            t.append(("final_norm.b", (C,)))
    if not c["tied"]:
        t.append(("head", (V, C)))
    return t


def config_bytes(c):
    """What TWMODEL and TWMX share after their version: config[20] (CONFIG_FIELDS), rope_theta,
    qk_eps, norm_eps (float32) and style[16] (NUL-padded)."""
    return (struct.pack("<20i", *[int(c[k]) for k in CONFIG_FIELDS])
            + struct.pack("<3f", c["rope_theta"], c["qk_eps"], c["norm_eps"])
            + c["style"].encode().ljust(16, b"\0"))


def read_config(b, off):
    """config_bytes read back from b at off: (config dict, the offset after it)."""
    ints = struct.unpack_from("<20i", b, off); off += 80
    theta, qk_eps, norm_eps = struct.unpack_from("<3f", b, off); off += 12
    style = b[off:off + 16].split(b"\0")[0].decode(); off += 16
    c = dict(zip(CONFIG_FIELDS, ints), rope_theta=float(np.float32(theta)),
             qk_eps=float(np.float32(qk_eps)), norm_eps=float(np.float32(norm_eps)), style=style)
    return c, off


def params_bytes(table, w):
    """The parameter section both files end with: int32 count, then per parameter of the table
    name[48] (NUL-padded), int32 ndim, shape[2] (0 for a vector's second), float32 data."""
    out = [struct.pack("<i", len(table))]
    for name, shape in table:
        out.append(name.encode().ljust(48, b"\0"))
        out.append(struct.pack("<3i", len(shape), shape[0], shape[1] if len(shape) > 1 else 0))
        out.append(np.ascontiguousarray(w[name], np.float32).tobytes())
    return b"".join(out)


def read_params(b, off, table, path):
    """params_bytes read back from b at off, which must end there: {name: float32 array}."""
    (n_params,) = struct.unpack_from("<i", b, off); off += 4
    w = {}
    for name, shape in table:
        got = b[off:off + 48].split(b"\0")[0].decode(); off += 48
        ndim, s0, s1 = struct.unpack_from("<3i", b, off); off += 12
        assert got == name and (s0, s1)[:ndim] == shape, (got, name, shape)
        n = int(np.prod(shape))
        w[name] = np.frombuffer(b, np.float32, n, off).reshape(shape).copy(); off += 4 * n
    assert n_params == len(w) and off == len(b), f"{path}: bad parameter count or length"
    return w


def read_twmodel(path):
    """The toolkit's model file (lib/train/checkpoint.h). Returns (config dict, {name: array})."""
    b = open(path, "rb").read()
    assert b[:8] == b"TWMODEL\0", f"{path}: not a TWMODEL file"
    (version,) = struct.unpack_from("<i", b, 8)
    assert version == 1, f"{path}: version {version}"
    c, off = read_config(b, 12)
    return c, read_params(b, off, param_table(c), path)


def write_twmodel(path, c, w):
    with open(path, "wb") as f:
        f.write(b"TWMODEL\0" + struct.pack("<i", 1) + config_bytes(c) + params_bytes(param_table(c), w))


def read_llama2c(path):
    """llama2.c's version-0 checkpoint (lib/formats/llama2c.h), as a tw-named parameter dict."""
    b = open(path, "rb").read()
    dim, hidden, L, H, G, V, S = struct.unpack_from("<7i", b, 0)
    tied = V > 0
    V = abs(V)
    D = dim // H
    c = dict(vocab=V, max_seq=S, n_layer=L, d_model=dim, n_head=H, n_kv_head=G, head_dim=D,
             causal=1, rope=1, qk_norm=0, prenorm=1, norm=1, ffn=1, act=3, ffn_hidden=hidden,
             pos=0, embed_scale=0, final_norm=1, tied=int(tied), bias=0, rope_theta=10000.0,
             qk_eps=1e-5, norm_eps=float(np.float32(1e-5)), style="llama")
    a = np.frombuffer(b, np.float32, offset=28)
    off = 0

    def take(*shape):
        nonlocal off
        n = int(np.prod(shape))
        x = a[off:off + n].reshape(shape).copy()
        off += n
        return x
    w = {"tok_emb": take(V, dim)}
    per_layer = [("norm1.w", (dim,)), ("attn.wq", (dim, dim)), ("attn.wk", (G * D, dim)),
                 ("attn.wv", (G * D, dim)), ("attn.wo", (dim, dim)), ("norm2.w", (dim,)),
                 ("ffn.gate", (hidden, dim)), ("ffn.down", (dim, hidden)), ("ffn.up", (hidden, dim))]
    for leaf, shape in per_layer:
        x = take(L, *shape)
        for l in range(L):
            w[f"layers.{l}.{leaf}"] = x[l]
    w["final_norm.w"] = take(dim)
    take(S, D // 2)
    take(S, D // 2)     # freq_cis: RoPE is recomputed
    if not tied:
        w["head"] = take(V, dim)
    assert off == a.size, f"{path}: length does not match its header"
    return c, w


def write_llama2c(path, c, w):
    """llama2.c's version-0 checkpoint of a llama-arranged model (the order read_llama2c reads)."""
    L, D, S = c["n_layer"], c["head_dim"], c["max_seq"]
    V = c["vocab"] if c["tied"] else -c["vocab"]
    with open(path, "wb") as f:
        f.write(struct.pack("<7i", c["d_model"], c["ffn_hidden"], L, c["n_head"], c["n_kv_head"], V, S))
        arrays = [w["tok_emb"]]
        for leaf in ("norm1.w", "attn.wq", "attn.wk", "attn.wv", "attn.wo", "norm2.w", "ffn.gate",
                     "ffn.down", "ffn.up"):
            arrays += [w[f"layers.{l}.{leaf}"] for l in range(L)]
        arrays.append(w["final_norm.w"])
        freq = 1.0 / 10000.0 ** (np.arange(0, D, 2)[: D // 2].astype(np.float32) / np.float32(D))
        ang = np.outer(np.arange(S, dtype=np.float32), freq.astype(np.float32)).astype(np.float32)
        arrays += [np.cos(ang), np.sin(ang)]
        if not c["tied"]:
            arrays.append(w["head"])
        for x in arrays:
            f.write(np.ascontiguousarray(x, np.float32).tobytes())


def read_any(path):
    with open(path, "rb") as f:
        magic = f.read(8)
    return read_twmodel(path) if magic == b"TWMODEL\0" else read_llama2c(path)


# ---- the model, batched, with autograd ----

def norm(x, w, name, c):
    if c["norm"] == 1:
        return rmsnorm(x, w[name + ".w"], c["norm_eps"])
    return F.layer_norm(x, (x.shape[-1],), w[name + ".w"], w.get(name + ".b"), c["norm_eps"])


def attention(x, w, p, c):
    """x: (T, C) -> (T, C). Causal GQA with optional QK-norm and RoPE, as lib/nn/mha.c."""
    T = x.shape[0]
    H, G, D = c["n_head"], c["n_kv_head"], c["head_dim"]
    q = F.linear(x, w[p + "attn.wq"], w.get(p + "attn.bq")).reshape(T, H, D)
    k = F.linear(x, w[p + "attn.wk"], w.get(p + "attn.bk")).reshape(T, G, D)
    v = F.linear(x, w[p + "attn.wv"], w.get(p + "attn.bv")).reshape(T, G, D)
    if c["qk_norm"]:
        q = rmsnorm(q, w[p + "attn.q_norm"], c["qk_eps"])
        k = rmsnorm(k, w[p + "attn.k_norm"], c["qk_eps"])
    pos = torch.arange(T)
    q = rope(q, ROPE_NAMES[c["rope"]], pos, c["rope_theta"])
    k = rope(k, ROPE_NAMES[c["rope"]], pos, c["rope_theta"])
    k = k.repeat_interleave(H // G, dim=1).transpose(0, 1)           # (H, T, D)
    v = v.repeat_interleave(H // G, dim=1).transpose(0, 1)
    s = q.transpose(0, 1) @ k.transpose(-1, -2) / math.sqrt(D)       # (H, T, T)
    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    z = (torch.softmax(s, dim=-1) @ v).transpose(0, 1).reshape(T, H * D)
    return F.linear(z, w[p + "attn.wo"], w.get(p + "attn.bo"))


def ffn(x, w, p, c):
    if c["ffn"] == 1:
        return F.linear(F.silu(F.linear(x, w[p + "ffn.gate"])) * F.linear(x, w[p + "ffn.up"]),
                        w[p + "ffn.down"])
    h = F.linear(x, w[p + "ffn.w1"], w.get(p + "ffn.b1"))
    act = ACT_NAMES[c["act"]]
    h = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
         "silu": F.silu}[act](h)
    return F.linear(h, w[p + "ffn.w2"], w.get(p + "ffn.b2"))


def logits_of(tokens, w, c):
    """tokens: (T) int64 -> logits (T, V), as tw_model_forward."""
    T, C = tokens.shape[0], c["d_model"]
    x = w["tok_emb"][tokens]
    if c["embed_scale"]:
        x = x * math.sqrt(C)
    if c["pos"] == 1:
        x = x + sinusoidal(T, C)
    elif c["pos"] == 2:
        x = x + w["pos_emb"][:T]
    for l in range(c["n_layer"]):
        p = f"layers.{l}."
        if c["prenorm"]:
            x = x + attention(norm(x, w, p + "norm1", c), w, p, c)
            x = x + ffn(norm(x, w, p + "norm2", c), w, p, c)
        else:
            x = norm(x + attention(x, w, p, c), w, p + "norm1", c)
            x = norm(x + ffn(x, w, p, c), w, p + "norm2", c)
    if c["final_norm"]:
        x = norm(x, w, "final_norm", c)
    return F.linear(x, w["tok_emb"] if c["tied"] else w["head"])


# ---- the loop (train_common.py's, on this model) ----

def train(c, w32, tokens, hp, log=None):
    """Runs hp["steps"] steps; returns (losses, lrs, gnorms, final weights as float64 numpy)."""
    names = [n for n, _ in param_table(c)]
    return train_next_token(w32, names, tokens, hp, lambda row, w: (logits_of(row, w, c), None), log)


# ---- the goldens ----

def tiny_config(style):
    """tw_model_config_preset's sizes (lib/nn/model.c), as gen_model.py's MODELS."""
    base = dict(vocab=65, n_layer=2, d_model=24, causal=1, qk_norm=0, embed_scale=0, final_norm=1,
                rope_theta=10000.0, qk_eps=1e-5, norm_eps=1e-5, style=style)
    if style in ("2017", "gpt2"):
        base.update(max_seq=16, n_head=4, n_kv_head=4, head_dim=6, rope=0, norm=0, ffn=0,
                    ffn_hidden=96, tied=1, bias=1, prenorm=0 if style == "2017" else 1,
                    act=0 if style == "2017" else 2, pos=1 if style == "2017" else 2)
        if style == "2017":
            base.update(embed_scale=1, final_norm=0)
    else:
        base.update(max_seq=32, n_head=4, n_kv_head=2, head_dim=6 if style == "llama" else 8,
                    rope=1 if style == "llama" else 2, norm=1, ffn=1, act=3, ffn_hidden=64,
                    pos=0, prenorm=1, bias=0, tied=0 if style == "llama" else 1)
        if style == "qwen3":
            base.update(qk_norm=1, rope_theta=1e6, qk_eps=1e-6, norm_eps=1e-6)
    for k in ("rope_theta", "qk_eps", "norm_eps"):
        base[k] = float(np.float32(base[k]))   # as the C struct holds them
    return base


def seeded_init(c, rng):
    """GPT-2-like init: matrices N(0, 0.02), embeddings N(0, 0.02) (N(0, 1) for 2017), biases
    N(0, 0.02), norm gains 1 + N(0, 0.1), LayerNorm betas N(0, 0.1); float32."""
    w = {}
    for name, shape in param_table(c):
        leaf = name.split(".")[-1]
        if name in ("tok_emb", "pos_emb"):
            std, mean = (1.0 if c["style"] == "2017" else 0.02), 0.0
        elif leaf in ("w",) or leaf.endswith("_norm"):
            std, mean = 0.1, 1.0
        elif leaf == "b" and "norm" in name:
            std, mean = 0.1, 0.0
        else:
            std, mean = 0.02, 0.0
        w[name] = (mean + std * rng.standard_normal(shape)).astype(np.float32)
    return w


def markov_tokens(rng, V, n):
    """Tokens from a random sparse Markov chain (each token has 3 likely successors), so a model
    can learn something in ten steps."""
    succ = rng.integers(0, V, size=(V, 3))
    t = [int(rng.integers(0, V))]
    for _ in range(n - 1):
        t.append(int(succ[t[-1], rng.integers(0, 3)]) if rng.random() < 0.9 else int(rng.integers(0, V)))
    return np.array(t, np.int64)


def write_tokens(path, t):
    np.asarray(t, "<u2").tofile(path)


def read_tokens(path):
    return np.fromfile(path, "<u2").astype(np.int64)


def save_case(d, hp, losses, lrs, gnorms, final):
    save_run(d, hparams_row(hp), dict(losses=losses, lrs=lrs, gnorms=gnorms), final)


CASES = {
    # style: hyper-parameters. Each exercises a different corner: warm-up, constant rate,
    # clipping on and off, cosine decay.
    "2017":  dict(B=4, T=8, steps=10, lr=1e-2, warmup=0, min_lr=1e-3, weight_decay=0.1,
                  beta1=0.9, beta2=0.95, eps=1e-8, clip=1.0),
    "gpt2":  dict(B=4, T=8, steps=10, lr=1e-2, warmup=2, min_lr=1e-3, weight_decay=0.1,
                  beta1=0.9, beta2=0.95, eps=1e-8, clip=0.0),
    "llama": dict(B=3, T=12, steps=10, lr=5e-3, warmup=0, min_lr=5e-3, weight_decay=0.1,
                  beta1=0.9, beta2=0.99, eps=1e-8, clip=1.0),
    "qwen3": dict(B=3, T=12, steps=10, lr=1e-2, warmup=1, min_lr=0.0, weight_decay=0.05,
                  beta1=0.8, beta2=0.95, eps=1e-7, clip=0.5),
    "stories260K": dict(B=2, T=24, steps=10, lr=1e-3, warmup=0, min_lr=1e-4, weight_decay=0.1,
                        beta1=0.9, beta2=0.95, eps=1e-8, clip=1.0),
}


def gen_all():
    rng = np.random.default_rng(12)
    for case, hp in CASES.items():
        d = os.path.join(OUT, case)
        os.makedirs(d, exist_ok=True)
        if case == "stories260K":
            c, w = read_llama2c(os.path.join("data", "models", "stories260K.bin"))
            tokens = markov_tokens(rng, c["vocab"], 400)
        else:
            c = tiny_config(case)
            w = seeded_init(c, rng)
            # The llama style is llama2.c-shaped (D = C / H, RoPE base 1e4, eps 1e-5): its init is
            # a llama2.c checkpoint, the others' the toolkit's own format.
            (write_llama2c if case == "llama" else write_twmodel)(os.path.join(d, "init.bin"), c, w)
            c2, w2 = read_any(os.path.join(d, "init.bin"))   # the reader agrees with the writer
            assert all(np.array_equal(w[k], w2[k]) for k in w)
            tokens = markov_tokens(rng, c["vocab"], 300)
        write_tokens(os.path.join(d, "tokens.bin"), tokens)
        losses, lrs, gnorms, final = train(c, w, read_tokens(os.path.join(d, "tokens.bin")), hp)
        save_case(d, hp, losses, lrs, gnorms, final)
        print(f"{case}: loss {losses[0]:.4f} -> {losses[-1]:.4f} (ln V = {math.log(c['vocab']):.4f}), "
              f"gnorm {gnorms[0]:.3f} -> {gnorms[-1]:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--init")
    ap.add_argument("--tokens")
    for flag, typ in (("--batch", int), ("--seq", int), ("--steps", int), ("--lr", float),
                      ("--warmup", int), ("--min-lr", float), ("--weight-decay", float),
                      ("--beta1", float), ("--beta2", float), ("--eps", float), ("--clip", float)):
        ap.add_argument(flag, type=typ)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.init is None:
        gen_all()
        return
    c, w = read_any(a.init)
    hp = dict(B=a.batch, T=a.seq, steps=a.steps, lr=a.lr, warmup=a.warmup, min_lr=a.min_lr,
              weight_decay=a.weight_decay, beta1=a.beta1, beta2=a.beta2, eps=a.eps, clip=a.clip)
    missing = [k for k, v in hp.items() if v is None]
    if missing:
        ap.error("missing: " + ", ".join(missing))
    _, _, _, final = train(c, w, read_tokens(a.tokens), hp, log=print)
    if a.out:
        for name, x in final.items():
            save_npy(os.path.join(a.out, name + ".npy"), x)


if __name__ == "__main__":
    main()
