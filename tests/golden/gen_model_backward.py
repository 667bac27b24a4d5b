#!/usr/bin/python3
"""gen_model_backward.py: whole-model gradients for tests/test_model_backward.c: the loss of a
(B, T) batch and the gradient of every parameter, for the four tiny models and for stories260K.

Run from the top of the checkout, after `make model` and after gen_model.py has written the
forward goldens, with Debian's Python (it has PyTorch):
    /usr/bin/python3 tests/golden/gen_model_backward.py
It rewrites data/golden/backward/model/**.

The four styles reuse the forward goldens' parameters (data/golden/model/models/<style>/, read
here, not written again) and gen_model.py's reference components (block, norm, sinusoidal,
MODELS), with its Linear swapped for F.linear so that autograd sees through it. stories260K is
read from its checkpoint as gen_stories.py reads it, mapped to the tw_param names, and run
through the same reference block in the llama configuration; its logits are first checked
against gen_stories.py's own independent forward. Everything is float64 from the float32 values
the C code holds; the loss is F.cross_entropy (mean over the targets that are not -100) and the
gradients come from loss.backward(). Each gradient is saved as grad.<tw_param name>.npy, and the
gradients of the last sequence's embeddings, layer outputs and logits as dact.<table name>.npy.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

import gen_model
import gen_stories
from golden_io import save_npy

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)   # one reduction order: the files regenerate byte-identical
OUT = os.path.join("data", "golden", "backward", "model")
FWD = os.path.join("data", "golden", "model", "models")
RNG = np.random.default_rng(4242)
IGNORE = -100
BATCH = 2          # sequences per batch (test_model_backward.c reads B and T from tokens.npy)
T_STYLE = 7        # tokens per sequence for the tiny models
T_STORIES = 16     # and for stories260K
written = []

# gen_model.linear goes through torch.nn.Linear under no_grad; the same map with autograd:
gen_model.linear = lambda x, w, b=None: F.linear(x, w, b)


def save(rel, arr):
    written.append(save_npy(os.path.join(OUT, rel + ".npy"), arr))


def batch(V, T):
    """Random tokens and their targets (B, T); one target is the ignore index, and the first and
    last ids of the vocabulary occur among the tokens."""
    tokens = RNG.integers(0, V, size=(BATCH, T))
    targets = RNG.integers(0, V, size=(BATCH, T))
    tokens[0, 0], tokens[1, -1] = 0, V - 1
    targets[1, 2] = IGNORE
    return torch.from_numpy(tokens), torch.from_numpy(targets)


def model_logits(w, m, tokens, keep=None):
    """The tiny model's forward (gen_model.gen_model's, batched as a loop): (B, T, V). keep, a
    dict, receives the last sequence's embeddings, layer outputs and logits (their .grad is
    retained, for the C state of activation gradients)."""
    C = m["C"]
    c = dict(H=m["H"], G=m["G"], D=m["D"], causal=1, rope=m["rope"], theta=m["theta"],
             qk_norm=m["qk"], eps=m["eps"], pos0=0, prenorm=m["prenorm"], rms=m["rms"],
             swiglu=m["swiglu"], act=m["act"], norm_eps=m["eps"])
    out = []
    for row in tokens:
        T = row.shape[0]
        x = w["tok_emb"][row]
        if m["embed_scale"]:
            x = x * math.sqrt(C)
        if m["pos"] == "sinusoidal":
            x = x + gen_model.sinusoidal(T, C)
        elif m["pos"] == "learned":
            x = x + w["pos_emb"][:T]
        acts = {"embed": x}
        for l in range(m["L"]):
            x, _ = gen_model.block(x, w, c, f"layers.{l}.")
            acts[f"L{l}.resid_post"] = x
        if m["final_norm"]:
            x = gen_model.norm(x, w, "final_norm", m["rms"], m["eps"])
        out.append(F.linear(x, w["tok_emb"] if m["tied"] else w["head"]))
        acts["logits"] = out[-1]
        if keep is not None:   # the last sequence's, as the loop leaves them
            for k, t in acts.items():
                t.retain_grad()
            keep.clear()
            keep.update(acts)
    return torch.stack(out)


def loss_and_grads(case, w, m, tokens, targets):
    """Saves tokens, targets, the loss and grad.<name> for every parameter of w."""
    for p in w.values():
        p.requires_grad_(True)
    acts = {}
    logits = model_logits(w, m, tokens, acts)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           ignore_index=IGNORE)
    loss.backward()
    save(f"{case}/tokens", tokens.to(torch.int32))
    save(f"{case}/targets", targets.to(torch.int32))
    save(f"{case}/loss", np.array([loss.item()]))
    save(f"{case}/n_params", np.array([len(w)], np.int32))
    for name, p in w.items():
        save(f"{case}/grad.{name}", p.grad)
    for name, t in acts.items():   # gradients of the last sequence's activations
        save(f"{case}/dact.{name}", t.grad)
    print(f"{case}: loss {loss.item():.6f}, {len(w)} parameters, "
          f"largest gradient {max(p.grad.abs().max().item() for p in w.values()):.3g}")
    return logits


def gen_style(style, m):
    d = os.path.join(FWD, style)
    n = int(np.load(os.path.join(d, "n_params.npy"))[0])
    names = [f[:-4] for f in os.listdir(d) if f.endswith(".npy")]
    # The parameters are the files named like tw_params: every name with a dot, tok_emb, pos_emb
    # and head (the rest are the forward's inputs and outputs).
    params = sorted(x for x in names if "." in x or x in ("tok_emb", "pos_emb", "head"))
    assert len(params) == n, (style, len(params), n)
    w = {x: torch.from_numpy(np.load(os.path.join(d, x + ".npy")).astype(np.float64))
         for x in params}
    tokens, targets = batch(m["V"], T_STYLE)
    loss_and_grads(f"{style}", w, m, tokens, targets)


STORIES = dict(rope="adjacent", theta=1e4, qk=0, pos="none", embed_scale=0, final_norm=1,
               prenorm=1, rms=1, eps=1e-5, swiglu=1, act="silu")


def gen_stories260k():
    path = gen_stories.MODEL
    if not os.path.exists(path):
        raise SystemExit(f"{path} is missing: run `make model` first")
    cfg, ck = gen_stories.read_checkpoint(path)
    m = dict(STORIES, V=cfg["vocab"], C=cfg["dim"], L=cfg["n_layers"], H=cfg["n_heads"],
             G=cfg["n_kv"], D=cfg["hd"], F=cfg["hidden"], tied=ck["cls"] is ck["tok"])
    # tw_param names of a llama2.c checkpoint loaded into tw_model (lib/formats/llama2c.c).
    w = {"tok_emb": ck["tok"].clone()}
    for l in range(m["L"]):
        p = f"layers.{l}."
        w.update({p + "norm1.w": ck["rms_att"][l].clone(), p + "attn.wq": ck["wq"][l].clone(),
                  p + "attn.wk": ck["wk"][l].clone(), p + "attn.wv": ck["wv"][l].clone(),
                  p + "attn.wo": ck["wo"][l].clone(), p + "norm2.w": ck["rms_ffn"][l].clone(),
                  p + "ffn.gate": ck["w1"][l].clone(), p + "ffn.up": ck["w3"][l].clone(),
                  p + "ffn.down": ck["w2"][l].clone()})
    w["final_norm.w"] = ck["rms_final"].clone()
    if not m["tied"]:
        w["head"] = ck["cls"].clone()
    tokens, targets = batch(m["V"], T_STORIES)
    logits = loss_and_grads("stories260K", w, m, tokens, targets)
    # The reference block in this configuration is the llama2.c model: gen_stories.py's own
    # forward (written from the file format) gives the same logits.
    gen_stories.save = lambda name, arr: None
    with torch.no_grad():
        ref = gen_stories.forward(cfg, ck, tokens[0].tolist())
    err = (ref - logits[0].detach()).abs().max().item()
    assert err < 1e-9, f"stories260K: the two float64 forwards differ by {err}"


def main():
    for style, m in gen_model.MODELS.items():
        gen_style(style, m)
    gen_stories260k()
    total = sum(os.path.getsize(p) for p in written)
    print(f"wrote {len(written)} files, {total} bytes, under {OUT}")


if __name__ == "__main__":
    main()
