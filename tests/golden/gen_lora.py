#!/usr/bin/python3
"""gen_lora.py: the PyTorch reference for LoRA (lib/nn/lora.c, lib/train/lora_step.c) and the
goldens that tests/test_lora.c checks, written to data/golden/lora/.

    /usr/bin/python3 tests/golden/gen_lora.py

1. linear/<case>/: the LoRA Linear y = x W^T + b + s (x A^T) B^T, computed unmerged, and its
   backward by autograd: x, W, b (if any), A, B, dy, y, d_x, d_A, d_B, and meta.npy = [r, scale].
2. train/<case>/: ten steps of ./train --lora in its deterministic mode (--no-shuffle), on the
   initial models and token files of tests/golden/gen_train.py (data/golden/train/<case>/; for
   stories260K, data/models/stories260K.bin): the adapters start from init.lora (written here in
   the adapters file layout, lib/formats/lora_file.h, with B drawn small but non-zero so that
   every gradient is non-zero from step 1), then the loss, learning rate and gradient norm of each
   step (losses.npy, lrs.npy, gnorms.npy), hparams.npy (train_common.py's HPARAM_FIELDS order) and
   the adapters after the last step (final.lora). Only A and B are parameters; AdamW decays both.

The model runs on the merged weight W + s B A. In float64 that equals the unmerged sum to ~1e-16,
far below the float32 differences the tests measure; the unmerged layer itself is what part 1
checks. Precision: float64 throughout, inputs drawn as float32 and promoted, goldens rounded to
float32 once, on saving.
"""
import math
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_io import save_npy  # noqa: E402
from gen_train import logits_of, read_any, read_tokens  # noqa: E402
from train_common import adamw_decay_all, frozen, hparams_row, next_token_loss, run_steps, save_run  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "lora")
KINDS = ["wq", "wk", "wv", "wo", "w1", "w2", "w3"]


def target_param(c, l, kind):
    """The parameter name a target adapts (lib/nn/lora_set.c)."""
    swiglu = c["ffn"] == 1
    leaf = {"wq": "attn.wq", "wk": "attn.wk", "wv": "attn.wv", "wo": "attn.wo",
            "w1": "ffn.gate" if swiglu else "ffn.w1", "w2": "ffn.down" if swiglu else "ffn.w2",
            "w3": "ffn.up"}[kind]
    return f"layers.{l}.{leaf}"


def f32(rng, *shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


# ---- 1. the LoRA Linear ----

LINEAR_CASES = {
    # name: T, in, out, r, alpha, bias
    "small_bias": (3, 5, 4, 2, 4.0, True),
    "row_r1": (1, 8, 8, 1, 0.5, False),
    "wide_r4": (7, 24, 12, 4, 8.0, True),
}


def gen_linear(rng):
    for name, (T, n_in, n_out, r, alpha, bias) in LINEAR_CASES.items():
        d = os.path.join(OUT, "linear", name)
        scale = alpha / r
        arrays = dict(x=f32(rng, T, n_in), W=f32(rng, n_out, n_in, scale=0.3),
                      A=f32(rng, r, n_in, scale=0.5), B=f32(rng, n_out, r, scale=0.5),
                      dy=f32(rng, T, n_out))
        if bias:
            arrays["b"] = f32(rng, n_out, scale=0.1)
        t = {k: torch.tensor(v.astype(np.float64), requires_grad=k in ("x", "A", "B")) for k, v in arrays.items()}
        y = t["x"] @ t["W"].T + scale * (t["x"] @ t["A"].T) @ t["B"].T
        if bias:
            y = y + t["b"]
        y.backward(t["dy"])
        for k, v in arrays.items():
            save_npy(os.path.join(d, k + ".npy"), v)
        save_npy(os.path.join(d, "meta.npy"), np.array([r, np.float32(scale)], np.float64))
        save_npy(os.path.join(d, "y.npy"), y)
        for k in ("x", "A", "B"):
            save_npy(os.path.join(d, "d_" + k + ".npy"), t[k].grad)


# ---- 2. ten steps of --lora ----

def write_lora(path, r, alpha, kinds, adapters):
    """adapters: [layer][target] -> (A (r, in), B (out, r)), float arrays."""
    with open(path, "wb") as f:
        f.write(b"lora" + struct.pack("<iifi", 1, r, alpha, len(kinds)))
        for k in kinds:
            f.write(k.encode().ljust(8, b"\0"))
        for layer in adapters:
            for A, B in layer:
                f.write(np.ascontiguousarray(A, "<f4").tobytes())
                f.write(np.ascontiguousarray(B, "<f4").tobytes())


def read_lora(path, c):
    b = open(path, "rb").read()
    assert b[:4] == b"lora"
    version, r, alpha, n = struct.unpack_from("<iifi", b, 4)
    kinds = [b[20 + 8 * i:28 + 8 * i].split(b"\0")[0].decode() for i in range(n)]
    a = np.frombuffer(b, "<f4", offset=20 + 8 * n)
    off, layers = 0, []
    for l in range(c["n_layer"]):
        row = []
        for k in kinds:
            out, n_in = read_shape(c, l, k)
            A = a[off:off + r * n_in].reshape(r, n_in); off += r * n_in
            B = a[off:off + out * r].reshape(out, r); off += out * r
            row.append((A.copy(), B.copy()))
        layers.append(row)
    assert off == a.size
    return r, alpha, kinds, layers


def read_shape(c, l, kind):
    C, D, Fh = c["d_model"], c["head_dim"], c["ffn_hidden"]
    HD, GD = c["n_head"] * D, c["n_kv_head"] * D
    return {"wq": (HD, C), "wk": (GD, C), "wv": (GD, C), "wo": (C, HD), "w1": (Fh, C),
            "w2": (C, Fh), "w3": (Fh, C)}[kind]


def adapter_tensors(adapters):
    """[layer][target] -> (A, B) float32 arrays as float64 leaf tensors with gradients, and the flat
    list of them (layer by layer, target by target, A before B): the parameters LoRA trains."""
    AB = [[(torch.tensor(A.astype(np.float64), requires_grad=True),
            torch.tensor(B.astype(np.float64), requires_grad=True)) for A, B in layer] for layer in adapters]
    return AB, [p for layer in AB for pair in layer for p in pair]


def adapter_arrays(AB):
    return [[(A.detach().numpy(), B.detach().numpy()) for A, B in layer] for layer in AB]


def merged(base, AB, c, kinds, scale):
    """The weights the model runs on: base with each target W replaced by W + scale B A."""
    w = dict(base)
    for l in range(c["n_layer"]):
        for i, k in enumerate(kinds):
            A, B = AB[l][i]
            name = target_param(c, l, k)
            w[name] = base[name] + scale * B @ A
    return w


def train_lora(c, w32, adapters, r, alpha, kinds, tokens, hp):
    base = frozen(w32)
    AB, params = adapter_tensors(adapters)
    toks = torch.from_numpy(tokens.astype(np.int64))

    def objective(s):
        w = merged(base, AB, c, kinds, alpha / r)
        return next_token_loss(toks, s, hp["B"], hp["T"], lambda row: (logits_of(row, w, c), None))
    losses, lrs, gnorms = run_steps(params, adamw_decay_all(params, hp), hp, objective)
    return losses, lrs, gnorms, adapter_arrays(AB)


TRAIN_CASES = {
    # case: (targets, r, alpha, hyper-parameters)
    "stories260K": (["wq", "wv"], 4, 8.0,
                    dict(B=2, T=24, steps=10, lr=1e-2, warmup=0, min_lr=1e-3, weight_decay=0.1,
                         beta1=0.9, beta2=0.95, eps=1e-8, clip=1.0)),
    "llama": (KINDS, 2, 4.0,
              dict(B=3, T=12, steps=10, lr=1e-2, warmup=2, min_lr=1e-2, weight_decay=0.1,
                   beta1=0.9, beta2=0.99, eps=1e-8, clip=0.0)),
    "gpt2": (["wo", "wq", "w2", "w1"], 3, 3.0,
             dict(B=4, T=8, steps=10, lr=5e-3, warmup=0, min_lr=5e-4, weight_decay=0.05,
                  beta1=0.9, beta2=0.95, eps=1e-8, clip=0.5)),
}


def gen_train(rng):
    for case, (kinds, r, alpha, hp) in TRAIN_CASES.items():
        src = os.path.join("data", "golden", "train", case)
        model = os.path.join("data", "models", "stories260K.bin") if case == "stories260K" else os.path.join(src, "init.bin")
        c, w = read_any(model)
        d = os.path.join(OUT, "train", case)
        os.makedirs(d, exist_ok=True)
        adapters = []
        for l in range(c["n_layer"]):
            row = []
            for k in kinds:
                out, n_in = read_shape(c, l, k)
                bound = 1.0 / math.sqrt(n_in)
                A = rng.uniform(-bound, bound, (r, n_in)).astype(np.float32)
                B = f32(rng, out, r, scale=0.01)
                row.append((A, B))
            adapters.append(row)
        write_lora(os.path.join(d, "init.lora"), r, alpha, kinds, adapters)
        assert read_lora(os.path.join(d, "init.lora"), c)[3][0][0][0].tobytes() == adapters[0][0][0].tobytes()
        tokens = read_tokens(os.path.join(src, "tokens.bin"))
        losses, lrs, gnorms, final = train_lora(c, w, adapters, r, alpha, kinds, tokens, hp)
        save_run(d, hparams_row(hp), dict(losses=losses, lrs=lrs, gnorms=gnorms))
        write_lora(os.path.join(d, "final.lora"), r, alpha, kinds, final)
        print(f"lora {case}: loss {losses[0]:.4f} -> {losses[-1]:.4f}, gnorm {gnorms[0]:.4g} -> {gnorms[-1]:.4g}")


def main():
    rng = np.random.default_rng(27)
    gen_linear(rng)
    gen_train(rng)


if __name__ == "__main__":
    main()
